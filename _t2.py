import time, pickle, numpy as np
from dpcore.analyses import MEAN
from dpcore.analyses.mean import MeanSettings
from dpcore.datasets import load_demo
from dpcore.grouping import GroupingSpec
from dpcore.planner import AccuracyTarget, smallest_budget, shortfall
from dpcore.accounting import ZCDP
frame = load_demo()
s = MeanSettings(estimator="coinpress")
stats = MEAN.statistics(frame, GroupingSpec(by=("race","sex")).build(frame), s)
t=time.perf_counter(); m = MEAN.error_model(stats, s); print("model", time.perf_counter()-t)
print(len(pickle.dumps(m)))
for h in (2.0, 1.0, 0.5):
    t=time.perf_counter(); a = smallest_budget(m, AccuracyTarget(h)); print("answer", time.perf_counter()-t)
    print(a.budget, a.binding, a.notes); print(a.table)
    t=time.perf_counter()
    c = MEAN.check_accuracy(stats, s, a.budget, a.target, replicates=2000, rng=5); print(time.perf_counter()-t)
    print(c)
print(shortfall(m, AccuracyTarget(1.0), ZCDP(0.05)))
