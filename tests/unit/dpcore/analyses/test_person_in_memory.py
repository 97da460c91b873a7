"""A person column in memory (the app's statistics path): the mean's sorted values of the rows
each person's bound keeps are the pandas engine's statistics; one added person moves each
group's sum by at most what the release's budget division assumes; the Compare study, the
planner and the frontier run at the budget of one row; bad person columns are refused; the
release's script rebuilds the same plan."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean import MEAN, CoinPressMean, LaplaceMean, MeanPlan, MeanSettings
from dpcore.analyses.mean.accuracy import coinpress_error_model, mean_error_model
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.frontier import stratification_frontier
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.engines import PandasEngine
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.datasets import load_demo, load_demo_dataset
from dpcore.foundations.grouping import GroupingSpec, cell_labels
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit, preview_bound
from dpcore.planner import AccuracyTarget
from dpcore.release import DatasetRef, PlanHeader
from tests.scripts import released_script_reruns
from tests.unit.dpcore.engines.helpers import BOUNDS, SPECS, messy_frame

UNIT = PrivacyUnit("person", max_groups=2, max_rows=2)
SETTINGS = MeanSettings(value="v", clip_low=BOUNDS[0], clip_high=BOUNDS[1], n_public=True)
# The demo's rows have no person id: its education stands in for one, 40 rows in one group.
DEMO_PERSON = PrivacyUnit("education", max_groups=1, max_rows=40)


def demo_by_sex(budget) -> tuple[pd.DataFrame, PlanHeader]:
    """The demo data and the header of a plan on it by sex under ``budget``."""
    return load_demo(), PlanHeader(
        dataset=load_demo_dataset()[1], spec=GroupingSpec(by=("sex",)), budget=budget
    )


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return messy_frame()


@pytest.fixture(scope="module")
def within_bounds(frame) -> pd.DataFrame:
    """The rows with a value, clipped to the bounds: errors are then the noise alone."""
    finite = frame[np.isfinite(frame["v"])]
    return finite.assign(v=finite["v"].clip(*BOUNDS))


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
def test_the_bounded_rows_in_memory_are_the_engines(frame, spec):
    in_memory = GroupValues.from_grouping(spec.build(frame), frame, "v", UNIT)
    engine = aggregate_mean(PandasEngine(frame), spec, "v", BOUNDS, UNIT).stats
    assert in_memory.labels == engine.labels and in_memory.unit == engine.unit == UNIT
    np.testing.assert_array_equal(in_memory.sizes, engine.sizes)
    np.testing.assert_allclose(
        in_memory.clipped_sums(*BOUNDS), engine.clipped_sums(*BOUNDS), rtol=1e-12
    )
    assert in_memory.n_missing == engine.n_missing
    bound_notes = [note for note in engine.notes if note.startswith("Bounding")]
    assert list(in_memory.notes) == bound_notes and bound_notes  # the bound left rows out
    assert in_memory.n < GroupValues.from_grouping(spec.build(frame), frame, "v").n


def test_one_added_person_moves_each_groups_sum_by_at_most_the_declared_bound(frame):
    """Neighbouring datasets differ by one person with 40 rows in four groups, every value
    above U; the release runs each mechanism at budget / c, so it assumes one person moves the
    clipped sums by at most c·max(|L|, |U|) in all, and max_rows·max(|L|, |U|) in any one
    group: this person reaches the bound exactly."""
    intruder = pd.DataFrame({
        "region": ["north", "south", "east", "wést"] * 10, "age": 50.0, "flag": True,
        "v": np.linspace(20, 50, 40), "person": -7,
    })  # fmt: skip
    labels = ("north", "south", "east", "wést", "tiny", "(missing)")
    spec = GroupingSpec(
        by=("region",), share_source="table", share_table=tuple((g, 1.0) for g in labels)
    )
    before, after = (
        MEAN.statistics(data, spec.build(data), SETTINGS, unit=UNIT)
        for data in (frame, pd.concat([frame, intruder], ignore_index=True))
    )
    assert before.labels == after.labels
    header = PlanHeader(dataset=DatasetRef("messy", "-", 1), spec=spec, budget=PureDP(1.0))
    plan = MEAN.plan(after, SETTINGS, header)
    c = plan.unit.rows_per_person
    assert plan.row_budget == PureDP(1.0 / c) and plan.unit == UNIT
    largest = max(abs(b) for b in BOUNDS)
    change = np.abs(after.clipped_sums(*BOUNDS) - before.clipped_sums(*BOUNDS))
    assert np.all(change <= UNIT.max_rows * largest + 1e-9)
    assert change.sum() == pytest.approx(c * largest)
    assert np.abs(after.sizes - before.sizes).sum() == c


def test_a_study_of_a_person_bound_has_c_times_the_noise(within_bounds):
    """Laplace with public sizes: the same rows with c = 4 rows per person give errors four
    times one row's (a statistical check over 2,000 seeded releases; the median's ratio
    varies by about ±6% at this size)."""
    spec = GroupingSpec(by=("region",), min_group_size=10)
    rows = MEAN.statistics(within_bounds, spec.build(within_bounds), SETTINGS)
    people = dataclasses.replace(rows, unit=UNIT)
    errors = [
        MEAN.study(stats, SETTINGS, PureDP(0.5), replicates=2000, rng=5).metrics["global_abs"]
        for stats in (rows, people)
    ]
    ratio = errors[1].median() / errors[0].median()
    assert 4 * 0.85 < ratio < 4 * 1.15, ratio


def test_the_planner_asks_c_times_the_budget_and_its_check_meets_the_target(within_bounds):
    spec = GroupingSpec(by=("region",), min_group_size=10)
    rows = MEAN.statistics(within_bounds, spec.build(within_bounds), SETTINGS)
    people = dataclasses.replace(rows, unit=UNIT)
    estimator = LaplaceMean(bounds=BOUNDS)
    target = AccuracyTarget(0.5, level=0.9)
    needed = [mean_error_model(v, estimator).needed_scales(target) for v in (rows, people)]
    np.testing.assert_allclose(needed[1], 4 * needed[0], rtol=1e-9)
    for model in (
        mean_error_model(people, estimator),
        coinpress_error_model(people, CoinPressMean(prior=BOUNDS, sigma=3.0), replicates=20),
    ):
        assert any("up to 4 rows" in line for line in model.assumptions)
    # Simulated releases at the person's budget the planner asks (each mechanism then at a
    # quarter of it) meet the target at least as often as asked, within the binomial band.
    answer = PureDP(float(np.max(needed[1])))
    check = MEAN.check_accuracy(people, SETTINGS, answer, target, replicates=2000, rng=3)
    assert (check["met"] >= check["band_low"]).all(), check
    assert check["met"].min() <= check["band_high"].max(), check  # the binding one is tight


def test_the_frontier_bounds_each_candidate_and_pays_for_it(frame):
    scored = [
        stratification_frontier(
            frame, ["region", "flag"], "v", LaplaceMean(bounds=BOUNDS), PureDP(1.0),
            min_group_size=10, replicates=200, rng=1, unit=unit,
        ).set_index("label")["global_error"]
        for unit in (ROW, UNIT)
    ]  # fmt: skip
    assert (scored[1] > scored[0]).all()


@pytest.mark.parametrize(
    ("unit", "data", "message"),
    [
        (PrivacyUnit("region"), None, "also a grouping column"),
        (PrivacyUnit("who"), None, "person column `who` is not in the data"),
        (PrivacyUnit("v"), None, "also the value"),
        (UNIT, "missing", "2 rows of the data have no id in the person column `person`"),
    ],
)
def test_a_person_column_that_cannot_name_people_is_refused(frame, unit, data, message):
    if data == "missing":
        frame = frame.assign(person=frame["person"].astype(float))
        frame.loc[[4, 8], "person"] = np.nan
    spec = GroupingSpec(by=("region",))
    with pytest.raises(ValueError, match=message):
        GroupValues.from_grouping(spec.build(frame), frame, "v", unit)


def test_the_preview_counts_what_the_statistics_leave_out(frame):
    spec = GroupingSpec(by=("region",), min_group_size=1)  # every row in a group
    finite = frame[np.isfinite(frame["v"])]
    preview = preview_bound(cell_labels(finite, spec.by), finite["person"], UNIT)
    stats = GroupValues.from_grouping(spec.build(finite), finite, "v", UNIT)
    all_rows = GroupValues.from_grouping(spec.build(finite), finite, "v")
    assert preview.dropped == all_rows.n - stats.n
    assert preview.people_affected <= preview.people == finite["person"].nunique()
    assert preview.most_rows_in_a_group >= 1 and preview.most_groups <= 5


def test_the_script_of_a_person_bounded_release_rebuilds_the_same_plan(tmp_path):
    demo, header = demo_by_sex(PureDP(1.0))
    values = GroupValues.from_grouping(header.spec.build(demo), demo, "hours_per_week", DEMO_PERSON)
    plan = MeanPlan(values=values, header=header, estimator=LaplaceMean(bounds=(0, 100)))
    script = released_script_reruns(plan, PureDP(2.0), tmp_path)
    assert "PrivacyUnit('education', max_groups=1, max_rows=40)" in script
