"""Unit tests for ``dpcore.analyses.sampling`` (DP samplers, synthesizers) and the synthetic-data metrics of
``dpcore.metrics`` (workload error, errors of means, parity error, max disparity).

Samplers follow Raskhodnikova, Sivakumar, Smith & Swanberg (NeurIPS 2021); synthesizers and
metrics the stratification paper (Rosenblatt, Stoyanovich & Musco, AAAI 2024, arXiv appendix C).
Randomized checks are seeded; their tolerances come from computed standard errors, with z = 5
(a false failure has probability below 1e-5 per check).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcore.accounting import PureDP, sequential
from dpcore.analyses.sampling.samplers import (
    bernoulli_sample,
    bernoulli_sampler_epsilon,
    clipped_proportion,
    kary_distribution,
    kary_laplace_scale,
    kary_sample,
    product_bernoulli_min_n,
    product_bernoulli_sample,
    product_bernoulli_sampler_rho,
    project_simplex,
)
from dpcore.analyses.synth.encoding import bucketize
from dpcore.analyses.synth.synthesizers import (
    MAX_HISTOGRAM_CELLS,
    MAX_MWEM_CELLS,
    SyntheticData,
    synthesize,
)
from dpcore.datasets import load_demo
from dpcore.mechanisms import SimulationNoise
from dpcore.metrics import (
    GroupErrors,
    max_disparity,
    mean_error_by_group,
    synthetic_parity_error,
    workload_error,
    workload_error_by_group,
)

Z = 5.0  # standard errors allowed in every statistical check


class RecordingNoise(SimulationNoise):
    """numpy noise that records the Laplace scale of every call."""

    def __init__(self, *, rng=None, zero: bool = False) -> None:
        super().__init__(rng=rng)
        self.calls: list[tuple[tuple[int, ...], float]] = []
        self.zero = zero

    def add_laplace(self, values, scale):
        values = np.asarray(values, dtype=float)
        self.calls.append((values.shape, float(scale)))
        return values.copy() if self.zero else super().add_laplace(values, scale)


# ---------------------------------------------------------------------------------------------
# Projection onto the simplex
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        ([0.5, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]),
        ([-1.0, 2.0, 0.2], [0.0, 1.0, 0.0]),
        ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]),
        ([0.6, 0.6], [0.5, 0.5]),
        ([0.3, -0.6, 0.1], [0.6, 0.0, 0.4]),
        ([0.3, -0.1, 0.1], [16 / 30, 4 / 30, 10 / 30]),
    ],
)
def test_project_simplex_known_values(x, expected):
    np.testing.assert_allclose(project_simplex(np.array(x)), expected, atol=1e-12)


def test_project_simplex_is_the_euclidean_and_an_l1_nearest_point():
    rng = np.random.default_rng(0)
    x = rng.normal(0.2, 0.5, size=(500, 6))
    q = project_simplex(x)
    assert np.all(q >= 0)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    # KKT: x - q equals the threshold τ on the support and x <= τ off it.
    tau = np.max(np.where(q > 0, x - q, -np.inf), axis=1, keepdims=True)
    np.testing.assert_allclose(np.where(q > 0, x - q, tau), np.broadcast_to(tau, x.shape))
    assert np.all(np.where(q == 0, x <= tau + 1e-12, True))
    # No point of the simplex is closer in L2; the L1 distance is the L1 distance to the simplex.
    others = rng.dirichlet(np.ones(6), size=2000)
    dist_q = np.linalg.norm(x - q, axis=1)
    assert np.all(np.linalg.norm(x[:, None] - others[None], axis=2) >= dist_q[:, None] - 1e-12)
    l1_to_simplex = np.clip(-x, 0, None).sum(1) + np.abs(np.clip(x, 0, None).sum(1) - 1)
    np.testing.assert_allclose(np.abs(x - q).sum(axis=1), l1_to_simplex, atol=1e-12)


@pytest.mark.parametrize("bad", [[], [1.0, np.nan], [np.inf, 0.0]])
def test_project_simplex_rejects_bad_input(bad):
    with pytest.raises(ValueError, match="`values` must be a non-empty array of finite"):
        project_simplex(np.array(bad))


# ---------------------------------------------------------------------------------------------
# k-ary sampler (Alg. 3)
# ---------------------------------------------------------------------------------------------


def _dataset(counts: list[int]) -> np.ndarray:
    return np.repeat(np.arange(len(counts)), counts)


def test_kary_noise_scale_is_two_over_epsilon_n():
    data = _dataset([5, 3, 2])
    noise = RecordingNoise(zero=True)
    probs = kary_distribution(data, 3, 0.5, noise=noise)
    assert noise.calls == [((1, 3), 2 / (0.5 * 10))] == [((1, 3), kary_laplace_scale(10, 0.5))]
    np.testing.assert_allclose(probs, [0.5, 0.3, 0.2])  # no noise: the empirical distribution


def test_kary_shapes_and_simplex():
    data = _dataset([5, 3, 2])
    probs = kary_distribution(data, 4, 1.0, runs=50, rng=0)
    assert probs.shape == (50, 4) and np.all(probs >= 0)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    assert np.ndim(kary_sample(data, 4, 1.0, rng=0)) == 0
    assert kary_sample(data, 4, 1.0, size=7, rng=0).shape == (7,)
    assert kary_sample(data, 4, 1.0, runs=3, rng=0).shape == (3,)
    out = kary_sample(data, 4, 1.0, size=7, runs=3, rng=0)
    assert out.shape == (3, 7) and out.min() >= 0 and out.max() <= 3
    np.testing.assert_array_equal(out, kary_sample(data, 4, 1.0, size=7, runs=3, rng=0))


def test_kary_sampler_with_secure_noise():
    noise = RecordingNoise(zero=True)
    assert kary_sample(_dataset([5, 3, 2]), 3, 1.0, size=4, noise=noise, rng=0).shape == (4,)
    assert noise.calls == [((1, 3), 0.2)]
    out = kary_sample(_dataset([5, 3, 2]), 3, 1.0, size=4, noise="secure", rng=0)
    assert out.shape == (4,) and set(out.tolist()) <= {0, 1, 2}


@pytest.mark.parametrize(
    ("data", "k", "error"),
    [
        (np.array([0, 1, 5]), 3, ValueError),
        (np.array([-1, 0]), 3, ValueError),
        (np.array([], dtype=int), 3, ValueError),
        (np.array([0.0, 1.0]), 3, TypeError),
    ],
)
def test_kary_rejects_bad_data(data, k, error):
    with pytest.raises(error, match="`data`"):
        kary_sample(data, k, 1.0, rng=0)


@pytest.mark.parametrize("epsilon", [0, -1, math.nan, math.inf])
def test_kary_rejects_bad_epsilon(epsilon):
    with pytest.raises(ValueError, match="`epsilon` must be a finite number > 0"):
        kary_sample(_dataset([2, 2]), 2, epsilon, rng=0)


def _tv_tolerance(p: np.ndarray, runs: int) -> float:
    """Z standard errors of every coordinate of an empirical distribution, summed and halved."""
    return 0.5 * Z * float(np.sum(np.sqrt(p * (1 - p) / runs)))


def test_kary_sampler_is_unbiased_when_noise_is_small():
    """n ε = 2000: no coordinate reaches 0, Π is affine in the noise, so E[output] = p_D exactly."""
    counts = [800, 600, 300, 200, 100]
    p = np.array(counts) / 2000
    runs = 200_000
    freq = np.bincount(kary_sample(_dataset(counts), 5, 1.0, runs=runs, rng=1), minlength=5) / runs
    se = np.sqrt(p * (1 - p) / runs)
    assert np.all(np.abs(freq - p) <= Z * se)
    assert 0.5 * np.abs(freq - p).sum() <= _tv_tolerance(p, runs)


def test_kary_sampler_accuracy_within_theorem_bound_when_noise_is_large():
    """n ε = 25: projection is active; Thm. 1.4's proof bounds TV(output, p_D) by E‖Z‖₁ = kb."""
    counts, epsilon = [20, 15, 10, 5, 0], 0.5
    p, k = np.array(counts) / 50, 5
    runs = 200_000
    freq = np.bincount(kary_sample(_dataset(counts), k, epsilon, runs=runs, rng=2), minlength=k)
    tv = 0.5 * np.abs(freq / runs - p).sum()
    bound = k * kary_laplace_scale(50, epsilon)
    assert tv <= bound + _tv_tolerance(p, runs)


