"""Committing a planned release: vetted noise, one charge to the ledger, a record to keep.

A *plan* says what will be released (statistic, strata, estimator, parameters, budget) without
touching the noise. :func:`release` then, in order:

1. derives an idempotency key from the plan's content (:func:`plan_key`): the same plan against
   the same ledger is released once, so a second click, a rerun or a browser refresh returns the
   recorded release and spends nothing;
2. refuses a plan the ledger cannot afford (``BudgetExceededError``: Requested / Remaining /
   Difference) before any noise is drawn;
3. runs the estimator with the chosen noise source — OpenDP's vetted samplers for a real release;
4. records cost and DP outputs in the ledger in one transaction (:meth:`Ledger.spend`).

Only DP outputs leave this module: estimates, noise intervals computed from them and from public
parameters, and the public shares. Raw statistics of the data never enter a record.

The exports (:func:`to_csv`, :func:`to_json`, :func:`to_script`) work from a record alone, so any
past release in the ledger can be downloaded again.
"""

from dpcore.release.commit import ReleaseRecord, budget_in_units, plan_key, release
from dpcore.release.exports import escape_cell, to_csv, to_json, to_script
from dpcore.release.plan import (
    DatasetRef,
    PlanHeader,
    ReleaseOutput,
    ReleasePlan,
    ReleaseRow,
    SyntheticRow,
    fingerprint_frame,
    init_arguments,
)

__all__ = [
    "DatasetRef",
    "PlanHeader",
    "ReleaseOutput",
    "ReleasePlan",
    "ReleaseRecord",
    "ReleaseRow",
    "SyntheticRow",
    "budget_in_units",
    "escape_cell",
    "fingerprint_frame",
    "init_arguments",
    "plan_key",
    "release",
    "to_csv",
    "to_json",
    "to_script",
]
