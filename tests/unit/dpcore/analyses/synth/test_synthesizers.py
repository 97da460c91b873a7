"""Unit tests of the DP synthesizers (stratification paper, Rosenblatt, Stoyanovich & Musco,
AAAI 2024, arXiv appendix C): domains, public shares, noise scales and budgets, reproducibility.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.synth.encoding import bucketize
from dpcore.analyses.synth.synthesizers import (
    MAX_HISTOGRAM_CELLS,
    MAX_MWEM_CELLS,
    SyntheticData,
    synthesize,
)
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.metrics import (
    workload_error,
)
from tests.noise import RecordingNoise

Z = 5.0  # standard errors allowed in every statistical check


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
    from dpcore.foundations.shares import PublicShares

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