@pytest.mark.slow
def test_kary_sampler_privacy_on_neighbours():
    """P[out = j | D] <= e^ε P[out = j | D'] for D' = D with one record replaced (0 -> 2)."""
    epsilon, runs = 1.0, 400_000
    d, d_prime = _dataset([6, 3, 1]), _dataset([5, 3, 2])
    p = kary_distribution(d, 3, epsilon, runs=runs, rng=3)
    q = kary_distribution(d_prime, 3, epsilon, runs=runs, rng=4)
    # The output probabilities are the means of the private distributions over runs.
    slack = Z * (p.std(0) + math.exp(epsilon) * q.std(0)) / math.sqrt(runs)
    for a, b in ((p, q), (q, p)):
        assert np.all(a.mean(0) <= math.exp(epsilon) * b.mean(0) + slack)


# ---------------------------------------------------------------------------------------------
# Bounded-bias Bernoulli sampler (Thm. 6.1)
# ---------------------------------------------------------------------------------------------


def _bits(ones: int, n: int) -> np.ndarray:
    return np.r_[np.ones(ones), np.zeros(n - ones)]


@pytest.mark.parametrize("n", [3, 10, 29, 30, 31, 100])
def test_bernoulli_sampler_exact_privacy_on_all_neighbours(n):
    """Output probabilities are the clipped proportions; check every replace-one pair exactly."""
    epsilon = bernoulli_sampler_epsilon(n)
    assert epsilon == pytest.approx(3 / n, rel=1e-12)
    c = np.array([clipped_proportion(_bits(k, n)) for k in range(n + 1)])
    np.testing.assert_allclose(c, np.clip(np.arange(n + 1) / n, 1 / 3, 2 / 3))
    for out in (c, 1 - c):  # P[out = 1] and P[out = 0]
        ratios = np.abs(np.diff(np.log(out)))  # neighbours: k ones vs k + 1 ones
        assert ratios.max() <= epsilon
        assert ratios.max() <= math.log1p(3 / n) + 1e-12  # the exact worst case is below 3/n


