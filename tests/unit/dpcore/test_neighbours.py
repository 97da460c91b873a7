"""The release path on neighbouring datasets: D, and D with one person added.

Every analysis is released on both with the same simulation noise seed. Whatever an export says
beyond the DP outputs (metadata, the script, the report's table of facts) must then be the same
on both: it may come from the user's declarations, never from the confidential rows. The one
noise-free column that may follow the data is the public share, and only where the user declared
the data's own group sizes public (``share_source="data"``); with a public share table it is
the table's.
"""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import ANALYSES
from dpcore.analyses.gvdp import GvdpModel, GvdpSettings
from dpcore.analyses.gvdp.aggregate import gvdp_rows_query
from dpcore.analyses.mean import MEAN, GroupValues, LaplaceMean, MeanSettings
from dpcore.analyses.mean.found_bounds import PrivatelyBounded
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.analyses.ratio import RatioSettings
from dpcore.analyses.sample import SampleSettings
from dpcore.analyses.synth import SynthSettings
from dpcore.engines import PandasEngine
from dpcore.engines.blb import GROUP, K_COLUMN, SCALE_COLUMN, SUBSET, BlbQuery
from dpcore.foundations import mechanisms, private_bounds
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.privacy_unit import PrivacyUnit
from dpcore.foundations.private_bounds import PrivateBounds, candidate_grid, private_quantile
from dpcore.release import (
    DatasetRef,
    PlanHeader,
    ReleaseRecord,
    public_metadata,
    release,
    to_csv,
    to_json,
    to_script,
)
from strata_ui import static_image
from strata_ui.report import html_report
from tests.unit.dpcore.test_engines_gvdp import regression_rows
from tests.unit.dpcore.test_mechanisms import N_PRIVACY, privacy_violations

GVDP_BY = GroupingSpec(by=("g",))
GVDP_OLS = GvdpModel("ols", "y", ("x", "z"))
SETTINGS = {
    # Group sizes declared public, as every spec below but the declared list allows; the mean with
    # private sizes is released on its own below.
    "mean": MeanSettings(value="hours_per_week", clip_low=0, clip_high=100, n_public=True),
    "ratio": RatioSettings(),
    "gvdp": GvdpSettings(),
    "synth": SynthSettings(method="independent", n_rows=500),
    "sample": SampleSettings(columns=("workclass", "education"), group="Other × Female"),
}
BY = ("race", "sex")
# Public shares of the ten race × sex groups, as a user would type them from a census table.
SHARE_TABLE = tuple(
    (f"{race} × {sex}", 0.1)
    for race in ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")
    for sex in ("Female", "Male")
)
# The same groups declared as a public list, kept whatever their sizes: what a release with
# private group sizes needs.
DECLARED = GroupingSpec(
    by=BY, share_source="table", share_table=SHARE_TABLE, small_groups="keep",
    categories=(
        ("race", ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")),
        ("sex", ("Female", "Male")),
    ),
)  # fmt: skip
SPECS = {
    "data sizes public": GroupingSpec(by=BY),
    "share table": GroupingSpec(by=BY, share_source="table", share_table=SHARE_TABLE),
    "declared list": DECLARED,
}
STAMP = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00")  # released_at, the one field that differs


@pytest.fixture(scope="module")
def neighbours() -> dict[str, pd.DataFrame]:
    """The demo, and the demo with one more person in its smallest race × sex group."""
    demo = load_demo()
    person = demo[(demo["race"] == "Other") & (demo["sex"] == "Female")].iloc[[0]]
    return {"D": demo, "D′": pd.concat([demo, person], ignore_index=True)}


@pytest.fixture(scope="module")
def new_category() -> dict[str, pd.DataFrame]:
    """The demo, and the demo with one more person of a race it has no row of."""
    demo = load_demo()
    person = demo.iloc[[0]].assign(race="Martian")
    return {"D": demo, "D′": pd.concat([demo, person], ignore_index=True)}


def released(frame, analysis, spec: GroupingSpec, tmp_path, name: str, settings=None):
    settings = SETTINGS[analysis.name] if settings is None else settings
    header = PlanHeader(DatasetRef.of(frame, "survey.csv"), spec, PureDP(1.0))
    plan = analysis.plan(analysis.statistics(frame, spec.build(frame), settings), settings, header)
    ledger = Ledger(tmp_path / f"{name}.sqlite", "default", ZCDP(10.0))
    return release(plan, ledger, noise="simulation", rng=11)


def without_stamp(text: str) -> str:
    return STAMP.sub("<released_at>", text)


def report_facts(record: ReleaseRecord) -> str:
    """The HTML report's tables of facts (everything before the outputs; the chart, which only
    draws the outputs, is left out)."""
    facts, outputs = html_report(record, figure=None).split("<h2>Outputs</h2>")
    assert outputs  # the split found the heading: the facts are not the whole report
    return facts


@pytest.mark.parametrize("spec_name", SPECS)
@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_nothing_but_dp_outputs_follows_one_added_person(
    neighbours, analysis, spec_name, tmp_path, monkeypatch
):
    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)
    spec = SPECS[spec_name]
    records = {n: released(f, analysis, spec, tmp_path, n) for n, f in neighbours.items()}
    assert_nothing_but_dp_outputs_differ(records["D"], records["D′"], analysis, spec, spec_name)


