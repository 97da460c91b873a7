"""The planner: from the accuracy people need to the budget it costs
(:mod:`dpcore.planner.accuracy`). Each analysis provides its error model and, where it has one,
its frontier of stratification choices (the mean's: :mod:`dpcore.analyses.mean.frontier`)."""

from dpcore.planner.accuracy import *
