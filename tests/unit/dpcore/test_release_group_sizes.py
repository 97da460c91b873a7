"""Releases whose group sizes are private: intervals from the noisy counts and declared shares,
and the refusals of plans that would need an exact size."""

from __future__ import annotations

import pytest

from dpcore.release.commit import release
from tests.unit.dpcore.release_helpers import PRIVATE_SIZES, make_plan

SEX_SHARES = {"share_source": "table", "share_table": (("Female", 0.5), ("Male", 0.5))}
# What a release with private group sizes needs besides public shares: a declared list of
# groups (here with a category the demo has no row of) kept whatever their sizes.
DECLARED_SEX = {
    "share_source": "table",
    "share_table": (("Female", 0.5), ("Male", 0.5), ("Another", 0.0)),
    "categories": (("sex", ("Female", "Male", "Another")),),
    "small_groups": "keep",
}


def test_private_group_sizes_release_intervals_from_their_noisy_counts_and_declared_shares(
    demo, ledger
):
    """No exact size enters an interval: the bootstrap's group sizes are the noisy counts."""
    plan = make_plan(demo, by=("sex",), estimator=PRIVATE_SIZES, spec_options=DECLARED_SEX)
    record = release(plan, ledger, noise="simulation", rng=2)
    assert all(row["low"] <= row["estimate"] <= row["high"] for row in record.outputs)
    assert "with the release's own noisy counts as the group sizes" in record.metadata["intervals"]
    assert [row.get("public_share") for row in record.outputs] == [0.5, 0.5, 0.0, None]
    # The declared category with no rows is released too, from noise alone, in the public range.
    another = record.outputs[2]
    assert another["group"] == "Another" and 0 <= another["estimate"] <= 100


@pytest.mark.parametrize(
    ("changes", "fix"),
    [
        ({**SEX_SHARES, "categories": ()}, "declare the categories of each grouping column"),
        ({"small_groups": "merge"}, "keep every group whatever its size"),
        ({"small_groups": "drop"}, "keep every group whatever its size"),
    ],
)
def test_private_group_sizes_need_declared_groups_kept_whatever_their_size(demo, changes, fix):
    with pytest.raises(ValueError, match="Group sizes are private in this release") as refused:
        make_plan(
            demo, by=("sex",), estimator=PRIVATE_SIZES, spec_options={**DECLARED_SEX, **changes}
        )
    assert fix in str(refused.value)


def test_public_group_sizes_refuse_a_kept_group_with_no_rows_before_any_draw(demo):
    with pytest.raises(ValueError, match="“Another” has no rows with a value"):
        make_plan(demo, by=("sex",), spec_options=DECLARED_SEX)
    # The population alone has no group mean to divide by zero.
    make_plan(demo, by=("sex",), spec_options=DECLARED_SEX, strategy="global_only")


@pytest.mark.parametrize("strategy", ["stratified", "global_and_groups"])
def test_private_group_sizes_with_shares_from_the_data_are_refused(demo, strategy):
    with pytest.raises(ValueError, match="Group sizes are private in this release") as refused:
        make_plan(demo, estimator=PRIVATE_SIZES, strategy=strategy)
    assert "take the shares from a public table, a holdout split or the release's own noisy" in str(
        refused.value
    )
    # A population-only release publishes no group shares: nothing to refuse.
    make_plan(demo, estimator=PRIVATE_SIZES, strategy="global_only")
