"""A release's noise intervals: coverage at the nominal level, nothing outside the public range,
finite estimates from extreme values, and a stated coverage where a method falls short."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.foundations.accounting import PureDP
from dpcore.foundations.mechanisms import noise_source
from dpcore.release.commit import release
from dpcore.release.exports import to_csv, to_json
from strata_ui import charts_release
from tests.unit.dpcore.release_helpers import HOURS, make_plan, regions


@pytest.mark.slow
@pytest.mark.parametrize(
    "strategy, level", [("stratified", 0.95), ("global_only", 0.9), ("global_and_groups", 0.8)]
)
def test_noise_intervals_cover_the_clipped_means_at_the_nominal_level(strategy, level):
    frame = regions()
    clipped = frame.assign(hours=frame["hours"].clip(*HOURS))
    truth = clipped.groupby("region")["hours"].mean().to_dict()
    truth["All"] = clipped["hours"].mean()  # shares are the group counts: Σ w_g μ_g = μ
    raw = frame.groupby("region")["hours"].mean()
    assert (raw - clipped.groupby("region")["hours"].mean()).min() > 3  # clipping matters

    plan = make_plan(frame, name="regions.csv", by=("region",), value="hours",
                     strategy=strategy, level=level)  # fmt: skip
    noise = noise_source("simulation", rng=20240501 + int(100 * level))
    expected = ["All"] if strategy == "global_only" else ["north", "south", "east", "All"]
    runs = 300
    covered: dict[str, int] = {}
    for _ in range(runs):
        rows = plan.run(noise, np.random.default_rng(0))
        assert [row.group for row in rows] == expected
        for row in rows:
            hit = row.low <= truth[row.group] <= row.high
            covered[row.group] = covered.get(row.group, 0) + hit
    for group, hits in covered.items():
        test = stats.binomtest(hits, runs, level)
        assert test.pvalue > 0.001, f"{group}: {hits}/{runs} covered, nominal {level:.0%}"


@pytest.mark.parametrize("strategy", ["stratified", "global_and_groups"])
def test_a_tiny_budget_releases_nothing_outside_the_public_range(strategy):
    """At ε = 0.01 the noise dwarfs [0, 100] (unclipped: −197 to 306 hours); every estimate and
    interval end is clipped into the range, and estimates stay inside their intervals."""
    plan = make_plan(regions(), name="regions.csv", by=("region",), value="hours",
                     budget=PureDP(0.01), strategy=strategy)  # fmt: skip
    rows = [row for seed in range(3)
            for row in plan.run(noise_source("simulation", rng=seed), np.random.default_rng(0))]  # fmt: skip
    ends = np.array([[row.estimate, row.low, row.high] for row in rows])
    assert ((ends >= HOURS[0]) & (ends <= HOURS[1])).all()
    assert np.isin(ends[:, 1:], HOURS).any()  # the noise did reach past the range
    assert ((ends[:, 1] <= ends[:, 0]) & (ends[:, 0] <= ends[:, 2])).all()


def test_values_near_the_largest_float_in_a_group_still_commit_finite_estimates(ledger):
    """Two finite values near −9e307 (a file may hold them) made the clipped sums NaN and every
    commit of the release fail (issue 15, item 4); clipped to [0, 100] they count as 0."""
    frame = pd.DataFrame({"region": ["north"] * 6 + ["south"] * 4,
                          "hours": [-9e307, -9e307, 40, 45, 50, 38, 1e308, 20, 30, 25]})  # fmt: skip
    plan = make_plan(frame, name="extreme.csv", by=("region",), value="hours")
    record = release(plan, ledger, noise="simulation", rng=0)
    ends = np.array([[row["estimate"], row["low"], row["high"]] for row in record.outputs])
    assert np.all(np.isfinite(ends)) and np.all((ends >= 0) & (ends <= 100))
    assert len(ledger.history()) == 1


def test_intervals_that_cover_less_than_their_level_say_so_with_the_number(demo, ledger):
    """Issue 42: where a method cannot promise its level (intervals with sampling error over
    few skewed values), the review, the metadata, every export and the chart say so with the
    coverage measured, instead of a bare 95%."""
    plan = make_plan(demo, by=("sex",), sampling_error=True)
    assert plan.coverage_note is not None and plan.coverage_note.lowest == 0.92
    assert any(
        line.startswith("**Coverage:**") and "92–93%" in line for line in plan.review_lines()
    )
    record = release(plan, ledger, noise="simulation", rng=3)
    coverage = record.metadata["coverage"]
    assert coverage["measured"] == "92–93%" and "fewer than 1,000 rows" in coverage["note"]
    assert "\n# coverage: Nominal 95%, but means over fewer than 1,000 rows" in to_csv(record)
    assert json.loads(to_json(record))["metadata"]["coverage"]["lowest"] == 0.92
    title = charts_release.release_figure(record).layout.title.text
    assert title.endswith("95% intervals (some cover ≈92–93%: see Coverage)")
    # Noise-only intervals keep their level: no note, and the title as it was.
    assert make_plan(demo, by=("sex",)).coverage_note is None