@pytest.mark.slow
def test_bernoulli_sampler_empirical_privacy_at_worst_pair():
    n, runs = 30, 1_000_000
    epsilon = bernoulli_sampler_epsilon(n)
    d, d_prime = _bits(11, n), _bits(10, n)  # clipped proportions 11/30 and 1/3: the worst pair
    p = bernoulli_sample(d, runs=runs, rng=5).mean()
    q = bernoulli_sample(d_prime, runs=runs, rng=6).mean()
    se = math.sqrt(0.25 / runs)
    slack = Z * se * (1 + math.exp(epsilon))
    for a, b in ((p, q), (q, p), (1 - p, 1 - q), (1 - q, 1 - p)):
        assert a <= math.exp(epsilon) * b + slack
    # The check can fail: the observed ratio exceeds e^{ε/4}, so a 4x understated ε is caught.
    assert p - Z * se > math.exp(epsilon / 4) * (q + Z * se)


def test_bernoulli_sampler_accuracy_for_interior_bias():
    """Bias 1/2: clipping has probability < 1e-5 at n = 300, so the output is Bernoulli(1/2)."""
    datasets = np.random.default_rng(7).random((40_000, 300)) < 0.5
    out = bernoulli_sample(datasets, rng=8)
    assert out.shape == (40_000,) and set(np.unique(out)) <= {0, 1}
    assert abs(out.mean() - 0.5) <= Z * math.sqrt(0.25 / out.size)


def test_bernoulli_sampler_shapes_and_bounds():
    bits = np.zeros((2, 5, 12))
    assert bernoulli_sample(bits, rng=0).shape == (2, 5)
    assert bernoulli_sample(bits, runs=4, rng=0).shape == (4, 2, 5)
    assert bernoulli_sampler_epsilon(40, bounds=(1 / 4, 3 / 4)) == pytest.approx(4 / 40)
    assert clipped_proportion(_bits(1, 10), bounds=(1 / 4, 3 / 4)) == 1 / 4


@pytest.mark.parametrize(
    ("bits", "kwargs", "error", "match"),
    [
        (np.array([0, 1, 2]), {}, ValueError, "0/1"),
        (np.array([]), {}, ValueError, "non-empty"),
        (np.array(["0", "1"]), {}, ValueError, "0/1"),
        (np.array([0, 1]), {"bounds": (0.7, 0.3)}, ValueError, "0 < low < high < 1"),
        (np.array([0, 1]), {"bounds": 0.5}, TypeError, "pair of numbers"),
        (np.array([0, 1]), {"runs": 0}, ValueError, "`runs`"),
    ],
)
def test_bernoulli_sampler_rejects_bad_input(bits, kwargs, error, match):
    with pytest.raises(error, match=match):
        bernoulli_sample(bits, rng=0, **kwargs)


