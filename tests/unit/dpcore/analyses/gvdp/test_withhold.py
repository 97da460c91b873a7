"""Uninformative GVDP groups: withheld with their reason, or the plan refused (issue 13, item 4)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.gvdp.bounds import RhoSpent
from dpcore.analyses.gvdp.private import tail_radius
from dpcore.analyses.gvdp.withhold import subsets_needed, too_few_subsets
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.ledger import Ledger
from dpcore.release import release, to_csv, to_json
from tests.unit.dpcore.analyses.gvdp.test_plan import MEAN, MEAN_BOUNDS, make_plan, rows_of, survey


def last_step_noise(k: int, rho: float, d: int, *, mean_fraction=0.5, steps=5, beta=0.03):
    """The smallest noise scale of CoinPress's last step (Alg. 4 line 7 with radius 0)."""
    rho_last = RhoSpent.split(rho, mean_fraction, steps).mean_steps[-1]
    gamma1 = tail_radius(d, beta / (6 * steps * k))
    return 2 * gamma1 / (k * math.sqrt(2 * rho_last))


@pytest.mark.parametrize("rho, d", [(0.5, 1), (0.05, 1), (0.5, 3), (2.0, 2), (1e-4, 1)])
def test_subsets_needed_is_the_smallest_k_whose_noise_is_below_one_subsets_spread(rho, d):
    k = subsets_needed(rho=rho, mean_fraction=0.5, steps=5, beta=0.03, d=d)
    assert last_step_noise(k, rho, d) <= 1 < last_step_noise(k - 1, rho, d)


def test_a_smaller_budget_needs_more_subsets():
    needs = [subsets_needed(rho=r, mean_fraction=0.5, steps=5, beta=0.03, d=1)
             for r in (2.0, 0.5, 0.05, 0.005)]  # fmt: skip
    assert needs == sorted(needs) and needs[0] < needs[-1]
    assert needs[1] == 17  # the demo's default ρ = 0.5: 3–10 subsets are too few


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return survey()


def test_groups_with_too_few_subsets_are_withheld_whatever_the_noise(frame):
    """k = 60 at ρ = 0.5 gives the regions 36, 18 and 6 subsets; a mean needs 17."""
    plan = make_plan(frame, model=MEAN, bounds=MEAN_BOUNDS)
    assert plan.subsets_needed == 17
    assert list(plan.data.group_subsets(60)) == [36, 18, 6]
    for seed in range(3):
        table = rows_of(plan, seed).set_index("group")
        east = table.loc["east"]
        assert east["flag"] == "withheld: 6 subsets, fewer than the 17 this budget needs for an informative estimate"  # fmt: skip
        assert east[["estimate", "low", "high", "std_error"]].isna().all()
        assert east["public_share"] == pytest.approx(0.1)  # public, so still shown
    assert "withheld: east" in plan.review_lines()[-1]


def test_refusing_is_the_users_choice_and_happens_before_any_noise(frame):
    with pytest.raises(ValueError, match=r"1 group\(s\) have fewer than the 17 subsets") as info:
        make_plan(frame, model=MEAN, bounds=MEAN_BOUNDS, uninformative="refuse")
    assert "(east)" in str(info.value) and "choose to withhold" in str(info.value)
    # With enough subsets everywhere, refusing refuses nothing.
    plan = make_plan(frame, model=MEAN, bounds=MEAN_BOUNDS, uninformative="refuse", k=20,
                     budget=ZCDP(50.0))  # fmt: skip
    assert not any(plan.withheld_groups().values())
    with pytest.raises(ValueError, match="`uninformative` must be one of"):
        make_plan(frame, model=MEAN, bounds=MEAN_BOUNDS, uninformative="drop")


def test_the_decision_to_withhold_reads_public_sizes_only(frame):
    """GVDP treats row counts as public (paper §2.2): the same sizes with other values withhold
    the same groups, and one person added to a small group changes nothing unless it changes
    that group's number of subsets, a public quantity."""
    plan = make_plan(frame, model=MEAN, bounds=MEAN_BOUNDS)
    shuffled = frame.assign(hours=np.random.default_rng(5).permutation(frame["hours"]) * 2)
    other = make_plan(shuffled, model=MEAN, bounds=MEAN_BOUNDS)
    assert plan.withheld_groups() == other.withheld_groups()
    person = frame[frame["region"] == "east"].iloc[[0]]
    neighbour = make_plan(pd.concat([frame, person], ignore_index=True), model=MEAN,
                          bounds=MEAN_BOUNDS)  # fmt: skip
    assert neighbour.withheld_groups() == plan.withheld_groups()
    expected = {
        label: too_few_subsets(int(k_g), plan.subsets_needed)
        for label, k_g in zip(plan.data.labels, plan.data.group_subsets(60), strict=True)
    }
    assert plan.withheld_groups() == expected


def test_every_export_names_the_withheld_rows_and_their_reason(frame, tmp_path):
    plan = make_plan(frame, model=MEAN, bounds=MEAN_BOUNDS)
    record = release(plan, Ledger(tmp_path / "l.sqlite", "default", ZCDP(10.0)),
                     noise="simulation", rng=4)  # fmt: skip
    east = next(r for r in json.loads(to_json(record))["outputs"] if r["group"] == "east")
    assert east["estimate"] is None and east["low"] is None and east["flag"].startswith("withheld")
    csv = [line for line in to_csv(record).splitlines() if line.startswith('"group","east"')]
    assert len(csv) == 1 and "withheld: 6 subsets" in csv[0]
    assert "Rows with a flag are withheld" in record.metadata["intervals"]
