"""One budget language (issue 37, item 1): every analysis is charged at most what the user's
control allows (ρ, or ε²/2), exactly that but for the ratio's Gaussian calibrated to (ε, δ),
and the pages say so in the ledger's unit, with both numbers where they differ."""

from __future__ import annotations

import dataclasses

import pytest

from dpcore.analyses import ANALYSES, get
from dpcore.foundations.accounting import ZCDP, PureDP, charge_of
from strata_ui.budget_language import RULE, charge_line, charge_note, rule_charge

CONTROLS = (PureDP(1.0), ZCDP(0.5), PureDP(0.3), ZCDP(2.0))
# Every analysis with its default settings, and each mean estimator and ratio mechanism.
VARIANTS = [(a.name, a.settings_type()) for a in ANALYSES] + [
    ("mean", dataclasses.replace(get("mean").settings_type(), estimator=e))
    for e in ("gaussian", "coinpress")
] + [
    ("ratio", dataclasses.replace(get("ratio").settings_type(), mechanism=m, composition=c))
    for m, c in (("laplace", "basic"), ("gaussian", "zcdp"))
]  # fmt: skip


def calibrated_to_epsilon_delta(name: str, settings: object, control) -> bool:
    """The rule's one exception: the ratio's Gaussian at an ε control, calibrated to (ε, δ)."""
    return name == "ratio" and settings.mechanism != "laplace" and isinstance(control, PureDP)


@pytest.mark.parametrize("control", CONTROLS, ids=str)
@pytest.mark.parametrize(("name", "settings"), VARIANTS, ids=lambda v: getattr(v, "__name__", None))
def test_every_analysis_is_charged_the_rule_s_rho_for_the_same_control(name, settings, control):
    charged = charge_of(get(name).cost(settings, control))
    if calibrated_to_epsilon_delta(name, settings, control):
        assert charged < rule_charge(control) / 10  # more noise than ρ = ε²/2 needs
    else:
        assert charged == pytest.approx(rule_charge(control), rel=1e-6)


def test_the_rule_is_rho_or_epsilon_squared_over_two():
    assert rule_charge(PureDP(1.0)) == 0.5 and rule_charge(PureDP(3.0)) == 4.5
    assert rule_charge(ZCDP(0.7)) == 0.7
    assert "ρ = ε²/2" in RULE and "(ε, δ)" in RULE


def test_a_charge_at_the_rule_reads_as_the_control_and_its_rho():
    assert charge_line(PureDP(1.0), ZCDP(0.5)) == "ε = 1 is charged **ρ = 0.5** (ρ = ε²/2)."
    assert charge_line(ZCDP(0.5), ZCDP(0.5)) == "Charged **ρ = 0.5**, the ρ you set."


def test_a_charge_below_the_rule_names_both_the_epsilon_and_the_charge():
    """The issue's ratio at (ε = 1, δ = 1e-6): charged ρ = 0.0032 where a Laplace mean at ε = 1
    is charged 0.5; the line shows both, so users compare like with like."""
    settings = get("ratio").settings_type()
    line = charge_line(PureDP(1.0), get("ratio").cost(settings, PureDP(1.0)))
    assert line.startswith("ε = 1 is charged **ρ = 0.00319528**: less than")
    assert "less than the ρ = 0.5 another analysis is charged at ε = 1" in line


def test_the_note_is_left_out_where_the_cost_line_already_prices_the_control():
    assert charge_note(PureDP(1.0), PureDP(1.0)) is None  # a Laplace mean: its cost is ε = 1
    assert charge_note(ZCDP(0.5), ZCDP(0.4999999995)) is None  # the ratio's split, rounded
    assert charge_note(PureDP(1.0), ZCDP(0.5)) == "ε = 1 is charged **ρ = 0.5** (ρ = ε²/2)."
