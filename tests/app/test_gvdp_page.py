"""App tests of the general estimator with valid CIs (GVDP) on the Estimator, Compare and Release
pages: every model previews DP beside non-private results, coverage and the k diagnostic render,
bad input gets a message (never a traceback), and a release spends exactly its ρ."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.gvdp import GvdpSettings
from dpcore.foundations.accounting import ZCDP
from strata_ui.analyses.gvdp.estimator import PREVIEW_LABEL
from strata_ui.analyses.gvdp.view import GvdpView
from strata_ui.data import load_demo
from tests.app.helpers import (
    charts,
    commit_once,
    declare_exact_counts,
    errors,
    go,
    release_review,
    settings_of,
    start_with,
    state_of,
    text,
    titles,
    upload,
)


def start() -> AppTest:
    """The Estimator page with the general estimator chosen, the data's own group counts
    declared public (GVDP treats every group's size as public, paper §2.2)."""
    at = declare_exact_counts(start_with("gvdp"))
    at.run()
    return at


def use_frame(at: AppTest, frame, fingerprint: str) -> AppTest:
    """Make ``frame`` the session's dataset (as a validated upload would) and rerun."""
    state = state_of(at)
    state.uploaded, state.dataset_fingerprint, state.dataset_name = frame, fingerprint, "f.csv"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


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
        "(the k in use, 533, in blue)",
    ]
    for figure in charts(at):
        layout = figure["layout"]
        assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"]
    page = text(at.main.markdown)
    assert "The DP intervals are " in page and "× for hours_per_week" in page
    # k from the rows (issue 42): 533 subsets of 61 rows, and each group its own k from its
    # own rows (the smallest group had 3 subsets at the population's subset size).
    assert "Smallest group (Other × Female, n = 109, k = 21)" in page
    assert "k = 533 (in use): centre" in page
    assert "ρ = ε²/2 = 0.5 from your ε = 1 on the Budget page" in page
    [table] = [d.value for d in at.main.dataframe if "DP estimate" in d.value.columns]
    assert list(table["coefficient"]) == ["hours_per_week"]
    ends = ["DP estimate", "DP low", "Non-private low", "Non-private high"]
    number = table[ends].apply(lambda column: column.str.replace(",", "").astype(float))
    assert (number["DP low"] < number["DP estimate"]).all()
    assert (number["Non-private low"] < number["Non-private high"]).all()
    # Written as people read them: no more decimals than the interval's width supports.
    assert all(len(cell.partition(".")[2]) <= 2 for cell in table["DP estimate"])


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
    at.selectbox(key="gvdp_view.group_coefficient").set_value("age").run()
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
    ("gvdp.outcomes.mean.demo", "workclass", "hours_per_week",
     "`outcome` column 'workclass' must be numeric, got dtype string"),
    ("gvdp.ks.mean", 20_000, 1000,
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
    at.selectbox(key="gvdp.outcomes.logistic.demo").set_value("score").run()
    assert "`outcome` column 'score' must hold only 0 and 1 for a logistic model" in errors(at)

    at.radio(key="gvdp.model").set_value("ols").run()
    covariates = at.multiselect(key="gvdp.covariates.ols.demo")
    covariates.select("hours_per_week").run()
    assert "`outcome` 'hours_per_week' is also a covariate" in errors(at)
    covariates = at.multiselect(key="gvdp.covariates.ols.demo")
    covariates.unselect("hours_per_week").unselect("age").unselect("income_over_50k").run()
    assert "`covariates` must name at least one column for a regression" in errors(at)
    at.multiselect(key="gvdp.covariates.ols.demo").select("age").select("income_over_50k").run()
    assert not at.main.error, errors(at)

    at.number_input(key="gvdp.ks.ols").set_value(1000).run()
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
        at.radio(key="gvdp_view.coverage_source").set_value("synthetic").run()
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
    page = release_review(at)
    assert "**Statistic:** mean of hours_per_week, per group (stratified)" in page
    assert "GVDP (Covington et al.)" in page
    assert "Cost: **ρ = 0.5 (zCDP)**" in page
    ledger, record = commit_once(at)
    assert record.cost == ZCDP(0.5)
    assert ledger.remaining() == {"rho": 1.5}  # of the default ρ = 2 ledger
    outputs = record.payload["outputs"]
    assert len(outputs) == 11 and outputs[-1]["group"] == "All"
    assert record.payload["metadata"]["plan"]["kind"] == "gvdp"


def test_release_is_not_ready_when_the_settings_are_bad():
    at = start()
    at.number_input(key="gvdp.ks.mean").set_value(20_000).run()
    go(at, "release")
    assert "The release is not ready:" in errors(at) and "use k ≤ 6,512" in errors(at)


# ---- every widget keeps the last of two changes in a row (widget keys derive from settings) ----


def change_twice(at: AppTest, get_widget, values, stored) -> None:
    """Set the widget ``get_widget(at)`` to each of ``values`` in turn; after each rerun (and one
    more) ``stored(at)`` and the widget show the value just set."""
    for value in values:
        get_widget(at).set_value(value).run()
        assert not at.exception, [e.value for e in at.exception]
        at.run()
        assert stored(at) == value, (get_widget(at).key, value)
        assert get_widget(at).value == value, get_widget(at).key


def core(field: str):
    return lambda at: getattr(settings_of(at, GvdpSettings), field)


def view(field: str):
    return lambda at: getattr(settings_of(at, GvdpView), field)


def keyed(kind: str, key: str):
    return lambda at: next(w for w in getattr(at, kind) if w.key == key)


SMALL = "small"  # a 3,000-row sample: k = 1,000 is refused, so no preview runs (fast)


def small_start() -> AppTest:
    at = use_frame(start(), load_demo().sample(3_000, random_state=0), SMALL)
    at.number_input(key="gvdp.ks.mean").set_value(1_000).run()
    return at


def test_each_settings_widget_keeps_its_last_value():
    at = small_start()
    assert "use k ≤ 600" in errors(at)  # sections 1–5 are drawn, the preview is not
    key = keyed("number_input", "gvdp.ks.mean")
    change_twice(at, key, [2_000, 3_000], core("k"))
    change_twice(at, keyed("selectbox", f"gvdp.outcomes.mean.{SMALL}"), ["age", "score"],
                 core("outcome"))  # fmt: skip
    change_twice(at, keyed("radio", "gvdp.strategy"), ["global_only", "stratified"],
                 core("strategy"))  # fmt: skip
    change_twice(at, keyed("slider", "gvdp.resamples"), [20, 30], core("resamples"))
    change_twice(at, keyed("slider", "gvdp.steps"), [3, 7], core("steps"))
    change_twice(at, keyed("select_slider", "gvdp.beta"), [0.01, 0.1], core("beta"))
    change_twice(at, keyed("slider", "gvdp.mean_fraction"), [0.3, 0.7], core("mean_fraction"))
    box = "gvdp.box.mean.score.score"
    for part, values, j in (("low", [-1.0, -2.0], 0), ("high", [3.0, 4.0], 1),
                            ("spread", [2.0, 5.0], 2)):  # fmt: skip
        row = lambda at, j=j: settings_of(at, GvdpSettings).box_row(("mean", "score", "score"))[j]  # noqa: E731
        change_twice(at, keyed("number_input", f"{box}.{part}"), values, row)
    change_twice(at, keyed("radio", "gvdp.bounds_mode"), ["guess", "box"], core("bounds_mode"))
    at.radio(key="gvdp.bounds_mode").set_value("guess").run()
    guess = "gvdp.guess.mean.score.score"
    for part, values, j in (("value", [0.2, 0.4], 0), ("spread", [0.6, 0.8], 1)):
        row = lambda at, j=j: settings_of(at, GvdpSettings).guess_row(("mean", "score", "score"))[j]  # noqa: E731
        change_twice(at, keyed("number_input", f"{guess}.{part}"), values, row)
    change_twice(at, keyed("select_slider", "gvdp.factor"), [10.0, 1000.0], core("factor"))
    change_twice(at, keyed("radio", "gvdp.model"), ["ols", "logistic"], core("model"))
    covariates = keyed("multiselect", f"gvdp.covariates.logistic.{SMALL}")
    for chosen in (["age"], ["hours_per_week", "score"]):
        covariates(at).set_value(chosen).run()
        at.run()
        assert settings_of(at, GvdpSettings).covariate_columns == tuple(chosen)
        assert covariates(at).value == chosen


def test_choices_are_kept_per_model_kind():
    at = small_start()
    at.number_input(key="gvdp.ks.mean").set_value(2_000).run()
    at.radio(key="gvdp.model").set_value("ols").run()
    at.number_input(key="gvdp.ks.ols").set_value(100).run()
    at.selectbox(key=f"gvdp.outcomes.ols.{SMALL}").set_value("score").run()
    at.radio(key="gvdp.model").set_value("mean").run()
    assert at.number_input(key="gvdp.ks.mean").value == 2_000
    assert at.selectbox(key=f"gvdp.outcomes.mean.{SMALL}").value == "hours_per_week"
    at.radio(key="gvdp.model").set_value("ols").run()
    settings = settings_of(at, GvdpSettings)
    assert (settings.k, settings.outcome) == (100, "score")
    assert at.number_input(key="gvdp.ks.ols").value == 100


def test_a_new_upload_starts_the_column_pickers_afresh():
    at = small_start()
    at.selectbox(key=f"gvdp.outcomes.mean.{SMALL}").set_value("age").run()
    use_frame(at, load_demo().drop(columns=["age"]), "other")
    assert at.selectbox(key="gvdp.outcomes.mean.other").value == "hours_per_week"
    assert settings_of(at, GvdpSettings).outcome == "hours_per_week"


@pytest.mark.slow
def test_each_preview_coefficient_choice_keeps_its_last_value():
    at = start()
    at.radio(key="gvdp.model").set_value("ols").run()
    for field in ("group_coefficient", "diagnostic_coefficient"):
        key = f"gvdp_view.{field}"
        change_twice(at, keyed("selectbox", key), ["age", "intercept"], view(field))
    assert titles(at)[1].startswith("intercept: DP and non-private estimate in each group")
    assert titles(at)[3].startswith("intercept: BLB subsets at several k")


@pytest.mark.slow
def test_each_compare_widget_keeps_its_last_value():
    at = go(small_start(), "compare")
    assert "Fix it on the Estimator page." in errors(at)
    go(at, "estimator")
    at.number_input(key="gvdp.ks.mean").set_value(100).run()
    go(at, "compare")
    assert not at.main.error, errors(at)
    change_twice(at, keyed("slider", "gvdp_view.replications.mean"), [10, 20],
                 lambda at: settings_of(at, GvdpView).replications_for("mean"))  # fmt: skip
    change_twice(at, keyed("number_input", "gvdp.coverage.seed"), [3, 4],
                 lambda at: state_of(at).seed)  # fmt: skip
    change_twice(at, keyed("radio", "gvdp_view.coverage_source"), ["synthetic", "data"],
                 view("coverage_source"))  # fmt: skip
    at.radio(key="gvdp_view.coverage_source").set_value("synthetic").run()
    change_twice(at, keyed("select_slider", "gvdp_view.synthetic_factor"), [10.0, 1000.0],
                 view("synthetic_factor"))  # fmt: skip
    assert titles(at) == ["Coverage of the 95% GVDP intervals on the synthetic data, R = 20"]


def test_with_private_shares_by_default_gvdp_offers_the_explicit_choice_of_exact_counts():
    """Issue 37: sizes are private by default; GVDP treats them as public, so it says so and
    declares the data's own counts public only when the user clicks, which then runs."""
    at = start_with("gvdp")
    assert state_of(at).share_source == "noisy_counts"
    assert "treats every group's size as public" in text(at.main.warning)
    at.button(key="shares.declare_exact_counts").click().run()
    assert state_of(at).share_source == "data"
    assert not at.main.error and "treats every group's size" not in text(at.main.warning)


def test_the_box_found_privately_is_chosen_twice_paid_and_reviewed():
    """Typed or found box, back and forth; its share of ρ twice; the Compare page and the
    planner say what they do not cover yet, without a traceback; the release's review says how
    the box is found and the ledger is charged the whole ρ."""
    at = start()
    for source in ("private", "typed", "private"):
        at.radio(key="gvdp.box_source").set_value(source).run()
        assert settings_of(at, GvdpSettings).box_source == source
        assert not at.main.error, errors(at)
    for share in (0.3, 0.1):
        at.select_slider(key="gvdp.box_fraction").set_value(share).run()
        assert f"The box costs {share:.0%} of the release's ρ" in text(at.main.caption)
    go(at, "compare")
    assert not at.main.error, errors(at)
    assert "a release finds a tighter box privately first" in text(at.main.info)
    go(at, "plan")
    assert not at.exception and "typed box" in text(at.main.info)
    review = release_review(at)
    assert "**Box:** found privately: 10% of ρ" in review
    _, record = commit_once(at)
    assert record.payload["metadata"]["plan"]["estimator"]["private_box"]["fraction"] == 0.1


def test_other_data_start_with_the_box_found_privately():
    at = start()
    assert settings_of(at, GvdpSettings).box_source == "typed"  # the demo's public boxes
    frame = load_demo().sample(3000, random_state=0)
    go(at, "data")
    upload(at, frame.to_csv(index=False).encode(), "survey.csv")
    assert settings_of(at, GvdpSettings).box_source == "private"
