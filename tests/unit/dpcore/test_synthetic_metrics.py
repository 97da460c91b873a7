"""Unit tests of dpcore.foundations.metrics' synthetic-data metrics (AAAI 2024 arXiv, appendix C): workload error
(Def. 14), errors of means (Fig. 5), parity error (Def. 11) and max disparity, on hand-computed
tables.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.metrics import (
    GroupErrors,
    max_disparity,
    mean_error_by_group,
    synthetic_parity_error,
    workload_error,
    workload_error_by_group,
)

# ---------------------------------------------------------------------------------------------
# Metrics: workload error (Def. 14), errors of means (Fig. 5), parity error, max disparity
# ---------------------------------------------------------------------------------------------


REAL = pd.DataFrame({"g": ["p", "p", "q", "q"], "x": list("aabb"), "y": list("uvuu")})
SYNTH = pd.DataFrame({"g": ["p", "q"], "x": list("ab"), "y": list("uv")})


def test_workload_error_hand_computed():
    # (x, y): real au .25, av .25, bu .5, bv 0; synthetic au .5, bv .5 -> L1 = 1.5.
    assert workload_error(REAL, SYNTH, ["x", "y"], way=2) == pytest.approx(1.5)
    # x: real (.5, .5) = synthetic -> 0; y: real (.75, .25), synthetic (.5, .5) -> 0.5.
    assert workload_error(REAL, SYNTH, ["x", "y"], way=1) == pytest.approx(0.25)
    assert workload_error(REAL, REAL) == 0.0


def test_workload_error_by_group_hand_computed():
    errors = workload_error_by_group(REAL, SYNTH, "g", way=2)
    # p: real au .5, av .5; synthetic au 1 -> 1.0. q: real bu 1; synthetic bv 1 -> 2.0.
    assert errors.groups.to_dict() == pytest.approx({"p": 1.0, "q": 2.0})
    assert errors.overall == pytest.approx(1.5)
    assert errors.worst == 2.0 and errors.disparity == 1.0
    # A group without synthetic rows scores 1 per marginal; unknown synthetic groups are ignored.
    other = SYNTH.assign(g=["p", "r"])
    assert workload_error_by_group(REAL, other, "g", way=2).groups["q"] == 1.0


def test_workload_error_equals_definition_14_for_equal_sizes():
    rng = np.random.default_rng(12)
    real = pd.DataFrame(rng.integers(0, 3, size=(200, 4)), columns=list("abcd")).astype(str)
    synth = pd.DataFrame(rng.integers(0, 3, size=(200, 4)), columns=list("abcd")).astype(str)
    subsets = [["a", "b", "c"], ["a", "b", "d"], ["a", "c", "d"], ["b", "c", "d"]]
    total = 0.0
    for s in subsets:  # 1/(k|D|) Σ ‖M_S(D) − M_S(D̂)‖₁ with pandas counts
        counts = pd.concat(
            [real.value_counts(s).rename("r"), synth.value_counts(s).rename("s")], axis=1
        )
        total += counts.fillna(0).eval("r - s").abs().sum()
    assert workload_error(real, synth) == pytest.approx(total / (len(subsets) * len(real)))


def test_workload_error_ignores_dtypes_and_category_order():
    real = REAL.astype({"x": "category"})
    synth = SYNTH.astype({"x": pd.CategoricalDtype(["b", "a", "z"])})
    assert workload_error(real, synth, ["x", "y"], way=2) == pytest.approx(1.5)


def test_mean_error_and_parity_error():
    means = mean_error_by_group(REAL, SYNTH, "g")
    # p: x (1,0) vs (1,0) -> 0; y (.5,.5) vs (1,0) -> 1; mean 0.5. q: x 0; y (1,0) vs (0,1) -> 2.
    assert means.groups.to_dict() == pytest.approx({"p": 0.5, "q": 1.0})
    assert means.overall == pytest.approx(0.25)
    assert synthetic_parity_error(means) == pytest.approx(0.25 / 2 + 0.75)
    assert synthetic_parity_error(means, omega=1.0) == pytest.approx(0.25 + 0.75)
    with pytest.raises(TypeError, match="`errors` must be a GroupErrors"):
        synthetic_parity_error(0.5)


def test_max_disparity_and_group_errors():
    np.testing.assert_allclose(max_disparity(np.array([[1.0, 3.0, 2.0], [0.5, 0.5, 0.5]])), [2, 0])
    errors = GroupErrors(pd.Series([0.2, 0.9], index=["a", "b"]), 0.4)
    assert errors.worst == 0.9 and errors.disparity == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"columns": ["x", "w"]}, "missing \\['w'\\]"),
        ({"way": 3, "columns": ["x", "y"]}, "`way` must be at most the 2 columns"),
        ({"way": 0}, "`way` must be an integer >= 1"),
    ],
)
def test_workload_error_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        workload_error(REAL, SYNTH, **kwargs)
