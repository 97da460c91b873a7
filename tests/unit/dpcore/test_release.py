"""Committing a release: one spend per plan, DP-only records, honest noise intervals, exports."""

from __future__ import annotations

import ast
import csv
import dataclasses
import functools
import importlib
import io
import json
import platform
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from importlib import metadata as importlib_metadata

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.plan import MeanPlan
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.dataset import files_identity, frame_identity
from dpcore.foundations.datasets import (
    DEMO_DATA_PATH,
    DEMO_DATASET_NAME,
    demo_identity,
    load_demo,
    load_demo_dataset,
)
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.io import read_table
from dpcore.foundations.ledger import BudgetExceededError, Ledger, list_ledgers
from dpcore.foundations.mechanisms import noise_source
from dpcore.release.commit import ReleaseRecord, budget_in_units, plan_key, release
from dpcore.release.exports import (
    escape_cell,
    public_metadata,
    shares_statement,
    to_csv,
    to_json,
    to_script,
)
from dpcore.release.plan import DatasetRef, PlanHeader
from strata_ui import charts_release
from tests import REPO
from tests.scripts import assert_reruns_as_recorded, run_script

HOURS = (0.0, 100.0)  # public bounds on hours worked per week
EPSILON_1 = PureDP(1.0)
PRIVATE_SIZES = LaplaceMean(bounds=HOURS, n_public=False)
SEX_SHARES = {"share_source": "table", "share_table": (("Female", 0.5), ("Male", 0.5))}
# What a release with private group sizes needs besides public shares: a declared list of
# groups (here with a category the demo has no row of) kept whatever their sizes.
DECLARED_SEX = {
    "share_source": "table",
    "share_table": (("Female", 0.5), ("Male", 0.5), ("Another", 0.0)),
    "categories": (("sex", ("Female", "Male", "Another")),),
    "small_groups": "keep",
}
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
HEX64 = re.compile(r"[0-9a-f]{64}")


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


_demo_frame = functools.cache(load_demo)


def make_plan(
    frame: pd.DataFrame,
    *,
    name: str = DEMO_DATASET_NAME,
    by: tuple[str, ...] = ("race", "sex"),
    value: str = "hours_per_week",
    spec_options: dict | None = None,
    estimator: LaplaceMean | GaussianMean | None = None,
    budget: PureDP | ZCDP = EPSILON_1,
    label: str = "",
    level: float = 0.95,
    data: bytes | None = None,
    **plan_options,
) -> MeanPlan:
    """A plan built from scratch: spec, groups and values, the data's identity (the demo's
    asset, or the file's ``data``, as the app identifies them; else the frame's cells),
    estimator and budget."""
    spec = GroupingSpec(by=by, **(spec_options or {}))
    dataset = DatasetRef.of(frame, name, data=data)
    if name == DEMO_DATASET_NAME and data is None and frame.equals(_demo_frame()):
        dataset = load_demo_dataset()[1]
    header = PlanHeader(dataset=dataset, spec=spec, budget=budget, label=label, level=level)
    return MeanPlan(
        values=GroupValues.from_grouping(spec.build(frame), frame, value),
        header=header,
        estimator=LaplaceMean(bounds=HOURS) if estimator is None else estimator,
        **plan_options,
    )


def regions(seed: int = 0) -> pd.DataFrame:
    """Three regions of 600, 150 and 40 people; about a quarter of the values lie outside
    [0, 100], so the clipped means differ clearly from the raw ones."""
    rng = np.random.default_rng(seed)
    sizes = {"north": 600, "south": 150, "east": 40}
    region = np.repeat(list(sizes), list(sizes.values()))
    return pd.DataFrame({"region": region, "hours": rng.normal(70.0, 40.0, region.size)})


def numbers_in(value: object) -> list[float]:
    """Every number anywhere in a JSON-like value."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in numbers_in(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in numbers_in(v)]
    return []


def assert_no_data_hash(text: str, record: ReleaseRecord) -> None:
    """No export carries the data's identity or the key that hashes it, nor any prefix."""
    identity = record.metadata["plan"]["dataset"]["identity"].partition(":")[2]
    key = record.key.removeprefix("release-")
    for digest in (identity, key):
        assert digest[:8] not in text, digest
    assert not HEX64.search(text)


# --- identities of frames and keys ---------------------------------------------------------------


def test_a_frames_identity_is_stable_across_calls_copies_and_reads(demo):
    identity = frame_identity(demo)
    assert HEX64.fullmatch(identity.removeprefix("frame:"))
    assert frame_identity(demo) == identity
    assert frame_identity(demo.copy()) == identity
    assert frame_identity(load_demo()) == identity  # the same file read again


def test_a_frames_identity_changes_with_a_cell_a_column_name_or_a_dtype(demo):
    fingerprint = frame_identity(demo)
    number = demo.copy()
    number.loc[17, "hours_per_week"] += 1
    text = demo.copy()
    text.loc[0, "race"] = "Other"
    renamed = demo.rename(columns={"hours_per_week": "hours"})
    as_float = demo.astype({"hours_per_week": "float64"})  # same values, another dtype
    as_object = demo.astype({"race": object})
    variants = [frame_identity(f) for f in (number, text, renamed, as_float, as_object)]
    assert all(HEX64.fullmatch(v.removeprefix("frame:")) for v in variants)
    assert len({fingerprint, *variants}) == 6


@pytest.mark.parametrize("not_a_frame", [{"a": [1, 2]}, np.zeros((2, 2)), pd.Series([1.0]), None])
def test_a_frames_identity_rejects_non_frames(not_a_frame):
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        frame_identity(not_a_frame)


