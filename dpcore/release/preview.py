"""What a commit would publish, per group, before anything is spent (the curator's view).

Every plan has a ``preview()`` that returns :func:`preview_frame`'s tidy table: one row per
released quantity (a group's estimate, a coefficient, the population's), with the error to
expect in the value's units, the expected half-width of its interval, and why it would be
withheld. Plans of estimates share :func:`simulated_preview`: a few releases drawn with seeded
numpy noise (:class:`~dpcore.foundations.mechanisms.SimulationNoise`), which never touches a ledger.

**Privacy.** A preview reads the confidential rows (exact sizes included, through the plan's
simulated runs) and is never exported: it is for the person about to commit, and the page says
so.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpcore.foundations.mechanisms import SimulationNoise
from dpcore.foundations.validation import as_rng, positive_int

__all__ = [
    "PREVIEW_COLUMNS",
    "PREVIEW_REPLICATES",
    "nothing_informative",
    "nothing_published",
    "preview_frame",
    "simulated_preview",
]

PREVIEW_COLUMNS = ("group", "quantity", "expected_error", "half_width", "withheld")
"""The columns of every preview: the group (or "All"), what is released for it, the typical
error of the released value in its units (the spread of its noise: a root-mean-square error
about the noise-free value), the expected half-width of its interval (NaN without intervals),
and why it would be withheld ("" when it would be published)."""

NOT_FOUND = "not in the release: which groups are released depends on noisy counts"
"""Why a group is missing from a simulated release whose groups depend on noisy counts (found
privately, or small groups merged by noisy counts)."""

PREVIEW_REPLICATES = 20
"""Simulated releases per preview: enough for errors to about ±20% (the spread of a standard
deviation from 20 draws), few enough to redraw as a slider moves."""


def preview_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """A preview table from ``rows`` (dicts with :data:`PREVIEW_COLUMNS`), in that order."""
    frame = pd.DataFrame(list(rows), columns=list(PREVIEW_COLUMNS))
    for column in ("expected_error", "half_width"):
        frame[column] = pd.to_numeric(frame[column])
    return frame


def nothing_informative(preview: pd.DataFrame) -> str | None:
    """One sentence when a commit would publish nothing informative: every row of its preview
    (:data:`PREVIEW_COLUMNS`) withheld in every simulated release, with the most common reason;
    None when something would be published. A commit is then refused: spending budget on a
    release that shows nothing breaks the budget's promise."""
    reasons = preview["withheld"]
    if preview.empty or (reasons == "").any() or reasons.str.startswith("in ").any():
        return None
    return (
        f"Nothing informative would be published: every output of this plan is withheld in "
        f"every simulated release ({reasons.mode().iloc[0]})."
    )


def nothing_published(outputs: Sequence[dict]) -> str | None:
    """One sentence when a release, after its noise, withheld every output (each row without an
    estimate), with the most common reason; None when it published something."""
    if not outputs or "estimate" not in outputs[0]:  # none, or records (synthetic, sampled)
        return None
    if any(row.get("estimate") is not None for row in outputs):
        return None
    flags = pd.Series([row.get("flag") or "no estimate" for row in outputs])
    return (
        f"After its noise, this release withheld every output ({flags.mode().iloc[0]}): "
        "nothing informative was published, and the budget it spent stays spent."
    )


def _withheld(flags: pd.Series) -> str:
    """The reason a row would be withheld: always, sometimes (with how often), or never."""
    reasons = flags[flags != ""]
    if reasons.empty:
        return ""
    reason = reasons.mode().iloc[0]
    if len(reasons) == len(flags):
        return reason
    return f"in {len(reasons) / len(flags):.0%} of simulated releases: {reason}"


def simulated_preview(
    plan: object,
    *,
    replicates: int = PREVIEW_REPLICATES,
    rng: np.random.Generator | int | None = 0,
) -> pd.DataFrame:
    r"""The preview of a plan whose rows are estimates (:class:`~dpcore.release.ReleaseRow`),
    from ``replicates`` runs with numpy noise.

    Per released row (level, group and, for several coefficients, the coefficient): the
    standard deviation of its published estimate over the runs (the noise's error; for the
    unbiased estimators here it is the root-mean-square error about the noise-free value), the
    median of its interval's half-width :math:`(\text{high} - \text{low})/2`, and its withheld
    reason (the row's ``flag``, "no estimate" when it has none, :data:`NOT_FOUND` for the runs
    it is missing from), with how often it occurred when it did not occur every time. Rows are
    matched across runs by level, group and coefficient, in their order of first appearance.
    """
    replicates = positive_int("replicates", replicates)
    generator = as_rng(rng)
    runs = [
        pd.DataFrame([row.to_dict() for row in plan.run(SimulationNoise(rng=generator), generator)])
        for _ in range(replicates)
    ]
    frame = pd.concat(runs, keys=range(replicates), names=["run", "row"]).reset_index()
    for column in ("estimate", "low", "high"):
        frame[column] = pd.to_numeric(frame[column])
    flags = frame["flag"].fillna("") if "flag" in frame else pd.Series("", index=frame.index)
    frame["flag"] = flags.where((flags != "") | frame["estimate"].notna(), "no estimate")
    # A row is known by what it is, not by its place: a release that finds its groups
    # privately publishes a different set of groups in each run.
    identity = [c for c in ("level", "group", "coefficient") if c in frame]
    out = []
    for _, runs_of_row in frame.groupby(identity, sort=False, dropna=False):
        first = runs_of_row.iloc[0]
        published = runs_of_row[runs_of_row["flag"] == ""]
        absent = pd.Series(NOT_FOUND, index=range(replicates - len(runs_of_row)))
        out.append(
            {
                "group": first["group"],
                "quantity": first.get("coefficient", "") or "",
                "expected_error": published["estimate"].std(ddof=1)
                if len(published) > 1
                else np.nan,
                "half_width": ((published["high"] - published["low"]) / 2).median(),
                "withheld": _withheld(pd.concat([runs_of_row["flag"], absent])),
            }
        )
    return preview_frame(out)
