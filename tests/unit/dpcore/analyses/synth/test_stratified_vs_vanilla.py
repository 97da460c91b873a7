"""The stratification paper's synthetic-data claim on the demo data (race × sex, ε = 1): stratified
synthesis lowers the overall workload error and the parity error of means (seeded; slow).
"""

from __future__ import annotations

import pytest

from dpcore.analyses.synth.encoding import bucketize
from dpcore.analyses.synth.synthesizers import (
    synthesize,
)
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.metrics import (
    mean_error_by_group,
    synthetic_parity_error,
    workload_error_by_group,
)

# ---------------------------------------------------------------------------------------------
# Demo data: stratified vs vanilla (race × sex, ε = 1)
# ---------------------------------------------------------------------------------------------

DEMO_COLUMNS = ["age", "workclass", "education", "marital_status", "occupation"]
DEMO_COLUMNS += ["race", "sex", "hours_per_week"]
DEMO_EDGES = {"age": [25, 35, 45, 55, 65], "hours_per_week": [20, 35, 41, 50]}
STRATA = ["race", "sex"]


@pytest.fixture(scope="module")
def demo():
    frame = load_demo()[DEMO_COLUMNS]
    shares = (frame.groupby(STRATA).size() / len(frame)).to_dict()
    return frame, bucketize(frame, DEMO_EDGES), shares


def _demo_errors(demo, method, seed):
    frame, real, shares = demo
    common = {"method": method, "epsilon": 1.0, "n_rows": len(frame), "edges": DEMO_EDGES}
    others = [c for c in DEMO_COLUMNS if c not in STRATA]
    out = {}
    for name, kwargs in (("vanilla", {}), ("stratified", {"strata": STRATA, "shares": shares})):
        synthetic = synthesize(frame, DEMO_COLUMNS, rng=seed, **common, **kwargs).frame
        out[name] = (
            workload_error_by_group(real, synthetic, STRATA, others),
            synthetic_parity_error(mean_error_by_group(real, synthetic, STRATA, others)),
        )
    return out


SEEDS = range(5)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)  # one test per seed, so workers share the load
def test_demo_stratified_vs_vanilla_independent(demo, seed):
    """Independent marginals, 5 seeds. Robust in every seed: stratification lowers the overall
    3-way workload error (about 0.46 vs 0.50) and the parity error of means (about 0.19 vs 0.31).
    The worst-group workload error is lower for stratified in 4 of 5 seeds only (about 1.18-1.39
    vs 1.32-1.41), so its direction is not asserted.
    """
    errors = _demo_errors(demo, "independent", seed)
    (vanilla, vanilla_parity), (strat, strat_parity) = errors["vanilla"], errors["stratified"]
    assert len(strat.groups) == 10
    assert strat.overall < vanilla.overall
    assert strat_parity < vanilla_parity


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_demo_stratified_vs_vanilla_mwem(demo, seed):
    """MWEM, 5 seeds. Robust in every seed, and against the paper's hopes: vanilla MWEM has the
    lower worst-group 3-way workload error (about 1.09-1.17 vs 1.48-1.60). The worst groups
    (about 110-190 rows, e.g. "Other × Female") cannot pay for 3-way marginals at ε = 1 with
    their own budget, while the vanilla model lends them the population's structure.
    """
    errors = _demo_errors(demo, "mwem", seed)
    vanilla, strat = errors["vanilla"][0], errors["stratified"][0]
    assert vanilla.worst < strat.worst
