"""The keys that name a release: a frame's identity, and a plan's key that is the same for the
same release on the same data and differs whenever the release would differ."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.dataset import frame_identity
from dpcore.foundations.datasets import load_demo
from dpcore.release.commit import plan_key, release
from tests.unit.dpcore.release_helpers import HEX64, HOURS, PRIVATE_SIZES, make_plan


def test_a_frames_identity_is_stable_across_calls_copies_and_reads(demo):
    identity = frame_identity(demo)
    assert HEX64.fullmatch(identity.removeprefix("frame:"))
    assert frame_identity(demo) == identity
    assert frame_identity(demo.copy()) == identity
    assert frame_identity(load_demo()) == identity  # the same file read again


def test_a_frames_identity_changes_with_a_cell_a_column_name_or_a_dtype(demo):
    fingerprint = frame_identity(demo)
    number = demo.copy()
    number.loc[17, "hours_per_week"] += 1
    text = demo.copy()
    text.loc[0, "race"] = "Other"
    renamed = demo.rename(columns={"hours_per_week": "hours"})
    as_float = demo.astype({"hours_per_week": "float64"})  # same values, another dtype
    as_object = demo.astype({"race": object})
    variants = [frame_identity(f) for f in (number, text, renamed, as_float, as_object)]
    assert all(HEX64.fullmatch(v.removeprefix("frame:")) for v in variants)
    assert len({fingerprint, *variants}) == 6


@pytest.mark.parametrize("not_a_frame", [{"a": [1, 2]}, np.zeros((2, 2)), pd.Series([1.0]), None])
def test_a_frames_identity_rejects_non_frames(not_a_frame):
    with pytest.raises(TypeError, match="must be a pandas DataFrame"):
        frame_identity(not_a_frame)


def test_plan_key_is_the_same_for_the_same_plan_built_from_scratch(demo):
    key = plan_key(make_plan(demo))
    assert re.fullmatch(r"release-[0-9a-f]{32}", key)
    assert plan_key(make_plan(load_demo())) == key
    # Equal plans compare equal too (the group values are not part of the identity).
    assert make_plan(demo) == make_plan(load_demo())


# The key of the demo's default mean plan since keys name the data by its identity (the bytes of
# the demo's asset) rather than by the name and row count an entry point gave it (issue 36): the
# same plan must keep it, or a release made then would be spent again.
DEMO_MEAN_KEY_RECORDED = "release-dc60e9b2c7f1780157c961e7a098b49c"


def test_a_mean_plan_keeps_the_key_ledgers_recorded_for_it(demo, ledger):
    plan = make_plan(demo)
    assert plan_key(plan) == DEMO_MEAN_KEY_RECORDED
    first = release(plan, ledger, noise="simulation", rng=1)
    again = release(make_plan(load_demo()), ledger, noise="simulation", rng=2)
    assert first.spent and not again.spent and again.key == first.key


def test_the_same_data_under_another_name_or_row_count_is_the_same_release(demo):
    """An upload's file name, a path typed on the command line and a Spark table's name name
    one dataset differently; its identity is what the key names."""
    plan = make_plan(demo)
    renamed = dataclasses.replace(
        plan.header, dataset=dataclasses.replace(plan.header.dataset, name="/data/adult.csv.gz")
    )
    recounted = dataclasses.replace(
        plan.header, dataset=dataclasses.replace(plan.header.dataset, rows=1)
    )
    for header in (renamed, recounted):
        assert plan_key(dataclasses.replace(plan, header=header)) == plan_key(plan)


def test_plan_key_differs_whenever_the_release_would_differ(demo):
    changed_cell = demo.copy()
    changed_cell.loc[0, "hours_per_week"] = 99
    variants = {
        "label": make_plan(demo, label="Weekly hours, 2026"),
        "budget": make_plan(demo, budget=PureDP(0.5)),
        "bounds": make_plan(demo, estimator=LaplaceMean(bounds=(0.0, 99.0))),
        "private sizes": make_plan(demo, estimator=PRIVATE_SIZES, strategy="global_only"),
        "estimator": make_plan(demo, estimator=GaussianMean(bounds=HOURS), budget=ZCDP(0.5)),
        "strategy": make_plan(demo, strategy="global_only"),
        "level": make_plan(demo, level=0.9),
        "grouping": make_plan(demo, by=("sex",)),
        "small groups": make_plan(demo, spec_options={"min_group_size": 200}),
        "shares": make_plan(
            demo, spec_options={"share_source": "holdout", "holdout_fraction": 0.1}
        ),
        "data": make_plan(changed_cell),
    }
    keys = {what: plan_key(plan) for what, plan in variants.items()}
    base = plan_key(make_plan(demo))
    assert base not in keys.values(), [w for w, k in keys.items() if k == base]
    assert len(set(keys.values())) == len(keys)


def test_a_dry_run_never_stands_in_for_the_real_release(demo, ledger):
    plan = make_plan(demo)
    dry = release(plan, ledger, noise="simulation", rng=1)
    assert dry.spent and dry.key != plan_key(plan)
    assert plan_key(plan) == plan_key(plan, "secure") != plan_key(plan, "simulation")
