"""MST and AIM through OpenDP on tiny data (a few hundred rows, 3 small columns): stratified
shapes, rows per group by public share, the zCDP ledger charge, refusals before anything is
spent, neighbouring datasets, and MST's fit at a huge and a tiny ρ.

OpenDP's noise takes no seed, so the statistical checks leave wide margins."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dpcore.analyses.synth import (
    MIN_MBI_GROUP_ROWS,
    SYNTH,
    SynthSettings,
    estimate_seconds,
    synthesize,
    synthesizers,
)
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import Ledger
from dpcore.release import DatasetRef, PlanHeader, public_metadata, release, to_script

pytestmark = pytest.mark.slow  # each OpenDP fit takes a second or more (JAX compiles first)

SETTINGS = SynthSettings(method="mst", columns=("a", "b", "c"), n_rows=200, edges=(),
                         categorical=())  # fmt: skip


BUDGET = ZCDP(2.0)
"""ρ of every MST fit at an ordinary budget here (ε = 2 in :func:`synthesize`): OpenDP's
measurement and JAX's compiled code depend on ρ, and building them again for another ρ costs
about as much as a fit."""
LEDGER = ZCDP(4.0)
STAMP = re.compile(r"\d{4}-\d\d-\d\dT[\d:.]+\+00:00")  # released_at, the one field that differs


def tiny(n: int = 300, *, seed: int = 0) -> pd.DataFrame:
    """a uniform on 3 values; b follows a 9 times in 10; c independent; g: 2 groups of 2:1."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = np.where(rng.random(n) < 0.9, a % 2, 1 - a % 2)
    return pd.DataFrame(
        {
            "a": np.array(["x", "y", "z"])[a],
            "b": np.array(["no", "yes"])[b],
            "c": rng.choice(["p", "q", "r"], n),
            "g": np.repeat(["big", "small"], [2 * n // 3, n - 2 * n // 3]),
        }
    )


def pair_distance(real: pd.DataFrame, synthetic: pd.DataFrame, pair: list[str]) -> float:
    """L1 distance between the real and synthetic shares of the pair's combinations."""
    shares = [f[pair].astype(str).value_counts(normalize=True) for f in (real, synthetic)]
    return float(shares[0].sub(shares[1], fill_value=0).abs().sum())


def plan_for(frame: pd.DataFrame, budget=BUDGET, settings=SETTINGS, spec=None):
    spec = spec or GroupingSpec(by=("g",))
    header = PlanHeader(DatasetRef.of(frame, "tiny.csv"), spec, budget)
    stats = SYNTH.statistics(frame, spec.build(frame), settings)
    return SYNTH.plan(stats, settings, header)


def test_stratified_mst_fits_each_group_and_draws_rows_by_public_share(monkeypatch):
    fit_joint, joints = synthesizers.fit_joint, []

    def spy(codes, sizes, method, epsilon):
        joints.append(joint := fit_joint(codes, sizes, method, epsilon))
        return joint

    monkeypatch.setattr(synthesizers, "fit_joint", spy)
    frame = tiny()
    calls = []
    data = synthesize(
        frame, ["a", "b", "c"], method="mst", epsilon=2.0, n_rows=101, strata="g",
        shares={"big": 0.7, "small": 0.3}, rng=0, progress=lambda d, t: calls.append((d, t)),
    )  # fmt: skip
    assert data.frame.shape == (101, 4)
    assert data.group_rows.to_dict() == {"big": 71, "small": 30}
    assert data.frame.groupby("g", observed=True).size().to_dict() == {"big": 71, "small": 30}
    assert data.budget == ZCDP(2.0) == BUDGET  # ρ = ε²/2
    assert calls == [(0, 2), (1, 2), (2, 2)]
    for column, categories in {"a": ["x", "y", "z"], "b": ["no", "yes"]}.items():
        assert list(data.frame[column].cat.categories) == categories  # no "missing" category
    # What the app tests' stand-in for OpenDP's fit also returns (tests/app/
    # test_synth_mst_page.py): a distribution over the model columns' codes, one per group.
    assert len(joints) == 2
    for joint in joints:
        assert joint.shape == (3, 2, 3) and (joint >= 0).all()
        assert joint.sum() == pytest.approx(1.0)


def test_mst_at_a_huge_rho_keeps_the_pairs_and_at_a_tiny_rho_loses_them():
    frame = tiny(600)
    kwargs = {"method": "mst", "n_rows": 5000, "rng": 1}
    sharp = synthesize(frame, ["a", "b", "c"], epsilon=100.0, **kwargs).frame
    # Sampling 5,000 rows alone moves a 6-cell table by about 0.05 in L1.
    assert pair_distance(frame, sharp, ["a", "b"]) < 0.15
    assert pair_distance(frame, sharp, ["a", "c"]) < 0.2
    # At ρ = 5e-5 every count carries noise of s.d. 100 against 600 rows: a → b is lost (0.71
    # for independent a and b). OpenDP's noise cannot be seeded: one fit on pure noise fell to
    # 0.28 in a full run (16 more: 0.48 to 1.37), so the median of three is tested.
    blurred = [
        pair_distance(frame, synthesize(frame, ["a", "b", "c"], epsilon=0.01, **kwargs).frame,
                      ["a", "b"])
        for _ in range(3)
    ]  # fmt: skip
    assert sorted(blurred)[1] > 0.3


def test_aim_fits_a_tiny_table_at_its_rho():
    data = synthesize(tiny(), ["a", "b", "c"], method="aim", epsilon=3.0, n_rows=50, rng=0)
    assert data.frame.shape == (50, 3) and data.budget == ZCDP(4.5)


def test_a_release_charges_the_zcdp_ledger_rho_once(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "default", LEDGER)
    plan = plan_for(tiny(), BUDGET)
    record = release(plan, ledger, noise="secure")
    assert len(record.frame) == 200 and plan.cost == BUDGET
    assert ledger.spent() == pytest.approx({"rho": BUDGET.rho})
    release(plan, ledger, noise="secure")  # the same plan again spends nothing
    assert ledger.spent() == pytest.approx({"rho": BUDGET.rho})


def test_an_epsilon_budget_runs_at_rho_of_epsilon_squared_over_two():
    """One budget language (issue 37): MST at ε = 1 costs ρ = ε²/2 = 0.5, as any release at
    ε = 1 does (it was refused)."""
    assert plan_for(tiny(), PureDP(1.0)).cost == ZCDP(0.5)


def test_a_column_with_too_many_categories_is_named_with_how_to_coarsen_it(tmp_path):
    frame = tiny().assign(c=[f"id{i}" for i in range(300)])
    ledger = Ledger(tmp_path / "l.sqlite", "default", LEDGER)
    with pytest.raises(ValueError, match=r"c \(300\) has more\. Coarsen it: type public bucket"):
        release(plan_for(frame), ledger, noise="secure")
    assert ledger.spent() == {"rho": 0.0}


def test_a_group_too_small_for_its_own_model_is_refused_and_vanilla_suggested():
    frame = tiny(3 * MIN_MBI_GROUP_ROWS - 3)  # the small group has 49 rows
    with pytest.raises(ValueError, match=r"\(small\).*Choose the vanilla model"):
        plan_for(frame)
    vanilla = SynthSettings(**{**SETTINGS.__dict__, "strategy": "vanilla"})
    assert plan_for(frame, settings=vanilla).cost == BUDGET


def test_a_numeric_column_without_bins_is_refused():
    frame = tiny().assign(c=np.arange(300.0))
    with pytest.raises(ValueError, match="Column `c` is numeric: type public bucket edges"):
        plan_for(frame)


def test_nothing_but_dp_outputs_follows_one_added_person(tmp_path):
    frame = tiny()
    neighbour = pd.concat([frame, frame.iloc[[-1]]], ignore_index=True)
    spec = GroupingSpec(by=("g",), share_source="table", share_table=(("big", 0.6), ("small", 0.4)))
    records = [
        release(plan_for(f, spec=spec), Ledger(tmp_path / f"{i}.sqlite", "d", LEDGER))
        for i, f in enumerate((frame, neighbour))
    ]

    def public(record):
        return {k: v for k, v in public_metadata(record.metadata).items() if k != "released_at"}

    assert public(records[0]) == public(records[1])
    scripts = [STAMP.sub("<released_at>", to_script(r)) for r in records]
    assert scripts[0] == scripts[1]


def test_the_time_model_grows_with_groups_columns_and_runs():
    assert estimate_seconds("mst", 10, 6) < 5 * 60  # the bound for the demo
    assert estimate_seconds("mst", 10, 6) > estimate_seconds("mst", 1, 6)
    assert estimate_seconds("aim", 1, 6) > estimate_seconds("mst", 1, 6)
    assert estimate_seconds("mst", 2, 3, fits=3) == 3 * estimate_seconds("mst", 2, 3)
