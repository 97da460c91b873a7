"""Finding the groups privately: the threshold's guarantee, checked against OpenDP's privacy
map and by seeded draws; its cost in the ledger; its refusals; and the release on neighbours."""

from __future__ import annotations

import math

import numpy as np
import opendp.prelude as dp
import pandas as pd
import pytest

from dpcore.analyses.mean import MEAN, MeanSettings
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP, sequential
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.selection import KeySelection, selection_threshold
from dpcore.release import DatasetRef, PlanHeader, public_metadata, release, to_csv, to_script
from dpcore.release.preview import NOT_FOUND

PRIVATE = MeanSettings(value="hours_per_week", clip_low=0, clip_high=100, n_public=False)
FOUND = GroupingSpec(
    by=("race", "sex"), small_groups="keep", share_source="noisy_counts", selection_fraction=0.2
)
BUDGET = ApproxDP(1.0, 1e-6)


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


def plan_of(frame, spec=FOUND, budget=BUDGET, settings=PRIVATE):
    header = PlanHeader(DatasetRef.of(frame, "survey.csv"), spec, budget)
    return MEAN.plan(MEAN.statistics(frame, spec.build(frame), settings), settings, header)


def released(frame, tmp_path, name, spec=FOUND, budget=BUDGET, rng=11):
    ledger = Ledger(tmp_path / f"{name}.sqlite", "default", ApproxDP(10.0, 1e-3))
    return release(plan_of(frame, spec, budget), ledger, noise="simulation", rng=rng)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-6), (0.5, 1e-9), (2.0, 1e-5)])
def test_the_threshold_meets_opendp_s_privacy_map(epsilon, delta):
    """OpenDP's own analysis of the Laplace threshold (one person in one group, by one)
    gives at most our δ at our threshold, and more just below it."""
    dp.enable_features("contrib")
    tau = selection_threshold(ApproxDP(epsilon, delta))
    assert tau == pytest.approx(1 + math.log(1 / (2 * delta)) / epsilon)

    def opendp_delta(threshold: int) -> float:
        measurement = dp.m.make_laplace_threshold(
            dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int)),
            dp.l01inf_distance(dp.absolute_distance(T=int)),
            scale=1 / epsilon, threshold=threshold,
        )  # fmt: skip
        found_epsilon, found_delta = measurement.map((1, 1, 1))
        assert found_epsilon == pytest.approx(epsilon)
        return found_delta

    assert opendp_delta(math.ceil(tau)) <= delta < opendp_delta(math.floor(tau) - 1)


def test_a_group_of_one_is_found_with_probability_delta_and_a_large_one_almost_always():
    selection = KeySelection(ApproxDP(1.0, 0.02))
    draws = 40_000
    counts = np.tile([1.0, 60.0], (draws, 1))
    found = selection.select(counts, SimulationNoise(rng=7)).mask
    one, large = found.mean(axis=0)
    # P = ½·exp(−ε(τ − 1)) = δ exactly at count 1: the rate sits within 4 standard errors of δ.
    assert abs(one - 0.02) < 4 * math.sqrt(0.02 * 0.98 / draws)
    assert large > 0.999  # 60 is 8 above τ ≈ 4.9 + 1 … in units of 1/ε: lost with P ≈ e^-55


@pytest.mark.parametrize("budget", [PureDP(1.0), ZCDP(0.5)], ids=["epsilon", "rho"])
def test_an_epsilon_or_rho_budget_is_refused_with_where_to_fix_it(demo, budget):
    with pytest.raises(ValueError, match="Finding the groups privately needs an") as refused:
        plan_of(demo, budget=budget)
    message = str(refused.value)
    # ρ = 0.5 runs the Laplace mean at ε = 1, which the message names.
    assert (
        "(this plan runs at ε = 1 (pure DP))" in message
        and "declare the categories of each grouping column" in message
    )


@pytest.mark.parametrize(
    ("settings", "said"),
    [
        (
            MeanSettings(value="hours_per_week", clip_low=0, clip_high=100, n_public=True),
            "treated as public",
        ),
        (PRIVATE.__class__(**{**PRIVATE.__dict__, "strategy": "global_only"}), "no groups"),
    ],
)
def test_selection_without_groups_or_with_public_sizes_is_refused(demo, settings, said):
    with pytest.raises(ValueError, match="not possible here") as refused:
        plan_of(demo, settings=settings)
    assert said in str(refused.value)