# ---------------------------------------------------------------------------------------------
# Product of bounded-bias Bernoullis (Thm. 6.4, zCDP)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "d"), [(10, 1), (100, 7), (1000, 50)])
def test_product_sampler_rho_is_composition_of_pure_dp_coordinates(n, d):
    rho = product_bernoulli_sampler_rho(n, d)
    assert rho == pytest.approx(9 * d / (2 * n**2), rel=1e-12)
    composed = sequential(*[PureDP(bernoulli_sampler_epsilon(n)).to_zcdp()] * d)
    assert rho == pytest.approx(composed.rho, rel=1e-12)


@pytest.mark.parametrize(("rho", "d"), [(0.5, 1), (0.1, 20), (1e-3, 5)])
def test_product_sampler_min_n_is_smallest_n_meeting_rho(rho, d):
    n = product_bernoulli_min_n(rho, d)
    assert n >= 3 * math.sqrt(d / (2 * rho)) - 1e-9
    assert product_bernoulli_sampler_rho(n, d) <= rho < product_bernoulli_sampler_rho(n - 1, d)


def test_product_sampler_draws_independent_clipped_proportions():
    rng = np.random.default_rng(9)
    data = rng.random((300, 4)) < np.array([0.4, 0.5, 0.6, 0.2])
    c = clipped_proportion(data, axis=0)
    assert c[3] == 1 / 3  # the 0.2 column is clipped up
    runs = 200_000
    out = product_bernoulli_sample(data, runs=runs, rng=10)
    assert out.shape == (runs, 4) and out.dtype == np.int8
    assert np.all(np.abs(out.mean(0) - c) <= Z * np.sqrt(c * (1 - c) / runs))
    both = c[0] * c[1]  # a product distribution: coordinates independent
    assert abs((out[:, 0] & out[:, 1]).mean() - both) <= Z * math.sqrt(both * (1 - both) / runs)
    assert product_bernoulli_sample(data, rng=10).shape == (4,)


def test_product_sampler_rejects_non_matrix():
    with pytest.raises(ValueError, match="`data` must be a non-empty array"):
        product_bernoulli_sample(np.zeros(5), rng=0)


# ---------------------------------------------------------------------------------------------
# Synthesizers
# ---------------------------------------------------------------------------------------------

GROUP_SHARES = {"a": 0.5, "b": 0.3, "c": 0.2}
SMALL_EDGES = {"age": [30, 50]}


@pytest.fixture(scope="module")
def small_frame() -> pd.DataFrame:
    """3,000 rows: a group, a colour that depends on it, a numeric age and a yes/no flag."""
    rng = np.random.default_rng(11)
    group = rng.choice(["a", "b", "c"], size=3000, p=[0.5, 0.3, 0.2])
    colour_probs = {"a": [0.7, 0.1, 0.1, 0.1], "b": [0.1, 0.7, 0.1, 0.1], "c": [0.1, 0.1, 0.1, 0.7]}
    colour = [rng.choice(["red", "green", "blue", "grey"], p=colour_probs[g]) for g in group]
    return pd.DataFrame(
        {
            "group": pd.array(group, dtype="string"),
            "colour": colour,
            "age": rng.integers(18, 80, size=3000),
            "flag": rng.random(3000) < 0.3,
        }
    )


def _synth(frame, method="independent", **kwargs):
    options = {"epsilon": 1.0, "n_rows": 1000, "rng": 0, "edges": SMALL_EDGES}
    return synthesize(frame, ["group", "colour", "age", "flag"], method=method, **options | kwargs)


@pytest.mark.parametrize("method", ["independent", "mwem", "histogram"])
@pytest.mark.parametrize("stratified", [False, True])
def test_synthesize_preserves_columns_and_domain(small_frame, method, stratified):
    kwargs = {"strata": "group", "shares": GROUP_SHARES} if stratified else {}
    result = _synth(small_frame, method, **kwargs)
    assert isinstance(result, SyntheticData)
    frame = result.frame
    assert list(frame.columns) == ["group", "colour", "age", "flag"]
    assert len(frame) == 1000 == int(result.group_rows.sum())
    expected = {
        "group": ("a", "b", "c"),
        "colour": ("blue", "green", "grey", "red"),
        "age": ("< 30", "[30, 50)", "≥ 50"),
        "flag": ("False", "True"),
    }
    assert dict(result.domain) == expected
    for col, cats in expected.items():
        assert isinstance(frame[col].dtype, pd.CategoricalDtype)
        assert tuple(frame[col].cat.categories) == cats
    assert result.budget == PureDP(1.0) and result.method == method
    assert result.domain_from_data == ("group", "colour", "flag")
    assert result.strata == (("group",) if stratified else ())
    assert bool(result.selected) == (method == "mwem")


