"""A new user's survey file (tests.frames.survey_frame: a ``rownames`` column, income blank in
a fifth of the rows) through the pages, checking the small things that made people doubt the
rest: the rows each step counts, the columns offered as a value, and the words on screen."""

from __future__ import annotations

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dpcore.analyses.mean import MeanSettings
from tests.app.helpers import change_settings, go, start, state_of, text, upload
from tests.frames import survey_csv, survey_frame

FRAME = survey_frame()


@pytest.fixture(autouse=True)
def fresh_caches():
    st.cache_data.clear()
    st.cache_resource.clear()


def survey_app() -> AppTest:
    return upload(start(), survey_csv(), "survey.csv")


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.main.metric if m.label == label)


def test_the_strata_page_counts_the_rows_the_mean_of_income_uses():
    """Groups, sizes, the smallest group and the small-group rule count the rows with an
    income, as the estimate does (not every row of the file)."""
    at = survey_app()
    change_settings(at, MeanSettings, value="income", clip_low=0.0, clip_high=200_000.0)
    state_of(at).strata_columns = ["region", "sex"]
    go(at, "strata")
    answered = FRAME[FRAME["income"].notna()]
    assert metric(at, "Rows used") == f"{len(answered):,}"
    smallest = answered.groupby(["region", "sex"]).size().min()
    assert metric(at, "Smallest group") == f"{smallest:,} rows"
    blanks = int(FRAME["income"].isna().sum())
    captions = text(at.caption)
    assert f"{blanks:,} rows have no number in `income` and are left out" in captions
    assert "take the shares from a public table" in captions
    # the estimate's own groups are those sizes
    go(at, "estimator")
    assert f"{blanks:,} rows with a missing or infinite value in `income`" in text(at.info)


def options(at: AppTest, label: str) -> list[str]:
    widgets = [*at.selectbox, *at.multiselect]
    return list(next(w for w in widgets if w.label == label).options)


def analysis_radio(at: AppTest) -> str:
    return next(r.key for r in at.radio if r.label == "What to estimate")


def test_a_row_number_column_is_never_offered_as_a_value():
    """`rownames` numbers the rows: no analysis offers it (nor makes it its default) as the
    value to average, a ratio's sums, a model's column or a column to synthesize."""
    at = survey_app()
    assert options(at, "Value column") == ["age", "income"]
    assert "rownames only numbers the rows" in text(at.caption)
    for analysis, label in (
        ("gvdp", "Column to average"), ("ratio", "Score s"), ("ratio", "Label y"),
        ("synth", "Columns to synthesize"),
    ):  # fmt: skip
        if analysis == "synth":
            state_of(at).strata_columns = ["sex"]
        go(at, "estimator")
        at.radio(key=analysis_radio(at)).set_value(analysis).run()
        offered = options(at, label)
        assert "rownames" not in offered and offered, (analysis, label)
        if label == "Column to average":  # GVDP's default: the first usable column
            assert next(w for w in at.selectbox if w.label == label).value == "age"
