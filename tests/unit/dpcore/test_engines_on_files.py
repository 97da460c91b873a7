"""What the app needs of the DuckDB engine on files it never loads: the row count, the cells'
counts without a value column, distinct values up to a cap, parts that are unreadable or have
other columns named before any pass, one engine shared by threads; the mean's statistics from
an engine with the true means a simulation scores against, equal to those of the rows in
memory; analyses that need the rows say so."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses import ANALYSES
from dpcore.analyses.base import NeedsRowsInMemory
from dpcore.analyses.mean import MEAN, MeanSettings
from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.ratio import RATIO, RatioSettings
from dpcore.engines import DuckDBEngine, EngineError, PandasEngine
from dpcore.engines.base import NOT_WHOLE_LABEL
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.errors import SettingsError
from dpcore.foundations.grouping import MAX_CODE_VALUES, GroupingSpec, cell_labels
from dpcore.foundations.ledger import Ledger
from dpcore.release import PlanHeader, release, to_script
from tests.scripts import assert_reruns_as_recorded
from tests.unit.dpcore.engines.helpers import SPECS, messy_frame

BOUNDS = (0.0, 10.0)


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    """The messy frame in three Parquet parts, and the frame."""
    frame = messy_frame()
    folder = tmp_path_factory.mktemp("parts")
    for i, chunk in enumerate(np.array_split(np.arange(len(frame)), 3)):
        frame.iloc[chunk].to_parquet(folder / f"part-{i}.parquet")
    return folder, frame


def test_row_count_counts_every_part(parts):
    folder, frame = parts
    assert DuckDBEngine(folder).row_count() == len(frame)


@pytest.mark.parametrize("name", list(SPECS))
def test_cell_counts_are_the_rows_own_cells(parts, name):
    folder, frame = parts
    spec = SPECS[name]
    counts = DuckDBEngine(folder).cell_counts(spec.by, dict(spec.edges))
    by = list(spec.by)
    expected = cell_labels(frame, spec.by, dict(spec.edges)).value_counts().reset_index(name="rows")
    assert sorted(counts.itertuples(index=False)) == sorted(expected[[*by, "rows"]].itertuples(
        index=False))  # fmt: skip
    # ... so grouping them with their counts gives the groups of the rows.
    grouping = spec.build(counts[list(spec.by)], weights=counts["rows"].to_numpy())
    in_memory = spec.build(frame)
    assert grouping.labels == in_memory.labels
    np.testing.assert_array_equal(grouping.sizes, in_memory.sizes)
    np.testing.assert_allclose(grouping.shares.values, in_memory.shares.values)


def test_distinct_labels_stop_past_the_cap(tmp_path):
    pd.DataFrame(
        {"code": [0, 1, 1, None] * 5, "id": range(20), "flag": [0.0, 1.0] * 10,
         "x": [0.5, 1.0] * 10}
    ).to_parquet(tmp_path / "a.parquet")  # fmt: skip
    engine = DuckDBEngine(tmp_path)
    assert sorted(engine.distinct_labels("code", MAX_CODE_VALUES)) == ["0", "1"]  # missing aside
    assert len(engine.distinct_labels("id", 3)) == 4  # enough to know there are more than 3
    assert sorted(engine.distinct_labels("flag", 3)) == ["0", "1"]  # codes written as 0.0/1.0
    assert NOT_WHOLE_LABEL in engine.distinct_labels("x", 3)
    with pytest.raises(EngineError, match="`nope` is not in the data; its columns are: code, id"):
        engine.distinct_labels("nope", 3)


def test_a_part_with_other_columns_is_named_with_what_differs(tmp_path):
    messy_frame(20).to_parquet(tmp_path / "a.parquet")
    messy_frame(20).drop(columns="age").assign(extra=1).to_parquet(tmp_path / "b.parquet")
    engine = DuckDBEngine(tmp_path)  # the first part's columns: the pass would find out late
    with pytest.raises(EngineError) as caught:
        engine.row_count()
    message = str(caught.value)
    assert "b.parquet does not have the same columns as" in message and "a.parquet" in message
    assert "it lacks age; it has extra besides" in message and "fix or leave out" in message


def test_an_unreadable_part_is_named(tmp_path):
    messy_frame(20).to_parquet(tmp_path / "a.parquet")
    (tmp_path / "b.parquet").write_bytes(b"PAR1 cut short")
    with pytest.raises(EngineError, match=r"b\.parquet.*complete Parquet or CSV file"):
        DuckDBEngine(tmp_path).row_count()


def test_one_engine_answers_threads_at_once(parts):
    """The app shares one engine between sessions, each in its own thread."""
    folder, frame = parts
    engine = DuckDBEngine(folder, threads=1)
    spec = SPECS["text"]
    expected = aggregate_mean(engine, spec, "v", BOUNDS).stats.clipped_sums(1.0, 9.0)
    found, failures = [], []

    def work() -> None:
        try:
            stats = aggregate_mean(engine, spec, "v", BOUNDS).stats
            found.append(stats.clipped_sums(np.full(stats.k, 1.0), np.full(stats.k, 9.0)))
            engine.row_count()
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and len(found) == 6
    for sums in found:
        np.testing.assert_allclose(sums, expected, rtol=1e-12)


@pytest.mark.parametrize("name", list(SPECS))
def test_engine_statistics_give_the_true_means_of_the_rows(parts, name):
    folder, frame = parts
    spec = SPECS[name]
    settings = MeanSettings(value="v", clip_low=BOUNDS[0], clip_high=BOUNDS[1])
    in_memory = GroupValues.from_grouping(spec.build(frame), frame, "v")
    for engine in (DuckDBEngine(folder), PandasEngine(frame)):
        stats = MEAN.engine_statistics(engine, spec, settings).stats
        assert stats.labels == in_memory.labels
        np.testing.assert_allclose(stats.means, in_memory.means, rtol=1e-9)
        assert stats.global_mean == pytest.approx(in_memory.global_mean, rel=1e-9)
        np.testing.assert_allclose(
            stats.clipped_sums(*BOUNDS), in_memory.clipped_sums(*BOUNDS), rtol=1e-12
        )


def test_engine_statistics_refuse_missing_bounds_before_any_pass(parts):
    folder, _ = parts
    with pytest.raises(SettingsError, match="Enter public lower and upper bounds"):
        MEAN.engine_statistics(DuckDBEngine(folder), SPECS["text"], MeanSettings(value="v",
                               clip_low=None, clip_high=None))  # fmt: skip
    assert MEAN.engine_statistics_key(MeanSettings(value="v", clip_high=9.0)) == ("v", 0.0, 9.0)


def test_analyses_that_need_the_rows_say_so(parts):
    folder, _ = parts
    others = [analysis for analysis in ANALYSES if not analysis.runs_on_engines]
    assert others and MEAN.runs_on_engines
    for analysis in others:
        with pytest.raises(NeedsRowsInMemory, match="needs the rows in memory.*Upload the data"):
            analysis.engine_statistics(
                DuckDBEngine(folder), GroupingSpec(by=("region",)), analysis.default_settings()
            )


def test_the_ratio_s_engine_statistics_are_those_of_the_rows_and_refuse_wrong_columns(parts):
    folder, frame = parts
    settings = RatioSettings(s_column="s", y_column="y", w_column="w", w_bound=3.0)
    spec = SPECS["numeric buckets"]
    stats = RATIO.engine_statistics(DuckDBEngine(folder), spec, settings).stats
    in_memory = RATIO.statistics(frame, spec.build(frame), settings)
    assert stats.labels == in_memory.labels and stats.engine == "duckdb"
    np.testing.assert_allclose(stats.sums.stack(), in_memory.sums.stack(), rtol=1e-12)
    assert RATIO.engine_statistics_key(settings) == RATIO.statistics_key(settings)
    with pytest.raises(SettingsError, match="score column `region` is not numeric"):
        RATIO.engine_statistics(DuckDBEngine(folder), spec, replace(settings, s_column="region"))


@pytest.mark.slow
def test_the_ratio_s_script_runs_the_engine_s_pass_again_and_spends_nothing(parts, tmp_path):
    """The exported script of a release on a folder reads the folder through DuckDB (no frame
    to load), rebuilds the same plan and prints the recorded release."""
    folder, _ = parts
    settings = RatioSettings(s_column="s", y_column="y")
    spec = GroupingSpec(by=("region",))
    aggregated = RATIO.engine_statistics(DuckDBEngine(folder), spec, settings)
    header = PlanHeader(dataset=aggregated.dataset, spec=spec, budget=ZCDP(0.5))
    ledger = Ledger(None, "default", ZCDP(1.0))
    record = release(RATIO.plan(aggregated.stats, settings, header), ledger,
                     noise="simulation", rng=5)  # fmt: skip
    script = to_script(record)
    assert "aggregate_ratio(DuckDBEngine(" in script and "read_table" not in script
    assert_reruns_as_recorded(script, record, tmp_path, ledger)