def test_stratified_rows_follow_public_shares(small_frame):
    result = _synth(small_frame, "mwem", strata="group", shares=GROUP_SHARES, n_rows=1001)
    # 1001 × (0.5, 0.3, 0.2) = (500.5, 300.3, 200.2): largest remainder gives a the extra row.
    assert result.group_rows.to_dict() == {"a": 501, "b": 300, "c": 200}
    assert result.frame["group"].value_counts().to_dict() == {"a": 501, "b": 300, "c": 200}
    assert set(result.selected) == {"a", "b", "c"}


def test_stratified_groups_learn_their_own_structure(small_frame):
    """With a large ε every group's colour distribution is recovered from its own rows."""
    result = _synth(small_frame, "independent", strata="group", shares=GROUP_SHARES, epsilon=1e4)
    real = small_frame.groupby("group")["colour"].value_counts(normalize=True)
    fake = result.frame.groupby("group", observed=True)["colour"].value_counts(normalize=True)
    for g, n_g in result.group_rows.items():
        diff = (real[g] - fake[g].reindex(real[g].index, fill_value=0)).abs().max()
        assert diff <= Z * 0.5 / math.sqrt(n_g)


def test_histogram_with_large_epsilon_reproduces_the_joint(small_frame):
    result = _synth(small_frame, "histogram", epsilon=1e5, n_rows=20_000)
    real = bucketize(small_frame, SMALL_EDGES)
    assert workload_error(real, result.frame, way=3) < 0.08


def test_shares_accept_tuples_labels_and_public_shares(small_frame):
    from dpcore.shares import PublicShares

    two = {("a", "False"): 0.5, "b × True": 0.5, ("c", "True"): 0.0, ("c", "False"): 0.0}
    two |= {("a", "True"): 0.0, ("b", "False"): 0.0}
    result = _synth(small_frame, strata=["group", "flag"], shares=two)
    assert result.group_rows.to_dict()["a × False"] == 500
    public = PublicShares(np.array([0.2, 0.8]), "table", "t", labels=("a", "b"))
    frame = small_frame[small_frame["group"] != "c"]
    assert _synth(frame, strata="group", shares=public).group_rows.tolist() == [200, 800]


def test_group_with_share_but_no_rows_is_fitted_to_noise(small_frame):
    shares = {"a": 0.4, "b": 0.3, "c": 0.2, "d": 0.1}
    result = _synth(
        small_frame, "mwem", strata="group", shares=shares, domain={"group": list("abcd")}
    )
    assert result.group_rows["d"] == 100
    assert "group" not in result.domain_from_data


def test_noise_scales_and_budget_of_each_method(small_frame):
    def calls(method, **kwargs):
        noise = RecordingNoise(rng=0)
        _synth(small_frame, method, epsilon=2.0, noise=noise, **kwargs)
        return noise.calls

    d = 4  # group, colour, age, flag
    assert calls("independent") == [((k,), d / 2.0) for k in (3, 4, 3, 2)]
    assert calls("histogram") == [((3, 4, 3, 2), 1 / 2.0)]
    rounds = 5
    mwem = calls("mwem", rounds=rounds)
    init, rest = mwem[:d], mwem[d:]
    assert [scale for _, scale in init] == [d / (0.3 * 2.0)] * d
    selections, measurements = rest[0::2], rest[1::2]
    assert len(selections) == len(measurements) == rounds
    assert all(scale == 1.0 for _, scale in selections)  # Gumbel draws for the exp. mechanism
    scale = 2 * rounds / (0.7 * 2.0)
    assert all(s == pytest.approx(scale) for _, s in measurements)
    # ε = init (d histograms: sensitivity d) + per round (selection ε_r/2 + measurement ε_r/2, sensitivity 1).
    spent = d / init[0][1] + sum(2 / s for _, s in measurements)
    assert spent == pytest.approx(2.0)
    # Stratified: each group's model gets the full budget (parallel composition).
    assert calls("independent", strata="group", shares=GROUP_SHARES) == [
        ((k,), 3 / 2.0) for _ in range(3) for k in (4, 3, 2)
    ]


