"""App tests of the general estimator with valid CIs (GVDP) on the Estimator, Compare and Release
pages: every model previews DP beside non-private results, coverage and the k diagnostic render,
bad input gets a message (never a traceback), and a release spends exactly its ρ."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.accounting import ZCDP
from dpcore.ledger import Ledger
from strata_ui.analyses.gvdp.widgets import PREVIEW_LABEL, GvdpSettings
from strata_ui.data import load_demo
from strata_ui.state import AppState, settings_key

REPO = Path(__file__).resolve().parents[2]
ANALYSIS = "estimator.analysis"


def start() -> AppTest:
    """The Estimator page with the general estimator chosen."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.run()
    go(at, "estimator")
    at.radio(key=ANALYSIS).set_value("gvdp").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def state_of(at: AppTest) -> AppState:
    return at.session_state[settings_key(AppState)]


def gvdp_settings(at: AppTest) -> GvdpSettings:
    return at.session_state[settings_key(GvdpSettings)]


def use_frame(at: AppTest, frame, fingerprint: str) -> AppTest:
    """Make ``frame`` the session's dataset (as a validated upload would) and rerun."""
    state = state_of(at)
    state.uploaded, state.dataset_fingerprint, state.dataset_name = frame, fingerprint, "f.csv"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def charts(at: AppTest) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    return [c["layout"]["title"]["text"] for c in charts(at)]


def errors(at: AppTest) -> str:
    return " ".join(e.value for e in at.main.error)


def text(elements) -> str:
    return " ".join(e.value for e in elements)


def test_the_mean_preview_shows_dp_beside_non_private_with_labelled_charts():
    at = start()
    assert not at.main.error, errors(at)
    assert PREVIEW_LABEL in text(at.info)
    assert "Non-private curator diagnostic" in text(at.info)
    assert titles(at) == [
        "DP estimate (GVDP) beside the non-private estimate, with 95% intervals",
        "hours_per_week: DP and non-private estimate in each group, 95% intervals",
        "hours_per_week: how wide each group's interval is (log scale)",
        "hours_per_week: BLB subsets at several k — non-private curator diagnostic "
        "(your k = 1,000 in blue)",
    ]
    for figure in charts(at):
        layout = figure["layout"]
        assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"]
    page = text(at.main.markdown)
    assert "The DP intervals are " in page and "× for hours_per_week" in page
    assert "Smallest group (Other × Female, n = 109, k = 3)" in page
    assert "k = 1,000 (yours): centre" in page
    assert "ρ = ε²/2 = 0.5 from your ε = 1 on the Budget page" in page
    [table] = [d.value for d in at.main.dataframe if "DP estimate" in d.value.columns]
    assert list(table["coefficient"]) == ["hours_per_week"]
    assert (table["DP low"] < table["DP estimate"]).all()
    assert (table["Non-private low"] < table["Non-private high"]).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "model, coefficients",
    [
        ("ols", ["intercept", "age", "income_over_50k"]),
        ("logistic", ["intercept", "age", "hours_per_week"]),
    ],
)
def test_each_regression_previews_every_coefficient(model, coefficients):
    at = start()
    at.radio(key="gvdp.model").set_value(model).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.main.error, errors(at)
    assert not at.main.warning, text(at.main.warning)
    comparison = charts(at)[0]
    assert [a["text"] for a in comparison["layout"]["annotations"]] == coefficients
    assert {t["name"] for t in comparison["data"]} == {"DP (GVDP)", "Non-private"}
    [table] = [d.value for d in at.main.dataframe if "DP estimate" in d.value.columns]
    assert list(table["coefficient"]) == coefficients
    assert len(charts(at)) == 4
    # Another coefficient redraws the per-group charts.
    at.selectbox(key="gvdp.group_coefficient").set_value("age").run()
    assert titles(at)[1].startswith("age: DP and non-private estimate in each group")


@pytest.mark.slow
def test_guess_bounds_with_a_safety_factor_also_preview():
    at = start()
    at.radio(key="gvdp.bounds_mode").set_value("guess").run()
    assert not at.main.error, errors(at)
    assert at.select_slider(key="gvdp.factor").value == 100.0
    assert at.number_input(key="gvdp.guess.mean.hours_per_week.hours_per_week.value").value == 40
    assert "within this factor of your guesses" in text(at.main.caption)
    assert len(charts(at)) == 4


def test_an_epsilon_budget_becomes_rho_and_a_rho_budget_is_used_as_is():
    at = start()
    assert "GVDP adds Gaussian noise, so it meets ρ-zCDP" in text(at.main.markdown)
    state = state_of(at)
    state.budget_kind, state.rho = "zcdp", 0.2
    at.run()
    assert "ρ = 0.2 (zCDP), set on the Budget page." in text(at.main.markdown)


MEAN_BOUNDS = "gvdp.box.mean.hours_per_week.hours_per_week"
BAD_MEAN_SETTINGS = [
    ("gvdp.mean.outcome.demo", "workclass", "hours_per_week",
     "`outcome` column 'workclass' is not numeric (dtype string)"),
    ("gvdp.k.mean", 20_000, 1000,
     "GVDP needs at least 5 rows per subset (5 per coefficient): use k ≤ 6,512"),
    (f"{MEAN_BOUNDS}.high", -1.0, 100.0,
     "the public range of `hours_per_week` must have low < high, got low = 0 and high = -1"),
    (f"{MEAN_BOUNDS}.spread", 0.0, 50.0, "`spread` for `hours_per_week` must be > 0"),
]  # fmt: skip


def widget(at: AppTest, key: str):
    return next(w for w in (*at.selectbox, *at.number_input) if w.key == key)


