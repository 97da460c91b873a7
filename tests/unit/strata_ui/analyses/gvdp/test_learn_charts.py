"""GVDP's Learn items: loose bounds stay valid, and the GVDP paper's OLS demonstration (numbers
from dpcore.analyses.gvdp.teaching, figures from strata_ui.analyses.gvdp.learn_charts).
"""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses.gvdp import teaching as gvdp_teaching
from strata_ui.analyses.gvdp import learn_charts as gvdp_charts
from tests.figures import as_json, assert_accessible, values
from tests.tolerances import binomial_tolerance

# ---- Loose bounds, still valid (Covington et al.) -----------------------------------------------


@pytest.fixture(scope="module")
def loose_study() -> pd.DataFrame:
    return gvdp_teaching.loose_bounds_study(0.1, seed=0)


def test_clipped_mean_noise_grows_in_proportion_to_the_range():
    x = np.random.default_rng(0).normal(1.0, 1.0, (50, 5000))
    z = np.random.default_rng(1).standard_normal(50)
    halves, sds = [], []
    for c in (10, 100, 1000):
        estimate, half, sd = gvdp_teaching.clipped_gaussian_mean(x, -c, c, 0.1, z)
        assert sd == pytest.approx(2 * c / (5000 * math.sqrt(0.2)))
        np.testing.assert_allclose(estimate, x.mean(axis=1) + sd * z)  # nothing clipped
        # The interval: the noise variance added to the rows' sampling variance.
        np.testing.assert_allclose(
            (half / stats.norm.ppf(0.975)) ** 2, x.var(axis=1, ddof=1) / 5000 + sd**2
        )
        halves.append(half.mean())
        sds.append(sd)
    assert sds[2] / sds[1] == pytest.approx(10) and sds[1] / sds[0] == pytest.approx(10)
    # Once the noise dominates the interval, it grows ∝ c too.
    assert halves[2] / halves[1] == pytest.approx(10, rel=0.02)
    # A range that is too tight biases the mean: E[clip(X, −1, 1)] for X ~ N(1, 1).
    tight, _, _ = gvdp_teaching.clipped_gaussian_mean(x, -1, 1, 1e9, np.zeros(50))
    expected = stats.norm.expect(lambda v: np.clip(v, -1, 1), loc=1, scale=1)
    assert tight.mean() == pytest.approx(expected, abs=0.005)
    assert expected < 0.65


def test_loose_bounds_study_gvdp_stays_valid_while_clipping_pays(loose_study):
    by = loose_study.set_index(["method", "factor"])
    reps = gvdp_teaching.LOOSE_REPLICATIONS
    assert set(loose_study["factor"]) == set(map(float, gvdp_teaching.LOOSE_FACTORS))
    assert (loose_study["reps"] == reps).all()
    # GVDP: coverage near nominal at bounds 100× too loose (binomial tolerance), and everywhere.
    assert abs(by.loc[("gvdp", 100.0), "coverage"] - 0.95) <= binomial_tolerance(reps)
    gvdp = loose_study[loose_study["method"] == "gvdp"]
    assert (gvdp["coverage"] >= 0.95 - binomial_tolerance(reps)).all()
    assert (gvdp["bias"].abs() < 0.05).all()  # unbiased up to noise
    # Its width grows slowly: 1,000× looser bounds cost less than 10× the width.
    gvdp_widths = gvdp.sort_values("factor")["median_width"]
    assert gvdp_widths.is_monotonic_increasing
    assert gvdp_widths.iloc[-1] / gvdp_widths.iloc[0] < 10
    # Clipped mean: c = 1 clips ~half the rows and never covers; its width grows ∝ c.
    assert by.loc[("clipped", 1.0), "coverage"] == 0
    assert by.loc[("clipped", 1.0), "clipped_share"] == pytest.approx(0.5, abs=0.03)
    assert by.loc[("clipped", 1.0), "bias"] < -0.3
    assert by.loc[("clipped", 1000.0), "median_width"] / by.loc[
        ("clipped", 100.0), "median_width"
    ] == pytest.approx(10, rel=0.02)
    assert (by.loc["clipped"].loc[[10.0, 30.0, 100.0, 1000.0], "coverage"] >= 0.85).all()
    # With bounds 1,000× too loose GVDP is the narrower of the two.
    assert by.loc[("gvdp", 1000.0), "median_width"] < by.loc[("clipped", 1000.0), "median_width"]
    # The non-private reference does not depend on the bounds.
    assert by.loc["nonprivate"]["median_width"].nunique() == 1


