"""The Analysis interface and its registry: every analysis runs end to end through the same
calls (settings -> statistics -> plan -> preview -> study), and refuses what it cannot do with a
typed error."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from dpcore import ZCDP, DatasetRef, GroupingSpec, Ledger, PlanHeader, PureDP, load_demo, release
from dpcore.analyses import ANALYSES, REGISTRY, get
from dpcore.analyses.gvdp import GvdpSettings
from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.ratio import RatioSettings
from dpcore.analyses.sample import SampleSettings
from dpcore.analyses.synth import SynthSettings
from dpcore.analyses.synth.analysis import column_kinds
from dpcore.foundations.accounting import check_affordable
from dpcore.foundations.errors import BudgetKindError, ClassicGaussianRangeError, SettingsError
from dpcore.foundations.intervals import Interval
from dpcore.foundations.mechanisms import SecureNoise

SPEC = GroupingSpec(by=("race", "sex"))
FAST = {  # the demo defaults, made quick for a test
    "mean": MeanSettings(n_public=True),  # the data's counts are the specs' shares
    "ratio": RatioSettings(),
    "gvdp": GvdpSettings(),
    "synth": SynthSettings(method="independent", n_rows=500),
    "sample": SampleSettings(),
}


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


@pytest.fixture(scope="module")
def grouping(demo):
    return SPEC.build(demo)


def header(demo, budget=None) -> PlanHeader:
    return PlanHeader(
        dataset=DatasetRef.of(demo, "UCI Adult (demo)"), spec=SPEC,
        budget=ZCDP(0.5) if budget is None else budget,
    )  # fmt: skip


def released_numbers(preview) -> np.ndarray:
    """The numbers a preview would publish, whatever the analysis' result type."""
    if isinstance(preview, Interval):  # GVDP
        return np.atleast_1d(preview.estimate)
    if hasattr(preview, "group_estimates"):  # the mean's strategies
        return np.append(preview.group_estimates, preview.global_estimate)
    if hasattr(preview, "overall"):  # the ratio
        return np.append(preview.groups.estimate, preview.overall.estimate)
    return preview.frame.to_numpy(dtype=str).ravel()  # synthetic rows


def studied_replicates(study) -> int:
    """How many simulated releases a study scored, whatever its result type."""
    if hasattr(study, "metrics"):  # the mean
        return len(study.metrics)
    if hasattr(study, "replications"):  # GVDP's coverage
        return study.replications
    if "reps" in study:  # the ratio's coverage frame
        return int(study["reps"].iloc[0])
    return study["run"].nunique()  # synthetic data's sweep


def test_the_registry_lists_each_analysis_once_under_its_name():
    assert [a.name for a in ANALYSES] == ["mean", "ratio", "gvdp", "synth", "sample"]
    assert all(REGISTRY[a.name] is a for a in ANALYSES)
    assert get("ratio").title == "Ratio of sums (calibration ratio)"
    with pytest.raises(ValueError, match="`name` must be one of 'mean', 'ratio'"):
        get("median")


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_settings_are_frozen_dataclasses_whose_defaults_fit_the_demo(analysis, demo):
    settings = analysis.default_settings()
    assert isinstance(settings, analysis.settings_type)
    assert dataclasses.is_dataclass(settings)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.__setattr__(dataclasses.fields(settings)[0].name, None)
    assert analysis.problems(settings, demo) == []


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_every_analysis_runs_end_to_end_through_the_interface(analysis, demo, grouping, tmp_path):
    settings = FAST[analysis.name]
    stats = analysis.statistics(demo, grouping, settings)
    plan = analysis.plan(stats, settings, header(demo))
    assert plan.parameters()["kind"] == analysis.name
    check_affordable(ZCDP(0.5), [], plan.cost)  # never more than the user's budget
    if analysis.name != "ratio":  # the ratio's exact cost follows from its sums' split
        assert plan.cost == analysis.native_budget(settings, ZCDP(0.5))
    assert re.search("[ερ] = ", analysis.describe_budget(settings, ZCDP(0.5)))
    preview = released_numbers(analysis.preview(stats, settings, header(demo), rng=1))
    assert preview.size
    # A seeded preview is the plan's estimate with numpy noise: the same seed, the same numbers.
    again = released_numbers(analysis.preview(stats, settings, header(demo), rng=1))
    np.testing.assert_array_equal(preview, again)
    other = released_numbers(analysis.preview(stats, settings, header(demo), rng=2))
    assert not np.array_equal(preview, other)
    study = analysis.study(stats, settings, ZCDP(0.5), replicates=2, rng=2)
    assert studied_replicates(study) >= 2
    record = release(plan, Ledger(tmp_path / "l.sqlite", "t", ZCDP(1.0)), noise="simulation", rng=3)
    assert record.spent and record.outputs


def test_a_mean_study_without_the_per_group_summary_keeps_the_same_releases(demo, grouping):
    mean, settings = get("mean"), MeanSettings(n_public=True)
    stats = mean.statistics(demo, grouping, settings)
    full = mean.study(stats, settings, PureDP(0.5), replicates=50, rng=9)
    lean = mean.study(stats, settings, PureDP(0.5), replicates=50, rng=9, per_group=False)
    assert lean.groups is None and len(full.groups) == grouping.k
    pd.testing.assert_frame_equal(lean.metrics, full.metrics)


