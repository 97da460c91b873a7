"""The cost of a plan that spends its header's budget whole, once."""

from __future__ import annotations

from dpcore.foundations.accounting import Budget
from dpcore.release.plan import PlanHeader

__all__ = ["ChargesWholeBudget"]


class ChargesWholeBudget:
    """A :class:`~dpcore.release.plan.ReleasePlan`'s ``cost`` for a plan that runs its
    mechanism once with the whole budget of its ``header``, or once per group on disjoint
    groups, which compose in parallel (McSherry 2009, Thm. 4): the release costs that budget."""

    header: PlanHeader

    @property
    def cost(self) -> Budget:
        return self.header.budget