def test_plan_key_is_the_same_for_the_same_plan_built_from_scratch(demo):
    key = plan_key(make_plan(demo))
    assert re.fullmatch(r"release-[0-9a-f]{32}", key)
    assert plan_key(make_plan(load_demo())) == key
    # Equal plans compare equal too (the group values are not part of the identity).
    assert make_plan(demo) == make_plan(load_demo())


# The key of the demo's default mean plan since keys name the data by its identity (the bytes of
# the demo's asset) rather than by the name and row count an entry point gave it (issue 36): the
# same plan must keep it, or a release made then would be spent again.
DEMO_MEAN_KEY_RECORDED = "release-dc60e9b2c7f1780157c961e7a098b49c"


def test_a_mean_plan_keeps_the_key_ledgers_recorded_for_it(demo, ledger):
    plan = make_plan(demo)
    assert plan_key(plan) == DEMO_MEAN_KEY_RECORDED
    first = release(plan, ledger, noise="simulation", rng=1)
    again = release(make_plan(load_demo()), ledger, noise="simulation", rng=2)
    assert first.spent and not again.spent and again.key == first.key


def test_the_same_data_under_another_name_or_row_count_is_the_same_release(demo):
    """An upload's file name, a path typed on the command line and a Spark table's name name
    one dataset differently; its identity is what the key names."""
    plan = make_plan(demo)
    renamed = dataclasses.replace(
        plan.header, dataset=dataclasses.replace(plan.header.dataset, name="/data/adult.csv.gz")
    )
    recounted = dataclasses.replace(
        plan.header, dataset=dataclasses.replace(plan.header.dataset, rows=1)
    )
    for header in (renamed, recounted):
        assert plan_key(dataclasses.replace(plan, header=header)) == plan_key(plan)


def test_plan_key_differs_whenever_the_release_would_differ(demo):
    changed_cell = demo.copy()
    changed_cell.loc[0, "hours_per_week"] = 99
    variants = {
        "label": make_plan(demo, label="Weekly hours, 2026"),
        "budget": make_plan(demo, budget=PureDP(0.5)),
        "bounds": make_plan(demo, estimator=LaplaceMean(bounds=(0.0, 99.0))),
        "private sizes": make_plan(demo, estimator=PRIVATE_SIZES, strategy="global_only"),
        "estimator": make_plan(demo, estimator=GaussianMean(bounds=HOURS), budget=ZCDP(0.5)),
        "strategy": make_plan(demo, strategy="global_only"),
        "level": make_plan(demo, level=0.9),
        "grouping": make_plan(demo, by=("sex",)),
        "small groups": make_plan(demo, spec_options={"min_group_size": 200}),
        "shares": make_plan(
            demo, spec_options={"share_source": "holdout", "holdout_fraction": 0.1}
        ),
        "data": make_plan(changed_cell),
    }
    keys = {what: plan_key(plan) for what, plan in variants.items()}
    base = plan_key(make_plan(demo))
    assert base not in keys.values(), [w for w, k in keys.items() if k == base]
    assert len(set(keys.values())) == len(keys)


# --- release: one spend, refusal before noise ---------------------------------------------------


def test_release_spends_the_cost_once_and_a_second_submit_returns_the_record(demo, ledger):
    plan = make_plan(demo)
    reports = []  # the mean fits no models: a progress bar never shows
    first = release(plan, ledger, progress=lambda *step: reports.append(step))  # OpenDP noise
    assert first.spent and reports == []
    assert first.key == plan_key(plan)
    assert "OpenDP" in first.metadata["noise"]
    # ε = 1 pure DP is charged as exactly ρ = ε²/2 = 0.5 against the ρ = 1 ledger.
    assert ledger.remaining() == {"rho": 0.5}
    assert ledger.spent() == {"rho": 0.5}
    assert [r.cost for r in ledger.history()] == [PureDP(1.0)]

    again = release(plan, ledger)  # double submit
    rebuilt = release(make_plan(load_demo()), ledger)  # a refresh rebuilds the plan
    for repeat in (again, rebuilt):
        assert not repeat.spent
        assert repeat.outputs == first.outputs
        assert repeat.metadata == first.metadata
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.5}


def test_two_threads_committing_the_same_plan_spend_once(demo, ledger, monkeypatch):
    plan = make_plan(demo)
    both_drawn = threading.Barrier(2, timeout=30)
    draw = MeanPlan.run

    def run_then_wait(self, noise, rng, progress):
        rows = draw(self, noise, rng, progress)
        both_drawn.wait()  # both threads have passed the key lookup and drawn their noise
        return rows

    monkeypatch.setattr(MeanPlan, "run", run_then_wait)
    with ThreadPoolExecutor(2) as pool:
        futures = [
            pool.submit(release, plan, ledger, noise="simulation", rng=seed) for seed in (1, 2)
        ]
        records = [f.result(timeout=60) for f in futures]
    assert sorted(r.spent for r in records) == [False, True]
    assert records[0].outputs == records[1].outputs  # the loser returns the winner's release
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.5}


def test_unaffordable_plan_is_refused_before_any_noise_is_drawn(demo, monkeypatch):
    ledger = Ledger(None, "small", ZCDP(0.1))
    draws = []
    monkeypatch.setattr(MeanPlan, "run", lambda self, noise: draws.append(noise) or [])
    with pytest.raises(BudgetExceededError) as refused:
        release(make_plan(demo), ledger, noise="simulation", rng=0)
    message = str(refused.value)
    assert "Requested ρ = 0.5" in message
    assert "Remaining ρ = 0.1" in message
    assert "Difference ρ = 0.4" in message
    assert draws == []
    assert ledger.history() == []
    assert ledger.remaining() == {"rho": 0.1}