def test_bad_mean_settings_show_a_message_not_a_traceback():
    at = start()
    for key, bad, good, message in BAD_MEAN_SETTINGS:
        widget(at, key).set_value(bad).run()
        assert not at.exception, [e.value for e in at.exception]
        assert message in errors(at), key
        assert not any("DP estimate (GVDP)" in t for t in titles(at))  # no preview
        widget(at, key).set_value(good).run()
        assert not at.main.error, errors(at)


def test_bad_regression_settings_show_a_message():
    at = start()
    at.radio(key="gvdp.model").set_value("logistic").run()
    at.selectbox(key="gvdp.logistic.outcome.demo").set_value("score").run()
    assert "`outcome` column 'score' must hold only 0 and 1 for a logistic model" in errors(at)

    at.radio(key="gvdp.model").set_value("ols").run()
    covariates = at.multiselect(key="gvdp.ols.covariates.demo")
    covariates.select("hours_per_week").run()
    assert "`outcome` 'hours_per_week' is also a covariate" in errors(at)
    covariates = at.multiselect(key="gvdp.ols.covariates.demo")
    covariates.unselect("hours_per_week").unselect("age").unselect("income_over_50k").run()
    assert "`covariates` must name at least one column for a regression" in errors(at)
    at.multiselect(key="gvdp.ols.covariates.demo").select("age").select("income_over_50k").run()
    assert not at.main.error, errors(at)

    at.number_input(key="gvdp.k.ols").set_value(1000).run()
    assert not at.exception, [e.value for e in at.exception]
    assert "covariate 'income_over_50k' is 0/1 and its rarer value is scarce" in errors(at)
    assert "use k ≤ 809" in errors(at)


def test_degenerate_data_show_the_problem_and_the_fix():
    at = start()
    cases = [
        (lambda f: f.assign(income_over_50k=0), "logistic",
         "`outcome` column 'income_over_50k' is 0 in every row of the data"),
        (lambda f: f.assign(age=30), "ols", "covariate 'age' is constant in the data"),
        (lambda f: f.assign(age=f["income_over_50k"] * 2 + 1), "ols",
         "covariate 'income_over_50k' is a linear combination of 'intercept', 'age'"),
    ]  # fmt: skip
    for i, (change, model, message) in enumerate(cases):
        at.radio(key="gvdp.model").set_value(model).run()
        use_frame(at, change(load_demo()), f"bad-{i}")
        assert message in errors(at)


def test_missing_values_are_dropped_and_counted():
    at = start()
    frame = load_demo().astype({"hours_per_week": float})
    frame.loc[:99, "hours_per_week"] = np.nan
    use_frame(at, frame, "holes")
    assert "100 of 32,561 rows have a missing or infinite value in `hours_per_week`" in text(
        at.main.caption
    )
    assert not at.main.error, errors(at)
    assert "Whole population** (32,461 rows" in text(at.main.markdown)


def test_a_group_that_cannot_be_fitted_is_explained_and_the_population_still_shows():
    at = start()
    at.radio(key="gvdp.model").set_value("ols").run()
    state_of(at).strata_columns = ["race", "sex", "education"]  # many tiny groups
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Per-group estimates are not available" in text(at.main.warning)
    assert "fit the whole population only" in text(at.main.warning)
    assert titles(at)[0].startswith("DP estimate (GVDP) beside the non-private estimate")


@pytest.mark.parametrize("source", ["data", "synthetic"])
def test_compare_shows_coverage_against_the_binomial_band(source):
    at = start()
    go(at, "compare")
    if source == "synthetic":
        at.radio(key="gvdp.coverage.source").set_value("synthetic").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.main.error, errors(at)
    [figure] = charts(at)
    truth = "current data" if source == "data" else "synthetic data"
    assert figure["layout"]["title"]["text"] == (
        f"Coverage of the 95% GVDP intervals on the {truth}, R = 50"
    )
    assert figure["layout"]["yaxis"]["title"]["text"] == "Intervals covering (%)"
    assert len(figure["layout"]["shapes"]) == 2  # the band and the nominal line
    summary = text(at.main.markdown)
    assert "Over R = 50 replications the DP intervals covered" in summary
    assert "nominal 95%" in summary
    assert any("Computed in" in c.value and "for R = 50" in c.value for c in at.main.caption)
    if source == "synthetic":
        assert "rows x ~ N(1, 1): the true mean is 1" in text(at.main.caption)


def test_release_reviews_the_gvdp_plan_and_spends_exactly_rho():
    at = start()
    go(at, "release")
    assert not at.main.error, errors(at)
    page = text(at.main.markdown)
    assert "**Statistic:** mean of hours_per_week, per group (stratified)" in page
    assert "GVDP (Covington et al.)" in page
    assert "Cost: **ρ = 0.5 (zCDP)**" in page
    at.checkbox(key="release.confirm").check().run()
    at.button(key="release.commit").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Released and recorded" in text(at.success)
    ledger = Ledger.open(None, "default")
    [record] = ledger.history()
    assert record.cost == ZCDP(0.5)
    assert ledger.remaining() == {"rho": 0.5}
    outputs = record.payload["outputs"]
    assert len(outputs) == 11 and outputs[-1]["group"] == "All"
    assert record.payload["metadata"]["plan"]["kind"] == "gvdp"


def test_release_is_not_ready_when_the_settings_are_bad():
    at = start()
    at.number_input(key="gvdp.k.mean").set_value(20_000).run()
    go(at, "release")
    assert "The release is not ready:" in errors(at) and "use k ≤ 6,512" in errors(at)
