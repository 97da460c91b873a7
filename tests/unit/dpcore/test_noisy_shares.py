"""Shares from a release's own noisy group counts: post-processing of DP outputs, exported as
such, and refused wherever no noisy counts are drawn."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.gvdp import GVDP, GvdpSettings
from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.plan import MeanPlan
from dpcore.analyses.mean.simulate import simulate_releases
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.analyses.synth import SYNTH, SynthSettings
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.errors import NeedsFixedShares
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.shares import noisy_count_shares
from dpcore.release import DatasetRef, PlanHeader, release, to_csv, to_json, to_script
from strata_ui.report import html_report

HOURS = (0.0, 100.0)
PRIVATE = LaplaceMean(bounds=HOURS, n_public=False)
NOISY_SEX = GroupingSpec(
    by=("sex",), share_source="noisy_counts", small_groups="keep",
    categories=(("sex", ("Female", "Male", "Another")),),
)  # fmt: skip


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


def plan_of(frame, spec=NOISY_SEX, estimator=PRIVATE, **options) -> MeanPlan:
    header = PlanHeader(DatasetRef.of(frame, "survey.csv"), spec, PureDP(1.0))
    values = GroupValues.from_grouping(spec.build(frame), frame, "hours_per_week")
    return MeanPlan(values=values, header=header, estimator=estimator, **options)


def test_noisy_count_shares_count_negatives_as_zero_and_fall_back_to_equal_shares():
    shares = noisy_count_shares(np.array([[30.0, -4.0, 10.0], [-1.0, -2.0, 0.0]]))
    np.testing.assert_allclose(shares, [[0.75, 0.0, 0.25], [1 / 3, 1 / 3, 1 / 3]])
    np.testing.assert_allclose(noisy_count_shares(np.array([2.0, 6.0])), [0.25, 0.75])


def test_stratified_recombines_with_the_same_noisy_counts_it_releases(demo):
    values = GroupValues.from_grouping(NOISY_SEX.build(demo), demo, "hours_per_week")
    result = run_strategy(
        "stratified", values, PRIVATE, PureDP(0.05), values.shares, replicates=4000,
        noise=SimulationNoise(rng=3),
    )  # fmt: skip
    assert result.shares.shape == (4000, 3)
    np.testing.assert_allclose(result.shares.sum(axis=1), 1.0)
    # Recombined from the group estimates clamped into the public range, as a release publishes
    # them (a group of no row has a noise-only mean, often far outside it).
    clamped = np.clip(result.group_estimates, *HOURS)
    np.testing.assert_allclose(result.global_estimate, (result.shares * clamped).sum(axis=1))
    # The noisy shares scatter around n_g / n (Laplace of scale 2/ε = 40 on counts in the
    # thousands; "Another" has no row: its noisy count is 0 or less half of the time).
    exact = values.sizes / values.n
    assert np.all(np.abs(result.shares.mean(axis=0) - exact) < 0.01)
    assert 0.4 < np.mean(result.shares[:, 2] == 0) < 0.6
    assert result.shares[:, 0].std() > 0


@pytest.mark.parametrize("estimator", [LaplaceMean(bounds=HOURS), GaussianMean(bounds=HOURS)])
def test_noisy_count_shares_are_refused_when_sizes_are_public(demo, estimator):
    spec = GroupingSpec(by=("sex",), share_source="noisy_counts")
    with pytest.raises(ValueError, match="treats group sizes as public and draws no counts"):
        plan_of(demo, spec=spec, estimator=estimator)
    # Nothing to recombine: a population-only release takes no shares.
    plan_of(demo, spec=spec, estimator=estimator, strategy="global_only")


@pytest.mark.parametrize("strategy", ["stratified", "global_and_groups"])
def test_a_release_publishes_noisy_shares_and_says_so(demo, tmp_path, strategy):
    plan = plan_of(demo, strategy=strategy)
    record = release(plan, Ledger(tmp_path / "l.sqlite", "t", ZCDP(5.0)), noise="simulation",
                     rng=1)  # fmt: skip
    groups = [row for row in record.outputs if row["level"] == "group"]
    assert all("public_share" not in row for row in record.outputs)
    assert sum(row["noisy_share"] for row in groups) == pytest.approx(1.0)
    exact = plan.values.sizes / plan.values.n
    assert [row["noisy_share"] for row in groups] != pytest.approx(exact, abs=1e-12)
    csv_text = to_csv(record)
    assert "# shares: noisy_share: each group's noisy count" in csv_text
    assert "no exact count, share or row total is published" in csv_text
    assert "noisy_share" in csv_text.splitlines()[-len(record.outputs) - 1]
    metadata = json.loads(to_json(record))["metadata"]
    assert metadata["shares"].startswith("noisy_share:")
    assert metadata["plan"]["strata"]["share_source"] == "noisy_counts"
    assert "Group shares" in html_report(record) and "noisy_share" in html_report(record)
    assert "share_source='noisy_counts'" in to_script(record)
    assert "noisy group counts" in plan.review_lines()[2]


def test_exports_of_fixed_shares_name_their_source(demo, tmp_path):
    spec = GroupingSpec(by=("sex",), share_source="table",
                        share_table=(("Female", 0.5), ("Male", 0.5)))  # fmt: skip
    plan = plan_of(demo, spec=spec, estimator=LaplaceMean(bounds=HOURS))
    record = release(plan, Ledger(tmp_path / "l.sqlite", "t", ZCDP(5.0)), noise="simulation",
                     rng=1)  # fmt: skip
    assert "# shares: public_share: from a table of public shares" in to_csv(record)


def test_the_preview_and_the_simulations_recombine_with_noisy_shares(demo):
    """Previewed error is the released error: with the same seed the Compare page's
    simulations draw the same group estimates as with the exact shares, but recombine them
    with the noisy shares of each draw; the preview runs the release itself."""
    both = (("sex", ("Female", "Male")),)
    plan = plan_of(demo, spec=dataclasses.replace(NOISY_SEX, categories=both))
    exact = GroupingSpec(
        by=("sex",), share_source="table", small_groups="keep", categories=both,
        share_table=tuple(zip(plan.values.labels, plan.values.sizes.tolist(), strict=True)),
    )  # fmt: skip
    exact_values = GroupValues.from_grouping(exact.build(demo), demo, "hours_per_week")
    noisy, fixed = (
        simulate_releases(v, PRIVATE, PureDP(0.05), replicates=2000, rng=5)
        for v in (plan.values, exact_values)
    )
    np.testing.assert_array_equal(noisy.groups, fixed.groups)
    differences = noisy.whole - fixed.whole
    assert np.all(differences != 0)
    # With every group in the thousands the noisy shares estimate the exact ones without bias:
    # the population estimates agree on average (within four standard errors of 0).
    assert abs(differences.mean()) < 4 * differences.std() / np.sqrt(differences.size)
    preview = plan_of(demo).preview()
    assert list(preview["group"]) == ["Female", "Male", "Another", "All"]
    assert preview.loc[preview["group"] == "All", "expected_error"].iloc[0] > 0


def test_gvdp_which_treats_sizes_as_public_refuses_noisy_count_shares_naming_the_choices(demo):
    spec = GroupingSpec(by=("race", "sex"), share_source="noisy_counts")
    with pytest.raises(NeedsFixedShares, match="The general estimator treats every group's size"):
        GVDP.statistics(demo, spec.build(demo), GvdpSettings())


def test_synthetic_data_takes_its_rows_per_group_from_noisy_counts(demo):
    """Issue 37: a stratified synthesis pays for its own noisy counts instead of refusing."""
    spec = GroupingSpec(by=("race", "sex"), share_source="noisy_counts")
    stats = SYNTH.statistics(demo, spec.build(demo), SynthSettings(method="independent", n_rows=50))
    assert stats.grouping.shares.drawn_with_release


def test_the_review_does_not_call_noisy_count_shares_public(demo):
    """The Release page's "Statistic" line once said "recombined with public shares" whatever
    the shares were; with the release's own noisy counts nothing public is recombined with."""
    [statistic] = [line for line in plan_of(demo).review_lines() if "**Statistic:**" in line]
    assert "recombined with" in statistic and "public" not in statistic