def test_the_last_of_the_budget_can_be_spent_exactly_and_no_more(demo, ledger):
    release(make_plan(demo, label="first half"), ledger, noise="simulation", rng=0)
    release(make_plan(demo, label="second half"), ledger, noise="simulation", rng=1)
    assert ledger.remaining() == {"rho": 0.0}
    with pytest.raises(BudgetExceededError, match="Remaining ρ = 0;"):
        release(make_plan(demo, label="one too many"), ledger, noise="simulation", rng=2)
    assert [r.label for r in ledger.history()] == ["first half", "second half"]


def test_bad_arguments_raise_and_record_nothing(demo, ledger):
    plan = make_plan(demo)
    with pytest.raises(ValueError, match="'secure' or 'simulation'"):
        release(plan, ledger, noise="fast")
    with pytest.raises(TypeError, match="must be a Ledger"):
        release(plan, str(ledger.path))
    with pytest.raises(ValueError, match="cannot be seeded"):
        release(plan, ledger, noise="secure", rng=0)
    assert ledger.history() == []


# --- what a record holds ------------------------------------------------------------------------


def test_the_record_holds_dp_outputs_and_public_parameters_only(demo, ledger):
    plan = make_plan(demo)
    record = release(plan, ledger, noise="simulation", rng=3)
    payload = ledger.history()[0].payload
    assert set(payload) == {"outputs", "metadata"}
    # The ledger states the people's loss in all as it records the release (its own column).
    stated = {k: v for k, v in record.metadata.items() if k != "cumulative_loss"}
    assert payload == {"outputs": record.outputs, "metadata": stated}

    by_group = demo.groupby(["race", "sex"])["hours_per_week"]
    exact = np.concatenate(  # the demo's hours lie in [0, 100]: clipped statistics = raw ones
        [by_group.mean(), by_group.sum(), [demo["hours_per_week"].mean()]]
    )
    assert demo["hours_per_week"].between(*HOURS).all()
    recorded = np.array(numbers_in(payload))
    near = np.isclose(recorded[:, None], exact[None, :], rtol=1e-9, atol=0)
    assert not near.any(), f"raw statistics in the record: {recorded[near.any(axis=1)]}"

    assert [row["level"] for row in record.outputs] == ["group"] * 10 + ["population"]
    for row in record.outputs:
        expected = {"level", "group", "estimate", "low", "high"}
        assert set(row) == expected | ({"public_share"} if row["level"] == "group" else set())
        assert row["low"] < row["estimate"] < row["high"]


def test_metadata_describes_data_estimator_noise_budget_time_and_software(demo, ledger):
    plan = make_plan(demo)
    before = datetime.now(UTC)
    metadata = release(plan, ledger, noise="simulation", rng=4).metadata

    assert metadata["title"] == "Mean of hours_per_week by race × sex"
    assert metadata["key"] == plan_key(plan, "simulation")
    assert metadata["plan"] == json.loads(json.dumps(plan.parameters()))
    dataset = metadata["plan"]["dataset"]
    assert dataset == {"name": DEMO_DATASET_NAME, "identity": demo_identity(), "rows": 32561}
    assert demo_identity() == files_identity([DEMO_DATA_PATH])  # the asset's bytes
    assert metadata["plan"]["estimator"] == {
        "class": "LaplaceMean", "bounds": [0.0, 100.0], "radius": None, "gamma": 0.1,
        "n_public": True,
    }  # fmt: skip
    assert metadata["plan"]["strata"]["by"] == ["race", "sex"]
    assert "simulation" in metadata["noise"] and "not for publication" in metadata["noise"]
    assert "95% noise intervals" in metadata["intervals"]
    assert metadata["budget"] == {
        "kind": "pure", "epsilon": 1.0, "rho": 0.5,
        "approx_dp": [{"epsilon": 1.0, "delta": 0.0}],
    }  # fmt: skip
    assert metadata["ledger"]["name"] == "default"
    released_at = datetime.fromisoformat(metadata["released_at"])
    assert released_at.utcoffset() == timedelta(0)
    assert before <= released_at <= datetime.now(UTC)
    software = metadata["software"]
    assert software["python"] == platform.python_version()
    for package in ("strata-lab", "numpy", "scipy", "pandas", "opendp"):
        assert software[package] == importlib_metadata.version(package)


# --- noise intervals ----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "strategy, level", [("stratified", 0.95), ("global_only", 0.9), ("global_and_groups", 0.8)]
)
def test_noise_intervals_cover_the_clipped_means_at_the_nominal_level(strategy, level):
    frame = regions()
    clipped = frame.assign(hours=frame["hours"].clip(*HOURS))
    truth = clipped.groupby("region")["hours"].mean().to_dict()
    truth["All"] = clipped["hours"].mean()  # shares are the group counts: Σ w_g μ_g = μ
    raw = frame.groupby("region")["hours"].mean()
    assert (raw - clipped.groupby("region")["hours"].mean()).min() > 3  # clipping matters

    plan = make_plan(frame, name="regions.csv", by=("region",), value="hours",
                     strategy=strategy, level=level)  # fmt: skip
    noise = noise_source("simulation", rng=20240501 + int(100 * level))
    expected = ["All"] if strategy == "global_only" else ["north", "south", "east", "All"]
    runs = 300
    covered: dict[str, int] = {}
    for _ in range(runs):
        rows = plan.run(noise, np.random.default_rng(0))
        assert [row.group for row in rows] == expected
        for row in rows:
            hit = row.low <= truth[row.group] <= row.high
            covered[row.group] = covered.get(row.group, 0) + hit
    for group, hits in covered.items():
        test = stats.binomtest(hits, runs, level)
        assert test.pvalue > 0.001, f"{group}: {hits}/{runs} covered, nominal {level:.0%}"


