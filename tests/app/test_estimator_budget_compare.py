"""App tests of the Estimator, Budget and Compare pages (AppTest layer), and the product claim."""

from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.analyses.mean.simulate import monte_carlo, parity_by_replicate
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import PureDP
from dpcore.foundations.shares import shares_from_counts
from strata_ui import constants
from strata_ui.analyses.mean.compare import MeanView
from strata_ui.data import load_demo
from tests.app.helpers import (
    change_settings,
    charts,
    errors,
    go,
    settings_of,
    start,
    state_of,
    text,
    upload,
)
from tests.frames import tiny_groups_survey_frame

REPO = Path(__file__).resolve().parents[2]


def summaries(at: AppTest) -> list[str]:
    return [m.value for m in at.main.markdown if m.value.startswith(("Median", "Mean"))]


# Not `page`, which pytest-playwright would parametrize by browser (see tests/app/test_pages.py).
@pytest.mark.parametrize("page_name", ["estimator", "budget", "compare"])
def test_page_renders_with_defaults_and_no_error(page_name):
    at = start(page_name)
    assert not at.main.error, errors(at)


def test_compare_shows_the_banner_and_three_labelled_charts():
    at = start("compare")
    assert any("not themselves differentially private" in i.value for i in at.info)
    figures = charts(at)
    assert len(figures) == 3
    for figure in figures:
        layout = figure["layout"]
        assert layout["title"]["text"]
        assert layout["xaxis"]["title"]["text"]
        assert layout["yaxis"]["title"]["text"] or figure["data"][0]["type"] == "box"
    # Every chart has a one-sentence summary stating numbers for both strategies.
    assert len(summaries(at)) == 4
    assert all(
        "One estimate per group" in s and "One estimate for everyone" in s and "%" in s
        for s in summaries(at)
    )


def test_moving_the_budget_changes_the_numbers():
    at = start("compare")
    before, sweep_before = summaries(at), charts(at)[2]
    at.select_slider(key="compare.budget.pure").set_value(0.1).run()
    assert not at.exception
    after = summaries(at)
    assert after[0] != before[0]  # global error
    assert after[1] != before[1]  # parity error
    assert at.get("plotly_chart")  # still drawn
    # The sweep covers every budget: the slider leaves it as it was (no marker to move).
    assert charts(at)[2] == sweep_before


def test_the_budget_page_s_epsilon_starts_compare_which_then_keeps_its_own():
    """Issue 37: the Budget page takes any ε; Compare starts there, and moving Compare's ε
    leaves the Budget page's alone until the user carries it over."""
    at = start("budget")
    at.number_input(key="budget.epsilon").set_value(2.37).run()
    assert state_of(at).epsilon == 2.37  # not a slider's stop
    go(at, "compare")
    assert at.select_slider(key="compare.budget.pure").value == 2.0  # the nearest stop
    for chosen in (0.5, 3.0):
        at.select_slider(key="compare.budget.pure").set_value(chosen).run()
        assert state_of(at).epsilon == 2.37
        assert f"ε = {chosen:g}" in " ".join(c.value for c in at.main.caption)
    at.button(key="compare.budget.carry").click().run()
    assert state_of(at).epsilon == 3.0
    go(at, "budget")
    assert at.number_input(key="budget.epsilon").value == 3.0


def test_log_axis_toggle_and_vanilla_choice():
    at = start("compare")
    assert charts(at)[1]["layout"]["yaxis"]["type"] == "linear"
    at.toggle(key="mean_view.log_axis").set_value(True).run()
    assert charts(at)[1]["layout"]["yaxis"]["type"] == "log"
    at.radio(key="mean_view.vanilla_strategy").set_value("global_and_groups").run()
    assert not at.exception
    # Two panels (population and parity error), one box per strategy in each.
    assert [t["name"] for t in charts(at)[0]["data"]] == 2 * [
        "One estimate per group",
        "Both, budget split",
    ]


@pytest.mark.parametrize("low, high", [(100.0, 100.0), (100.0, 0.0)])
def test_bounds_out_of_order_show_an_error_not_an_exception(low, high):
    at = start("estimator")
    at.number_input(key="mean.clip_high").set_value(high).run()
    at.number_input(key="mean.clip_low").set_value(low).run()
    assert not at.exception
    assert "lower bound L must be below the upper bound U" in errors(at)
    go(at, "compare")  # the same message where the estimate is simulated
    assert "lower bound L must be below the upper bound U" in errors(at)
    assert not at.get("plotly_chart")