def test_synthesize_is_reproducible(small_frame):
    a = _synth(small_frame, "mwem", rng=3).frame
    pd.testing.assert_frame_equal(a, _synth(small_frame, "mwem", rng=3).frame)
    assert not a.equals(_synth(small_frame, "mwem", rng=4).frame)


def test_synthesize_with_secure_noise(small_frame):
    result = _synth(small_frame.iloc[:300], "mwem", noise="secure", rounds=2)
    assert result.noise == "secure" and len(result.frame) == 1000


def test_synthesize_accepts_any_sequence_of_column_names(small_frame):
    index = pd.Index(["colour", "flag"])
    result = synthesize(small_frame, index, method="histogram", epsilon=1.0, n_rows=5, rng=0)
    assert list(result.frame.columns) == ["colour", "flag"]


def test_histogram_refuses_large_domain():
    domain = {f"c{j}": [str(i) for i in range(40)] for j in range(4)}
    frame = pd.DataFrame({c: ["0", "1"] for c in domain})
    with pytest.raises(ValueError, match=r"2,560,000 cells, above its limit of 1,000,000"):
        synthesize(frame, method="histogram", epsilon=1.0, n_rows=5, domain=domain, rng=0)
    assert 40**4 > MAX_HISTOGRAM_CELLS and 40**5 > MAX_MWEM_CELLS
    domain["c4"] = domain["c0"]
    frame["c4"] = "0"
    with pytest.raises(ValueError, match=r"102,400,000 cells"):
        synthesize(frame, method="mwem", epsilon=1.0, n_rows=5, domain=domain, rng=0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"columns": ["colour", "height"]}, ValueError, "unknown column"),
        ({"columns": ["colour", "age"], "edges": None}, ValueError, "needs public bucket edges"),
        ({"epsilon": 0}, ValueError, "`epsilon` must be a finite number > 0, got 0"),
        ({"epsilon": -1.0}, ValueError, "`epsilon` must be a finite number > 0, got -1.0"),
        ({"epsilon": math.nan}, ValueError, "`epsilon` must be a finite number > 0"),
        ({"epsilon": math.inf}, ValueError, "`epsilon` must be a finite number > 0"),
        ({"epsilon": "1"}, TypeError, "`epsilon` must be a real number"),
        ({"method": "gan"}, ValueError, "`method` must be one of"),
        ({"n_rows": 0}, ValueError, "`n_rows`"),
        ({"strata": "group"}, ValueError, "`shares` must be given exactly when `strata` is"),
        ({"shares": GROUP_SHARES}, ValueError, "`shares` must be given exactly when `strata`"),
        ({"strata": "group", "shares": {"a": 0.6, "b": 0.4}}, ValueError, "without a public share"),
        ({"strata": "group", "shares": {"a": 0.5, "b": 0.3, "c": 0.3}}, ValueError, "sum to 1"),
        ({"strata": "group", "shares": {"a": 1.0, "z": 0.0}}, ValueError, "not a category"),
        ({"strata": "group", "shares": [0.5, 0.5]}, TypeError, "`shares` must be a PublicShares"),
        (
            {"columns": ["group"], "strata": "group", "shares": GROUP_SHARES, "edges": None},
            ValueError,
            "besides",
        ),
        ({"edges": {"colour": [1, 2]}}, ValueError, "not numeric"),
        ({"edges": {"age": [50, 30]}}, ValueError, "strictly increasing"),
        ({"columns": ["group", "flag"], "edges": {"flag": [0.5]}}, ValueError, "not numeric"),
        ({"edges": {"age": [30], "flag": [0.5]}}, ValueError, "not synthesized columns"),
        ({"domain": {"colour": ["red"]}}, ValueError, "outside `domain"),
        ({"domain": {"flag": ["True"]}}, ValueError, "`domain` was given for \\['flag'\\]"),
        ({"rounds": 0}, ValueError, "`rounds`"),
        ({"noise": 3}, TypeError, "`noise`"),
    ],
)
def test_synthesize_rejects_bad_input(small_frame, kwargs, error, match):
    options = {
        "columns": ["group", "colour", "age"],
        "method": "mwem",
        "epsilon": 1.0,
        "n_rows": 10,
        "edges": SMALL_EDGES,
        "rng": 0,
    }
    with pytest.raises(error, match=match):
        synthesize(small_frame, **options | kwargs)