@pytest.mark.parametrize("strategy", ["stratified", "global_and_groups"])
def test_a_tiny_budget_releases_nothing_outside_the_public_range(strategy):
    """At ε = 0.01 the noise dwarfs [0, 100] (unclipped: −197 to 306 hours); every estimate and
    interval end is clipped into the range, and estimates stay inside their intervals."""
    plan = make_plan(regions(), name="regions.csv", by=("region",), value="hours",
                     budget=PureDP(0.01), strategy=strategy)  # fmt: skip
    rows = [row for seed in range(3)
            for row in plan.run(noise_source("simulation", rng=seed), np.random.default_rng(0))]  # fmt: skip
    ends = np.array([[row.estimate, row.low, row.high] for row in rows])
    assert ((ends >= HOURS[0]) & (ends <= HOURS[1])).all()
    assert np.isin(ends[:, 1:], HOURS).any()  # the noise did reach past the range
    assert ((ends[:, 1] <= ends[:, 0]) & (ends[:, 0] <= ends[:, 2])).all()


def test_values_near_the_largest_float_in_a_group_still_commit_finite_estimates(ledger):
    """Two finite values near −9e307 (a file may hold them) made the clipped sums NaN and every
    commit of the release fail (issue 15, item 4); clipped to [0, 100] they count as 0."""
    frame = pd.DataFrame({"region": ["north"] * 6 + ["south"] * 4,
                          "hours": [-9e307, -9e307, 40, 45, 50, 38, 1e308, 20, 30, 25]})  # fmt: skip
    plan = make_plan(frame, name="extreme.csv", by=("region",), value="hours")
    record = release(plan, ledger, noise="simulation", rng=0)
    ends = np.array([[row["estimate"], row["low"], row["high"]] for row in record.outputs])
    assert np.all(np.isfinite(ends)) and np.all((ends >= 0) & (ends <= 100))
    assert len(ledger.history()) == 1