def test_coinpress_at_an_epsilon_budget_runs_at_rho_and_asks_for_public_counts():
    """One budget language: CoinPress at ε = 1 is charged ρ = ε²/2 = 0.5, as the Laplace mean
    is. It treats group sizes as public, so with the private default shares it says so and
    offers the explicit choice; once made, Compare draws."""
    at = start("estimator")
    at.radio(key="mean.estimator").set_value("coinpress").run()
    assert not at.exception
    assert at.slider(key="mean.coinpress_steps").value == 3
    go(at, "budget")
    assert not at.main.error, errors(at)
    assert "will run at ρ = 0.5 (zCDP)" in text(at.main.caption)
    go(at, "compare")
    assert "treats group sizes as public" in text(at.main.warning)
    at.button(key="shares.declare_exact_counts").click().run()
    assert not at.main.error, errors(at)
    assert len(at.get("plotly_chart")) == 3


def test_budget_page_shows_equivalents_and_composition_costs():
    at = start("budget")
    text = " ".join(m.value for m in at.main.markdown)
    # One charge, said once: the cost line prices a Laplace mean's ε = 1 as ρ = ε²/2 = 0.5, so
    # no charge note repeats it (it shows only where the charge reads differently).
    assert "ε-DP as ρ = ε²/2, so the ledger is charged **ρ = 0.5**" in text
    assert "is charged **ρ = 0.5** (ρ = ε²/2)" not in text
    table = at.main.dataframe[-1].value
    totals = table[table["part"].str.startswith("Total")]
    assert list(totals["cost"]) == ["ε = 1"] * 3
    at.slider(key="mean.global_fraction").set_value(0.2).run()
    table = at.main.dataframe[-1].value
    assert "ε = 0.2" in list(table["cost"])
    at.radio(key="budget.kind").set_value("zcdp").run()
    assert "δ = 1e-6" in " ".join(c.value for c in at.main.caption)
    deltas = at.main.dataframe[-2].value
    assert len(deltas) == len(constants.EQUIVALENT_DELTAS)


def test_stratified_beats_vanilla_i_on_parity_error_on_the_demo_data():
    """The product claim (AAAI 2024, Sec. 5): stratification lowers parity error (Def. 10)."""
    strata = GroupValues.from_frame(load_demo(), by=["race", "sex"], value="hours_per_week")
    estimator, budget = LaplaceMean(bounds=(0.0, 100.0)), PureDP(1.0)
    shares = shares_from_counts(strata)
    parity = {}
    for strategy in ("stratified", "global_only"):
        frame = monte_carlo(
            strata, estimator, budget, strategy=strategy, shares=shares, replicates=500, rng=7
        )
        parity[strategy] = parity_by_replicate(frame).to_numpy()
    assert parity["stratified"].mean() < parity["global_only"].mean()
    test = stats.mannwhitneyu(parity["stratified"], parity["global_only"], alternative="less")
    assert test.pvalue < 1e-6
    assert np.median(parity["stratified"]) < np.median(parity["global_only"])


def test_a_group_whose_true_mean_is_0_switches_compare_to_absolute_errors_without_its_values():
    """Issue 37: the under-18 band of the survey earns exactly 0, where a relative error is
    undefined; Compare shows absolute errors with a note instead of crashing with every exact
    group mean on screen, and keeps the user's choice for data without a zero mean."""
    at = upload(start(), tiny_groups_survey_frame().to_csv(index=False).encode(), "survey.csv")
    change_settings(at, MeanSettings, value="income", clip_low=0.0, clip_high=250_000.0)
    state = state_of(at)
    state.strata_columns, state.bucket_edges = ["region", "age"], {"age": [18.0, 40.0, 65.0]}
    state.replicates = 100
    go(at, "compare")
    assert not at.exception and not at.main.error, errors(at)
    assert "A true mean here is 0" in text(at.main.info)
    forced = at.radio(key="mean_view.measure_forced")
    assert forced.disabled and forced.value == "absolute"
    assert settings_of(at, MeanView).measure == "relative"  # the stored choice is kept
    shown = text(at.main.markdown) + text(at.main.info) + text(at.main.caption)
    assert "array(" not in shown and "normalized error is undefined" not in shown

    state.strata_columns = ["sex"]  # every group's mean income is above 0
    go(at, "compare")
    assert "A true mean here is 0" not in text(at.main.info)
    assert at.radio(key="mean_view.measure").value == "relative"
