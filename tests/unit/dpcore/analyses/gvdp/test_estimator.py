"""GVDP (Covington, He, Honaker & Kamath): BLB + modified CoinPress + precision weighting, through
its public functions (gvdp, nonprivate_ci, gvdp_stratified, gvdp_coverage): the result's shape,
seeding, the non-private sandwich reference, stratified recombination, and the argument and data
errors, each naming the parameter. The pieces are tested in test_blb_*, test_private,
test_rho_spent, test_bounds; the statistical validity in test_coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats
from scipy.special import expit

from dpcore.analyses.gvdp.bounds import ESTIMATORS, GVDPBounds
from dpcore.analyses.gvdp.estimator import gvdp, gvdp_coverage, gvdp_stratified, nonprivate_ci
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.shares import PublicShares
from tests.unit.dpcore.analyses.gvdp.helpers import ols_data


def test_result_shapes_and_read_only_arrays():
    X, y = ols_data(np.random.default_rng(18), n=5_000)
    bounds = GVDPBounds.box([-50.0] * 5, [50.0] * 5, [1.0] * 5)
    result = gvdp((X, y), "ols", k=50, rho=1.0, resamples=4, bounds=bounds, rng=19)
    assert result.estimate.shape == result.low.shape == result.variance.shape == (5,)
    assert result.subset_estimates.shape == result.subset_variances.shape == (50, 5)
    assert result.mean_iterates.shape == result.variance_iterates.shape == (5, 5)
    assert np.all(result.low < result.estimate) and np.all(result.estimate < result.high)
    np.testing.assert_allclose(result.variance, result.sampling_variance + result.noise_variance)
    with pytest.raises(ValueError):
        result.estimate[0] = 0.0
    single_step = gvdp((X, y), "ols", k=50, rho=1.0, t=1, resamples=4, bounds=bounds, rng=19)
    assert single_step.mean_iterates.shape == (1, 5) and single_step.rho.mean_steps == (0.5,)
    assert set(ESTIMATORS) == {"mean", "weighted_mean", "ols", "logistic"}


def test_seed_reproduces_and_secure_noise_runs():
    x = np.random.default_rng(20).normal(size=1_000)
    bounds = GVDPBounds([0.0], 5.0, [0.01])
    first = gvdp(x, "mean", k=10, rho=1.0, resamples=3, bounds=bounds, rng=21)
    again = gvdp(x, "mean", k=10, rho=1.0, resamples=3, bounds=bounds, rng=21)
    assert np.array_equal(first.estimate, again.estimate)
    secure = gvdp(x, "mean", k=10, rho=1.0, resamples=3, bounds=bounds, rng=21, noise="secure")
    assert np.array_equal(secure.subset_estimates, first.subset_estimates)  # same BLB
    assert np.isfinite(secure.estimate[0]) and secure.estimate[0] != first.estimate[0]


def test_nonprivate_ols_and_logistic_use_the_sandwich():
    rng = np.random.default_rng(22)
    X = np.column_stack([np.ones(3_000), rng.normal(size=(3_000, 2))])
    y = X @ [1.0, 2.0, -1.0] + rng.normal(size=3_000) * (1 + np.abs(X[:, 1]))
    ols = nonprivate_ci((X, y), "ols", level=0.9)
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    bread = np.linalg.inv(X.T @ X)
    sandwich = bread @ (X.T * (y - X @ coef) ** 2) @ X @ bread
    np.testing.assert_allclose(ols.estimate, coef, rtol=1e-10)
    np.testing.assert_allclose(ols.variance, np.diag(sandwich), rtol=1e-10)
    np.testing.assert_allclose(
        ols.high - ols.estimate, stats.norm.ppf(0.95) * np.sqrt(ols.variance)
    )
    labels = (rng.random(3_000) < expit(X @ [-0.5, 1.0, 0.5])).astype(float)
    logit = nonprivate_ci({"X": X, "y": labels}, "logistic")
    best = optimize.minimize(
        lambda b: np.sum(np.logaddexp(0, X @ b) - labels * (X @ b)), np.zeros(3), method="BFGS"
    )
    np.testing.assert_allclose(logit.estimate, best.x, atol=1e-4)


def test_stratified_recombines_the_dp_group_estimates():
    rng = np.random.default_rng(23)
    groups = {"a": rng.normal(0.0, 1.0, 4_000), "b": rng.normal(5.0, 2.0, 1_000)}
    bounds = [GVDPBounds([0.0], 20.0, [0.01]), GVDPBounds([0.0], 20.0, [0.05])]
    shares = PublicShares(np.array([0.8, 0.2]), "table", "census shares", ("a", "b"))
    result = gvdp_stratified(
        groups, "mean", shares, k=[40, 10], rho=0.5, resamples=5, bounds=bounds, rng=24
    )
    estimates = np.array([g.estimate[0] for g in result.groups])
    variances = np.array([g.variance[0] for g in result.groups])
    assert result.labels == ("a", "b")
    assert result.estimate[0] == pytest.approx(0.8 * estimates[0] + 0.2 * estimates[1], rel=1e-12)
    assert result.variance[0] == pytest.approx(0.64 * variances[0] + 0.04 * variances[1])
    exact = 0.8 * groups["a"].mean() + 0.2 * groups["b"].mean()
    assert result.estimate[0] != exact  # the DP group estimates, not the exact group means
    assert result.cost == ZCDP(0.5)  # parallel composition over disjoint groups
    assert all(g.cost == ZCDP(0.5) for g in result.groups)
    z = stats.norm.ppf(0.975)
    assert result.high[0] == pytest.approx(result.estimate[0] + z * math.sqrt(result.variance[0]))
    clipped = result.within(-1.0, 1.0)
    for released in (result, clipped):  # a release's numbers cannot be changed in place
        for array in (released.shares, released.estimate, released.low, released.high):
            assert not array.flags.writeable
    assert clipped.high[0] <= 1.0


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(25)
    X = np.column_stack([np.ones(1_000), rng.normal(size=1_000)])
    return X, X @ [1.0, 1.0] + rng.normal(size=1_000)


def run(data, estimator="ols", **changes):
    kwargs = dict(k=10, rho=1.0, resamples=3, bounds=GVDPBounds([0.0, 0.0], 10.0, [1.0, 1.0]))
    return gvdp(data, estimator, **{**kwargs, **changes})


@pytest.mark.parametrize(
    ("changes", "error", "pattern"),
    [
        ({"k": 0}, ValueError, "`k` must be an integer >= 1, got 0"),
        ({"k": 2_000}, ValueError, r"`k` = 2000 leaves subsets of 0 rows"),
        ({"k": 150}, ValueError, r"at least 10 rows per subset .* use k <= 100"),
        ({"k": 2.5}, TypeError, "`k` must be an integer"),
        ({"rho": -1.0}, ValueError, r"`rho` must be a finite number > 0, got -1.0"),
        ({"rho": True}, TypeError, "`rho` must be a real number"),
        ({"resamples": 1}, ValueError, r"`resamples` must be an integer >= 2 .* got 1"),
        ({"t": 0}, ValueError, r"`t` must be an integer from 1 to 50 .* got 0"),
        ({"t": 10**6}, ValueError, r"`t` must be an integer from 1 to 50 .* got 1,000,000"),
        ({"level": 1.0}, ValueError, "`level` must be a number with 0 < level < 1, got 1.0"),
        ({"mean_fraction": 0.0}, ValueError, "`mean_fraction`"),
        ({"beta": 2.0}, ValueError, "`beta`"),
        ({"bounds": (0.0, 1.0)}, TypeError, "`bounds` must be a GVDPBounds, got tuple"),
        ({"bounds": GVDPBounds([0.0], 1.0, [1.0])}, ValueError, "d = 1 coordinates .* d = 2"),
        ({"noise": object()}, TypeError, "`noise` must be"),
        ({"noise": "loud"}, ValueError, "`noise` must be 'simulation', 'secure'"),
        ({"rng": "seed"}, TypeError, "`rng`"),
    ],
)
def test_gvdp_argument_errors_name_the_parameter(xy, changes, error, pattern):
    with pytest.raises(error, match=pattern):
        run(xy, **changes)


def test_data_errors_name_the_problem(xy):
    X, y = xy
    with pytest.raises(ValueError, match="`estimator` must be one of"):
        run(xy, "median")
    with pytest.raises(TypeError, match="`estimator` must be a string"):
        run(xy, 3)
    with pytest.raises(ValueError, match=r"`X` has rank 1 < 2 columns"):
        run((np.column_stack([X[:, 1], 2 * X[:, 1]]), y))
    with pytest.raises(ValueError, match="`y` must have shape"):
        run((X, y[:-1]))
    with pytest.raises(ValueError, match="`X` must be finite"):
        run((np.where(X == X[0, 1], np.nan, X), y))
    with pytest.raises(TypeError, match="`x` must be a numeric array"):
        run(np.array(["a", "b"]), "mean")
    with pytest.raises(ValueError, match="`y` must hold 0/1 outcomes"):
        run(xy, "logistic")
    with pytest.raises(ValueError, match="`weights` must be > 0"):
        run((y, np.where(y > 0, 1.0, 0.0)), "weighted_mean", bounds=GVDPBounds([0.0], 1.0, [1.0]))
    with pytest.raises(ValueError, match=r"must have keys \['X', 'y'\]"):
        run({"X": X})
    with pytest.raises(TypeError, match="`data` must be a pair"):
        run(X)
    with pytest.raises(TypeError, match="`data` for 'mean' must be an array"):
        run((y, y), "mean", bounds=GVDPBounds([0.0], 1.0, [1.0]))
    with pytest.raises(ValueError, match="`data` must have key 'x'"):
        run({"y": y}, "mean", bounds=GVDPBounds([0.0], 1.0, [1.0]))


def test_a_singular_resample_is_fitted_by_least_norm_not_refused():
    """A binary column with three 1s: the full X has rank 2 but most subsets have no 1 at all.
    Their resamples are fitted by the pseudo-inverse (slope 0 where the column is all 0), so
    the release goes on, and its intercept still estimates the mean of y."""
    X = np.column_stack([np.ones(1_000), np.zeros(1_000)])
    X[:3, 1] = 1.0
    with pytest.raises(np.linalg.LinAlgError):  # the subsets really are singular
        np.linalg.solve(X[3:100].T @ X[3:100], X[3:100].T @ np.arange(3.0, 100.0))
    y = np.linspace(0.0, 9.0, 1_000)  # mean 4.5, inside the box of radius 10
    result = run((X, y), rho=100.0, rng=0)
    assert np.all(np.isfinite(result.estimate))
    assert result.estimate[0] == pytest.approx(4.5, abs=1.0)


def test_stratified_and_coverage_argument_errors():
    data = [np.zeros(100), np.ones(100)]
    bounds = GVDPBounds([0.0], 1.0, [1.0])
    with pytest.raises(ValueError, match="`shares` must have one entry per group"):
        gvdp_stratified(data, "mean", [1.0], k=5, rho=1.0, resamples=3, bounds=bounds)
    with pytest.raises(ValueError, match="`k` must be one value or one per group"):
        gvdp_stratified(data, "mean", [0.5, 0.5], k=[5], rho=1.0, resamples=3, bounds=bounds)
    with pytest.raises(TypeError, match="`generate` must be a function"):
        gvdp_coverage(
            np.zeros(10), [0.0], "mean", replications=2, k=2, rho=1.0, resamples=3, bounds=bounds
        )
    with pytest.raises(ValueError, match="`truth` must have d = 1 entries"):
        gvdp_coverage(
            lambda rng: rng.normal(size=100),
            [0.0, 1.0],
            "mean",
            replications=2,
            k=2,
            rho=1.0,
            resamples=3,
            bounds=bounds,
        )
