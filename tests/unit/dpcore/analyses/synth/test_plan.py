"""Synthetic data per group (dpcore.analyses.synth): prepared rows, checks, fast scoring, sweeps and
the release plan (AAAI 2024 arXiv, appendix C)."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.synth import SYNTH, SynthSettings
from dpcore.analyses.synth import plan as synth_plans
from dpcore.analyses.synth.config import (
    ALL_ROWS,
    MAX_ROWS,
    SynthConfig,
    check_config,
    domain_sizes,
    prepare_rows,
    run_synthesis,
)
from dpcore.analyses.synth.encoding import bucketize
from dpcore.analyses.synth.plan import INTERVALS_NOTE, SynthPlan
from dpcore.analyses.synth.synthesizers import MAX_HISTOGRAM_CELLS
from dpcore.analyses.synth.workload import (
    EncodedRows,
    build_workload,
    real_table,
    sweep_errors,
    sweep_metrics,
    synth_domain,
)
from dpcore.foundations.accounting import ZCDP, BudgetExceededError, PureDP
from dpcore.foundations.datasets import load_demo, load_demo_dataset
from dpcore.foundations.grouping import OTHER_LABEL, GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.mechanisms import noise_source
from dpcore.foundations.metrics import GroupWorkload, workload_error_by_group
from dpcore.release import DatasetRef, PlanHeader, plan_key, release, to_csv, to_script
from tests.scripts import assert_reruns_as_recorded

AGE_EDGES = (("age", (30.0, 50.0)),)


def survey(seed: int = 0) -> pd.DataFrame:
    """Three regions of 400, 150 and 50 people with three text columns, an age and a 0/1 flag.

    The columns depend on the region, so per-group models have something to learn.
    """
    rng = np.random.default_rng(seed)
    sizes = {"north": 400, "south": 150, "east": 50}
    region = np.repeat(list(sizes), list(sizes.values()))
    shift = pd.Series(region).map({"north": 0.0, "south": 0.3, "east": 0.6}).to_numpy()
    n = region.size
    pick = lambda options, p: np.where(rng.random(n) < p, options[0], options[1])  # noqa: E731
    return pd.DataFrame(
        {
            "region": region,
            "job": pick(("office", "field"), 0.7 - shift / 2),
            "car": pick(("yes", "no"), 0.2 + shift),
            "pet": pick(("cat", "dog"), 0.5),
            "age": rng.integers(18, 80, n),
            "flag": (rng.random(n) < 0.3 + shift / 2).astype(int),
        }
    )


def config(**options) -> SynthConfig:
    defaults = {
        "columns": ("job", "car", "pet", "age", "flag"),
        "method": "independent",
        "n_rows": 600,
        "edges": AGE_EDGES,
        "categorical": ("flag",),
    }
    return SynthConfig(**(defaults | options))


def parts(frame: pd.DataFrame, **spec_options):
    spec = GroupingSpec(by=("region",), **spec_options)
    grouping = spec.build(frame)
    return spec, grouping, grouping.shares


def make_plan(
    frame: pd.DataFrame,
    *,
    name: str = "survey.csv",
    epsilon: float = 1.0,
    label: str = "",
    level: float = 0.95,
    **options,
) -> SynthPlan:
    header = PlanHeader(
        dataset=DatasetRef.of(frame, name), spec=GroupingSpec(by=("region",)),
        budget=PureDP(epsilon), label=label, level=level,
    )  # fmt: skip
    plan_options = {"config": config()} | options
    return SynthPlan.build(frame, header=header, **plan_options)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return survey()


# --- configuration and rows ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"n_rows": 5}, "`n_rows` must be between 10 and 100,000, got 5"),
        ({"n_rows": MAX_ROWS + 1}, "`n_rows` must be between"),
        ({"edges": (("age", (50, 30)),)}, "strictly increasing, got [50.0, 30.0]"),
        ({"edges": (("age", (float("nan"),)),)}, "finite numbers"),
        ({"categorical": ("age", "flag")}, "have both bucket `edges` and are listed"),
        ({"method": "gan"}, "`method` must be one of"),
        ({"columns": ("job", "job")}, "must not repeat a column"),
    ],
)
def test_config_refuses_bad_values_naming_them(options, message):
    with pytest.raises(ValueError, match=None) as error:
        config(**options)
    assert message in str(error.value)


def test_config_keys_mwem_settings_only_when_used():
    assert "rounds" not in config(rounds=3).to_dict()
    assert config(method="mwem", rounds=3).to_dict()["rounds"] == 3
    json.dumps(config().to_dict())


def test_prepare_rows_keeps_output_columns_and_turns_chosen_numbers_into_text(frame):
    spec, grouping, _ = parts(frame)
    prepared = prepare_rows(frame, spec, grouping, config())
    assert list(prepared.rows.columns) == ["job", "car", "pet", "age", "flag", "region"]
    assert len(prepared.rows) == len(frame) and prepared.messages() == []
    assert set(prepared.rows["flag"]) == {"0", "1"}
    assert prepared.rows["age"].dtype == frame["age"].dtype


def test_prepare_rows_leaves_out_the_holdout_and_dropped_groups(frame):
    spec, grouping, _ = parts(frame, share_source="holdout", holdout_fraction=0.2)
    prepared = prepare_rows(frame, spec, grouping, config())
    assert prepared.n_holdout == 120 and len(prepared.rows) == 480
    assert "120 rows form the public holdout" in prepared.messages()[0]

    spec, grouping, _ = parts(frame, min_group_size=100, small_groups="drop")
    prepared = prepare_rows(frame, spec, grouping, config())
    assert prepared.n_dropped == 50 and set(prepared.rows["region"]) == {"north", "south"}
    assert "50 rows belong to groups dropped" in prepared.messages()[0]


def test_prepare_rows_refuses_merged_groups_and_says_how_to_fix_it(frame):
    frame3 = frame.assign(region=frame["region"].where(frame["region"] != "south", "west"))
    frame3.loc[frame3.index[-20:], "region"] = "south"  # east (30) and south (20) get merged
    spec, grouping, _ = parts(frame3, min_group_size=40)
    assert OTHER_LABEL in grouping.labels
    with pytest.raises(ValueError, match="drop small groups instead of merging them"):
        prepare_rows(frame3, spec, grouping, config())


# --- checks -------------------------------------------------------------------------------------


def checked(frame, cfg, strategies=("stratified",), **spec_options):
    spec, grouping, shares = parts(frame, **spec_options)
    return check_config(prepare_rows(frame, spec, grouping, cfg), cfg, spec, shares, strategies)


def test_check_returns_domain_sizes(frame):
    sizes = checked(frame, config())
    assert sizes == {"job": 2, "car": 2, "pet": 2, "age": 3, "flag": 2, "region": 3}


def test_prepared_rows_read_categories_once_and_keep_them_through_pickling(frame, monkeypatch):
    spec, grouping, _ = parts(frame)
    prepared = prepare_rows(frame, spec, grouping, config())
    sizes = prepared.domain_sizes(config(), spec)
    assert sizes == domain_sizes(prepared.rows, config(), spec)
    # Edges are applied on every call, so other edges give other sizes from the same counts.
    assert prepared.domain_sizes(config(edges=(("age", (40.0,)),)), spec)["age"] == 2
    copy = pickle.loads(pickle.dumps(prepared))  # as st.cache_data returns it
    monkeypatch.setattr(pd, "unique", lambda *a, **k: pytest.fail("counted again"))
    assert copy.domain_sizes(config(), spec) == sizes
    assert checked_prepared(copy, spec) == sizes


def checked_prepared(prepared, spec, cfg=None):
    shares = parts(survey())[2]
    return check_config(prepared, cfg or config(), spec, shares, ("stratified",))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"columns": ("job", "car")}, "Choose at least 3 columns to synthesize besides the strata"),
        ({"edges": ()}, "Column `age` is numeric: type public bucket edges"),
        ({"edges": (("region", (1.0,)),)}, "group the rows on the Strata page"),
    ],
)
def test_check_refuses_what_cannot_work_with_a_fix(frame, options, message):
    with pytest.raises(ValueError) as error:
        checked(frame, config(**options))
    assert message in str(error.value)


def test_a_group_that_would_get_no_synthetic_rows_is_refused_with_the_rows_needed():
    lopsided = survey(2)
    lopsided["region"] = ["north"] * 580 + ["south"] * 10 + ["east"] * 10
    with pytest.raises(ValueError) as error:
        checked(lopsided, config(n_rows=10))
    assert "With 10 synthetic rows, 2 group(s) would get no rows (east, south)" in str(error.value)
    assert "raise the number of rows to at least 60" in str(error.value)
    assert checked(lopsided, config(n_rows=60))
    assert checked(lopsided, config(n_rows=10), strategies=("vanilla",))  # no shares used


def test_histogram_too_large_names_the_cell_count_and_suggests_mwem():
    rng = np.random.default_rng(1)
    wide = pd.DataFrame({f"c{i}": rng.integers(0, 13, 300).astype(str) for i in range(6)})
    wide["region"] = np.repeat(["a", "b", "c"], 100)
    wide["age"] = 1.0
    cfg = SynthConfig(columns=tuple(f"c{i}" for i in range(6)), method="histogram", n_rows=100)
    spec, grouping, shares = parts(wide)
    prepared = prepare_rows(wide, spec, grouping, cfg)
    cells = 13**6
    assert cells > MAX_HISTOGRAM_CELLS
    with pytest.raises(ValueError) as error:
        check_config(prepared, cfg, spec, shares, ("stratified",))
    assert f"has {cells:,} cells" in str(error.value)
    assert "Use MWEM" in str(error.value) and "fewer columns" in str(error.value)
    # Vanilla models the strata column too: 3 × as many cells.
    narrow = SynthConfig(columns=("c0", "c1", "c2", "c3", "c4"), method="histogram", n_rows=100)
    check_config(prepare_rows(wide, spec, grouping, narrow), narrow, spec, shares, ("stratified",))
    with pytest.raises(ValueError, match=f"vanilla model .* has {3 * 13**5:,} cells"):
        check_config(prepare_rows(wide, spec, grouping, narrow), narrow, spec, shares, ("vanilla",))


# --- scoring and sweeps -------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["stratified", "vanilla"])
def test_group_workload_scores_like_workload_error_by_group(frame, strategy):
    spec, grouping, shares = parts(frame)
    cfg = config()
    prepared = prepare_rows(frame, spec, grouping, cfg)
    data = run_synthesis(prepared, cfg, spec, shares, epsilon=0.5, strategy=strategy, rng=3)
    workload = build_workload(prepared, cfg, spec)
    ours = workload.score(data.frame)
    real = bucketize(prepared.rows, dict(cfg.edges))
    reference = workload_error_by_group(real, data.frame, ["region"], way=3)
    pd.testing.assert_series_equal(
        ours.groups.sort_index(), reference.groups.sort_index(), check_names=False
    )
    assert ours.overall == pytest.approx(reference.overall, abs=1e-12)
    assert synth_domain(prepared, cfg, spec) == {c: tuple(v) for c, v in data.domain.items()}


def test_group_workload_scores_zero_for_the_real_rows_and_one_per_missing_group(frame):
    spec, grouping, _ = parts(frame)
    cfg = config()
    prepared = prepare_rows(frame, spec, grouping, cfg)
    workload = build_workload(prepared, cfg, spec)
    real = real_table(prepared, cfg, spec)
    assert workload.score(real).worst == 0 and workload.score(real).overall == 0
    errors = workload.score(real[real["region"] != "east"])
    assert errors.groups["east"] == 1.0  # no synthetic rows: ‖M_S(G)/|G|‖₁ = 1 per marginal
    assert isinstance(workload, GroupWorkload) and workload.labels == ("east", "north", "south")


@pytest.mark.parametrize("method", ["independent", "mwem", "histogram"])
@pytest.mark.parametrize("strategy", ["stratified", "vanilla"])
def test_encoded_draws_equal_synthesize_for_the_same_seed(frame, method, strategy):
    spec, grouping, shares = parts(frame)
    cfg = config(method=method, rounds=3)
    prepared = prepare_rows(frame, spec, grouping, cfg)
    fast = EncodedRows.of(prepared, cfg, spec, shares, strategy).draw(
        cfg, 2.0, np.random.default_rng(11)
    )
    slow = run_synthesis(
        prepared, cfg, spec, shares, epsilon=2.0, strategy=strategy,
        rng=np.random.default_rng(11),
    )  # fmt: skip
    pd.testing.assert_frame_equal(fast, slow.frame)


def test_sweep_errors_is_tidy_and_metrics_follow_the_definitions(frame):
    spec, grouping, shares = parts(frame)
    cfg = config()
    prepared = prepare_rows(frame, spec, grouping, cfg)
    errors = sweep_errors(prepared, cfg, spec, shares, epsilons=(0.5, 4.0), runs=2, rng=5)
    assert list(errors.columns) == [
        "epsilon", "strategy", "run", "level", "group", "size", "error",
    ]  # fmt: skip
    assert len(errors) == 2 * 2 * 2 * 4  # ε × strategy × run × (3 groups + all rows)
    population = errors[errors["level"] == "population"]
    assert set(population["group"]) == {ALL_ROWS} and set(population["size"]) == {600}
    sizes = errors[errors["level"] == "group"].groupby("group")["size"].first()
    assert sizes.to_dict() == {"east": 50, "north": 400, "south": 150}
    assert errors["error"].between(0, 2).all()
    # Same seed, same numbers; the seed changes them.
    again = sweep_errors(prepared, cfg, spec, shares, epsilons=(0.5, 4.0), runs=2, rng=5)
    pd.testing.assert_frame_equal(errors, again)
    other = sweep_errors(prepared, cfg, spec, shares, epsilons=(0.5,), runs=1, rng=6)
    assert not np.allclose(other["error"], errors["error"].iloc[: len(other)])

    metrics = sweep_metrics(errors)
    assert len(metrics) == 8
    row = metrics.iloc[0]
    part = errors[(errors["epsilon"] == row["epsilon"]) & (errors["strategy"] == row["strategy"])]
    part = part[part["run"] == row["run"]]
    groups = part[part["level"] == "group"]["error"]
    overall = part[part["level"] == "population"]["error"].iloc[0]
    assert row["worst group"] == groups.max()
    assert row["parity"] == pytest.approx(overall / 3 + groups.mean())
    assert row["disparity"] == pytest.approx(groups.max() - groups.min())
    assert row["overall"] == overall
    # More budget, less error on all rows (on average over the runs).
    mean = metrics.groupby("epsilon")["overall"].mean()
    assert mean[4.0] < mean[0.5]


def test_stratified_independent_beats_vanilla_where_groups_differ(frame):
    """Independent marginals cannot express region × job: stratifying restores it."""
    spec, grouping, shares = parts(frame)
    cfg = config(n_rows=3000)
    prepared = prepare_rows(frame, spec, grouping, cfg)
    errors = sweep_errors(prepared, cfg, spec, shares, epsilons=(8.0,), runs=3, rng=0)
    metrics = sweep_metrics(errors).groupby("strategy").mean(numeric_only=True)
    assert metrics.loc["stratified", "parity"] < metrics.loc["vanilla", "parity"]


# --- the plan -----------------------------------------------------------------------------------


def test_plan_costs_epsilon_once_for_both_strategies(frame):
    for strategy in ("stratified", "vanilla"):
        plan = make_plan(frame, strategy=strategy, epsilon=0.7)
        assert plan.cost == PureDP(0.7)
    assert make_plan(frame).interval_description == INTERVALS_NOTE


@pytest.mark.parametrize("strategy", ["stratified", "vanilla"])
def test_plan_runs_to_rows_of_the_output_columns_within_the_domain(frame, strategy):
    plan = make_plan(frame, strategy=strategy, config=config(method="mwem", rounds=3))
    rows = [
        row.to_dict()
        for row in plan.run(noise_source("simulation", rng=0), np.random.default_rng(0))
    ]
    table = pd.DataFrame(rows)
    assert len(table) == 600
    assert list(table.columns) == ["job", "car", "pet", "age", "flag", "region"]
    assert list(table.columns) == list(plan.columns)
    assert set(table["age"]) <= {"< 30", "[30, 50)", "≥ 50"}
    assert set(table["flag"]) <= {"0", "1"} and set(table["region"]) <= set(frame["region"])
    assert all(isinstance(v, str) for row in rows for v in row.values())
    if strategy == "stratified":  # rows by public share: 400, 150 and 50 of 600
        assert table["region"].value_counts().to_dict() == {"north": 400, "south": 150, "east": 50}


def test_plan_parameters_are_json_and_name_the_statistic(frame):
    plan = make_plan(frame, config=config(method="mwem"))
    parameters = json.loads(json.dumps(plan.parameters()))
    assert parameters["kind"] == "synth"
    assert parameters["statistic"] == "synthetic data (MWEM)"
    assert parameters["budget"] == {"kind": "pure", "epsilon": 1.0}
    assert parameters["estimator"]["class"] == "synthesize"
    assert parameters["estimator"]["edges"] == {"age": [30.0, 50.0]}
    # Lists read off the data are treated as public and published: the release names them.
    assert parameters["estimator"]["categories_treated_as_public"] == ["job", "car", "pet", "flag"]
    assert parameters["estimator"]["categories"]["flag"] == ["0", "1"]
    assert parameters["strata"]["by"] == ["region"]
    assert parameters["strategy"] == "stratified"
    assert parameters["columns"] == ["job", "car", "pet", "age", "flag", "region"]
    assert plan.header.label == "Synthetic data (MWEM), stratified by region"


def test_plan_key_is_stable_and_changes_with_every_choice(frame):
    key = plan_key(make_plan(frame))
    assert plan_key(make_plan(frame.copy())) == key
    assert plan_key(make_plan(frame, level=0.8)) == key  # no intervals: the level is no choice
    changed = [
        make_plan(frame, epsilon=0.5),
        make_plan(frame, strategy="vanilla"),
        make_plan(frame, label="Another"),
        make_plan(frame, config=config(n_rows=700)),
        make_plan(frame, config=config(method="histogram")),
        make_plan(frame, config=config(edges=(("age", (40.0,)),))),
        make_plan(frame.assign(pet="cat")),
    ]
    keys = {plan_key(p) for p in changed}
    assert key not in keys and len(keys) == len(changed)


def test_plan_refuses_bad_input_on_construction(frame):
    with pytest.raises(ValueError, match="`epsilon` must be a finite number > 0, got -1.0"):
        make_plan(frame, epsilon=-1.0)
    with pytest.raises(ValueError, match="`strategy` must be one of"):
        make_plan(frame, strategy="global_only")
    with pytest.raises(ValueError, match="Column `age` is numeric"):
        make_plan(frame, config=config(edges=()))


def test_plan_of_prepared_rows_equals_the_built_plan(frame, monkeypatch):
    built = make_plan(frame)
    monkeypatch.setattr(synth_plans, "prepare_rows", lambda *a: pytest.fail("prepared again"))
    given = SynthPlan(prepared=built.prepared, header=built.header, config=config())
    assert given == built and plan_key(given) == plan_key(built)
    assert "prepared" not in repr(given) and given.parameters() == built.parameters()
    with pytest.raises(ValueError, match="`prepared` holds the columns"):
        SynthPlan(prepared=built.prepared, header=built.header,
                  config=config(columns=("job", "car", "pet", "age")))  # fmt: skip
    with pytest.raises(TypeError, match="`prepared` must be a PreparedRows"):
        SynthPlan(prepared=built.prepared.rows, header=built.header, config=config())


# --- the analysis: statistics and study ---------------------------------------------------------


def survey_settings(**changes) -> SynthSettings:
    """The settings of :func:`config` on :func:`survey`."""
    base = SynthSettings(
        method="independent", columns=("job", "car", "pet", "age", "flag"), edges=AGE_EDGES,
        categorical=("flag",), n_rows=600,
    )  # fmt: skip
    return dataclasses.replace(base, **changes)


@pytest.mark.parametrize(
    "changes",
    [
        {"method": "mwem"},
        {"columns": ("job", "car", "pet", "age")},
        {"edges": (("age", (40.0,)),)},
        {"categorical": ()},
        {"n_rows": 700},
        {"rounds": 2},
    ],
)
def test_statistics_key_follows_every_setting_the_prepared_rows_carry(frame, changes):
    settings = survey_settings()
    changed = survey_settings(**changes)
    assert SYNTH.statistics_key(changed) != SYNTH.statistics_key(settings)
    _, grouping, _ = parts(frame)
    stats, other = (SYNTH.statistics(frame, grouping, s) for s in (settings, changed))
    assert other.config != stats.config  # so the prepared rows differ too


def test_statistics_key_leaves_out_only_the_strategy(frame):
    stratified, vanilla = survey_settings(), survey_settings(strategy="vanilla")
    assert SYNTH.statistics_key(stratified) == SYNTH.statistics_key(vanilla)
    _, grouping, _ = parts(frame)
    stats = SYNTH.statistics(frame, grouping, stratified)
    again = SYNTH.statistics(frame, grouping, vanilla)
    assert stats.config == again.config == config()
    pd.testing.assert_frame_equal(stats.rows, again.rows)


def test_study_scores_with_a_given_workload_as_without(frame, monkeypatch):
    settings = survey_settings()
    spec, grouping, _ = parts(frame)
    stats = SYNTH.statistics(frame, grouping, settings)
    fresh = SYNTH.study(stats, settings, PureDP(0.5), replicates=2, rng=4)
    workload = build_workload(stats, stats.config, spec)
    monkeypatch.setattr(GroupWorkload, "from_rows", lambda *a, **k: pytest.fail("counted again"))
    given = SYNTH.study(stats, settings, PureDP(0.5), replicates=2, rng=4, workload=workload)
    pd.testing.assert_frame_equal(given, fresh)


def test_review_lines_say_what_is_released_and_what_is_not_protected(frame):
    text = "\n".join(make_plan(frame).review_lines())
    assert "600 rows of `job`, `car`, `pet`, `age`, `flag`, `region`" in text
    assert "region — 3 groups, one model each with the full budget" in text
    assert "**Public bucket edges:** age: 30, 50" in text
    assert "category lists of `job`, `car`, `pet`, `flag`, `region` are read from the data" in text
    vanilla = "\n".join(make_plan(frame, strategy="vanilla").review_lines())
    assert "one model for all rows; region modelled as columns" in vanilla


@pytest.mark.parametrize(
    ("source", "prefilled"), [("declared", False), ("data", True)], ids=["codebook", "prefilled"]
)
def test_review_lines_call_declared_groups_declared_and_name_the_other_lists(
    frame, source, prefilled
):
    spec = GroupingSpec(
        by=("region",), categories=(("region", ("east", "north", "south")),),
        categories_source=source,
    )  # fmt: skip
    header = PlanHeader(DatasetRef.of(frame, "survey.csv"), spec, PureDP(1.0))
    text = "\n".join(SynthPlan.build(frame, header=header, config=config()).review_lines())
    assert "category lists of `job`, `car`, `pet`, `flag` are read from the data" in text
    assert ("the categories of `region` are a list prefilled from the data" in text) == prefilled


def test_release_spends_the_cost_once_and_refuses_a_small_ledger(frame, ledger):
    plan = make_plan(frame)
    record = release(plan, ledger, noise="simulation", rng=1)
    assert record.spent and ledger.remaining() == {"rho": 0.5}
    assert record.metadata["plan"]["kind"] == "synth" and len(record.outputs) == 600
    again = release(make_plan(frame), ledger, noise="simulation", rng=2)
    assert not again.spent and again.outputs == record.outputs
    assert ledger.remaining() == {"rho": 0.5}

    tiny = Ledger(None, "tiny", ZCDP(0.1))  # other people's data: no release of theirs yet
    with pytest.raises(BudgetExceededError):
        release(make_plan(frame.iloc[1:]), tiny, noise="simulation", rng=1)
    assert tiny.history() == [] and tiny.remaining() == {"rho": 0.1}


@pytest.mark.parametrize(("strategy", "models"), [("stratified", 3), ("vanilla", 1)])
def test_release_reports_each_model_fitted_ending_with_all_done(frame, ledger, strategy, models):
    calls = []
    release(
        make_plan(frame, strategy=strategy), ledger, noise="simulation", rng=1,
        progress=lambda done, total: calls.append((done, total)),
    )  # fmt: skip
    # Before each group's fit (so a bar shows while the first, slowest model fits), then at the end.
    assert calls == [(done, models) for done in range(models + 1)]


def test_csv_of_a_release_escapes_formula_categories(ledger):
    evil = survey(3)
    evil["pet"] = evil["pet"].map({"cat": '=HYPERLINK("http://x")', "dog": "+1"})
    record = release(make_plan(evil), ledger, noise="simulation", rng=0)
    text = to_csv(record)
    assert "# statistic: synthetic data (independent marginals)" in text
    assert '"\'=HYPERLINK(""http://x"")"' in text and '"\'+1"' in text
    table = pd.read_csv(pd.io.common.StringIO(text), comment="#")
    assert list(table.columns) == ["job", "car", "pet", "age", "flag", "region"]
    assert set(table["pet"]) <= {'\'=HYPERLINK("http://x")', "'+1"}


@pytest.mark.slow
def test_script_rebuilds_the_demo_plan_and_spends_nothing_more(ledger, tmp_path):
    demo = load_demo()
    spec = GroupingSpec(by=("race", "sex"))
    header = PlanHeader(dataset=load_demo_dataset()[1], spec=spec, budget=PureDP(1.0))
    plan = SynthPlan.build(
        demo, header=header, strategy="stratified",
        config=SynthConfig(
            columns=("age", "workclass", "education", "income_over_50k"), method="mwem",
            n_rows=300, edges=(("age", (25.0, 45.0, 65.0)),), categorical=("income_over_50k",),
            rounds=3,
        ),
    )  # fmt: skip
    record = release(plan, ledger, noise="simulation", rng=4)
    script = to_script(record)
    assert (
        "frame, dataset = load_demo_dataset()" in script and "SynthConfig(columns=('age'" in script
    )
    assert_reruns_as_recorded(script, record, tmp_path, ledger)
    assert ledger.remaining() == {"rho": 0.5}


def test_a_declared_list_is_the_synthetic_groups_a_group_with_no_rows_included():
    """Declared race × sex with a sex the demo has no row of, shared out by a public table: the
    synthetic rows fall in the declared groups only (that group's from noise alone) and none in
    an undeclared race."""
    demo = load_demo()
    races, sexes = ("White", "Black"), ("Female", "Male", "Another")
    spec = GroupingSpec(
        by=("race", "sex"), small_groups="keep", share_source="table",
        share_table=tuple((f"{r} × {s}", 1.0) for r in races for s in sexes),
        categories=(("race", races), ("sex", sexes)),
    )  # fmt: skip
    settings = SynthSettings(method="independent", n_rows=600)
    grouping = spec.build(demo)
    header = PlanHeader(DatasetRef.of(demo, "demo"), spec, PureDP(1.0))
    plan = SYNTH.plan(SYNTH.statistics(demo, grouping, settings), settings, header)
    rows = pd.DataFrame([dict(row.values) for row in plan.run(noise_source("simulation", rng=0),
                                                              np.random.default_rng(0))])  # fmt: skip
    counts = rows.groupby(["race", "sex"]).size()
    assert set(rows["race"]) == set(races)
    assert counts.loc[("White", "Another")] == counts.loc[("Black", "Another")] == 100


def test_a_0_1_grouping_column_without_edges_stratifies_as_text(frame):
    spec = GroupingSpec(by=("flag",))
    header = PlanHeader(DatasetRef.of(frame, "survey.csv"), spec, PureDP(1.0))
    cfg = config(columns=("job", "car", "pet"), edges=(), categorical=())
    plan = SynthPlan.build(frame, header=header, config=cfg)
    rows = pd.DataFrame([r.to_dict() for r in plan.run(noise_source("simulation", rng=0),
                                                       np.random.default_rng(0))])  # fmt: skip
    assert set(rows["flag"]) == {"0", "1"} and len(rows) == 600
    assert "**Not protected:** the category lists of `job`, `car`, `pet`, `flag`" in "\n".join(
        plan.review_lines()
    )