# --- exports ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cell, expected",
    [
        ("=SUM(A1)", "'=SUM(A1)"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@x", "'@x"),
        ("\t=1", "\\t=1"),
        ("\r=1", "\\r=1"),
        ("a\r=HYPERLINK(x)", "a\\r=HYPERLINK(x)"),
        ("line\u2028=1\x1b", "line\\u2028=1\\x1b"),
        ("White × Male", "White × Male"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_escape_cell_neutralises_text_formulas(cell, expected):
    assert escape_cell(cell) == expected


@pytest.mark.parametrize("number", [-1.5, -3, 0, 2.25, np.float64(-0.5), np.int64(-7)])
def test_escape_cell_leaves_numbers_alone(number):
    escaped = escape_cell(number)
    assert escaped == number
    assert type(escaped) is type(number)


@pytest.fixture
def formula_record(ledger) -> ReleaseRecord:
    """A release whose group labels look like spreadsheet formulas and whose estimates are < 0."""
    labels = ["=SUM(A1)", "+cmd", "-2", "@x", "plain", "Apt #4"]
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {"group": np.repeat(labels, 30), "change": rng.uniform(-100.0, 0.0, 30 * len(labels))}
    )
    plan = make_plan(frame, name="changes.csv", by=("group",), value="change",
                     estimator=LaplaceMean(bounds=(-100.0, 0.0)),
                     label="=HYPERLINK(\"http://example.com\")")  # fmt: skip
    return release(plan, ledger, noise="simulation", rng=6)


def test_csv_escapes_formula_cells_keeps_numbers_and_carries_metadata(formula_record):
    text = to_csv(formula_record)
    comments = [line for line in text.splitlines() if line.startswith("#")]
    metadata = formula_record.metadata
    for expected in (
        '# release: \'=HYPERLINK("http://example.com")',
        "# dataset: changes.csv",
        "# budget: ε = 1, ρ = 0.5",
        f"# mechanism: {metadata['noise']}",
    ):
        assert expected in comments, expected
    assert_no_data_hash(text, formula_record)

    rows = list(csv.reader(line for line in io.StringIO(text) if not line.startswith("#")))
    assert rows[0] == ["level", "group", "estimate", "low", "high", "public_share"]
    for row in rows[1:]:
        for cell in row:
            try:
                float(cell)
            except ValueError:
                assert not cell.startswith(FORMULA_PREFIXES), f"unescaped formula cell {cell!r}"
    groups = {row[1] for row in rows[1:]}
    assert groups == {"'=SUM(A1)", "'+cmd", "'-2", "'@x", "plain", "Apt #4", "All"}

    table = pd.read_csv(io.StringIO(text), comment="#")  # the documented way to read it back
    assert len(table) == 7
    for column in ("estimate", "low", "high"):
        assert pd.api.types.is_float_dtype(table[column]), column
        assert table[column].notna().all(), column
    assert (table["estimate"] < 0).all()  # negative numbers were not escaped
    np.testing.assert_allclose(table["estimate"], formula_record.frame["estimate"], rtol=1e-15)
    assert table.loc[table["group"] == "Apt #4", "public_share"].item() == pytest.approx(1 / 6)


def test_no_physical_line_of_the_csv_starts_a_formula_whatever_the_names_hold(ledger):
    """Control characters in a column name, the group labels, the file name and the title are
    escaped on every line, metadata included: none can start a line with a formula."""
    frame = pd.DataFrame({
        "group\r=cmd()": np.repeat(["a\r=HYPERLINK(x)", "b\n@SUM(1)", "c\u2028+1"], 20),
        "hours\r-2": np.linspace(1.0, 9.0, 60),
    })  # fmt: skip
    plan = make_plan(frame, name="data\r=1.csv", by=("group\r=cmd()",), value="hours\r-2",
                     estimator=LaplaceMean(bounds=(0.0, 10.0)), label="title\r@x")  # fmt: skip
    text = to_csv(release(plan, ledger, noise="simulation", rng=3))
    lines = re.split("\r\n|\r|\n|\x0b|\x0c|\x1c|\x1d|\x1e|\x85|\u2028|\u2029", text)
    assert lines[-1] == ""
    for line in lines[:-1]:
        assert line and not line.startswith((*FORMULA_PREFIXES, "\t")), repr(line)
    assert "# release: title\\r@x" in lines
    table = pd.read_csv(io.StringIO(text), comment="#")
    assert sorted(table["group"]) == ["All", "a\\r=HYPERLINK(x)", "b\\n@SUM(1)", "c\\u2028+1"]


def test_json_round_trips_without_the_script(formula_record):
    text = to_json(formula_record)

    def refuse(constant: str) -> None:
        raise AssertionError(f"not strict JSON: {constant}")

    loaded = json.loads(text, parse_constant=refuse)
    # Group rows publish their shares, so the metadata says where they come from.
    shares = {"shares": shares_statement(formula_record.metadata["plan"]["strata"])}
    assert loaded == {
        "metadata": public_metadata(formula_record.metadata) | shares,
        "outputs": formula_record.outputs,
    }
    assert loaded["metadata"]["plan"]["dataset"] == {"name": "changes.csv"}
    assert not {"key", "run_id", "script"} & set(loaded["metadata"])
    assert_no_data_hash(text, formula_record)


@pytest.mark.parametrize(
    "title", ['Hours """ by sex', 'ends with a quote"', "back\\slash", "it's\nmultiline"]
)
def test_script_compiles_whatever_the_title(demo, ledger, title):
    record = release(make_plan(demo, by=("sex",), label=title), ledger, noise="simulation", rng=7)
    script = to_script(record)
    tree = ast.parse(script)  # a title must not be able to end the docstring early
    assert ast.get_docstring(tree).startswith(f"Reproduce the release {title!r} (")
    assert f"label={title!r}," in script


def test_the_script_of_intervals_with_sampling_error_finds_its_release(demo, ledger, tmp_path):
    plan = make_plan(demo, by=("sex",), sampling_error=True, variance_fraction=0.3)
    record = release(plan, ledger, noise="simulation", rng=3)
    assert "variance_fraction=0.3," in to_script(record)
    done = run_script(to_script(record), tmp_path, ledger.path, REPO)
    assert done.returncode == 0, done.stderr  # the same plan, so the same key
    assert done.stdout == to_csv(record) + "\n"


def test_intervals_that_cover_less_than_their_level_say_so_with_the_number(demo, ledger):
    """Issue 42: where a method cannot promise its level (intervals with sampling error over
    few skewed values), the review, the metadata, every export and the chart say so with the
    coverage measured, instead of a bare 95%."""
    plan = make_plan(demo, by=("sex",), sampling_error=True)
    assert plan.coverage_note is not None and plan.coverage_note.lowest == 0.92
    assert any(
        line.startswith("**Coverage:**") and "92–93%" in line for line in plan.review_lines()
    )
    record = release(plan, ledger, noise="simulation", rng=3)
    coverage = record.metadata["coverage"]
    assert coverage["measured"] == "92–93%" and "fewer than 1,000 rows" in coverage["note"]
    assert "\n# coverage: Nominal 95%, but means over fewer than 1,000 rows" in to_csv(record)
    assert json.loads(to_json(record))["metadata"]["coverage"]["lowest"] == 0.92
    title = charts_release.release_figure(record).layout.title.text
    assert title.endswith("95% intervals (some cover ≈92–93%: see Coverage)")
    # Noise-only intervals keep their level: no note, and the title as it was.
    assert make_plan(demo, by=("sex",)).coverage_note is None


@pytest.mark.slow
def test_script_redoes_the_demo_release_once_per_ledger(demo, ledger, tmp_path):
    plan = make_plan(demo)
    record = release(plan, ledger)  # OpenDP noise, so the script (NOISE as recorded) matches
    script = to_script(record)
    assert "frame, dataset = load_demo_dataset()" in script

    # Same ledger: the script rebuilds an identical plan (same key) and prints the record.
    assert_reruns_as_recorded(script, record, tmp_path, ledger)
    assert ledger.remaining() == {"rho": 0.5}

    # A fresh ledger holds no release of the plan: the script stops and spends nothing...
    fresh = tmp_path / "fresh.sqlite"
    done = run_script(script, tmp_path, fresh, REPO)
    assert done.returncode == 1 and done.stdout == ""
    assert "The ledger holds no release of this plan on this data" in done.stderr
    assert Ledger.open(fresh, "default").history() == []

    # ...unless asked to release again: fresh OpenDP noise, charged exactly once.
    again = script.replace("NEW_RELEASE = False", "NEW_RELEASE = True")
    done = run_script(again, tmp_path, fresh, REPO)
    assert done.returncode == 0, done.stderr
    redone = Ledger.open(fresh, "default")
    [entry] = redone.history()
    assert entry.key == record.key
    assert entry.cost == PureDP(1.0)
    assert redone.remaining() == {"rho": 0.5}
    assert "OpenDP" in entry.payload["metadata"]["noise"]
    assert entry.payload["outputs"] != record.outputs  # fresh noise
    assert len(ledger.history()) == 1


@pytest.mark.slow
def test_script_for_an_uploaded_file_reads_it_and_asks_the_ledger_if_it_is_the_data(
    ledger, tmp_path
):
    folder = tmp_path / "data"
    folder.mkdir()
    file = folder / "survey 2026.csv"
    regions(seed=9).to_csv(file, index=False)
    frame = read_table(file.read_bytes(), file.name)
    plan = make_plan(frame, name=file.name, by=("region",), value="hours", data=file.read_bytes())
    record = release(plan, ledger, noise="simulation", rng=10)
    script = to_script(record)
    assert f"PATH = {file.name!r}" in script
    assert "frame, dataset = read_dataset(PATH)" in script
    assert_no_data_hash(script, record)

    assert_reruns_as_recorded(script, record, tmp_path, ledger, folder)

    lines = file.read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",12.5"  # someone edited one value
    file.write_text("\n".join(lines) + "\n")
    done = run_script(script, tmp_path, ledger.path, folder)
    assert done.returncode == 1
    assert "the data differ from the release's, or the ledger is another one" in done.stderr
    assert done.stdout == ""
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.5}


# --- budgets in every unit ----------------------------------------------------------------------


def test_budget_in_units_pure_dp_adds_rho_and_delta_zero():
    assert budget_in_units(PureDP(2.0)) == {
        "kind": "pure", "epsilon": 2.0, "rho": 2.0, "approx_dp": [{"epsilon": 2.0, "delta": 0.0}]
    }  # fmt: skip


def test_budget_in_units_approx_dp_is_its_own_equivalent():
    assert budget_in_units(ApproxDP(0.5, 1e-6)) == {
        "kind": "approx", "epsilon": 0.5, "delta": 1e-6,
        "approx_dp": [{"epsilon": 0.5, "delta": 1e-6}],
    }  # fmt: skip


def test_budget_in_units_zcdp_gives_the_tight_epsilon_at_each_delta():
    rho = 0.5
    units = budget_in_units(ZCDP(rho))
    assert (units["kind"], units["rho"]) == ("zcdp", rho)
    assert [e["delta"] for e in units["approx_dp"]] == [1e-5, 1e-6, 1e-8]
    # Canonne, Kamath & Steinke (2020), Cor. 13, minimised over a fine grid of Rényi orders α.
    alpha = 1 + np.geomspace(1e-3, 1e4, 400_001)
    for equivalent in units["approx_dp"]:
        log_inv_delta = -np.log(equivalent["delta"])
        curve = alpha * rho + (
            log_inv_delta + (alpha - 1) * np.log1p(-1 / alpha) - np.log(alpha)
        ) / (alpha - 1)
        classic = rho + 2 * np.sqrt(rho * log_inv_delta)
        assert equivalent["epsilon"] == pytest.approx(curve.min(), rel=1e-6)
        assert equivalent["epsilon"] < classic
    epsilons = [e["epsilon"] for e in units["approx_dp"]]
    assert epsilons == sorted(epsilons)  # a smaller δ costs a larger ε


# --- ledger additions ---------------------------------------------------------------------------


def test_check_affordable_raises_without_recording(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "survey", ZCDP(1.0))
    ledger.spend("first", ZCDP(0.75), {})
    assert ledger.check_affordable(ZCDP(0.25)) is None  # exactly what is left
    for cost, requested in ((ZCDP(0.3), "ρ = 0.3"), (PureDP(1.0), "ρ = 0.5")):
        with pytest.raises(BudgetExceededError) as refused:
            ledger.check_affordable(cost)
        message = str(refused.value)
        assert f"Requested {requested}" in message
        assert "Remaining ρ = 0.25" in message and "Difference" in message
    with pytest.raises(ValueError, match="cannot be expressed"):
        ledger.check_affordable(ApproxDP(0.1, 1e-6))
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.25}


