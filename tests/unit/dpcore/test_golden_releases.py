"""Seeded releases of every analysis, on rows in memory and on every engine, pinned to digests.

A refactor must not change what a release publishes: each case below draws a release with
seeded simulation noise through the registry (the statistics, the plan, its run), serialises
its rows exactly (JSON keeps every float's shortest repr, so equal digests mean bit-identical
releases) and compares the SHA-256 with ``golden_releases.json``. A change that *means* to
change releases (a fixed interval, a new default) regenerates the file with
``STRATA_UPDATE_GOLDEN=1 pytest tests/unit/dpcore/test_golden_releases.py`` and says why in its
commit message.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

from dpcore import load_demo
from dpcore.analyses import get
from dpcore.engines import DuckDBEngine, PandasEngine, SparkEngine, spark_session
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.release import DatasetRef, PlanHeader
from tests.frames import write_shuffled_parts

GOLDEN = Path(__file__).with_name("golden_releases.json")
UPDATE = os.environ.get("STRATA_UPDATE_GOLDEN") == "1"
SPEC = GroupingSpec(by=("race", "sex"), min_group_size=50)
NOISY_SHARES = dataclasses.replace(
    SPEC,
    share_source="noisy_counts",
    small_groups="keep",
    categories=(
        ("race", ("Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White")),
        ("sex", ("Female", "Male")),
    ),
)
HEADER_DATA = DatasetRef("demo", "-", 1)
SEED = 7


def _settings(name: str, **changes):
    analysis = get(name)
    return analysis, dataclasses.replace(analysis.default_settings(), **changes)


# name: (analysis name, settings changes, budget[, grouping])
CASES = {
    # Group sizes declared public where a case was pinned with them (they were the default).
    "mean-laplace": ("mean", {"n_public": True}, PureDP(1.0)),
    "mean-laplace-private-default": ("mean", {}, PureDP(1.0), NOISY_SHARES),
    "mean-gaussian-private-sizes": (
        "mean", {"estimator": "gaussian", "n_public": False, "strategy": "global_and_groups"},
        ZCDP(0.5), NOISY_SHARES,
    ),
    "mean-coinpress": ("mean", {"estimator": "coinpress"}, ZCDP(0.5)),
    "mean-sampling-error": ("mean", {"sampling_error": True, "n_public": True}, PureDP(1.0)),
    "ratio-gaussian": ("ratio", {}, PureDP(1.0)),
    "ratio-laplace-montecarlo": ("ratio", {"mechanism": "laplace", "method": "monte_carlo"},
                                 PureDP(1.0)),
    "gvdp-mean": ("gvdp", {"ks": (("mean", 100),)}, ZCDP(1.0)),
    "gvdp-ols": ("gvdp", {"model": "ols", "ks": (("ols", 100),)}, ZCDP(1.0)),
    "synth-independent": ("synth", {"method": "independent", "n_rows": 500}, PureDP(1.0)),
    "synth-mwem": ("synth", {"method": "mwem", "n_rows": 500, "rounds": 3}, PureDP(1.0)),
    "synth-noisy-rows": ("synth", {"method": "independent", "n_rows": 500}, PureDP(1.0),
                         NOISY_SHARES),
    "sample-kary": ("sample", {}, PureDP(1.0)),
}  # fmt: skip
ENGINES = ("pandas", "duckdb", "spark")


@pytest.fixture(scope="module")
def demo():
    return load_demo()


@pytest.fixture(scope="module")
def engines(demo, tmp_path_factory):
    folder = write_shuffled_parts(demo, tmp_path_factory.mktemp("demo_parts"), seed=1)
    return {
        "pandas": lambda: PandasEngine(demo, "demo"),
        "duckdb": lambda: DuckDBEngine(folder),
        "spark": lambda: SparkEngine(str(folder), session=spark_session("local[2]")),
    }


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


def release_digest(analysis, settings, stats, budget, spec) -> str:
    header = PlanHeader(dataset=HEADER_DATA, spec=spec, budget=budget, label="golden")
    plan = analysis.plan(stats, settings, header)
    rows = plan.run(SimulationNoise(rng=SEED), np.random.default_rng(SEED))
    text = json.dumps([row.to_dict() for row in rows], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def check(recorded: dict, case: str, digest: str) -> None:
    if UPDATE:
        stored = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
        GOLDEN.write_text(json.dumps({**stored, case: digest}, indent=1, sort_keys=True) + "\n")
        return
    assert case in recorded, f"no recorded digest for {case}: run with STRATA_UPDATE_GOLDEN=1"
    assert digest == recorded[case], f"the seeded release {case} changed"


@pytest.mark.parametrize("case", CASES)
def test_a_seeded_release_in_memory_is_unchanged(demo, recorded, case):
    name, changes, budget, *grouping = CASES[case]
    spec = grouping[0] if grouping else SPEC
    analysis, settings = _settings(name, **changes)
    stats = analysis.statistics(demo, spec.build(demo), settings)
    check(recorded, f"{case}/memory", release_digest(analysis, settings, stats, budget, spec))


@pytest.mark.slow  # Spark starts a JVM
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", [c for c in CASES if get(CASES[c][0]).runs_on_engines])
def test_a_seeded_release_on_an_engine_is_unchanged(engines, recorded, case, engine):
    name, changes, budget, *grouping = CASES[case]
    spec = grouping[0] if grouping else SPEC
    analysis, settings = _settings(name, **changes)
    try:
        stats = analysis.engine_statistics(engines[engine](), spec, settings).stats
        digest = release_digest(analysis, settings, stats, budget, spec)
    except ValueError as exc:  # settings that need the rows in memory (sampling error, ...)
        digest = f"refused: {type(exc).__name__}"
    check(recorded, f"{case}/{engine}", digest)