def test_intervals_with_sampling_error_add_nothing_but_dp_outputs(
    neighbours, tmp_path, monkeypatch
):
    """The paid variance estimates are noisy sums: the release publishes intervals built from
    them and nothing else, and each group's sum of squares moves by at most its sensitivity."""
    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)
    settings = dataclasses.replace(SETTINGS["mean"], sampling_error=True)
    spec = SPECS["share table"]
    records = {n: released(f, MEAN, spec, tmp_path, n, settings) for n, f in neighbours.items()}
    assert "sampling error" in records["D"].metadata["intervals"]
    assert_nothing_but_dp_outputs_differ(records["D"], records["D′"], MEAN, spec, "share table")
    squares = [
        MEAN.statistics(frame, spec.build(frame), settings).centred_squares(0.0, 100.0)
        for frame in neighbours.values()
    ]
    assert (abs(squares[1] - squares[0]) <= 50.0**2).all()  # h² = ((U − L)/2)²
    assert (squares[1] != squares[0]).sum() == 1  # only the person's group moved


def assert_nothing_but_dp_outputs_differ(before, after, analysis, spec, spec_name) -> None:
    def public(record):
        return {k: v for k, v in public_metadata(record.metadata).items() if k != "released_at"}

    assert public(before) == public(after)
    assert without_stamp(to_script(before)) == without_stamp(to_script(after))
    for export in (to_csv, to_json):
        heads = [
            [line for line in without_stamp(export(r)).splitlines() if line.startswith("#")]
            for r in (before, after)
        ]
        assert heads[0] == heads[1], export.__name__
    assert without_stamp(report_facts(before)) == without_stamp(report_facts(after))
    if analysis.name not in ("synth", "sample"):  # records, not one row per group
        assert list(before.frame["group"]) == list(after.frame["group"])
        assert list(before.frame.columns) == list(after.frame.columns)
    if "public_share" in before.frame:
        same = before.frame["public_share"].equals(after.frame["public_share"])
        assert same == (spec.share_source == "table"), spec_name


def released_groups(frames, analysis, spec, tmp_path, settings=None) -> list[list[str]]:
    records = [
        released(frame, analysis, spec, tmp_path, name, settings) for name, frame in frames.items()
    ]
    return [list(record.frame.get("group", [])) for record in records]