def test_open_uses_the_stored_total_and_refuses_unknown_names(tmp_path):
    file = tmp_path / "l.sqlite"
    created = Ledger(file, "survey", ApproxDP(2.0, 1e-6))
    created.spend("mean", PureDP(0.5), {"mean": 1.0})
    opened = Ledger.open(file, "survey")
    assert opened.total == ApproxDP(2.0, 1e-6)
    assert opened.history() == created.history()
    with pytest.raises(ValueError, match="existing ledger, got 'census'"):
        Ledger.open(file, "census")
    missing = tmp_path / "missing.sqlite"
    with pytest.raises(ValueError, match="existing ledger"):
        Ledger.open(missing, "survey")
    assert not missing.exists()


def test_a_raise_adds_to_the_total_and_keeps_every_record(tmp_path):
    """What a reset did (a fresh budget for the same people) is a raise now: nothing is moved or
    forgotten, and the raise is a record of its own."""
    file = tmp_path / "l.sqlite"
    ledger = Ledger(file, "survey", ZCDP(1.0))
    old = [ledger.spend("a", ZCDP(0.5), {"x": 1}, key="k1"), ledger.spend("b", ZCDP(0.5), {})]
    raised = ledger.raise_total(ZCDP(1.0), reason="second study agreed", actor="ana")
    assert (raised.entry, raised.reason, raised.actor) == ("raise", "second study agreed", "ana")
    assert ledger.history() == old
    assert ledger.remaining() == {"rho": 1.0} and ledger.granted() == ZCDP(2.0)
    assert ledger.total == ZCDP(1.0)  # what it started with, as the exported script opens it
    [summary] = list_ledgers(file)
    assert (summary.releases, summary.total, summary.granted) == (2, ZCDP(1.0), ZCDP(2.0))
    # The same key still names the recorded spend: a raise renews no release.
    assert ledger.spend("a", ZCDP(0.5), {"x": 2}, key="k1") == old[0]