def test_declared_categories_and_a_selection_exclude_each_other():
    with pytest.raises(ValueError, match="either declared or found privately"):
        GroupingSpec(by=("sex",), categories=(("sex", ("Female", "Male")),),
                     selection_fraction=0.2)  # fmt: skip


def test_the_selection_and_the_means_compose_exactly_to_the_budget(demo, tmp_path):
    plan = plan_of(demo)
    assert plan.selection.budget == ApproxDP(0.2, 1e-6)
    assert plan.mean_budget == PureDP(0.8)
    assert plan.cost == sequential(ApproxDP(0.2, 1e-6), PureDP(0.8)) == ApproxDP(1.0, 1e-6)
    ledger = Ledger(tmp_path / "l.sqlite", "default", ApproxDP(3.0, 1e-5))
    release(plan, ledger, noise="simulation", rng=1)
    remaining = ledger.remaining()
    assert remaining["epsilon"] == pytest.approx(2.0) and remaining["delta"] == pytest.approx(9e-6)
    gaussian = plan_of(demo, settings=MeanSettings(
        value="hours_per_week", clip_low=0, clip_high=100, n_public=False, estimator="gaussian"
    ))  # fmt: skip
    assert gaussian.selection.budget == ApproxDP(0.2, 5e-7)
    assert gaussian.cost == ApproxDP(1.0, 1e-6)


def test_exports_state_the_selection_and_its_cost(demo, tmp_path):
    record = released(demo, tmp_path, "D")
    csv_text = to_csv(record)
    assert "# groups: found privately with 20% of the release's ε" in csv_text
    assert '# group_selection: {"epsilon": 0.2, "delta": 1e-06, "threshold": ' in csv_text
    assert "# budget: ε = 1, δ = 1e-06" in csv_text
    assert "selection_fraction=0.2" in to_script(record)
    groups = list(record.frame.loc[record.frame["level"] == "group", "group"])
    assert groups == sorted(groups) and len(groups) == 10  # every demo group clears τ ≈ 67


def test_a_new_category_stays_out_and_nothing_noise_free_follows_an_added_person(demo, tmp_path):
    """Neighbours: one person of a new race, and one more in the smallest group. The released
    groups and every noise-free export field are the same on D and D′."""
    person = demo[(demo["race"] == "Other") & (demo["sex"] == "Female")].iloc[[0]]
    frames = {
        "D": demo,
        "new category": pd.concat([demo, demo.iloc[[0]].assign(race="Martian")]),
        "added to a group": pd.concat([demo, person]),
    }
    records = {name: released(frame, tmp_path, name) for name, frame in frames.items()}

    def public(record):
        return {k: v for k, v in public_metadata(record.metadata).items() if k != "released_at"}

    for name in ("new category", "added to a group"):
        before, after = records["D"], records[name]
        assert public(before) == public(after), name
        assert list(before.frame["group"]) == list(after.frame["group"]), name
        assert list(before.frame["level"]) == list(after.frame["level"]), name
        # The intervals follow from the release's noisy counts: DP outputs, not noise-free.
        assert before.frame[["low", "high"]].notna().all().all(), name
    assert not any("Martian" in group for group in records["new category"].frame["group"])


def test_the_preview_says_how_often_a_group_near_the_threshold_is_found(demo):
    # ε = 0.5 with a fifth on the selection: τ = 1 + ln(5·10⁵)/0.1 ≈ 132, and Other × Female
    # has 109 people, Other × Male 162.
    preview = plan_of(demo, budget=ApproxDP(0.5, 1e-6)).preview()
    reasons = preview.set_index("group")["withheld"]
    assert reasons["White × Male"] == ""
    for near in ("Other × Female", "Amer-Indian-Eskimo × Female", "Other × Male"):
        assert reasons[near].startswith("in "), near  # found in some runs, not in others
        assert reasons[near].endswith(NOT_FOUND), near
