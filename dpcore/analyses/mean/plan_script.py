"""The Python script a mean's release records: it rebuilds the plan from the same file (or, for
sums an engine computed, from the data the engine reads), so the release can be redone and
checked (:meth:`~dpcore.analyses.mean.plan.MeanPlan.script_body`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpcore.analyses.mean.found_bounds import script_argument
from dpcore.foundations.privacy_unit import ROW, PrivacyUnit
from dpcore.release.plan import init_arguments

if TYPE_CHECKING:
    from dpcore.analyses.mean.plan import MeanPlan

__all__ = ["mean_script"]


def mean_script(plan: MeanPlan) -> str:
    """The lines that rebuild ``plan`` from a frame named ``frame``."""
    estimator = type(plan.estimator).__name__
    arguments = ", ".join(f"{k}={v!r}" for k, v in init_arguments(plan.estimator).items())
    recipe = getattr(plan.values, "recipe", "")
    if recipe:
        header = plan.header.script(dataset="aggregated.dataset", prelude=recipe)
        values = "values = aggregated.stats\n"
    else:
        header = plan.header.script()
        values = (
            f"{_unit_import(plan.unit)}values = GroupValues.from_grouping("
            f"header.spec.build(frame), frame, {plan.value!r}{_unit_argument(plan.unit)})\n"
        )
    return (
        f"{header}"
        f"from dpcore import {estimator}, GroupValues, MeanPlan"
        f"{'' if plan.bounds is None else ', PrivateBounds'}\n\n"
        f"{values}"
        "plan = MeanPlan(\n"
        "    values=values,\n"
        "    header=header,\n"
        f"    estimator={estimator}({arguments}),\n"
        f"    strategy={plan.strategy!r},\n"
        f"    global_fraction={plan.global_fraction!r},\n"
        f"{_sampling_error_arguments(plan)}"
        f"{script_argument(plan.bounds)}"
        ")\n"
    )


def _sampling_error_arguments(plan: MeanPlan) -> str:
    if not plan.sampling_error:
        return ""
    return f"    sampling_error=True,\n    variance_fraction={plan.variance_fraction!r},\n"


def _unit_import(unit: PrivacyUnit) -> str:
    return "" if unit == ROW else "from dpcore.foundations.privacy_unit import PrivacyUnit\n"


def _unit_argument(unit: PrivacyUnit) -> str:
    """The privacy unit as the script's last argument (none for one row per person, so that
    scripts of such releases read as they always did)."""
    if unit == ROW:
        return ""
    return f", PrivacyUnit({unit.column!r}, max_groups={unit.max_groups}, max_rows={unit.max_rows})"
