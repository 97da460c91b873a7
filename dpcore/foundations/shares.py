r"""Public group shares: the weights that recombine group estimates into a population estimate.

The stratified estimate of the population mean recombines group estimates with weights
:math:`w_g = |G_g| / n` (Rosenblatt, Stoyanovich & Musco, AAAI 2024, eq. 3), which the paper
assumes are public. :class:`PublicShares` holds such weights together with where they came from:
the group counts of the data treated as public (:func:`shares_from_counts`), a user-supplied
table (:func:`shares_from_table`), or a disjoint public holdout (:func:`holdout_mask`,
:func:`shares_from_holdout`).

The functions take the groups as a :class:`~dpcore.foundations.grouping.Grouping` (anything with ``labels``,
``sizes``, ``report`` and ``assign``); they never read a value column.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from dpcore.foundations.errors import NeedsFixedShares, NotChosenYet
from dpcore.foundations.labels import OTHER_LABEL, list_labels, plural
from dpcore.foundations.small_groups import NoisyCountRule
from dpcore.foundations.validation import (
    as_rng,
    data_frame,
    open_unit_interval,
    require_columns,
    require_table_columns,
    shown,
)

if TYPE_CHECKING:
    from dpcore.foundations.grouping import Grouping

__all__ = [
    "HOLDOUT_SEED",
    "PublicShares",
    "NOISY_COUNTS_DESCRIPTION",
    "SHARE_SOURCES",
    "ShareSource",
    "holdout_mask",
    "noisy_count_shares",
    "require_fixed_shares",
    "share_file_rows",
    "share_values",
    "shares_from_counts",
    "shares_from_holdout",
    "shares_from_noisy_counts",
    "shares_from_table",
    "split_holdout",
]

ShareSource = Literal["data", "table", "holdout", "noisy_counts"]
SHARE_SOURCES: tuple[ShareSource, ...] = ("data", "table", "holdout", "noisy_counts")
NOISY_COUNTS_DESCRIPTION = (
    "The release's own noisy group counts (differentially private, paid for with the release)"
)

HOLDOUT_SEED = 20240101
"""Seed of the holdout split, fixed so that the split (and every cache and release) is stable."""


@dataclass(frozen=True, eq=False)
class PublicShares:
    r"""Public group proportions :math:`w_g = |G_g| / n` used to recombine group estimates.

    The stratified population estimate is :math:`\hat p_{strat} = \sum_g w_g \hat p_g`
    (AAAI 2024, eq. 3); the paper assumes the :math:`w_g` are public.

    Attributes
    ----------
    values
        ``(k,)`` nonnegative, summing to 1, aligned with the groups' labels.
    source
        ``"data"`` (group counts of the private data treated as public), ``"table"``
        (user-supplied), ``"holdout"`` (a disjoint public part of the data) or
        ``"noisy_counts"`` (:func:`shares_from_noisy_counts`: a release recombines with shares
        drawn with it, and ``values`` are only the curator's reference).
    description
        One sentence for the UI saying where the shares come from.
    labels
        The group labels the shares are aligned with (empty if not recorded).
    rule
        With ``source="noisy_counts"``: the small-group rule a release applies to its own
        noisy counts (:class:`~dpcore.foundations.small_groups.NoisyCountRule`), or None (every group
        released).
    """

    values: np.ndarray
    source: ShareSource
    description: str
    labels: tuple[str, ...] = ()
    rule: NoisyCountRule | None = None

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=np.float64)
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"`values` must be a non-empty 1-D array, got shape {values.shape}")
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError(f"`values` must be finite and >= 0, got {shown(values)}")
        if not math.isclose(float(values.sum()), 1.0, rel_tol=0, abs_tol=1e-9):
            raise ValueError(f"`values` must sum to 1, got a sum of {values.sum()!r}")
        if self.source not in SHARE_SOURCES:
            raise ValueError(f"`source` must be one of {SHARE_SOURCES}, got {self.source!r}")
        labels = tuple(self.labels)
        if labels and len(labels) != values.size:
            raise ValueError(
                f"`labels` must have one label per share ({values.size}), got {len(labels)}"
            )
        if self.rule is not None and self.source != "noisy_counts":
            raise ValueError("only shares drawn from a release's noisy counts carry a `rule`")
        values.setflags(write=False)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "labels", labels)

    @property
    def drawn_with_release(self) -> bool:
        """True when a release recombines with its own noisy counts
        (:func:`noisy_count_shares`) rather than with :attr:`values`."""
        return self.source == "noisy_counts"

    def restricted(self, keep: np.ndarray) -> PublicShares:
        """The shares of the groups ``keep`` (a boolean mask), rescaled to sum to 1.

        For an analysis that has to leave out groups with no usable value: the population it
        estimates is then the remaining groups', and the description says so.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.all():
            return self
        kept = self.values[keep]
        total = float(kept.sum())
        if total <= 0:
            raise ValueError("the groups left have no public share; nothing can be recombined")
        left_out = int((~keep).sum())
        return PublicShares(
            values=kept / total,
            source=self.source,
            description=(
                f"{self.description}; rescaled over the {plural(int(keep.sum()), 'group')} "
                f"estimated ({plural(left_out, 'group')} left out)"
            ),
            labels=tuple(lab for lab, k in zip(self.labels, keep, strict=True) if k),
            rule=self.rule,
        )


def share_values(shares: PublicShares | np.ndarray | list[float], k: int) -> np.ndarray:
    """Recombination weights as a (k,) array: nonnegative, finite, summing to 1."""
    values = np.asarray(shares.values if isinstance(shares, PublicShares) else shares, dtype=float)
    if values.shape != (k,):
        raise ValueError(f"`shares` must have one entry per group ({k}), got shape {values.shape}")
    if not np.all(np.isfinite(values) & (values >= 0)) or not np.isclose(values.sum(), 1.0):
        raise ValueError(f"`shares` must be nonnegative and sum to 1, got {shown(values)}")
    return values


def noisy_count_shares(counts: np.ndarray) -> np.ndarray:
    r"""Recombination weights from a release's own noisy group counts :math:`\tilde n_g`.

    .. math:: w_g = \frac{\max(\tilde n_g, 0)}{\sum_h \max(\tilde n_h, 0)}

    The counts are DP outputs (Laplace or Gaussian noise on each group's count, sensitivity 1
    under add/remove-one, Dwork & Roth 2014 §3.3), so the weights are post-processing and cost
    nothing more. They estimate the shares :math:`n_g/n` that AAAI 2024 (eq. 3) assumes public.
    Our choices, where the paper says nothing: a negative noisy count counts as 0 (a group
    cannot hold fewer than no one), and when every count is at most 0 the weights are equal,
    1/k, since the release then carries no information on the groups' sizes. A consequence
    to know: a declared group with no rows still gets a positive share about half of the time
    (:math:`E\max(\mathrm{Lap}(b), 0) = b/2`), and with it its noise-only mean; declare only
    categories that can occur.

    ``counts`` has shape ``(k,)`` or ``(replicates, k)``; so do the weights, each row summing
    to 1.
    """
    positive = np.maximum(np.asarray(counts, dtype=float), 0.0)
    total = positive.sum(axis=-1, keepdims=True)
    k = positive.shape[-1]
    return np.where(total > 0, positive / np.where(total > 0, total, 1.0), 1.0 / k)


def shares_from_noisy_counts(
    grouping: Grouping, rule: NoisyCountRule | None = None
) -> PublicShares:
    """Shares a release takes from its own noisy group counts (:func:`noisy_count_shares`),
    with the small groups merged or dropped by ``rule`` from those counts (None: none).

    Only an estimator that keeps group sizes private draws those counts (the Laplace or
    Gaussian mean with private sizes); analyses that recombine with fixed public shares refuse
    this source (:func:`require_fixed_shares`). The returned ``values`` are the exact counts'
    proportions :math:`n_g/n` the noisy shares estimate: the curator's reference for previews
    and simulations (the truth they are scored against), never exported.
    """
    grouping = _check_grouping(grouping, ("labels", "sizes"))
    sizes = np.asarray(grouping.sizes, dtype=float)
    return PublicShares(
        values=sizes / sizes.sum(),
        source="noisy_counts",
        description=NOISY_COUNTS_DESCRIPTION,
        labels=tuple(grouping.labels),
        rule=rule,
    )


def require_fixed_shares(shares: PublicShares, analysis: str) -> PublicShares:
    """Refuse shares drawn with a release for an analysis that recombines with fixed ones."""
    if shares.drawn_with_release:
        raise NeedsFixedShares(
            f"{analysis} treats every group's size as public and recombines the groups with "
            "fixed shares, but the Strata page takes them from the release's noisy counts, "
            "which only the mean with private group sizes and synthetic data draw. On the "
            "Strata page, take the shares from a table of public shares, a holdout split, or "
            "the data's own counts declared public (each group's exact size is then published)."
        )
    return shares


def _check_grouping(grouping: object, needs: tuple[str, ...] = ("labels", "sizes", "report")):
    if not all(hasattr(grouping, name) for name in needs):
        raise TypeError(f"`grouping` must be a Grouping, got {type(grouping).__name__}")
    return grouping


def shares_from_counts(grouping: Grouping) -> PublicShares:
    """Group counts of the data, :math:`n_g / n`, treated as public.

    This is the paper's setting when the group sizes are known publicly (e.g. from a census).
    The counts of the uploaded data are *not* privacy-protected; the UI must say so. Any groups
    with ``labels`` and ``sizes`` will do (e.g. a mean's
    :class:`~dpcore.analyses.mean.statistics.GroupValues`, whose sizes count usable values).
    """
    grouping = _check_grouping(grouping, ("labels", "sizes"))
    sizes = np.asarray(grouping.sizes, dtype=float)
    return PublicShares(
        values=sizes / sizes.sum(),
        source="data",
        description="The data's own group counts, declared public",
        labels=tuple(grouping.labels),
    )


SHARE_COLUMNS = ("group", "share")
"""The columns of a table of public shares, whether passed as a DataFrame or uploaded."""


def _table_items(table: object) -> list[tuple[str, object]]:
    if isinstance(table, pd.DataFrame):
        require_table_columns(table, SHARE_COLUMNS, "`table` as a DataFrame", "group")
        items = list(zip(table["group"].tolist(), table["share"].tolist(), strict=True))
    elif isinstance(table, pd.Series):
        items = list(zip(table.index.tolist(), table.tolist(), strict=True))
    elif isinstance(table, Mapping):
        items = list(table.items())
    else:
        raise TypeError(
            "`table` must be a mapping {group: share}, a pandas Series indexed by group, or a "
            f"DataFrame with columns 'group' and 'share', got {type(table).__name__}"
        )
    out = [(str(g).strip(), s) for g, s in items]
    dups = sorted(g for g, count in Counter(g for g, _ in out).items() if count > 1)
    if dups:
        raise ValueError(
            f"The table of public shares lists these groups more than once: {list_labels(dups)}"
        )
    return out


def share_file_rows(
    table: pd.DataFrame, groups: Sequence[str] | None = None
) -> tuple[tuple[str, float], ...]:
    """The (group, share) rows of a public shares file (columns ``group`` and ``share``, read
    as text, e.g. ``pd.read_csv(..., dtype=str, keep_default_na=False)``), checked row by row.

    Shares may be proportions, percentages or counts (:func:`shares_from_table` rescales
    them). Every problem is named with its row, counting the header as row 1 as a spreadsheet
    does: an empty group, a group listed twice, a share that is not a number or is negative,
    and — when ``groups`` (the known labels) is given — a group that is not one of them. Groups
    missing from the file are not an error here: the caller lists them (a release needs every
    share, :func:`shares_from_table`). Other columns are ignored.
    """
    table = data_frame("table", table)
    require_table_columns(table, SHARE_COLUMNS, "a shares file", "group")
    if table.empty:
        raise ValueError("the shares file has no rows; list one group and its share per row")
    known = None if groups is None else set(groups)
    rows, problems, first_row = [], [], {}
    for i, cells in enumerate(zip(table["group"], table["share"], strict=True)):
        row, (group, text) = i + 2, ("" if pd.isna(c) else str(c).strip() for c in cells)
        problem = _share_row_problem(group, text, known, first_row.get(group))
        if problem is not None:
            problems.append(f"row {row}: {problem}")
            continue
        first_row[group] = row
        rows.append((group, float(text)))
    if problems:
        shown = "; ".join(problems[:5]) + ("; …" if len(problems) > 5 else "")
        raise ValueError(
            f"{plural(len(problems), 'row')} of the shares file cannot be used (counting the "
            f"header as row 1): {shown}"
        )
    return tuple(rows)


def _share_row_problem(
    group: str, text: str, known: set[str] | None, earlier: int | None
) -> str | None:
    if not group:
        return "the group is empty; write the group's label or delete the row"
    if earlier is not None:
        return f"“{group}” is listed again (first on row {earlier}); keep one of the two rows"
    if known is not None and group not in known:
        return f"“{group}” is not one of the groups; write a label exactly as the table shows it"
    if not text:
        return "the share is empty; write the group's share or delete the row"
    try:
        share = float(text)
    except ValueError:
        return f"the share “{text}” is not a number; write it as 0.12, 12 or 1200, without % or ,"
    if not math.isfinite(share) or share < 0:
        return f"the share {text} is not a number of at least 0; write the group's share"
    return None


def shares_from_table(
    grouping: Grouping, table: Mapping[str, float] | pd.Series | pd.DataFrame
) -> PublicShares:
    """User-supplied public shares, e.g. census proportions, aligned with ``grouping.labels``.

    Parameters
    ----------
    grouping
        The groups the shares are for.
    table
        ``{group label: share}``, a Series indexed by group label, or a DataFrame with columns
        ``"group"`` and ``"share"``. Shares may be proportions, percentages or counts: they are
        rescaled to sum to 1 (the description says so when the total was not 1).

    Returns
    -------
    PublicShares
        ``source="table"``.

    Raises
    ------
    NotChosenYet
        No share at all (a table just chosen).
    ValueError
        A group without a share (all missing ones are listed); a group not in ``grouping``
        (listed); a negative, NaN or infinite share (groups named); all shares zero; a group
        listed twice.

    Notes
    -----
    Labels are compared after stripping surrounding whitespace. The share of
    ``"Other (merged)"`` may be given directly or as the shares of all the groups that were
    merged into it (then they are added up). Shares of groups that were dropped as too small are
    ignored (those rows are not estimated).
    """
    grouping = _check_grouping(grouping)
    items = _table_items(table)
    labels = tuple(grouping.labels)
    if not items:
        raise NotChosenYet(
            f"No public shares entered yet: in the Strata page's table, give a share for each "
            f"of the {plural(len(labels), 'group')} (a proportion, a percentage or a count), or "
            "upload a file of groups and their shares."
        )
    known = set(labels)
    merged = set(grouping.report.merged_groups)
    dropped = {*grouping.report.dropped_groups, *grouping.report.empty_groups}
    keys = {g for g, _ in items}

    extra = [g for g, _ in items if g not in known | merged | dropped]
    if extra:
        raise ValueError(
            f"The table of public shares has shares for {plural(len(extra), 'group')} that are not among the "
            f"groups: {list_labels(extra)}. Expected labels like "
            f"{list_labels(list(labels)[:3])}"
        )
    values: dict[str, float] = {}
    bad: list[str] = []
    for g, s in items:
        if isinstance(s, bool) or not isinstance(s, Real | np.integer | np.floating):
            try:
                s = float(s)  # e.g. numeric text from a data editor
            except (TypeError, ValueError):
                bad.append(g)
                continue
        s = float(s)
        if not math.isfinite(s) or s < 0:
            bad.append(g)
        values[g] = s
    if bad:
        raise ValueError(
            f"Public shares must be numbers of 0 or more; these groups have a negative, missing, "
            f"infinite or non-numeric share: {list_labels(bad)}"
        )
    given_merged = sorted(keys & merged)
    if OTHER_LABEL in known and OTHER_LABEL not in keys and given_merged:
        absent = sorted(merged - keys)
        if not absent:
            values[OTHER_LABEL] = sum(values[g] for g in given_merged)
            keys = keys | {OTHER_LABEL}
        else:
            raise ValueError(
                f"The table of public shares gives shares for some of the groups merged into {OTHER_LABEL!r} but is "
                f"missing {list_labels(absent)}; give a share for each of them, or one share "
                f"for {OTHER_LABEL!r}"
            )
    elif OTHER_LABEL in keys and given_merged:
        raise ValueError(
            f"The table of public shares gives a share for {OTHER_LABEL!r} and also for groups merged into it "
            f"({list_labels(given_merged)}); give one or the other"
        )
    missing = [lab for lab in labels if lab not in keys]
    if missing:
        raise ValueError(
            f"The table of public shares has no share for {plural(len(missing), 'group')}: "
            f"{list_labels(missing)}; give a share for every group"
        )
    raw = np.array([values[lab] for lab in labels], dtype=np.float64)
    total = float(raw.sum())
    if total <= 0:
        raise ValueError("The public shares are all zero; at least one group needs a share > 0")
    description = "User-supplied table of public shares"
    if not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):
        description += f" (rescaled from a total of {total:g} to sum to 1)"
    ignored = sorted(keys & dropped)
    if ignored:
        description += f"; shares of {plural(len(ignored), 'dropped small group')} ignored"
    return PublicShares(values=raw / total, source="table", description=description, labels=labels)


