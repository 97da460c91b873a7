"""Stratified MST (OpenDP) on the demo by race × sex, 10 groups: seconds against the 5-minute
floor, and the fast synthesizers' seconds to show they are unchanged (issue 18).

Run: ``python benchmarks/bench_mst.py`` from the repository root (add ``--aim`` to time one
vanilla AIM fit as well: about 10 minutes on 2 cores).
"""

from __future__ import annotations

import sys
import time

from dpcore.analyses.synth import SYNTH, SynthSettings, estimate_seconds, run_synthesis
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec

FLOOR_S = 300.0


def timed(method: str, strategy: str, frame, spec, grouping) -> float:
    settings = SynthSettings(method=method, strategy=strategy)
    stats = SYNTH.statistics(frame, grouping, settings)
    started = time.perf_counter()
    run_synthesis(
        stats, stats.config, spec, grouping.shares, epsilon=1.0, strategy=strategy, rng=0,
        progress=lambda done, total: print(f"  {method} {strategy}: {done}/{total}", flush=True)
        if method in ("mst", "aim") else None,
    )  # fmt: skip
    return time.perf_counter() - started


def main() -> None:
    frame = load_demo()
    spec = GroupingSpec(by=("race", "sex"))
    grouping = spec.build(frame)
    for method in ("independent", "histogram", "mwem"):
        print(
            f"{method:>12} stratified: {timed(method, 'stratified', frame, spec, grouping):.2f} s"
        )
    seconds = timed("mst", "stratified", frame, spec, grouping)
    print(
        f"MST stratified, 10 groups: {seconds:.1f} s (floor {FLOOR_S:.0f} s; the app's estimate "
        f"{estimate_seconds('mst', 10, 6):.0f} s) -> {'ok' if seconds <= FLOOR_S else 'TOO SLOW'}"
    )
    print(f"MST vanilla: {timed('mst', 'vanilla', frame, spec, grouping):.1f} s")
    if "--aim" in sys.argv:
        print(f"AIM vanilla: {timed('aim', 'vanilla', frame, spec, grouping):.1f} s")


if __name__ == "__main__":
    main()
