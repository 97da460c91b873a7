"""The Strata page's small-group rule decided by the release's noisy counts: the choice in plain
words, its cost, each group's chance, several changes in a row, a refresh, and the release."""

from __future__ import annotations

import pandas as pd

from dpcore.analyses.mean import MeanSettings
from tests.app import helpers

NOISY = {"group_list": "declared", "share_source": "noisy_counts", "mean.n_public": "false"}


def chances(at) -> list[str]:
    return at.dataframe[0].value["chance of reaching the threshold"].tolist()


def test_the_noisy_count_rule_keeps_each_choice_and_survives_a_refresh():
    at = helpers.start("strata", **NOISY)
    assert helpers.settings_of(at, MeanSettings).n_public is False
    policy = at.radio(key="strata.small_groups")
    assert "Release only the groups that reach it" in policy.options
    for size in (150, 300):
        at.number_input(key="strata.min_group_size").set_value(size).run()
        assert helpers.state_of(at).min_group_size == size
    at300 = chances(at)
    assert "noisy count** is below 300" in helpers.text(at.caption)
    for choice in ("drop", "merge", "drop"):
        at.radio(key="strata.small_groups").set_value(choice).run()
        assert helpers.state_of(at).small_groups == choice
    said = helpers.text(at.markdown)
    assert "not released" in said and "nothing more" in said
    assert "no extra allowance δ" in helpers.text(at.caption)
    # At ε = 1 the counts get Laplace noise of scale 2: Other × Female (109 rows) cannot reach
    # 300, White × Male (19,174) always does.
    frame = at.dataframe[0].value.set_index("group")
    assert frame.loc["Other × Female", "chance of reaching the threshold"] == "0%"
    assert frame.loc["White × Male", "chance of reaching the threshold"] == "100%"
    assert not at.error, helpers.text(at.error)

    again = helpers.start("strata", **helpers.address(at))
    state = helpers.state_of(again)
    assert (state.small_groups, state.min_group_size) == ("drop", 300)
    assert again.radio(key="strata.small_groups").value == "drop"
    assert again.number_input(key="strata.min_group_size").value == 300
    assert chances(again) == at300


def test_without_noisy_count_shares_the_exact_rule_is_said_as_before():
    at = helpers.start("strata", group_list="declared", share_source="data")
    assert "Drop them" in at.radio(key="strata.small_groups").options
    assert "rows are merged" in helpers.text(at.caption)
    assert not at.dataframe  # no chance table: the exact sizes decide


def test_a_release_lists_the_groups_its_noisy_counts_merged():
    at = helpers.start("strata", **NOISY, min_group_size="300")
    helpers.go(at, "release")
    assert "**Small groups:** groups whose noisy count is below 300 rows are merged" in (
        helpers.release_review(at)
    )
    _, record = helpers.commit_once(at)
    rows = {row["group"]: row for row in record.payload["outputs"]}
    assert rows["Other × Female"]["flag"].startswith("merged into “Other (merged)”")
    assert rows["White × Male"]["flag"] == ""
    assert "Other (merged)" in rows
    said = helpers.text(at.info)
    assert "Small groups: groups whose noisy count" in said and "Other × Female" in said


def test_a_tiny_upload_compares_without_nan_and_says_which_releases_publish_nothing():
    """Nine rows in groups of 2, 3 and 4 with the default noisy-count shares and a minimum size
    of 2: some simulated releases publish nothing (every noisy count below 2). The Compare page
    summarised them as "nan%"; it now summarises the releases that published one, twice in a
    row at two budgets, and says how many did not."""
    frame = pd.DataFrame({"race": ["A"] * 2 + ["B"] * 3 + ["C"] * 4,
                          "hours_per_week": [40, 35, 50, 45, 30, 20, 25, 38, 41]})  # fmt: skip
    at = helpers.start()
    helpers.use_frame(at, frame, "tiny.csv", ["race"])
    helpers.go(at, "compare")
    for epsilon in (None, 0.5, 0.2):  # the page's own budget, then two changes in a row
        if epsilon is not None:
            at.select_slider(key="compare.budget.pure").set_value(epsilon).run()
        said = helpers.text(at.markdown)
        assert "nan" not in said.lower(), (epsilon, said)
        assert "of releases that published one" in said
        assert "every group's noisy count fell below the minimum group size" in said
        assert not at.error and not at.exception