def test_loose_bounds_study_reuses_the_data_for_every_factor():
    """Common random numbers: the first data set and GVDP's noise draws are shared, so at equal
    bounds the release is identical."""
    one = gvdp_teaching.loose_bounds_study(0.5, factors=(10,), replications=5, seed=3)
    two = gvdp_teaching.loose_bounds_study(0.5, factors=(1, 10), replications=5, seed=3)
    pd.testing.assert_frame_equal(
        one.reset_index(drop=True), two[two["factor"] == 10].reset_index(drop=True)
    )


def test_loose_bounds_figures(loose_study):
    fig = as_json(gvdp_charts.loose_bounds_figure(loose_study, rho=0.1, n=gvdp_teaching.LOOSE_N))
    assert_accessible(fig, x_unit="log scale", y_unit="units of x")
    assert fig["layout"]["xaxis"]["type"] == "log"
    assert fig["layout"]["xaxis"]["ticktext"] == ["1×", "3×", "10×", "30×", "100×", "1000×"]
    traces = {t["name"]: t for t in fig["data"]}
    gvdp = loose_study[loose_study["method"] == "gvdp"].sort_values("factor")
    marker = traces[gvdp_teaching.LOOSE_METHODS["gvdp"]]
    np.testing.assert_allclose(values(marker["y"]), gvdp["estimate"])
    np.testing.assert_allclose(values(marker["error_y"]["array"]), gvdp["high"] - gvdp["estimate"])
    np.testing.assert_allclose(
        values(marker["error_y"]["arrayminus"]), gvdp["estimate"] - gvdp["low"]
    )
    assert set(values(traces["true mean μ = 1"]["y"])) == {1.0}
    assert "ρ = 0.1" in fig["layout"]["title"]["subtitle"]["text"]
    coverage = as_json(gvdp_charts.loose_coverage_figure(loose_study, rho=0.1))
    assert_accessible(coverage, x_unit="log scale", y_unit="%")
    clipped = loose_study[loose_study["method"] == "clipped"].sort_values("factor")
    line = next(t for t in coverage["data"] if t["name"] == gvdp_teaching.LOOSE_METHODS["clipped"])
    np.testing.assert_allclose(values(line["y"]), 100 * clipped["coverage"])
    text = gvdp_charts.loose_bounds_summary(loose_study)
    assert "GVDP's interval widens" in text and "clips 5" in text
    gvdp_cov = loose_study[loose_study["method"] == "gvdp"]["coverage"]
    assert (
        f"{100 * gvdp_cov.min():.3g}%–{100 * gvdp_cov.max():.3g}%"
        in gvdp_charts.loose_coverage_summary(loose_study)
    )


# ---- Preset: the GVDP paper's OLS demonstration --------------------------------------------------


def test_gvdp_ols_design_has_effective_rank_d_minus_one():
    s = gvdp_teaching.gvdp_ols_singular_values()
    np.testing.assert_allclose(s, [1.0, 0.957361, 0.865015, 0.748763, 0.636358], atol=1e-6)
    sklearn = pytest.importorskip("sklearn.datasets")
    X = sklearn.make_low_rank_matrix(
        n_samples=500, n_features=5, effective_rank=4, tail_strength=0.5, random_state=0
    )
    np.testing.assert_allclose(np.linalg.svd(X, compute_uv=False), s, rtol=1e-10)
    covariance, factor = gvdp_teaching.gvdp_ols_design()
    np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(covariance))[::-1], s**2, rtol=1e-10)
    np.testing.assert_allclose(factor @ factor.T, covariance, atol=1e-12)


def test_gvdp_ols_sampling_variance_is_right_and_constant_in_n():
    small, large = (
        gvdp_teaching.gvdp_ols_sampling_variance(10_000),
        gvdp_teaching.gvdp_ols_sampling_variance(100_000),
    )
    np.testing.assert_allclose(small, large, rtol=1e-3)
    # Monte Carlo check at n = 2,000: the spread of OLS estimates over 400 data sets.
    rng = np.random.default_rng(0)
    n, beta = 2_000, np.array(gvdp_teaching.GVDP_OLS_BETA)
    _, factor = gvdp_teaching.gvdp_ols_design()
    fits = []
    for _ in range(400):
        X = rng.standard_normal((n, 5)) @ factor.T
        y = X @ beta + rng.normal(0, gvdp_teaching.GVDP_OLS_NOISE * math.sqrt(n), n)
        fits.append(np.linalg.lstsq(X, y, rcond=None)[0])
    # The sample variance of 400 draws is within ±20% of the truth with overwhelming probability.
    np.testing.assert_allclose(
        np.var(fits, axis=0, ddof=1), gvdp_teaching.gvdp_ols_sampling_variance(n), rtol=0.2
    )


