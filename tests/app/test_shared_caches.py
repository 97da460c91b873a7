"""The grouped data is one shared object, not a copy per cache hit (issue 16, item 5)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.helpers import TIMEOUT_S


def read_grouped_data(analysis_name: str) -> None:
    """An app script: keep what the pipeline returns, as a page would read it, in the session."""
    import streamlit as st

    from dpcore.analyses import get
    from strata_ui import pipeline
    from strata_ui.state import get_state

    analysis = get(analysis_name)
    statistics = pipeline.current_statistics(analysis, analysis.default_settings())
    grouping = pipeline.current_grouping(get_state())
    st.session_state.setdefault("read", []).append((grouping, statistics))


def reads(analysis_name: str, runs: int) -> list[tuple[object, object]]:
    at = AppTest.from_function(read_grouped_data, args=(analysis_name,), default_timeout=TIMEOUT_S)
    for _ in range(runs):
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at.session_state["read"]


def test_groups_and_read_only_statistics_are_one_object_for_every_rerun_and_session():
    (grouping, values), (grouping_again, values_again) = reads("mean", runs=2)
    ((grouping_elsewhere, values_elsewhere),) = reads("mean", runs=1)  # another session
    assert grouping is grouping_again is grouping_elsewhere
    assert values is values_again is values_elsewhere
    assert not values.sorted_values.flags.writeable and not grouping.codes.flags.writeable


def test_statistics_that_may_be_changed_are_copied_for_each_caller():
    """The ratio's sums are not read-only: each rerun gets its own copy (the groups are
    shared all the same)."""
    (grouping, sums), (grouping_again, sums_again) = reads("ratio", runs=2)
    assert grouping is grouping_again
    assert sums is not sums_again
    assert sums.labels == sums_again.labels and (sums.rows == sums_again.rows).all()
