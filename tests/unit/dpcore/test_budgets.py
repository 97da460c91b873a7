"""Budgets of ``dpcore.foundations.accounting`` (ε-DP, (ε, δ)-DP, ρ-zCDP): construction, validation
naming the parameter and value, immutability, hashing and kinds."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP

BAD_POSITIVE = [math.nan, math.inf, -math.inf, 0, 0.0, -1, -1e-300]
BAD_DELTA = [0, 0.0, 1, 1.0, 1.5, math.nan, math.inf, -math.inf, -0.1]
WRONG_TYPES = ["0.5", None, True, False, [0.5], {"epsilon": 0.5}]


@pytest.mark.parametrize(
    "make",
    [
        lambda: PureDP(1.0),
        lambda: PureDP(1),
        lambda: PureDP(1e-9),
        lambda: PureDP(1e6),
        lambda: PureDP(np.float64(0.5)),
        lambda: PureDP(np.int64(2)),
        lambda: ApproxDP(1.0, 1e-6),
        lambda: ApproxDP(3, 0.5),
        lambda: ApproxDP(np.float32(0.25), np.float64(1e-12)),
        lambda: ZCDP(0.5),
        lambda: ZCDP(2),
        lambda: ZCDP(np.float64(1e-8)),
    ],
)
def test_valid_budgets_construct_with_float_components(make):
    budget = make()
    for value in budget.components().values():
        assert type(value) is float
        assert math.isfinite(value) and value > 0


def test_components_hold_the_given_values():
    assert PureDP(2).components() == {"epsilon": 2.0}
    assert ApproxDP(0.5, 1e-5).components() == {"epsilon": 0.5, "delta": 1e-5}
    assert ZCDP(0.125).components() == {"rho": 0.125}


def _constructors(param: str):
    if param == "epsilon":
        return [
            ("PureDP", lambda v: PureDP(v)),
            ("ApproxDP", lambda v: ApproxDP(v, 1e-6)),
        ]
    if param == "delta":
        return [("ApproxDP", lambda v: ApproxDP(1.0, v))]
    return [("ZCDP", lambda v: ZCDP(v))]


def _bad_value_cases():
    for param, bad_values in (("epsilon", BAD_POSITIVE), ("rho", BAD_POSITIVE)):
        for cls, ctor in _constructors(param):
            for v in bad_values:
                yield pytest.param(ctor, param, v, id=f"{cls}-{param}={v!r}")
    for cls, ctor in _constructors("delta"):
        for v in BAD_DELTA:
            yield pytest.param(ctor, "delta", v, id=f"{cls}-delta={v!r}")


@pytest.mark.parametrize(("ctor", "param", "value"), list(_bad_value_cases()))
def test_bad_values_raise_value_error_naming_parameter_and_value(ctor, param, value):
    with pytest.raises(ValueError) as info:
        ctor(value)
    message = str(info.value)
    assert f"`{param}`" in message
    assert f"got {float(value)!r}" in message


def _wrong_type_cases():
    for param in ("epsilon", "delta", "rho"):
        for cls, ctor in _constructors(param):
            for v in WRONG_TYPES:
                yield pytest.param(ctor, param, v, id=f"{cls}-{param}={v!r}")


@pytest.mark.parametrize(("ctor", "param", "value"), list(_wrong_type_cases()))
def test_wrong_types_raise_type_error_naming_parameter(ctor, param, value):
    with pytest.raises(TypeError, match=f"`{param}`"):
        ctor(value)


@pytest.mark.parametrize(
    ("budget", "field"),
    [(PureDP(1.0), "epsilon"), (ApproxDP(1.0, 1e-6), "epsilon"), (ApproxDP(1.0, 1e-6), "delta")]
    + [(ZCDP(0.5), "rho")],
)
def test_budgets_are_frozen(budget, field):
    before = getattr(budget, field)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(budget, field, 0.123)
    assert getattr(budget, field) == before


def test_budgets_are_hashable_and_equal_by_value():
    assert PureDP(1) == PureDP(1.0)
    assert hash(PureDP(1)) == hash(PureDP(1.0))
    assert len({PureDP(1), PureDP(1.0), PureDP(np.float64(1.0))}) == 1
    assert PureDP(1.0) != PureDP(2.0)
    assert ApproxDP(1, 1e-5) == ApproxDP(1.0, 1e-5)
    assert hash(ApproxDP(1, 1e-5)) == hash(ApproxDP(1.0, 1e-5))
    assert ApproxDP(1.0, 1e-5) != ApproxDP(1.0, 1e-6)
    assert ZCDP(0.5) == ZCDP(0.5)
    assert len({ZCDP(0.5), ZCDP(0.5), ZCDP(0.25)}) == 2
    # Equal numbers in different budget kinds are different guarantees.
    assert PureDP(0.5) != ZCDP(0.5)
    assert {PureDP(0.5): "a"}.get(ZCDP(0.5)) is None


def test_kinds():
    assert (PureDP(1).kind, ApproxDP(1, 0.1).kind, ZCDP(1).kind) == ("pure", "approx", "zcdp")
