"""Committing a release: one spend per plan, refusal before any noise is drawn, a record of DP
outputs and public parameters only, and its budget stated in every unit."""

from __future__ import annotations

import json
import platform
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from importlib import metadata as importlib_metadata

import numpy as np
import pytest

from dpcore.analyses.mean.plan import MeanPlan
from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.dataset import files_identity
from dpcore.foundations.datasets import DEMO_DATA_PATH, DEMO_DATASET_NAME, demo_identity, load_demo
from dpcore.foundations.ledger import BudgetExceededError, Ledger
from dpcore.release.commit import budget_in_units, plan_key, release
from tests.unit.dpcore.release_helpers import HOURS, make_plan, numbers_in


def test_release_spends_the_cost_once_and_a_second_submit_returns_the_record(demo, ledger):
    plan = make_plan(demo)
    reports = []  # the mean fits no models: a progress bar never shows
    first = release(plan, ledger, progress=lambda *step: reports.append(step))  # OpenDP noise
    assert first.spent and reports == []
    assert first.key == plan_key(plan)
    assert "OpenDP" in first.metadata["noise"]
    # ε = 1 pure DP is charged as exactly ρ = ε²/2 = 0.5 against the ρ = 1 ledger.
    assert ledger.remaining() == {"rho": 0.5}
    assert ledger.spent() == {"rho": 0.5}
    assert [r.cost for r in ledger.history()] == [PureDP(1.0)]

    again = release(plan, ledger)  # double submit
    rebuilt = release(make_plan(load_demo()), ledger)  # a refresh rebuilds the plan
    for repeat in (again, rebuilt):
        assert not repeat.spent
        assert repeat.outputs == first.outputs
        assert repeat.metadata == first.metadata
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.5}


def test_two_threads_committing_the_same_plan_spend_once(demo, ledger, monkeypatch):
    plan = make_plan(demo)
    both_drawn = threading.Barrier(2, timeout=30)
    draw = MeanPlan.run

    def run_then_wait(self, noise, rng, progress):
        rows = draw(self, noise, rng, progress)
        both_drawn.wait()  # both threads have passed the key lookup and drawn their noise
        return rows

    monkeypatch.setattr(MeanPlan, "run", run_then_wait)
    with ThreadPoolExecutor(2) as pool:
        futures = [
            pool.submit(release, plan, ledger, noise="simulation", rng=seed) for seed in (1, 2)
        ]
        records = [f.result(timeout=60) for f in futures]
    assert sorted(r.spent for r in records) == [False, True]
    assert records[0].outputs == records[1].outputs  # the loser returns the winner's release
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.5}


def test_unaffordable_plan_is_refused_before_any_noise_is_drawn(demo, monkeypatch):
    ledger = Ledger(None, "small", ZCDP(0.1))
    draws = []
    monkeypatch.setattr(MeanPlan, "run", lambda self, noise: draws.append(noise) or [])
    with pytest.raises(BudgetExceededError) as refused:
        release(make_plan(demo), ledger, noise="simulation", rng=0)
    message = str(refused.value)
    assert "Requested ρ = 0.5" in message
    assert "Remaining ρ = 0.1" in message
    assert "Difference ρ = 0.4" in message
    assert draws == []
    assert ledger.history() == []
    assert ledger.remaining() == {"rho": 0.1}


def test_the_last_of_the_budget_can_be_spent_exactly_and_no_more(demo, ledger):
    release(make_plan(demo, label="first half"), ledger, noise="simulation", rng=0)
    release(make_plan(demo, label="second half"), ledger, noise="simulation", rng=1)
    assert ledger.remaining() == {"rho": 0.0}
    with pytest.raises(BudgetExceededError, match="Remaining ρ = 0;"):
        release(make_plan(demo, label="one too many"), ledger, noise="simulation", rng=2)
    assert [r.label for r in ledger.history()] == ["first half", "second half"]


def test_bad_arguments_raise_and_record_nothing(demo, ledger):
    plan = make_plan(demo)
    with pytest.raises(ValueError, match="'secure' or 'simulation'"):
        release(plan, ledger, noise="fast")
    with pytest.raises(TypeError, match="must be a Ledger"):
        release(plan, str(ledger.path))
    with pytest.raises(ValueError, match="cannot be seeded"):
        release(plan, ledger, noise="secure", rng=0)
    assert ledger.history() == []