@pytest.mark.parametrize(
    "analysis", [a for a in ANALYSES if a.name not in ("synth", "sample")], ids=lambda a: a.name
)  # records (synthetic or sampled), not one row per group: no list of groups to compare
def test_a_new_category_shows_in_groups_from_the_data_but_not_in_declared_ones(
    new_category, analysis, tmp_path
):
    """Groups taken from the data give a new category away the moment one person of it is
    added; declared groups leave that person out, and the release's groups stay the same."""
    if analysis.name != "gvdp":  # GVDP refuses to fit a one-row group at all
        from_data = GroupingSpec(by=BY, min_group_size=1)
        before, after = released_groups(new_category, analysis, from_data, tmp_path)
        assert "Martian × Male" in after and "Martian × Male" not in before
    before, after = released_groups(new_category, analysis, DECLARED, tmp_path / "declared")
    assert before == after and not any("Martian" in group for group in after)


@pytest.mark.parametrize(
    ("share_source", "small_groups"),
    [("table", "keep"), ("noisy_counts", "keep"), ("noisy_counts", "merge"),
     ("noisy_counts", "drop")],
)  # fmt: skip
def test_private_sizes_with_declared_groups_publish_nothing_but_noise(
    neighbours, new_category, tmp_path, share_source, small_groups, monkeypatch
):
    """The mean with private group sizes and declared groups, on both kinds of neighbour: every
    noise-free field of every export is the same, the public shares included. Shares from the
    release's noisy counts are DP outputs: they move with the added person, as the estimates
    do, and only then. Small groups merged or dropped by those noisy counts (the smallest
    group, 109 people, against a minimum of 110 that one more person reaches) are listed the
    same way on both: the exact sizes decide nothing."""
    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)
    settings = MeanSettings(value="hours_per_week", clip_low=0, clip_high=100, n_public=False)
    spec = dataclasses.replace(
        DECLARED, share_source=share_source, small_groups=small_groups, min_group_size=110
    )
    if share_source == "noisy_counts":
        spec = dataclasses.replace(spec, share_table=())
    for kind, frames in {"added to a group": neighbours, "new category": new_category}.items():
        before, after = (
            released(frame, MEAN, spec, tmp_path / kind, name, settings)
            for name, frame in frames.items()
        )
        assert_nothing_but_dp_outputs_differ(before, after, MEAN, spec, share_source)
        share = "public_share" if share_source == "table" else "noisy_share"
        noise_free = ["level", "group"] + [share] * (share_source == "table")
        assert before.frame[noise_free].equals(after.frame[noise_free]), kind
        # The added person moves the noisy estimates, the intervals drawn from the noisy counts
        # (and the noisy shares); the undeclared one is left out entirely.
        for noisy in ["estimate", "low"] + [share] * (share_source == "noisy_counts"):
            moved = not before.frame[noisy].equals(after.frame[noisy])
            assert moved == (kind == "added to a group"), (kind, noisy)


def test_a_synthetic_release_names_the_category_lists_it_read_from_the_data(tmp_path):
    """Synthetic rows range over each modelled column's categories as found in the data, so one
    added person of a new workclass changes what the release may show. Every export must say
    so: the column is named as treated as public, with its list, and nothing else changes."""
    demo = load_demo()
    frames = {"D": demo, "D′": pd.concat([demo, demo.iloc[[0]].assign(workclass="Astronaut")])}
    synth = next(a for a in ANALYSES if a.name == "synth")
    before, after = (
        released(frame, synth, SPECS["declared list"], tmp_path, name)
        for name, frame in frames.items()
    )
    estimators = []
    for record in (before, after):
        estimator = public_metadata(record.metadata)["plan"]["estimator"]
        assert "workclass" in estimator["categories_treated_as_public"]
        assert set(estimator["categories"]) == set(estimator["categories_treated_as_public"])
        assert not {"race", "sex", "age"} & set(estimator["categories"])  # declared or bucketed
        for export in (to_csv, to_json):
            assert '"categories_treated_as_public": [' in export(record), export.__name__
        estimators.append(estimator)
    grown = estimators[1]["categories"].pop("workclass")
    assert set(grown) - set(estimators[0]["categories"].pop("workclass")) == {"Astronaut"}
    assert estimators[0] == estimators[1]  # the announced list is all that follows the person