def test_list_ledgers_on_a_missing_file_is_empty_and_creates_nothing(tmp_path):
    missing = tmp_path / "nowhere" / "ledger.sqlite"
    assert list_ledgers(missing) == []
    assert not missing.parent.exists()


# --- charts and the HTML report -----------------------------------------------------------------


@pytest.mark.parametrize("left, total", [(0.5, 1.0), (2.0, 8.0)])
def test_budget_gauge_shows_what_is_left_on_a_zero_to_total_scale(left, total):
    indicator = charts_release.budget_gauge(left, total, "ρ", "survey").data[0]
    assert indicator.value == left
    assert tuple(indicator.gauge.axis.range) == (0, total)
    assert [tuple(s.range) for s in indicator.gauge.steps] == [
        (0.0, 0.1 * total),
        (0.1 * total, total),
    ]
    assert indicator.title.text == "ρ left in ledger<br>“survey”"


def test_budget_gauge_wraps_a_long_ledger_name_rather_than_cut_it():
    name = "Income survey 2026, second wave, regions and municipalities"
    title = charts_release.budget_gauge(1.0, 2.0, "ρ", name).data[0].title.text
    lines = title.split("<br>")
    assert lines[0] == "ρ left in ledger" and all(len(line) <= 34 for line in lines)
    assert " ".join(lines[1:]) == f"“{name}”"


@pytest.fixture
def demo_record(demo, ledger) -> ReleaseRecord:
    return release(
        make_plan(demo, label="Hours <b>by</b> group"), ledger, noise="simulation", rng=11
    )


def test_release_figure_draws_each_estimate_with_its_interval(demo_record):
    fig = charts_release.release_figure(demo_record)
    assert fig.layout.title.text == "Hours <b>by</b> group — DP estimates with 95% intervals"
    assert fig.layout.xaxis.title.text == "Group"
    assert fig.layout.yaxis.title.text == "Mean of hours_per_week"
    assert [t.name for t in fig.data] == ["group estimate", "whole population"]
    frame = demo_record.frame
    for trace, part in zip(fig.data, (frame.iloc[:-1], frame.iloc[-1:]), strict=True):
        assert len(trace.x) == len(part)
        np.testing.assert_allclose(trace.y, part["estimate"])
        np.testing.assert_allclose(trace.error_y.array, part["high"] - part["estimate"])
        np.testing.assert_allclose(trace.error_y.arrayminus, part["estimate"] - part["low"])
        assert trace.error_y.symmetric is False


def test_release_figure_value_axis_is_the_public_range_or_the_estimates(demo_record):
    """A wide interval never sets the axis (issue 13): a mean's axis is its bounds [L, U]; a
    release without a public pair of bounds (a ratio) spans its estimates from 0."""
    bounds = demo_record.metadata["plan"]["estimator"]["bounds"]
    assert list(charts_release.release_figure(demo_record).layout.yaxis.range) == list(bounds)
    ratio_like = dataclasses.replace(
        demo_record, metadata={**demo_record.metadata, "plan": {
            **demo_record.metadata["plan"], "estimator": {"bounds": {"s": 1.0, "y": 1.0}}}},
    )  # fmt: skip
    low, high = charts_release.release_figure(ratio_like).layout.yaxis.range
    estimates = demo_record.frame["estimate"]
    assert low == 0 and estimates.max() < high < 2 * estimates.max()


def test_a_release_of_many_groups_lists_one_per_row_with_whole_labels(demo, ledger):
    """Turned upright, the labels of 17 groups ran into each other (a browser tester's chart)."""
    record = release(make_plan(demo, by=("education",)), ledger, noise="simulation", rng=13)
    fig = charts_release.release_figure(record)
    groups, population = fig.data
    frame = record.frame
    assert len(frame) > charts_release.MAX_UPRIGHT_GROUPS
    assert [label.replace("<br>", " ") for label in groups.y] == frame["group"].iloc[:-1].tolist()
    np.testing.assert_allclose(groups.x, frame["estimate"].iloc[:-1])
    np.testing.assert_allclose(groups.error_x.array, (frame["high"] - frame["estimate"]).iloc[:-1])
    assert list(population.y) == ["All"]
    assert fig.layout.yaxis.autorange == "reversed"  # the first group on top
    assert list(fig.layout.xaxis.range) == record.metadata["plan"]["estimator"]["bounds"]
    assert fig.layout.height >= 28 * len(frame)


def test_release_figure_of_a_population_only_release_has_one_point(demo, ledger):
    plan = make_plan(demo, strategy="global_only")
    fig = charts_release.release_figure(release(plan, ledger, noise="simulation", rng=12))
    assert [t.name for t in fig.data] == ["whole population"]
    assert list(fig.data[0].x) == ["All"]