@pytest.fixture(scope="module")
def ols_intervals() -> pd.DataFrame:
    return gvdp_teaching.gvdp_ols_study(10_000, 400, replications=20, seed=0)


def test_gvdp_ols_study_shapes_and_coverage(ols_intervals):
    assert len(ols_intervals) == 20 * 5
    assert set(ols_intervals["coefficient"]) == {1, 2, 3, 4, 5}
    np.testing.assert_allclose(
        ols_intervals.groupby("coefficient")["truth"].first(), gvdp_teaching.GVDP_OLS_BETA
    )
    covered = (ols_intervals["low"] <= ols_intervals["truth"]) & (
        ols_intervals["truth"] <= ols_intervals["high"]
    )
    assert (covered == ols_intervals["covered"]).all()
    summary = gvdp_teaching.gvdp_ols_summary(ols_intervals)
    pooled = summary[summary["coefficient"] == 0].iloc[0]
    assert pooled["intervals"] == 100
    assert pooled["coverage"] == pytest.approx(ols_intervals["covered"].mean())
    # 100 intervals: coverage at least 85% unless GVDP under-covers (Clopper–Pearson style margin).
    assert pooled["coverage"] >= 0.85
    # GVDP pays for privacy with width; non-private OLS matches its exact sampling variance.
    assert pooled["width_ratio"] > 2
    expected = 2 * 1.959964 * np.sqrt(gvdp_teaching.gvdp_ols_sampling_variance(10_000))
    per = summary[summary["coefficient"] > 0]
    np.testing.assert_allclose(per["np_width"], expected, rtol=0.1)


@pytest.mark.slow
def test_gvdp_ols_width_is_set_by_k_not_n():
    """The paper's Figure 2: (c) n = 50,000 and (d) n = 100,000 with k = 1,000 look the same."""
    widths = []
    for n in (50_000, 100_000):
        summary = gvdp_teaching.gvdp_ols_summary(
            gvdp_teaching.gvdp_ols_study(n, 1_000, replications=6, seed=1)
        )
        widths.append(summary[summary["coefficient"] == 0]["width"].iloc[0])
    assert widths[0] == pytest.approx(widths[1], rel=0.15)


def test_gvdp_ols_figures(ols_intervals):
    summary = gvdp_teaching.gvdp_ols_summary(ols_intervals)
    fig = as_json(gvdp_charts.gvdp_ols_figure(ols_intervals, n=10_000, k=400))
    assert_accessible(fig, x_unit="rank", y_unit="units of β")
    assert "n = 10,000, k = 400" in fig["layout"]["title"]["subtitle"]["text"]
    points = [t for t in fig["data"] if t["name"].startswith("interval")]
    xs = np.concatenate([values(t["x"]) for t in points])
    ys = np.concatenate([values(t["y"]) for t in points])
    order = np.argsort(xs)
    assert np.all(np.diff(ys[order]) >= 0)  # sorted by estimate − truth
    centred = np.sort(ols_intervals["estimate"] - ols_intervals["truth"])
    np.testing.assert_allclose(ys[order], centred)
    missed = next(t for t in points if t["name"] == "interval misses it")
    assert len(values(missed["x"])) == int((~ols_intervals["covered"]).sum())
    ranks = [t for t in fig["data"] if t.get("legendgroup") == "ranks"]
    assert sorted(values(t["x"])[0] for t in ranks) == pytest.approx([2.5 + 0.5, 97.5 + 0.5])
    coverage = as_json(gvdp_charts.gvdp_ols_coverage_figure(summary, n=10_000, k=400))
    assert_accessible(coverage, x_unit="coefficient", y_unit="%")
    gvdp = next(
        t for t in coverage["data"] if t["name"] == "GVDP (ρ = 0.1)" and t["type"] == "scatter"
    )
    per = summary[summary["coefficient"] > 0]
    np.testing.assert_allclose(values(gvdp["y"]), 100 * per["coverage"])
    assert coverage["layout"]["yaxis2"]["type"] == "log"
    text = gvdp_charts.gvdp_ols_figure_summary(ols_intervals, summary)
    assert "of the 100 GVDP intervals" in text and "times as wide as OLS's" in text
    assert "GVDP covers" in gvdp_charts.gvdp_ols_coverage_summary(summary)