# ---- GVDP's bag of little bootstraps where the rows lie -------------------------------------


def sums_of(frame: pd.DataFrame, unit: PrivacyUnit) -> pd.DataFrame:
    """Every (group, subset)'s weighted sums of one pass with a fixed salt, k = 20 per group."""
    rows = gvdp_rows_query(GVDP_BY, GVDP_OLS, unit)
    mapping = pd.DataFrame({"g": ["a", "b"], GROUP: [0, 1], K_COLUMN: [20, 20],
                            SCALE_COLUMN: [20**-0.5] * 2})  # fmt: skip
    table = PandasEngine(frame).blb_sums(BlbQuery(rows, 3, "salt"), mapping)
    return table.set_index([GROUP, SUBSET]).sort_index()


@pytest.mark.parametrize("unit", [PrivacyUnit(), PrivacyUnit("person", max_groups=2, max_rows=9)],
                         ids=["row", "person"])  # fmt: skip
def test_one_added_person_changes_one_gvdp_subset_in_each_group_they_are_in(unit):
    """Sample & Aggregate: neighbouring datasets differ in one subset per group (every other
    subset's rows and weights are unchanged), however many rows the person owns."""
    frame = regression_rows(1500, seed=0)
    copies = 1 if unit.column is None else 3
    newcomer = pd.DataFrame({
        "g": ["a", "b", "a"][:copies], "x": [0.3, 0.1, 0.3][:copies],
        "z": [1.0, 0.0, 1.0][:copies], "y": [2.1, 0.4, 2.1][:copies],
        "person": [10**6] * copies,
    })  # fmt: skip
    # Also a copy of an existing row: without a person column, it is that content's next copy.
    for added in (newcomer, frame.iloc[[10]].assign(person=10**6 + 1)):
        before, after = sums_of(frame, unit), sums_of(pd.concat([frame, added]), unit)
        same = np.isclose(after.reindex(before.index), before, rtol=0, atol=0).all(axis=1)
        changed = pd.Series(~same, index=before.index)
        groups = set(added["g"])
        assert changed.sum() == len(groups)
        assert set(changed[changed].index.get_level_values(GROUP)) == {
            {"a": 0, "b": 1}[g] for g in groups
        }
        assert after.index.difference(before.index).empty  # no subset appears from nowhere


# ---- bounds found privately -----------------------------------------------------------------


@pytest.mark.parametrize("spec_name", SPECS)
def test_bounds_found_privately_add_nothing_but_dp_outputs(
    neighbours, spec_name, tmp_path, monkeypatch
):
    """The mean that finds its bounds first publishes them on every row (DP outputs, free to
    move with the added person) and says how it found them in its metadata (the same on both:
    the search range, the grid and the cost are declared, never read off the rows)."""
    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)
    settings = dataclasses.replace(
        SETTINGS["mean"], clip_high=1000, bounds_source="private", bounds_scope="per_group"
    )
    spec = SPECS[spec_name]
    records = {n: released(f, MEAN, spec, tmp_path, n, settings) for n, f in neighbours.items()}
    assert_nothing_but_dp_outputs_differ(records["D"], records["D′"], MEAN, spec, spec_name)
    for record in records.values():
        assert {"clip_low", "clip_high"} <= set(record.frame.columns)
        assert public_metadata(record.metadata)["plan"]["bounds"]["source"] == "private"


BOUND_DRAWS = 60_000
"""Draws of each side: the bounds' outcomes are a few dozen candidate pairs, each drawn
hundreds of times or more (600 candidates' noise per draw makes more draws slow)."""


