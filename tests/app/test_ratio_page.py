"""App tests of the calibration-ratio analysis on the Estimator, Compare and Release pages."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.analyses.ratio import ALL_GROUPS, RatioSettings
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.datasets import load_demo
from strata_ui.analyses.ratio.preview import PREVIEW_BANNER
from strata_ui.analyses.ratio.settings import NO_WEIGHTS
from strata_ui.analyses.ratio.view import RatioView
from tests.app import helpers


def choose_ratio(at: AppTest) -> AppTest:
    # The groups found in the data, largest first: the pairs these tests compare by default.
    helpers.state_of(at).group_list = "data"
    return helpers.choose_analysis(helpers.go(at, "estimator"), "ratio")


def frames(at: AppTest, column: str):
    return [d.value for d in at.main.dataframe if column in d.value.columns]


def test_estimator_previews_every_group_with_a_chart_a_table_and_a_comparison():
    at = choose_ratio(helpers.start())
    assert not at.main.error, helpers.errors(at)
    [banner] = [i for i in at.main.info if PREVIEW_BANNER in i.value]
    assert "visibility" in banner.proto.icon
    [spec] = helpers.charts(at)
    assert spec["layout"]["title"]["text"].startswith("Calibration ratio per group with 95%")
    assert "income_over_50k" in spec["layout"]["xaxis"]["title"]["text"]
    assert any(s["x0"] == s["x1"] == 1 for s in spec["layout"]["shapes"])  # the line at 1
    [table] = frames(at, "Group")
    assert len(table) == 11 and table["Group"].iloc[-1] == ALL_GROUPS
    # Confidential: hidden until asked for, on a screen others may see.
    assert "Exact ratio (confidential)" not in table.columns
    at.toggle(key="ratio_view.show_exact").set_value(True).run()
    [table] = frames(at, "Group")
    assert "Exact ratio (confidential)" in table.columns
    assert any(helpers.text([m]).startswith("All groups together: ratio") for m in at.main.markdown)
    # Every control explains itself in a caption.
    captions = helpers.text(at.main.caption)
    for phrase in ("model's prediction", "observed outcome", "Scores above it count as the bound",
                   "no simulation", "paper uses 1e-6", "Shared with the Release page"):  # fmt: skip
        assert phrase in captions, phrase

    sentence = next(m.value for m in at.main.markdown if "z = " in m.value)
    assert sentence.startswith("White × Male − White × Female: difference of ratios")
    [comparison] = frames(at, "p-value")
    assert comparison["Group B"].iloc[0] == "White × Female"
    at.selectbox(key="ratio_view.compare_b").set_value("Black × Female").run()
    assert frames(at, "p-value")[0]["Group B"].iloc[0] == "Black × Female"

    before = frames(at, "Group")[0]["DP estimate"].to_numpy()
    at.button(key="ratio_view.preview_seed").click().run()
    after = frames(at, "Group")[0]["DP estimate"].to_numpy()
    assert list(before[:2]) != list(after[:2])  # new noise, same data
    assert not at.exception


def test_the_noise_table_shows_both_accountings_side_by_side():
    at = choose_ratio(helpers.start())
    [table] = frames(at, "Accounting")
    assert list(table["Accounting"]) == ["Basic (in use)", "zCDP"]
    basic, zcdp = table.iloc[:, 1]
    assert zcdp < basic  # same (ε, δ): zCDP adds less noise
    at.radio(key="ratio.composition").set_value("zcdp").run()
    assert list(frames(at, "Accounting")[0]["Accounting"]) == ["Basic", "zCDP (in use)"]


def nan_scores(at: AppTest) -> None:
    frame = load_demo().copy()
    frame.loc[:24, "score"] = np.nan
    helpers.state_of(at).uploaded = frame
    helpers.state_of(at).dataset_fingerprint = "ratio-test-missing"


BAD_INPUTS = {
    "non-numeric score": (
        lambda at: helpers.change_settings(at, RatioSettings, s_column="race"),
        None,
        "The score column `race` is not numeric (its values are text).",
    ),
    "label not 0/1": (
        None,
        lambda at: at.selectbox(key="ratio.y_column").set_value("hours_per_week").run(),
        "The label column `hours_per_week` has values other than 0 and 1",
    ),
    "score bound 0": (
        None,
        lambda at: at.number_input(key="ratio.s_bound").set_value(0.0).run(),
        "The upper bound of the score must be a finite number above 0, got 0.",
    ),
    "label bound negative": (
        None,
        lambda at: (
            at.checkbox(key="ratio.binary_y").uncheck().run(),
            at.number_input(key="ratio.y_bound").set_value(-1.0).run(),
        ),
        "The upper bound of the label must be a finite number above 0, got -1.",
    ),
    "weight bound below 1": (
        None,
        lambda at: (
            at.selectbox(key="ratio.w_column").set_value("age").run(),
            at.number_input(key="ratio.w_bound").set_value(0.5).run(),
        ),
        "The upper bound of the weight must be a finite number at least 1, got 0.5.",
    ),
    "same column twice": (
        None,
        lambda at: at.selectbox(key="ratio.y_column").set_value("score").run(),
        "The score, label and weight must be different columns.",
    ),
    "budget too large for eq. 5": (
        lambda at: setattr(helpers.state_of(at), "epsilon", 8.0),
        None,
        "is too large for the classic Gaussian formula",
    ),
}


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_shows_what_to_fix_and_no_traceback(case):
    before, after, message = BAD_INPUTS[case]
    at = helpers.start()
    if before:
        before(at)
    choose_ratio(at)
    if after:
        after(at)
    assert not at.exception, [e.value for e in at.exception]
    assert message in helpers.errors(at), helpers.errors(at)
    assert not at.get("plotly_chart")  # no preview from unusable settings


def test_the_cached_binary_label_check_follows_the_data_set_and_the_column():
    at = choose_ratio(helpers.start())
    assert not at.main.error, helpers.errors(at)
    frame = load_demo().copy()
    frame.loc[0, "income_over_50k"] = 2
    helpers.state_of(at).uploaded, helpers.state_of(at).dataset_fingerprint = (
        frame,
        "ratio-test-label-2",
    )
    at.run()
    assert "The label column `income_over_50k` has values other than 0 and 1" in helpers.errors(at)
    helpers.state_of(at).uploaded, helpers.state_of(at).dataset_fingerprint = None, "demo"
    at.run()
    assert not at.main.error, helpers.errors(at)
    at.selectbox(key="ratio.y_column").set_value("hours_per_week").run()
    assert "The label column `hours_per_week` has values other than 0 and 1" in helpers.errors(at)


def test_rows_with_missing_values_are_dropped_and_counted():
    at = helpers.start()
    nan_scores(at)
    choose_ratio(at)
    assert not at.main.error, helpers.errors(at)
    assert "25 of 32,561 rows have a missing or infinite value in `score`, `income_over_50k`" in (
        helpers.text(at.main.warning)
    )
    assert helpers.titles(at)[0].startswith("Calibration ratio per group")


def test_a_rho_budget_uses_zcdp_accounting_and_no_delta():
    at = helpers.start()
    helpers.state_of(at).budget_kind = "zcdp"
    choose_ratio(at)
    assert not at.main.error, helpers.errors(at)
    assert at.radio(key="ratio.mechanism.zcdp").options == [
        "Gaussian, classic (paper eq. 5)",
        "Laplace (pure ε-DP)",
    ]
    page = helpers.text(at.main.markdown)
    assert "**Accounting:** zCDP" in page and "**δ:** not needed" in page
    assert "ρ = 0.5" in helpers.text(at.main.caption)
    [table] = frames(at, "Accounting")
    assert table["Charged to the ledger"].iloc[0].startswith("ρ = 0.5")


def test_compare_shows_coverage_width_score_and_reproduces_table1():
    at = choose_ratio(helpers.start())
    helpers.go(at, "compare")  # its load and rerun times: benchmarks/bench_page_reruns.py
    assert not at.main.error, helpers.errors(at)
    assert helpers.titles(at) == [
        "Coverage per group over 1,000 simulated releases (DP noise only)",
        f"Interval width as the budget grows — {ALL_GROUPS}",
        "Median interval score per group at ε = 1",
    ]
    for spec in helpers.charts(at):
        assert spec["layout"]["xaxis"]["title"]["text"] and spec["layout"]["yaxis"]["title"]["text"]
    page = helpers.text(at.main.markdown)
    for start_of_summary in ("Within the band", "Median width for", "Lowest median score"):
        assert start_of_summary in page
    drawn = helpers.charts(at)
    at.run()  # a rerun with nothing changed draws the same charts
    assert not at.exception and helpers.charts(at) == drawn

    at.slider(key="ratio_view.replicates").set_value(300).run()
    at.checkbox(key="ratio_view.bootstrap").check().run()
    assert not at.exception
    assert helpers.titles(at)[
        0
    ] == "Coverage per group over 300 simulated releases (noise and rows " + ("resampled)")
    at.selectbox(key="ratio_view.sweep_group").set_value("Other × Female").run()
    assert helpers.titles(at)[1] == "Interval width as the budget grows — Other × Female"

    at.button(key="ratio_view.show_table1").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert helpers.settings_of(at, RatioView).show_table1
    assert any("Table 1 reproduced" in title for title in helpers.titles(at))
    [table] = frames(at, "Coverage (paper)")
    assert len(table) == 16 * 4
    paper = table[(table["n"] == 5000) & (table["ε"] == 1.0) & (table["Weighted"] == "no")]
    assert list(paper["Coverage (paper)"]) == [0.951, 0.782, 0.948, 0.950]
    assert "common random numbers" in helpers.text(at.main.caption)
    assert any(m.value.startswith("Coverage agrees within") for m in at.main.markdown)

    at.checkbox(key="ratio_view.table1_zcdp").check().run()  # the documented improvement beside it
    assert not at.exception, [e.value for e in at.exception]
    [table] = frames(at, "Coverage (paper)")
    zcdp = table[table["Accounting"] == "zCDP accounting"]
    assert len(zcdp) == 16 * 4 and zcdp["Coverage (paper)"].isna().all()
    basic = table[(table["Accounting"] != "zCDP accounting") & (table["Method"] != "Public "
                  "(no noise)")]  # fmt: skip
    narrower = zcdp[zcdp["Method"] == "Analytical correction"]["Width (ours)"].to_numpy()
    wider = basic[basic["Method"] == "Analytical correction"]["Width (ours)"].to_numpy()
    assert (narrower <= wider).all()  # same (ε, δ), less noise per sum


def test_release_reviews_the_ratio_plan_and_charges_exactly_its_cost():
    at = choose_ratio(helpers.start())
    review = helpers.release_review(at)
    assert "**Statistic:** calibration ratio Σscore/Σincome_over_50k per group" in review
    assert "exact zCDP cost ρ = Σ Δ²/(2σ²)" in review
    assert "race × sex — 10 groups" in review
    ledger, record = helpers.commit_once(at)
    assert isinstance(record.cost, ZCDP)
    expected = Decimal("2.0") - Decimal(repr(record.cost.rho))  # the default ρ = 2 ledger
    assert ledger.remaining() == {"rho": float(expected)}
    outputs = record.payload["outputs"]
    assert len(outputs) == 11 and outputs[-1]["group"] == ALL_GROUPS
    assert record.payload["metadata"]["plan"]["kind"] == "ratio"
    [table] = frames(at, "DP estimate")
    assert list(table["group"]) == [row["group"] for row in outputs]


@pytest.mark.parametrize(
    ("mechanism", "cost"),
    [("gaussian_analytic", "Cost: **ρ = "), ("laplace", "Cost: **ε = 1 (pure DP)**")],
)
def test_other_mechanisms_preview_and_plan_with_their_own_cost(mechanism, cost):
    at = choose_ratio(helpers.start())
    at.radio(key="ratio.mechanism.pure").set_value(mechanism).run()
    at.radio(key="ratio.method").set_value("monte_carlo").run()
    at.radio(key="ratio.scale").set_value("log").run()
    assert not at.exception and not at.main.error, helpers.errors(at)
    assert helpers.titles(at)[0].startswith("Calibration ratio per group")
    assert "difference of log ratios" in helpers.text(at.main.markdown)
    assert cost in helpers.release_review(at)


def change(at: AppTest, kind: str, key: str, *values) -> None:
    """Set the ``kind`` widget (``"radio"``, ``"selectbox"``, …) ``key`` to each value in turn,
    with a rerun after each, as a user changing it several times in a row."""
    for value in values:
        getattr(at, kind)(key=key).set_value(value).run()
        assert not at.exception, [e.value for e in at.exception]


def test_every_estimator_widget_keeps_the_last_of_several_changes():
    at = choose_ratio(helpers.start())
    for _ in range(2):
        at.button(key="ratio_view.preview_seed").click().run()
    change(at, "toggle", "ratio_view.show_exact", False, True, False)
    change(at, "selectbox", "ratio_view.compare_a", "Black × Female", "Other × Female")
    change(at, "selectbox", "ratio_view.compare_b", "White × Female", "Black × Male")
    assert helpers.settings_of(at, RatioView) == RatioView(
        preview_seed=2, show_exact=False, compare_a="Other × Female", compare_b="Black × Male"
    )
    assert "Noise draw #2." in helpers.text(at.main.caption)
    assert "Exact ratio (confidential)" not in frames(at, "Group")[0].columns

    change(at, "radio", "ratio.composition", "zcdp", "basic", "zcdp")
    change(at, "select_slider", "ratio.delta", 1e-5, 1e-8)
    change(at, "radio", "ratio.mechanism.pure", "laplace", "gaussian_analytic")
    change(at, "radio", "ratio.method", "none", "monte_carlo")
    change(at, "slider", "ratio.B", 100, 300)
    change(at, "radio", "ratio.scale", "log", "ratio", "log")
    change(at, "select_slider", "ratio.level", 0.9, 0.99)
    change(at, "number_input", "ratio.s_bound", 2.0, 3.0)
    change(at, "checkbox", "ratio.binary_y", False, True, False)
    change(at, "number_input", "ratio.y_bound", 2.0, 5.0)
    change(at, "selectbox", "ratio.w_column", "age", NO_WEIGHTS, "age")
    change(at, "number_input", "ratio.w_bound", 4.0, 6.0)
    change(at, "selectbox", "ratio.s_column", "income_over_50k", "hours_per_week")
    change(at, "selectbox", "ratio.y_column", "score", "income_over_50k")
    expected = RatioSettings(
        s_column="hours_per_week", y_column="income_over_50k", w_column="age", s_bound=3.0,
        y_bound=5.0, w_bound=6.0, binary_y=False, mechanism="gaussian_analytic",
        composition="zcdp", delta=1e-8, method="monte_carlo", B=300, scale="log",
    )  # fmt: skip
    assert helpers.settings_of(at, RatioSettings) == expected
    assert helpers.state_of(at).release_level == 0.99
    at.run()  # nothing is undone by the next run, nor by leaving the page and coming back
    helpers.go(helpers.go(at, "data"), "estimator")
    assert helpers.settings_of(at, RatioSettings) == expected
    assert at.selectbox(key="ratio.w_column").value == "age"
    assert at.number_input(key="ratio.y_bound").value == 5.0
    assert at.slider(key="ratio.B").value == 300
    assert at.radio(key="ratio.mechanism.pure").value == "gaussian_analytic"
    assert at.select_slider(key="ratio.level").value == 0.99
    assert not helpers.errors(at), helpers.errors(at)
    assert helpers.titles(at)[0].startswith("Calibration ratio per group with 99%")


def test_every_compare_widget_keeps_the_last_of_several_changes():
    at = helpers.go(choose_ratio(helpers.start()), "compare")
    change(at, "select_slider", "compare.ratio.budget.pure", 0.5, 2.0)
    change(at, "slider", "ratio_view.replicates", 300, 200)
    change(at, "number_input", "compare.ratio.seed", 1, 2)
    change(at, "checkbox", "ratio_view.bootstrap", True, False, True)
    change(at, "selectbox", "ratio_view.sweep_group", "Other × Female", "Black × Male")
    change(at, "checkbox", "ratio_view.table1_zcdp", True, False, True)
    # The preview chose its two groups on the Estimator page; the Compare page keeps them.
    expected = RatioView(
        compare_a="White × Male", compare_b="White × Female", replicates=200, bootstrap=True,
        sweep_group="Black × Male", table1_zcdp=True,
    )  # fmt: skip
    assert helpers.settings_of(at, RatioView) == expected
    # Compare's ε is its own: the Budget page's stays until carried over (issue 37).
    assert (helpers.state_of(at).compare_epsilon, helpers.state_of(at).epsilon) == (2.0, 1.0)
    assert helpers.state_of(at).seed == 2
    at.run()
    helpers.go(helpers.go(at, "estimator"), "compare")
    assert helpers.settings_of(at, RatioView) == expected
    assert helpers.titles(at) == [
        "Coverage per group over 200 simulated releases (noise and rows resampled)",
        "Interval width as the budget grows — Black × Male",
        "Median interval score per group at ε = 2",
    ]


def test_a_rho_budget_keeps_the_mechanism_chosen_under_it():
    at = helpers.start()
    helpers.state_of(at).budget_kind = "zcdp"
    choose_ratio(at)
    change(at, "radio", "ratio.mechanism.zcdp", "laplace", "gaussian", "laplace")
    assert helpers.settings_of(at, RatioSettings).mechanism == "laplace"
    assert "**δ:** 0" in helpers.text(at.main.markdown)


@pytest.mark.parametrize(
    ("budget", "mechanism", "message"),
    [
        ({"epsilon": 8.0}, "gaussian",
         "The budget ε = 8 (pure DP) is too large for the classic Gaussian formula (paper "
         "eq. 5), which needs ε/m < 1 for each of the m released sums."),
        ({"budget_kind": "zcdp"}, "gaussian_analytic",
         "The analytic Gaussian formula splits an (ε, δ) budget, but the Budget page is set to "
         "ρ-zCDP."),
    ],
)  # fmt: skip
def test_a_budget_the_mechanism_cannot_meet_is_explained_on_the_release_page(
    budget, mechanism, message
):
    at = choose_ratio(helpers.start())
    for name, value in budget.items():
        setattr(helpers.state_of(at), name, value)
    helpers.change_settings(at, RatioSettings, mechanism=mechanism)
    helpers.go(at, "release")
    assert f"The release is not ready: {message}" in helpers.errors(at), helpers.errors(at)
    assert helpers.errors(at).endswith("Fix it on the Estimator page.")