def test_the_record_holds_dp_outputs_and_public_parameters_only(demo, ledger):
    plan = make_plan(demo)
    record = release(plan, ledger, noise="simulation", rng=3)
    payload = ledger.history()[0].payload
    assert set(payload) == {"outputs", "metadata"}
    # The ledger states the people's loss in all as it records the release (its own column).
    stated = {k: v for k, v in record.metadata.items() if k != "cumulative_loss"}
    assert payload == {"outputs": record.outputs, "metadata": stated}

    by_group = demo.groupby(["race", "sex"])["hours_per_week"]
    exact = np.concatenate(  # the demo's hours lie in [0, 100]: clipped statistics = raw ones
        [by_group.mean(), by_group.sum(), [demo["hours_per_week"].mean()]]
    )
    assert demo["hours_per_week"].between(*HOURS).all()
    recorded = np.array(numbers_in(payload))
    near = np.isclose(recorded[:, None], exact[None, :], rtol=1e-9, atol=0)
    assert not near.any(), f"raw statistics in the record: {recorded[near.any(axis=1)]}"

    assert [row["level"] for row in record.outputs] == ["group"] * 10 + ["population"]
    for row in record.outputs:
        expected = {"level", "group", "estimate", "low", "high"}
        assert set(row) == expected | ({"public_share"} if row["level"] == "group" else set())
        assert row["low"] < row["estimate"] < row["high"]


def test_metadata_describes_data_estimator_noise_budget_time_and_software(demo, ledger):
    plan = make_plan(demo)
    before = datetime.now(UTC)
    metadata = release(plan, ledger, noise="simulation", rng=4).metadata

    assert metadata["title"] == "Mean of hours_per_week by race × sex"
    assert metadata["key"] == plan_key(plan, "simulation")
    assert metadata["plan"] == json.loads(json.dumps(plan.parameters()))
    dataset = metadata["plan"]["dataset"]
    assert dataset == {"name": DEMO_DATASET_NAME, "identity": demo_identity(), "rows": 32561}
    assert demo_identity() == files_identity([DEMO_DATA_PATH])  # the asset's bytes
    assert metadata["plan"]["estimator"] == {
        "class": "LaplaceMean", "bounds": [0.0, 100.0], "radius": None, "gamma": 0.1,
        "n_public": True,
    }  # fmt: skip
    assert metadata["plan"]["strata"]["by"] == ["race", "sex"]
    assert "simulation" in metadata["noise"] and "not for publication" in metadata["noise"]
    assert "95% noise intervals" in metadata["intervals"]
    assert metadata["budget"] == {
        "kind": "pure", "epsilon": 1.0, "rho": 0.5,
        "approx_dp": [{"epsilon": 1.0, "delta": 0.0}],
    }  # fmt: skip
    assert metadata["ledger"]["name"] == "default"
    released_at = datetime.fromisoformat(metadata["released_at"])
    assert released_at.utcoffset() == timedelta(0)
    assert before <= released_at <= datetime.now(UTC)
    software = metadata["software"]
    assert software["python"] == platform.python_version()
    for package in ("strata-lab", "numpy", "scipy", "pandas", "opendp"):
        assert software[package] == importlib_metadata.version(package)


def test_budget_in_units_pure_dp_adds_rho_and_delta_zero():
    assert budget_in_units(PureDP(2.0)) == {
        "kind": "pure", "epsilon": 2.0, "rho": 2.0, "approx_dp": [{"epsilon": 2.0, "delta": 0.0}]
    }  # fmt: skip


def test_budget_in_units_approx_dp_is_its_own_equivalent():
    assert budget_in_units(ApproxDP(0.5, 1e-6)) == {
        "kind": "approx", "epsilon": 0.5, "delta": 1e-6,
        "approx_dp": [{"epsilon": 0.5, "delta": 1e-6}],
    }  # fmt: skip


def test_budget_in_units_zcdp_gives_the_tight_epsilon_at_each_delta():
    rho = 0.5
    units = budget_in_units(ZCDP(rho))
    assert (units["kind"], units["rho"]) == ("zcdp", rho)
    assert [e["delta"] for e in units["approx_dp"]] == [1e-5, 1e-6, 1e-8]
    # Canonne, Kamath & Steinke (2020), Cor. 13, minimised over a fine grid of Rényi orders α.
    alpha = 1 + np.geomspace(1e-3, 1e4, 400_001)
    for equivalent in units["approx_dp"]:
        log_inv_delta = -np.log(equivalent["delta"])
        curve = alpha * rho + (
            log_inv_delta + (alpha - 1) * np.log1p(-1 / alpha) - np.log(alpha)
        ) / (alpha - 1)
        classic = rho + 2 * np.sqrt(rho * log_inv_delta)
        assert equivalent["epsilon"] == pytest.approx(curve.min(), rel=1e-6)
        assert equivalent["epsilon"] < classic
    epsilons = [e["epsilon"] for e in units["approx_dp"]]
    assert epsilons == sorted(epsilons)  # a smaller δ costs a larger ε