def test_the_script_imports_each_module_once_at_its_top(demo_record):
    """Each part of the script brought its own imports, repeated through the file."""
    statements = ast.parse(to_script(demo_record)).body[1:]  # after the docstring
    imports = [s for s in statements if isinstance(s, ast.ImportFrom | ast.Import)]
    assert statements[: len(imports)] == imports  # all before any code
    modules = [s.module for s in imports]
    assert len(modules) == len(set(modules))
    names = {alias.name for s in imports for alias in s.names}
    assert {"load_demo_dataset", "Ledger", "PlanHeader", "MeanPlan"} <= names


def test_a_script_recorded_before_the_layout_moved_imports_from_the_new_homes(demo_record):
    """Records keep their plan's script: one recorded when engines held the analyses' passes
    and the privacy unit stood at dpcore's top imports from there; exported again, it runs."""
    old = (
        "from dpcore.engines import DuckDBEngine, aggregate_mean\n"
        "from dpcore.foundations.privacy_unit import PrivacyUnit\n"
        "aggregated = aggregate_mean(DuckDBEngine('x'), spec, 'v', (0, 1), PrivacyUnit('p'))\n"
    )
    record = dataclasses.replace(demo_record, metadata={**demo_record.metadata, "script": old})
    statements = ast.parse(to_script(record)).body
    found = {(s.module, a.name) for s in statements if isinstance(s, ast.ImportFrom)
             for a in s.names}  # fmt: skip
    assert {("dpcore.engines", "DuckDBEngine"),
            ("dpcore.analyses.mean.aggregate", "aggregate_mean"),
            ("dpcore.foundations.privacy_unit", "PrivacyUnit")} <= found  # fmt: skip
    for module, name in found:
        assert hasattr(importlib.import_module(module), name), (module, name)


def test_csv_header_is_escaped_like_the_cells(formula_record):
    outputs = [{"=HYPERLINK(1)" if k == "group" else k: v for k, v in row.items()}
               for row in formula_record.outputs]  # fmt: skip
    record = dataclasses.replace(formula_record, outputs=outputs)
    header = next(line for line in to_csv(record).splitlines() if not line.startswith("#"))
    assert '"\'=HYPERLINK(1)"' in header.split(",")


def test_a_dry_run_never_stands_in_for_the_real_release(demo, ledger):
    plan = make_plan(demo)
    dry = release(plan, ledger, noise="simulation", rng=1)
    assert dry.spent and dry.key != plan_key(plan)
    assert plan_key(plan) == plan_key(plan, "secure") != plan_key(plan, "simulation")


def test_private_group_sizes_release_no_intervals_and_only_declared_shares(demo, ledger):
    plan = make_plan(demo, by=("sex",), estimator=PRIVATE_SIZES, spec_options=DECLARED_SEX)
    record = release(plan, ledger, noise="simulation", rng=2)
    assert all(row["low"] is None and row["high"] is None for row in record.outputs)
    assert record.metadata["intervals"].startswith("no intervals: group sizes are private")
    assert [row.get("public_share") for row in record.outputs] == [0.5, 0.5, 0.0, None]
    # The declared category with no rows is released too, from noise alone, in the public range.
    another = record.outputs[2]
    assert another["group"] == "Another" and 0 <= another["estimate"] <= 100


@pytest.mark.parametrize(
    ("changes", "fix"),
    [
        ({**SEX_SHARES, "categories": ()}, "declare the categories of each grouping column"),
        ({"small_groups": "merge"}, "keep every group whatever its size"),
        ({"small_groups": "drop"}, "keep every group whatever its size"),
    ],
)
def test_private_group_sizes_need_declared_groups_kept_whatever_their_size(demo, changes, fix):
    with pytest.raises(ValueError, match="Group sizes are private in this release") as refused:
        make_plan(
            demo, by=("sex",), estimator=PRIVATE_SIZES, spec_options={**DECLARED_SEX, **changes}
        )
    assert fix in str(refused.value)


def test_public_group_sizes_refuse_a_kept_group_with_no_rows_before_any_draw(demo):
    with pytest.raises(ValueError, match="“Another” has no rows with a value"):
        make_plan(demo, by=("sex",), spec_options=DECLARED_SEX)
    # The population alone has no group mean to divide by zero.
    make_plan(demo, by=("sex",), spec_options=DECLARED_SEX, strategy="global_only")


@pytest.mark.parametrize("strategy", ["stratified", "global_and_groups"])
def test_private_group_sizes_with_shares_from_the_data_are_refused(demo, strategy):
    with pytest.raises(ValueError, match="Group sizes are private in this release") as refused:
        make_plan(demo, estimator=PRIVATE_SIZES, strategy=strategy)
    assert "take the shares from a public table, a holdout split or the release's own noisy" in str(
        refused.value
    )
    # A population-only release publishes no group shares: nothing to refuse.
    make_plan(demo, estimator=PRIVATE_SIZES, strategy="global_only")


def test_every_export_says_where_the_list_of_groups_came_from(demo, ledger):
    """Groups from the data, a list prefilled from the data and accepted as public, and a
    declared list: the CSV's groups line and the review say which, truthfully."""
    sex = (("sex", ("Female", "Male")),)
    cases = {
        "the combinations present in the data": {},
        "prefilled from the categories found in the data": {
            "categories": sex, "categories_source": "data",
        },
        "a declared public list": {"categories": sex},
    }  # fmt: skip
    for said, options in cases.items():
        plan = make_plan(demo, by=("sex",), spec_options=options, label=said, budget=PureDP(0.1))
        record = release(plan, ledger, noise="simulation", rng=1)
        groups = next(line for line in to_csv(record).splitlines() if line.startswith("# groups"))
        assert said in groups, groups
