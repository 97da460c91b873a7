"""Every interval covers what its release claims, on heavy-tailed, skewed populations nobody tuned
them to (issue 42): a coarse, seeded grid of ``benchmarks/bench_coverage.py`` (which carries the
full grid: six group sizes from 30 to 10,000, five budgets from ε = 0.1 to 10, three
populations, 1,000 releases a cell).

A cell fails when its coverage lies more than 3 standard errors (at the claimed rate) below
what the release claims there: 95%, or the lower end of the release's own coverage note where
it states one (:class:`~dpcore.release.CoverageNote`: small groups of skewed values with
sampling error, very heavy tails at large GVDP budgets). CoinPress claims nothing for a group
whose values spread more than its σ, and such cells are not judged.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_coverage.py"


def _benchmark():
    spec = importlib.util.spec_from_file_location("bench_coverage", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _benchmark()


SIZES = (30, 300, 3000)
EPSILONS = (0.1, 1.0, 10.0)


def _failures(frame) -> list[str]:
    judged = frame[frame["claimed"].notna()]
    bad = judged[judged["shortfall"] > 3]
    return [
        f"{r.interval} / {r.population} / {r.group} / ε={r.epsilon:g}: {r.coverage:.3f} "
        f"± {r.se:.3f} of {r.published} published, claimed {r.claimed:.2f}"
        for r in bad.itertuples()
    ]


@pytest.mark.slow
def test_means_and_ratios_cover_what_they_claim(bench):
    names = [name for name in bench.families() if not name.startswith("GVDP")]
    frame = bench.run(
        names, population_names=("lognormal", "pareto"), sizes=SIZES, epsilons=EPSILONS,
        replicates=300, seed=7,
    )  # fmt: skip
    assert len(frame) == len(names) * 2 * len(EPSILONS) * (len(SIZES) + 1)
    assert not _failures(frame), "\n".join(_failures(frame))


@pytest.mark.slow
def test_gvdp_covers_what_it_claims(bench):
    frame = bench.run(
        ["GVDP mean"], population_names=("zero-inflated", "pareto"), sizes=(300, 3000),
        epsilons=(1.0, 10.0), gvdp_replicates=120, seed=7,
    )  # fmt: skip
    assert len(frame) == 8  # nothing withheld at these sizes and budgets
    assert not _failures(frame), "\n".join(_failures(frame))


def test_a_cell_below_its_claim_is_a_failure(bench):
    """The test can fail: a cell 4 standard errors below 95% is reported, one within 3 is not,
    and one whose release claims 92% is judged against 92%."""
    cell = bench.Cell("x", "p", "n=30", 30, 1.0, covered=882, published=1000, replicates=1000,
                      width=1.0)  # fmt: skip
    assert cell.shortfall() == pytest.approx((0.95 - 0.882) / (0.95 * 0.05 / 1000) ** 0.5)
    assert cell.shortfall() > 3
    assert bench.Cell("x", "p", "g", 30, 1.0, 940, 1000, 1000, 1.0).shortfall() < 3
    noted = bench.Cell("x", "p", "g", 30, 1.0, 905, 1000, 1000, 1.0, claimed=0.92)
    assert noted.shortfall() < 3 < noted.shortfall(0.95)