def test_one_budget_language_every_mean_estimator_is_charged_rho_eps2_over_2_at_epsilon():
    """Gaussian noise at an ε budget runs at ρ = ε²/2, the ρ the Laplace mean at ε costs; a ρ
    budget runs the Laplace mean at ε = √(2ρ)."""
    for estimator in ("gaussian", "coinpress"):
        settings = MeanSettings(estimator=estimator)
        assert get("mean").native_budget(settings, PureDP(1.0)) == ZCDP(0.5)
    assert get("mean").native_budget(MeanSettings(), ZCDP(0.125)) == PureDP(0.5)


def test_the_mean_states_missing_or_crossed_bounds():
    mean = get("mean")
    with pytest.raises(SettingsError, match="Enter public lower and upper bounds") as caught:
        mean.estimator(MeanSettings(clip_low=None))
    assert caught.value.problems[0].field == "clip_low"
    with pytest.raises(SettingsError, match="L must be below the upper bound U"):
        mean.estimator(MeanSettings(clip_low=5.0, clip_high=1.0))
    assert [p.severity for p in mean.problems(MeanSettings(value=None), None)] == ["info"]


def test_the_ratio_explains_budgets_it_cannot_meet_with_typed_errors(demo):
    ratio = get("ratio")
    with pytest.raises(ClassicGaussianRangeError) as caught:
        ratio.native_budget(RatioSettings(), PureDP(8.0))
    assert caught.value.epsilon == pytest.approx(8.0 / 5)  # ε split over the 5 released sums
    with pytest.raises(BudgetKindError) as kind:
        ratio.native_budget(RatioSettings(mechanism="gaussian_analytic"), ZCDP(0.5))
    assert kind.value.needs == ("pure", "approx")


def test_the_ratio_lists_every_problem_with_its_field(demo):
    settings = RatioSettings(s_column="race", y_column="score", s_bound=-1.0)
    problems = get("ratio").problems(settings, demo)
    assert [p.field for p in problems] == ["s_column", "s_bound"]
    assert "not numeric (its values are text)" in problems[0].message
    binary = get("ratio").problems(RatioSettings(y_column="age"), demo)
    assert binary[0].field == "binary_y" and "values other than 0 and 1" in binary[0].message


def test_gvdp_runs_at_rho_and_synthesis_at_epsilon_for_either_budget():
    assert get("gvdp").native_budget(GvdpSettings(), PureDP(1.0)) == ZCDP(0.5)
    assert get("synth").native_budget(SynthSettings(), ZCDP(0.5)) == PureDP(1.0)


def test_gvdp_settings_remember_a_choice_per_model():
    settings = GvdpSettings().with_choice(outcome="age")
    ols = dataclasses.replace(settings, model="ols").with_choice(k=60)
    assert ols.outcome == "hours_per_week" and ols.k == 60
    back = dataclasses.replace(ols, model="mean")
    assert back.outcome == "age" and back.k is None  # the mean's k: chosen from the rows
    assert dataclasses.replace(back.with_choice(k=80), model="ols").k == 60


def test_synthesis_picks_default_columns_and_buckets_numbers_by_public_edges(demo):
    synth = get("synth")
    kinds = column_kinds(demo)  # the columns' kinds: what data read where it lies tells too
    config = synth.config(SynthSettings(), kinds, ("race", "sex"))
    assert config.columns[:2] == ("age", "workclass")
    assert dict(config.edges)["age"] == (25.0, 35.0, 45.0, 55.0, 65.0)
    assert config.categorical == ("income_over_50k",)
    cleared = synth.config(SynthSettings().with_edges("age", None), kinds, ("race", "sex"))
    assert "age" not in dict(cleared.edges)
    assert synth.columns(SynthSettings(columns=()), kinds, ("race",)) == ()


def test_preview_is_the_plan_drawn_once_with_seeded_noise(demo, grouping):
    mean = get("mean")
    settings = MeanSettings(n_public=True)
    stats = mean.statistics(demo, grouping, settings)
    first = mean.preview(stats, settings, header(demo, PureDP(1.0)), rng=5)
    again = mean.preview(stats, settings, header(demo, PureDP(1.0)), rng=5)
    np.testing.assert_array_equal(first.group_estimates, again.group_estimates)
    assert first.group_estimates.shape == (stats.k,)


@pytest.mark.parametrize("analysis", ANALYSES, ids=lambda a: a.name)
def test_a_real_release_draws_its_noise_from_opendp(
    analysis, demo, grouping, tmp_path, monkeypatch
):
    """Every analysis' committed release draws its privacy noise from OpenDP's samplers (numpy
    serves only post-processing, such as the ratio's Monte Carlo correction)."""
    calls = []
    original = SecureNoise._apply

    def counted(*args):
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(SecureNoise, "_apply", staticmethod(counted))
    settings = FAST[analysis.name]
    plan = analysis.plan(analysis.statistics(demo, grouping, settings), settings, header(demo))
    record = release(plan, Ledger(tmp_path / "l.sqlite", "t", ZCDP(1.0)), noise="secure")
    assert record.spent and calls
