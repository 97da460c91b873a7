"""The ratio's study runner and the paper's Table 1: a tidy seeded grid, simulated sums of the
paper's design, interval score and coverage (Gneiting & Raftery), and Table 1 reproduced."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.ratio.study import load_table1, ratio_study, simulate_calibration_sums
from dpcore.foundations.metrics import coverage, interval_score
from tests.unit.dpcore.analyses.ratio.helpers import Z


def test_study_grid_is_tidy_seeded_and_shows_compositions_side_by_side():
    kwargs = dict(
        n=(1000, 2000),
        epsilon=(0.5, 1.0),
        weighted=True,
        mechanism=("gaussian", "laplace"),
        composition=("basic", "zcdp"),
        method=("public", "none", "analytical"),
        scale=("ratio", "log"),
        reps=200,
        rng=24,
    )
    study = ratio_study(**kwargs)
    expected_columns = {"n", "epsilon", "weighted", "mechanism", "composition", "method", "scale"}
    assert expected_columns | {"reps", "width", "coverage", "score", "flagged"} <= set(study)
    # laplace × zcdp is skipped: 2 n × 2 ε × 3 (mechanism, composition) × 2 scales × 3 methods.
    assert len(study) == 2 * 2 * 3 * 2 * 3
    assert not ((study.mechanism == "laplace") & (study.composition == "zcdp")).any()
    pd.testing.assert_frame_equal(study, ratio_study(**kwargs))
    # The public row is the same data and needs no budget: identical across budget settings.
    public = study[study.method == "public"].groupby(["n", "scale"])[["width", "coverage"]]
    assert (public.nunique() == 1).all().all()
    an = study[(study.method == "analytical") & (study.mechanism == "gaussian")]
    wide = an.pivot_table(index=["n", "epsilon", "scale"], columns="composition", values="width")
    assert (wide["zcdp"] < wide["basic"]).all()


def test_study_refuses_an_impossible_budget_before_simulating():
    with pytest.raises(ValueError, match=r"ε/6 = 1 per sum"):
        ratio_study(n=10**9, epsilon=6.0, weighted=True, reps=10**9)
    with pytest.raises(ValueError, match=r"`method` must be one of"):
        ratio_study(method="public_ci")


def test_simulated_sums_follow_the_paper_design():
    reps = 2000
    sums = simulate_calibration_sums(1000, reps=reps, weighted=True, rng=25)
    # Exp(1) clipped to [1/3, 3], integrated by hand: E w = 1.000078 (sd 0.79), E w² = 1.623565
    # (sd 2.42).
    assert np.mean(sums.w) / 1000 == pytest.approx(1.000078, abs=Z * 0.85 / math.sqrt(1000 * reps))
    assert np.mean(sums.ww) / 1000 == pytest.approx(1.623565, abs=Z * 2.42 / math.sqrt(1000 * reps))
    # Kish n ≈ n (E w)² / E w² = 0.616 n; true ratio Σws/Σwy → E s / E y = 0.5 / (0.5 / 1.1).
    assert np.mean(sums.effective_n) == pytest.approx(616.0, rel=0.01)
    assert np.sum(sums.ws) / np.sum(sums.wy) == pytest.approx(1.1, rel=0.005)
    # Beta(2, 2): E s² = 0.3, so Σws² / Σw → 0.3 (w is independent of s).
    assert np.sum(sums.wss) / np.sum(sums.w) == pytest.approx(0.3, rel=0.005)
    unweighted = simulate_calibration_sums(1000, reps=3, weighted=False, rng=26)
    assert not unweighted.weighted and np.all(unweighted.w == 1000)


def test_load_table1_is_the_papers_table():
    table = load_table1()
    assert len(table) == 16 and table["weighted"].dtype == bool
    assert set(table["epsilon"]) == {0.2, 0.5, 1.0, 4.0} and set(table["n"]) == {5000, 10000}
    cell = table.query("weighted and n == 5000 and epsilon == 0.2").iloc[0]
    assert (cell.nc_coverage, cell.mc_width, cell.an_coverage) == (0.076, 8.783, 0.939)


def test_interval_score_and_coverage_follow_gneiting_raftery():
    low, high = np.array([1.0, 1.0, 1.0, np.nan]), np.array([2.0, 2.0, 2.0, 2.0])
    truth = np.array([0.5, 1.5, 3.0, 1.5])
    # (u − l) + (2/α)(l − x)1{x < l} + (2/α)(x − u)1{x > u}, α = 0.05.
    np.testing.assert_allclose(
        interval_score(low, high, truth, 0.05), [1 + 40 * 0.5, 1, 1 + 40 * 1, np.nan]
    )
    assert coverage(low, high, truth) == 0.25  # the NaN interval does not cover
    np.testing.assert_allclose(coverage(np.zeros((2, 2)), [[1, 1], [1, -1]], 0.5, axis=1), [1, 0.5])
    with pytest.raises(ValueError, match=r"`alpha` must be a number with 0 < alpha < 1"):
        interval_score(low, high, truth, 1.0)


@pytest.mark.slow
def test_table1_is_reproduced():
    """Table 1 (Gaussian classic, ratio scale, 1000 replicates) of Miao & Li (2022).

    Tolerances: coverage ±0.03 for the corrected methods and ±0.05 for no correction (its
    coverage sits mid-range, where the binomial standard error of 1000 replicates is ~0.016 in
    each of ours and the paper's); widths within 10%. The weighted ε = 0.2 widths are not checked:
    there the mean width is dominated by a few replicates whose noisy Σwy lands near 0 (the
    paper's own Monte Carlo width, 8.78, is 6× its analytical one), so it does not estimate a
    stable quantity at 1000 replicates.
    """
    table = load_table1().set_index(["weighted", "n", "epsilon"])
    study = ratio_study(method=("public", "none", "monte_carlo", "analytical"), reps=1000, rng=1)
    for prefix, method, tolerance in (
        ("public", "public", 0.03),
        ("nc", "none", 0.05),
        ("mc", "monte_carlo", 0.03),
        ("an", "analytical", 0.03),
    ):
        ours = study[study.method == method].set_index(["weighted", "n", "epsilon"])
        paper = table.loc[ours.index]
        gap = (ours["coverage"] - paper[f"{prefix}_coverage"]).abs()
        assert (gap <= tolerance).all(), gap[gap > tolerance]
        weighted = np.asarray(ours.index.get_level_values("weighted"), dtype=bool)
        stable = ~(weighted & (np.asarray(ours.index.get_level_values("epsilon")) == 0.2))
        ratio = ours["width"][stable] / paper[f"{prefix}_width"][stable]
        assert ((ratio - 1).abs() <= 0.10).all(), ratio
        if prefix in ("mc", "an"):
            nominal = paper[f"{prefix}_coverage"] >= 0.94
            assert (ours["coverage"][nominal] >= 0.93).all()
    # The paper's NaN intervals: negative no-correction variances appear at weighted ε = 0.2.
    none = study[study.method == "none"].set_index(["weighted", "n", "epsilon"])
    assert none.loc[(True, 5000, 0.2), "flagged"] > 0
