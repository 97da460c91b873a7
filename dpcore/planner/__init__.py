"""The planner: from the accuracy people need to the budget it costs
(:mod:`dpcore.planner.accuracy`), and the frontier of stratification choices
(:mod:`dpcore.planner.frontier`)."""

from dpcore.planner.accuracy import *
