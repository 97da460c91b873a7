"""The planner: from the accuracy people need to the budget it costs
(:mod:`dpcore.planner.accuracy`), and a plan of several releases sharing what the ledger has
left (:mod:`dpcore.planner.portfolio`). Each analysis provides its error model and, where it has
one, its frontier of stratification choices (the mean's: :mod:`dpcore.analyses.mean.frontier`)."""

from dpcore.planner.accuracy import *
from dpcore.planner.error_shapes import *
from dpcore.planner.portfolio import *
from dpcore.planner.simulated import *
from dpcore.planner.split import *