def _bound_draws(values, bounds: PrivateBounds, budget, seed: int) -> np.ndarray:
    """BOUND_DRAWS seeded draws of the found (low, high), as one code per pair."""
    found = bounds.draw(values.grid_counts(bounds.grid), budget,
                        noise=SimulationNoise(rng=seed), replicates=BOUND_DRAWS)  # fmt: skip
    grid = bounds.grid
    low = np.searchsorted(grid, found.low[:, 0])
    high = np.searchsorted(grid, found.high[:, 0])
    return low * len(grid) + high


def _outcome_probabilities(codes: np.ndarray, seen: np.ndarray, size: int) -> np.ndarray:
    """P̂[M ∈ S] from ``codes`` for the sets S of (low, high) outcomes over the pairs ``seen``:
    each pair, then each low bound and the half-line below it, then the same for the high
    bound. Summed by group (bincount, cumsum) rather than as a dense sets × pairs matrix
    product, which took seconds on thousands of pairs."""
    parts = [np.bincount(np.searchsorted(seen, codes), minlength=seen.size) / codes.size]
    for bound in (seen // size, seen % size):
        values, which = np.unique(bound, return_inverse=True)
        each = np.bincount(which, weights=parts[0], minlength=values.size)
        parts += [each, np.cumsum(each)]
    return np.concatenate(parts)


def bound_violations(codes_d, codes_dprime, size, epsilon):
    """Every outcome set S with P̂[M(D)∈S] − e^ε P̂[M(D′)∈S] (or the reverse) above the slack
    of test_mechanisms (four standard errors of each side), over the sets whose probability
    on the larger side is at least 1e-3 (thousands of hits: the normal approximation of the
    binomial holds)."""
    seen = np.union1d(codes_d, codes_dprime)
    p, q = (_outcome_probabilities(codes, seen, size) for codes in (codes_d, codes_dprime))
    p, q = np.clip(p, 0, 1), np.clip(q, 0, 1)  # sums of frequencies may pass 1 by an ulp
    found = []
    for pa, pb in ((p, q), (q, p)):
        slack = 4 * (np.sqrt(pa * (1 - pa) / BOUND_DRAWS)
                     + math.exp(epsilon) * np.sqrt(pb * (1 - pb) / BOUND_DRAWS))  # fmt: skip
        excess = pa - math.exp(epsilon) * pb - slack
        found += list(excess[(excess > 0) & (pa >= 1e-3)])
    return found


def _bound_neighbours(kind: str):
    """60 values, and the same with one person replaced (public sizes: the smallest value
    moved to the top, which shifts every count between them by one) or added (private sizes:
    one more value at the top)."""
    values = np.linspace(10.0, 70.0, 60)
    if kind == "replace":
        other = np.append(values[1:], 95.0)
    else:
        other = np.append(values, 95.0)
    return GroupValues.from_values(values), GroupValues.from_values(other)


@pytest.mark.parametrize(
    ("kind", "budget", "tail"),
    [("replace", PureDP(2.0), None), ("replace", ZCDP(0.5), None), ("add", PureDP(2.0), 0.1)],
    ids=["epsilon, public sizes", "rho, public sizes", "epsilon, private sizes"],
)
def test_the_bounds_mechanism_is_dp_on_neighbouring_datasets(kind, budget, tail):
    """Empirical P[M(D) ∈ S] ≤ e^ε P[M(D′) ∈ S] + slack over the (low, high) outcomes, for the
    bounds' share of the budget (half of it here: ε = 1; under ρ, the ε of the exponential
    mechanism's pure guarantee, √(8ρ') for each bound, added). A negative control: the same
    test finds the mechanism run with a third of its noise."""
    d, dprime = _bound_neighbours(kind)
    bounds = PrivateBounds((0.0, 100.0), fraction=0.5, tail=tail, sizes_public=kind == "replace")
    epsilon = 2 * bounds.epsilon_each(budget)
    size = len(bounds.grid)
    codes = [_bound_draws(v, bounds, budget, seed) for v, seed in ((d, 1), (dprime, 2))]
    assert bound_violations(*codes, size, epsilon) == []
    # Not vacuous: the pairs' probabilities differ, and a mechanism with too little noise fails.
    assert not np.array_equal(np.bincount(codes[0] % size, minlength=size),
                              np.bincount(codes[1] % size, minlength=size))  # fmt: skip
    weak = dataclasses.replace(bounds, fraction=0.5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(private_bounds, "selection_scale",
                      lambda *args: mechanisms.selection_scale(*args) / 3)  # fmt: skip
        weak_codes = [_bound_draws(v, weak, budget, seed) for v, seed in ((d, 3), (dprime, 4))]
    assert bound_violations(*weak_codes, size, epsilon) != []


def test_a_mean_that_finds_its_bounds_is_dp_on_neighbouring_datasets():
    """The whole release (bounds at ε = 0.5, then the Laplace mean at ε = 1.5 clipped at them)
    on one group of 60 values and the same with one value replaced: its estimate's
    half-lines and intervals are within e^2 of each other, with the slack of test_mechanisms."""
    d, dprime = _bound_neighbours("replace")
    estimator = PrivatelyBounded(LaplaceMean(bounds=(0.0, 100.0)),
                                 PrivateBounds((0.0, 100.0), fraction=0.25))  # fmt: skip
    outputs = [
        run_strategy("stratified", v, estimator, PureDP(2.0), np.array([1.0]),
                     replicates=N_PRIVACY, noise=SimulationNoise(rng=seed)).global_estimate
        for v, seed in ((d, 5), (dprime, 6))
    ]  # fmt: skip
    centre = float(np.median(outputs[0]))
    sets = [(-math.inf, centre + t) for t in np.linspace(-8, 8, 33)]
    sets += [(centre + a, centre + b) for a, b in ((-1, 1), (-3, 0), (0, 3), (2, 6), (-6, -2))]
    assert privacy_violations(outputs[0], outputs[1], 2.0, 0.0, sets) == []


@pytest.mark.parametrize("alpha", [0.5, 0.25])
def test_a_private_quantile_is_dp_when_one_person_is_added(alpha):
    """The bucket edges' mechanism (sizes not public): its draws on 60 values and on the same
    with one more, within e^ε of each other on every outcome set."""
    d, dprime = _bound_neighbours("add")
    grid = candidate_grid(0.0, 100.0)
    codes = [
        np.searchsorted(grid, private_quantile(v.grid_counts(grid), alpha, PureDP(1.0),
                                               noise=SimulationNoise(rng=seed),
                                               replicates=BOUND_DRAWS)[:, 0]) * len(grid)
        for v, seed in ((d, 7), (dprime, 8))
    ]  # fmt: skip
    assert bound_violations(*codes, len(grid), 1.0) == []


def test_a_gvdp_box_found_privately_adds_nothing_but_dp_outputs(neighbours, tmp_path, monkeypatch):
    """GVDP finding its box first: the box is intermediate (never published), the metadata
    says how it was found and what it cost, the same on both neighbours."""
    monkeypatch.setattr(static_image, "render_png", lambda *args, **kwargs: None)
    gvdp = next(a for a in ANALYSES if a.name == "gvdp")
    settings = dataclasses.replace(SETTINGS["gvdp"], box_source="private")
    spec = SPECS["share table"]
    records = {n: released(f, gvdp, spec, tmp_path, n, settings) for n, f in neighbours.items()}
    assert_nothing_but_dp_outputs_differ(records["D"], records["D′"], gvdp, spec, "share table")
    facts = public_metadata(records["D"].metadata)["plan"]["estimator"]["private_box"]
    assert facts["source"] == "private" and facts["cost"]["rho"] > 0