def holdout_mask(
    rows: int, fraction: float, *, rng: np.random.Generator | int | None
) -> np.ndarray:
    """``(rows,)`` bool: a simple random sample without replacement of ``round(fraction * rows)``
    rows, the public holdout.

    Raises ``ValueError`` when either part would be empty.
    """
    fraction = open_unit_interval("fraction", fraction)
    gen = as_rng(rng)
    n_public = int(round(fraction * rows))
    if n_public == 0 or n_public == rows:
        raise ValueError(
            f"`fraction` = {fraction!r} of {rows:,} rows leaves one part empty; use a fraction "
            f"between {1 / max(rows, 1):.3g} and {1 - 1 / max(rows, 1):.3g} or more rows"
        )
    public = np.zeros(rows, dtype=bool)
    public[gen.choice(rows, size=n_public, replace=False)] = True
    return public


def split_holdout(
    df: pd.DataFrame, fraction: float, *, rng: np.random.Generator | int | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split rows into a private part and a disjoint public holdout (:func:`holdout_mask`).

    Both parts keep the original row order and index.

    Notes
    -----
    The rows of the public part are treated as public: their privacy is not protected. This
    models having a public survey of the same population; use it to illustrate, and prefer
    genuinely public shares for a real release.
    """
    df = data_frame("df", df)
    public = holdout_mask(len(df), fraction, rng=rng)
    return df.iloc[~public], df.iloc[public]


def shares_from_holdout(grouping: Grouping, public_df: pd.DataFrame) -> PublicShares:
    """Group proportions in a public holdout, grouped by the same rules as ``grouping``.

    Parameters
    ----------
    grouping
        The groups of the private part.
    public_df
        The public part, disjoint from the private rows (see :func:`holdout_mask`).

    Returns
    -------
    PublicShares
        ``source="holdout"``.

    Notes
    -----
    Rows are grouped with ``grouping.by`` and its edges and ``"(missing)"`` exactly as the
    private rows. A private group absent from the holdout gets share 0. Holdout rows whose group
    is not one of ``grouping``'s groups (groups merged or dropped as too small there, or unseen)
    count toward ``"Other (merged)"`` if that group exists, and are ignored otherwise.

    Raises
    ------
    ValueError
        Missing grouping columns, or no holdout row falls in any group.
    """
    grouping = _check_grouping(grouping)
    public_df = data_frame("public_df", public_df)
    require_columns(public_df, grouping.by, owner="public_df")
    n_rows = len(public_df)
    if n_rows == 0:
        raise ValueError("`public_df` has no rows; a public holdout needs rows to count")
    codes = grouping.assign(public_df, unseen_to_other=True)
    counted = codes[codes >= 0]
    if counted.size == 0:
        raise ValueError(
            "none of the holdout rows fall in the groups of the data; check that the holdout "
            "comes from the same table"
        )
    counts = np.bincount(counted, minlength=len(grouping.labels))
    total_rows = n_rows + grouping.report.n_input_rows
    description = (
        f"Public holdout: {100 * n_rows / total_rows:.3g}% of rows ({n_rows:,}), disjoint from "
        "the data used for estimation"
    )
    absent = int(np.sum(counts == 0))
    if absent:
        description += f"; {plural(absent, 'group')} absent from the holdout get share 0"
    return PublicShares(
        values=counts / counts.sum(),
        source="holdout",
        description=description,
        labels=tuple(grouping.labels),
    )
