"""How often the ratio planner's answer meets its target, checked by simulated releases (issue 17
item 1; prints a table, not a test).

For the calibration ratio Σ score / Σ income_over_50k of the demo by race × sex, with Laplace
noise (ε) and the Gaussian with zCDP accounting (ρ), each target ±h at level 0.95 gives the
planner's smallest budget; 4,000 releases simulated there with the release's own noise
(:meth:`RatioAnalysis.check_accuracy`, a withheld ratio counting as missing) say how often the
binding group met the target. A calibrated answer shows 0.943–0.957 (the binomial band).

Run: ``PYTHONPATH=. python benchmarks/bench_ratio_planner_coverage.py``
"""

from __future__ import annotations

import dataclasses
import time

from dpcore.analyses import RATIO
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, smallest_budget

TARGETS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0)
REPLICATES = 4000
SETUPS = (("laplace", "basic", "pure"), ("gaussian", "zcdp", "zcdp"))


def main() -> None:
    frame = load_demo()
    print("mechanism   target   budget              binding            met    least met  answer ms")
    for mechanism, composition, kind in SETUPS:
        settings = dataclasses.replace(
            RATIO.default_settings(), mechanism=mechanism, composition=composition
        )
        stats = RATIO.statistics(frame, GroupingSpec(by=("race", "sex")).build(frame), settings)
        model = RATIO.error_model(stats, settings, budget_kind=kind)
        for half_width in TARGETS:
            started = time.perf_counter()
            answer = smallest_budget(model, AccuracyTarget(half_width))
            seconds = time.perf_counter() - started
            check = RATIO.check_accuracy(
                stats, settings, answer.budget, answer.target, replicates=REPLICATES, rng=1
            ).set_index("estimate")
            print(
                f"{mechanism:<10}  ±{half_width:<6g} {str(answer.budget):<19} "
                f"{answer.binding:<18} {check.loc[answer.binding, 'met']:.3f}  "
                f"{check['met'].min():.3f}      {seconds * 1000:.0f}"
            )


if __name__ == "__main__":
    main()