def test_synthesize_needs_categorical_columns_and_a_frame(small_frame):
    with pytest.raises(ValueError, match="no categorical columns"):
        synthesize(small_frame[["age"]], method="independent", epsilon=1.0, n_rows=5)
    with pytest.raises(TypeError, match="`frame` must be a pandas DataFrame"):
        synthesize(small_frame.to_numpy(), method="independent", epsilon=1.0, n_rows=5)
    missing = small_frame.assign(colour=small_frame["colour"].where(small_frame.index > 0))
    with pytest.raises(ValueError, match="missing values"):
        synthesize(missing, ["colour"], method="independent", epsilon=1.0, n_rows=5)


def test_bucketize_uses_public_edges_and_upper_bucket_at_an_edge():
    frame = pd.DataFrame({"age": [10, 30, 49, 50, 90], "name": list("abcde")})
    out = bucketize(frame, {"age": [30, 50]})
    assert out["age"].astype(str).tolist() == ["< 30", "[30, 50)", "[30, 50)", "≥ 50", "≥ 50"]
    assert out["name"].tolist() == list("abcde")
    with pytest.raises(ValueError, match="unknown column 'height'"):
        bucketize(frame, {"height": [1]})


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


# ---------------------------------------------------------------------------------------------
# Demo data: stratified vs vanilla (race × sex, ε = 1)
# ---------------------------------------------------------------------------------------------

DEMO_COLUMNS = ["age", "workclass", "education", "marital_status", "occupation"]
DEMO_COLUMNS += ["race", "sex", "hours_per_week"]
DEMO_EDGES = {"age": [25, 35, 45, 55, 65], "hours_per_week": [20, 35, 41, 50]}
STRATA = ["race", "sex"]


@pytest.fixture(scope="module")
def demo():
    frame = load_demo()[DEMO_COLUMNS]
    shares = (frame.groupby(STRATA).size() / len(frame)).to_dict()
    return frame, bucketize(frame, DEMO_EDGES), shares


def _demo_errors(demo, method, seed):
    frame, real, shares = demo
    common = {"method": method, "epsilon": 1.0, "n_rows": len(frame), "edges": DEMO_EDGES}
    others = [c for c in DEMO_COLUMNS if c not in STRATA]
    out = {}
    for name, kwargs in (("vanilla", {}), ("stratified", {"strata": STRATA, "shares": shares})):
        synthetic = synthesize(frame, DEMO_COLUMNS, rng=seed, **common, **kwargs).frame
        out[name] = (
            workload_error_by_group(real, synthetic, STRATA, others),
            synthetic_parity_error(mean_error_by_group(real, synthetic, STRATA, others)),
        )
    return out


@pytest.mark.slow
def test_demo_stratified_vs_vanilla_independent(demo):
    """Independent marginals, 5 seeds. Robust in every seed: stratification lowers the overall
    3-way workload error (about 0.46 vs 0.50) and the parity error of means (about 0.19 vs 0.31).
    The worst-group workload error is lower for stratified in 4 of 5 seeds only (about 1.18-1.39
    vs 1.32-1.41), so its direction is not asserted.
    """
    for seed in range(5):
        errors = _demo_errors(demo, "independent", seed)
        (vanilla, vanilla_parity), (strat, strat_parity) = errors["vanilla"], errors["stratified"]
        assert len(strat.groups) == 10
        assert strat.overall < vanilla.overall
        assert strat_parity < vanilla_parity


@pytest.mark.slow
def test_demo_stratified_vs_vanilla_mwem(demo):
    """MWEM, 5 seeds. Robust in every seed, and against the paper's hopes: vanilla MWEM has the
    lower worst-group 3-way workload error (about 1.09-1.17 vs 1.48-1.60). The worst groups
    (about 110-190 rows, e.g. "Other × Female") cannot pay for 3-way marginals at ε = 1 with
    their own budget, while the vanilla model lends them the population's structure.
    """
    for seed in range(5):
        errors = _demo_errors(demo, "mwem", seed)
        vanilla, strat = errors["vanilla"][0], errors["stratified"][0]
        assert vanilla.worst < strat.worst
