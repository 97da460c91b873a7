"""Committing a planned release: vetted noise, one charge to the ledger, a record to keep.

A *plan* says what will be released (statistic, strata, estimator, parameters, budget) without
touching the noise. :func:`release` then, in order:

1. derives an idempotency key from the plan's content and its data's identity
   (:func:`plan_key`): the same plan on the same data is released once, so a second click, a
   rerun, a browser refresh, or the same plan committed from the command line or a script
   returns the recorded release and spends nothing;
2. refuses a plan the ledger cannot afford (``BudgetExceededError``: Requested / Remaining /
   Difference) before any noise is drawn;
3. runs the estimator with the chosen noise source — OpenDP's vetted samplers for a real release;
4. records cost and DP outputs in the ledger in one transaction (:meth:`Ledger.spend`), which
   states what the data's people have lost in all (``cumulative_loss`` in the metadata).

Only DP outputs leave this module: estimates, noise intervals computed from them and from public
parameters, and the public shares. Raw statistics of the data never enter a record.

Before the commit, every plan's ``preview()`` (:mod:`.preview`) says per group what the release
would publish: the error to expect and which groups would be withheld (a curator's view).

The exports (:func:`to_csv`, :func:`to_json`, :func:`to_script`) work from a record alone, so any
past release in the ledger can be downloaded again.
"""

# Each module names its public API in `__all__`; the package re-exports exactly those names.
from dpcore.release import commit, exports, plan, preview
from dpcore.release.commit import *
from dpcore.release.exports import *
from dpcore.release.plan import *
from dpcore.release.preview import *

__all__ = [*plan.__all__, *commit.__all__, *exports.__all__, *preview.__all__]
