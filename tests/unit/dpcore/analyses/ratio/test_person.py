"""The calibration ratio with a person column in memory (the app's statistics path): the sums of
the rows each person's bound keeps are the engines'; one added person of many rows moves each
released sum by at most the sensitivity the plan declares, in memory and on DuckDB; the Compare
page's bootstrap resamples people, not rows; bad person columns are refused; the release's
script rebuilds the same plan."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.ratio import (
    RATIO,
    RatioBounds,
    RatioPlan,
    RatioSettings,
    bootstrap_group_sums,
    group_ratio_sums,
)
from dpcore.analyses.ratio.aggregate import aggregate_ratio
from dpcore.engines import DuckDBEngine, PandasEngine
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.release import DatasetRef, PlanHeader
from tests.neighbours import assert_each_sum_moves_within_its_sensitivity
from tests.scripts import released_script_reruns
from tests.unit.dpcore.analyses.test_person_in_memory import DEMO_PERSON, demo_by_sex
from tests.unit.dpcore.engines.helpers import (
    RATIO_CASES,
    SPECS,
    assert_same_ratio_sums,
    messy_frame,
    ratio_options,
)

UNIT = PrivacyUnit("person", max_groups=2, max_rows=3)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return messy_frame()


def person_options(case: str, unit: PrivacyUnit = UNIT) -> dict:
    """The engines' ratio options of ``case`` with one person's bounds (c = rows per person)."""
    options = ratio_options(RATIO_CASES[case][0])
    bounds = options["bounds"]
    return {**options, "bounds": RatioBounds(bounds.s, bounds.y, bounds.w, unit.rows_per_person)}


@pytest.mark.parametrize("spec", SPECS.values(), ids=SPECS.keys())
@pytest.mark.parametrize("case", RATIO_CASES, ids=RATIO_CASES)
def test_the_bounded_sums_in_memory_are_the_engines(frame, tmp_path, spec, case):
    options = ratio_options(RATIO_CASES[case][0])
    in_memory = group_ratio_sums(frame, spec.build(frame), **person_options(case), unit=UNIT)
    frame.to_parquet(tmp_path / "messy.parquet")
    for engine in (PandasEngine(frame), DuckDBEngine(tmp_path / "messy.parquet")):
        engine_sums = aggregate_ratio(engine, spec, **options, unit=UNIT).stats
        assert_same_ratio_sums(in_memory, engine_sums)
        assert in_memory.bounds == engine_sums.bounds and in_memory.unit == engine_sums.unit
        bound_notes = [note for note in engine_sums.notes if note.startswith("Bounding")]
        assert list(in_memory.notes) == bound_notes and bound_notes  # the bound left rows out
    everyone = group_ratio_sums(frame, spec.build(frame), **options)
    assert in_memory.rows.sum() < everyone.rows.sum()


@pytest.mark.parametrize("path", ["in memory", "duckdb"])
def test_one_added_person_moves_each_released_sum_by_at_most_its_sensitivity(frame, tmp_path, path):
    """Neighbouring datasets differ by one person of 40 rows in four groups, every value at its
    bound or beyond: each sum, over all groups, moves by at most the sensitivity the plan's
    noise is calibrated to (c = max_groups × max_rows times one row's), and this person
    reaches it."""
    intruder = pd.DataFrame({
        "region": ["north", "south", "east", "wést"] * 10, "age": 50.0, "flag": True,
        "v": 1.0, "person": -7, "s": np.linspace(1.0, 9, 40), "y": 1.0, "y3": 7.0, "w": 50.0,
    })  # fmt: skip
    case = "weighted, label up to 3, laplace"
    settings = RatioSettings(s_column="s", y_column="y3", w_column="w", s_bound=1.0,
                             y_bound=3.0, w_bound=3.0, binary_y=False)  # fmt: skip
    spec = GroupingSpec(by=("region",))
    stats = []
    for i, data in enumerate([frame, pd.concat([frame, intruder], ignore_index=True)]):
        if path == "in memory":
            stats.append(RATIO.statistics(data, spec.build(data), settings, unit=UNIT))
        else:
            data.to_parquet(tmp_path / f"{i}.parquet")
            engine = DuckDBEngine(tmp_path / f"{i}.parquet")
            stats.append(RATIO.engine_statistics(engine, spec, settings, unit=UNIT).stats)
    before, after = stats
    assert before.labels == after.labels and after.bounds == person_options(case)["bounds"]
    header = PlanHeader(dataset=DatasetRef("messy", "-", 1), spec=spec, budget=PureDP(1.0))
    sensitivity = RATIO.plan(after, settings, header).sensitivity
    assert sensitivity["w"] == UNIT.rows_per_person * 3.0
    assert_each_sum_moves_within_its_sensitivity(before, after, sensitivity, UNIT)


def test_a_study_with_a_person_bound_at_epsilon_is_one_rows_at_epsilon_over_c(frame):
    """The Compare page's simulations: the same rows with c = 6 rows per person get six times
    one row's Laplace noise on every sum, so their study at ε is, draw for draw, the study of
    one row per person at ε/6."""
    spec = GroupingSpec(by=("region",), min_group_size=10)
    settings = RatioSettings(s_column="s", y_column="y", mechanism="laplace")
    rows = RATIO.statistics(frame, spec.build(frame), settings)
    c = UNIT.rows_per_person
    people = dataclasses.replace(
        rows, unit=UNIT, bounds=dataclasses.replace(rows.bounds, rows_per_person=c)
    )
    studies = [
        RATIO.study(stats, settings, budget, replicates=300, rng=2)
        for stats, budget in ((people, PureDP(2.0)), (rows, PureDP(2.0 / c)))
    ]
    pd.testing.assert_frame_equal(studies[0], studies[1])
    assert not studies[0].equals(RATIO.study(rows, settings, PureDP(2.0), replicates=300, rng=2))


def test_the_bootstrap_redraws_people_with_all_their_rows():
    """Every person owns three rows of one score: the people bootstrap's spread of Σws is √3
    times the rows bootstrap's would be (3 identical rows move together), a seeded statistical
    check over 2,000 resamples."""
    rng = np.random.default_rng(4)
    people = 300
    frame = pd.DataFrame({
        "region": np.repeat(rng.choice(["a", "b"], people), 3), "s": np.repeat(rng.random(people), 3),
        "y": 1, "person": np.repeat(np.arange(people), 3),
    })  # fmt: skip
    settings = RatioSettings(s_column="s", y_column="y")
    grouping = GroupingSpec(by=("region",)).build(frame)
    spread = []
    for unit in (ROW, PrivacyUnit("person", max_groups=1, max_rows=3)):
        sums = RATIO.statistics(
            frame, grouping, settings, **({} if unit == ROW else {"unit": unit})
        )
        resampled = bootstrap_group_sums(frame, grouping, sums, replicates=2000, rng=1)
        np.testing.assert_allclose(resampled.w, np.broadcast_to(sums.sums.w, resampled.w.shape))
        spread.append(np.std(resampled.ws, axis=0))
    np.testing.assert_allclose(spread[1] / spread[0], np.sqrt(3), rtol=0.08)


@pytest.mark.parametrize(
    ("unit", "message"),
    [
        (PrivacyUnit("region"), "also a grouping column"),
        (PrivacyUnit("who"), "person column `who` is not in the data"),
        (PrivacyUnit("s"), "person column `s` is also the score"),
        (PrivacyUnit("w"), "person column `w` is also the weight"),
        (UNIT, "2 rows of the data have no id in the person column `person`"),
    ],
)
def test_a_person_column_that_cannot_name_people_is_refused(frame, unit, message):
    if unit == UNIT:
        frame = frame.assign(person=frame["person"].astype(float))
        frame.loc[[4, 8], "person"] = np.nan
    settings = RatioSettings(s_column="s", y_column="y3", w_column="w", binary_y=False,
                             y_bound=3.0)  # fmt: skip
    spec = GroupingSpec(by=("region",))
    with pytest.raises(ValueError, match=message):
        RATIO.statistics(frame, spec.build(frame), settings, unit=unit)


def test_the_script_of_a_person_bounded_release_rebuilds_the_same_plan(tmp_path):
    demo, header = demo_by_sex(ZCDP(0.5))
    settings = RatioSettings()
    statistics = RATIO.statistics(demo, header.spec.build(demo), settings, unit=DEMO_PERSON)
    plan = RATIO.plan(statistics, settings, header)
    assert plan.sums.bounds.rows_per_person == 40
    assert plan == RatioPlan.build(demo, header=header, s_column="score",
                                   y_column="income_over_50k", bounds=RatioBounds(), binary_y=True,
                                   unit=DEMO_PERSON, method="analytical")  # fmt: skip
    script = released_script_reruns(plan, ZCDP(2.0), tmp_path)
    assert "unit=PrivacyUnit('education', max_groups=1, max_rows=40)" in script
