"""App tests of the Release page's preview: per group, what the commit would publish (issue 13)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from dpcore.analyses.gvdp import GvdpSettings
from tests.app.helpers import go, settings_of, start, state_of, text
from tests.app.test_gvdp_page import start as start_gvdp


def preview(at: AppTest):
    """The preview table (the first dataframe of the Release page's plan column)."""
    return at.dataframe[0].value


def withheld(at: AppTest) -> list[str]:
    """The groups the preview says would be withheld (no column when none would be)."""
    table = preview(at)
    if "withheld?" not in table:
        return []
    return list(table.loc[table["withheld?"] != "", "group"])


def start_typed_k() -> AppTest:
    """GVDP on the demo with k = 1,000 typed: every group gets the population's 32-row subsets,
    so small groups have too few to be published (the rule's k, chosen per group, gives them
    enough: issue 42)."""
    at = start_gvdp()
    at.number_input(key="gvdp.ks.mean").set_value(1000).run()
    return go(at, "release")


def test_the_preview_follows_the_budget_and_names_withheld_groups():
    at = start_typed_k()
    assert "Curator's view" in text(at.caption) and "never exported" in text(at.caption)
    at_half = withheld(at)  # ρ = 0.5: 3–10 subsets are too few, 17 are needed
    assert "Other × Female" in at_half and "White × Male" not in at_half
    # The table says yes; the reasons, sentences a table cell cut off, follow it in full.
    assert set(preview(at)["withheld?"]) == {"yes", ""}
    reasons = text(at.main.markdown)
    assert "Why withheld" in reasons and "- Other × Female: " in reasons
    assert not at.main.error, text(at.main.error)
    state = state_of(at)
    seen = []
    for rho in (0.05, 5.0, 0.05):
        state.budget_kind, state.rho = "zcdp", rho
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        table = preview(at)
        # Three significant digits; a dash for a withheld row, which has no error.
        assert (table["typical error"] == "—").sum() == (table["withheld?"] != "").sum()
        largest = table.set_index("group").loc["White × Male", "typical error"]
        seen.append((withheld(at), float(largest)))
    (small, small_error), (large, large_error), (again, again_error) = seen
    assert "Black × Male" in small and "Black × Male" not in large  # 49 subsets, 55 needed at 0.05
    assert len(large) < len(at_half) < len(small)
    assert large_error < small_error and (again, again_error) == (small, small_error)


def test_refusing_uninformative_groups_stops_the_commit_and_withholding_restores_it():
    at = start_typed_k()
    for choice, refused in (("refuse", True), ("withhold", False), ("refuse", True)):
        # Found again each time: an element of an earlier run sends that run's widgets, and a
        # refused release ends the page before its commit box, which Streamlit then forgets.
        at.radio(key="gvdp.uninformative").set_value(choice).run()
        assert settings_of(at, GvdpSettings).uninformative == choice
        errors = text(at.main.error)
        assert ("you chose to refuse such a release" in errors) == refused, choice
        assert ("Other × Female" in errors) == refused


def test_a_preview_with_nothing_withheld_has_no_empty_withheld_column():
    at = go(start(), "release")  # the demo's mean: every group is released
    table = preview(at)
    assert list(table.columns) == ["group", "typical error", "interval ±"]
    assert "no row would be withheld" in text(at.caption)
