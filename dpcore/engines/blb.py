r"""A bag of little bootstraps from an engine's pass (the resampling of GVDP): subsets and
bootstrap weights drawn from a salted hash of each privacy unit, and per (group, subset,
resample) the weighted sums a fit that is linear in row weights (the mean, OLS) is solved from
(:func:`dpcore.analyses.gvdp.aggregate.bag_estimates`).

Covington et al. (the "paper"), Alg. 2 partitions the n rows of a run at random into k subsets
and draws r multinomial resamples of size n on each. In memory that is a permutation and
multinomial counts (:func:`dpcore.analyses.gvdp.blb.partition_and_resample`); where the rows stay
(files on disk, Spark) the same draws come from each row's own key instead, so that one pass
computes everything and every engine draws the same thing:

**The key.** With a person column, a row's key is its person's id: all of a person's rows (those
the contribution bound keeps) fall in one subset of each group and share one weight per resample
(the cluster bootstrap). Without one, the key is the row's content — its cell labels and its
model values, each double written exactly as :math:`M\,2^{E-52}` with integers M and E
(:func:`double_keys`) — and its *copy number* among the rows of identical content (1, 2, …).
Rows of equal content are interchangeable in every statistic, so which of them is copy 1 does
not matter: the keys are a function of the multiset of rows, not of their order, nor of how they
are split into Parquet parts or Spark partitions. A file's name and row number would be a stable
key too, but not across engines (pandas has no files) nor across a re-partitioning of the same
rows. Without the copy number identical rows would always share a subset, which for a 0/1 mean
would put every 1 in one subset.

**The hash.** For chunk c = 0, 1, …, r of a key, :math:`a_c` is the c mod 4-th 32-bit word,
read little-endian, of the 16 bytes of ``md5(salt ":" key ":" ⌊c/4⌋)`` (md5 exists alike in
DuckDB SQL — whose ``md5_number_upper``/``_lower`` read those bytes as integers without
parsing hex —, Spark SQL and Python's hashlib; only integers below :math:`2^{63}` are
multiplied, so nothing overflows in Spark's ANSI mode). The salt is drawn per release from the release's random generator (never
from the data) and is a public, data-independent choice.

**The subset** of a row in a run with k subsets is :math:`\lfloor a_0 k / 2^{32} \rfloor`.

**The weight** of a row in resample j = 1..r is :math:`w_j = 1 + (P_j - 1)/\sqrt{k}` with
:math:`P_j \sim \text{Poisson}(1)` drawn by inversion from :math:`u_j = (a_j + ½)/2^{32}`:
:math:`P_j = \#\{t : u_j \ge F(t)\}`, compared as integers (:data:`POISSON_ONE_STEPS`). This
replaces the multinomial count of Alg. 2 line 7: a row's count there is Binomial(n, 1/b) ≈
Poisson(k), whose mean and variance are k; :math:`k\,w_j` has the same two moments, and the fits
here are invariant to scaling the weights. (Poisson(k) itself would need hundreds of comparisons
per draw in SQL; with k = 1 the weight *is* Poisson(1), the Poisson bootstrap of Hanley &
MacGibbon 2006.) The resample's total weight is then ≈ n rather than exactly n, and the
subsets' sizes vary around n/k (Binomial(n, 1/k)) instead of being b or b + 1.

What the paper's guarantee needs, and how this meets it:

- **Privacy** (Thm. C.2 with Sample & Aggregate) rests on the partition: neighbouring datasets
  (one person, or one row, added or removed) must differ in one subset's data per run, whatever
  the resample law. A row's subset and weights depend only on its key and the public salt, so
  adding a person changes only their own subset in each group they are in; adding a row of
  content x adds the key (x, m + 1) when m copies were there, and leaves every other key —
  hence every other subset's rows and weights — as it was. Tested on neighbouring datasets.
- **Coverage** (Assumption 2.4) rests on the bootstrap being consistent: the weighted
  (exchangeable-weight) bootstrap with i.i.d. weights of mean μ and variance σ² estimates the
  sampling variance of a smooth estimator at :math:`(\sigma/\mu)^2 = 1/k` of the subset's, i.e.
  at n rows, to first order (Præstgaard & Wellner 1993; Chamandy et al. 2012 for the Poisson
  bootstrap), as the multinomial does. Checked statistically against the in-memory path.

The fits read, per (group, subset, resample j), :math:`\sum w_j X X^\top` (upper triangle) and
:math:`\sum w_j X y` with X = (1, covariates) and y the outcome (the mean: X = (1), so the fit is
:math:`\sum w y / \sum w`). No row is clipped: GVDP's privacy comes from the partition and
CoinPress' projection of the subset estimates, and clipping rows would bias the estimate away
from the one computed on rows in memory.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import pdtr

from dpcore.engines.base import GROUP, SumsQuery

__all__ = [
    "CHUNK",
    "CHUNKS_PER_HASH",
    "POISSON_ONE_STEPS",
    "SUBSET",
    "BlbQuery",
    "double_keys",
    "row_bag_sums",
    "sum_names",
]

CHUNK_BITS = 32
CHUNK = 2**CHUNK_BITS
"""Each chunk of a key's hash is an integer in [0, 2**32)."""
SUBSET = "__subset"
"""The subset column of :meth:`Engine.blb_sums`'s answer."""
K_COLUMN = "__k"
"""The mapping's column of each group's number of subsets."""
SCALE_COLUMN = "__c"
"""The mapping's column of each group's 1/√k (the weights' spread)."""
CHUNKS_PER_HASH = 4


def _poisson_one_steps() -> tuple[int, ...]:
    r"""The integers :math:`A_t = \lceil F(t)\,2^{32} - ½\rceil`, F the Poisson(1) CDF, below
    :math:`2^{32}`: :math:`u = (a + ½)/2^{32} \ge F(t)` exactly when :math:`a \ge A_t`."""
    steps, t = [], 0
    while True:
        step = math.ceil(float(pdtr(t, 1.0)) * CHUNK - 0.5)
        if step >= CHUNK:
            return tuple(steps)
        steps.append(step)
        t += 1


POISSON_ONE_STEPS = _poisson_one_steps()
"""Poisson(1) by inversion of a 32-bit chunk: :math:`P = \\#\\{t : a \\ge A_t\\}`."""


@dataclass(frozen=True)
class BlbQuery:
    """One bag of little bootstraps over an engine's rows: the rows of ``rows`` (its cells, its
    model columns as inputs — outcome first, then covariates — and its privacy unit), ``r``
    weights per row drawn with ``salt``; ``design`` is p, the coefficients of X = (1,
    covariates) (1 for the mean)."""

    rows: SumsQuery
    resamples: int
    salt: str

    @property
    def design(self) -> int:
        return len(self.rows.inputs)

    @property
    def sums(self) -> tuple[tuple[str, int, tuple[int, ...]], ...]:
        """(name, resample, factors) of every sum: factors index the inputs (0 the outcome y,
        a ≥ 1 the covariate X_a); the weight comes first, X_0 = 1 is left out."""
        return tuple(
            (name, j, factors)
            for j in range(self.resamples)
            for name, factors in sum_names(j, self.design)
        )


def sum_names(j: int, p: int) -> list[tuple[str, tuple[int, ...]]]:
    """The sums of resample ``j`` for p coefficients: ``xx{j}_{a}_{b}`` (a ≤ b) and ``xy{j}_{a}``,
    each with the inputs it multiplies after the weight (left to right, as every engine does)."""
    out = []
    for a in range(p):
        for b in range(a, p):
            out.append((f"xx{j}_{a}_{b}", tuple(i for i in (a, b) if i > 0)))
    for a in range(p):
        out.append((f"xy{j}_{a}", tuple(i for i in (a,) if i > 0) + (0,)))
    return out


def double_keys(x: np.ndarray) -> np.ndarray:
    r"""Each double as text, exactly: ``"{M}p{E}"`` with :math:`x = M\,2^{E-52}`,
    :math:`2^{52} \le |M| < 2^{53}` (``"0p0"`` for zero), as the SQL engines write it."""
    mantissa, exponent = np.frexp(np.asarray(x, dtype=float))
    zero = mantissa == 0
    whole = (mantissa * 2.0**53).astype(np.int64)
    exponent = np.where(zero, 0, exponent - 1)
    return (pd.Series(whole).astype(str) + "p" + pd.Series(exponent).astype(str)).to_numpy()


def _hash_chunks(salt: str, keys: np.ndarray, chunks: int) -> np.ndarray:
    """(rows, chunks) integers: chunk c of each key (module doc). One md5 per key and 4 chunks;
    about 1 µs per md5 in Python."""
    out = np.empty((len(keys), chunks), dtype=np.int64)
    for block in range(math.ceil(chunks / CHUNKS_PER_HASH)):
        suffix = f":{block}"
        digests = b"".join(hashlib.md5(f"{salt}:{key}{suffix}".encode()).digest() for key in keys)
        words = np.frombuffer(digests, dtype="<u4").reshape(len(keys), CHUNKS_PER_HASH)
        first = block * CHUNKS_PER_HASH
        taken = min(CHUNKS_PER_HASH, chunks - first)
        out[:, first : first + taken] = words[:, :taken]
    return out


def subsets_and_weights(
    chunks: np.ndarray, k: np.ndarray, scale: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's subset and its (rows, r) weights from its hash chunks (module doc)."""
    subset = chunks[:, 0] * k // CHUNK
    steps = np.asarray(POISSON_ONE_STEPS, dtype=np.int64)
    counts = (chunks[:, 1:, None] >= steps).sum(axis=-1)
    weights = 1.0 + scale[:, None] * (counts - 1).astype(float)
    return subset, weights


def row_keys(labels: pd.DataFrame, values: np.ndarray, owners: np.ndarray | None) -> np.ndarray:
    """Each row's key (module doc): ``"p|" + person`` with a person column (``owners`` already
    written as text), else ``"r|" + labels + "|" + value keys + "#" + copy number``."""
    if owners is not None:
        return np.char.add("p|", owners.astype(str)) if len(owners) else owners.astype(str)
    parts = [labels[c].astype(str).to_numpy() for c in labels.columns]
    parts += [double_keys(values[:, i]) for i in range(values.shape[1])]
    content = pd.Series(parts[0]) if parts else pd.Series([""] * len(values))
    for part in parts[1:]:
        content = content + "|" + part
    copy = content.groupby(content, sort=False).cumcount() + 1
    return ("r|" + content + "#" + copy.astype(str)).to_numpy()


def row_bag_sums(
    query: BlbQuery,
    labels: pd.DataFrame,
    values: np.ndarray,
    owners: np.ndarray | None,
    mapping: pd.DataFrame,
) -> pd.DataFrame:
    """The pandas engine's :meth:`~dpcore.engines.base.Engine.blb_sums` on its kept rows:
    ``labels`` (cells), ``values`` (the inputs), ``owners`` (person ids as text, or None),
    grouped by ``mapping`` (cells → :data:`GROUP`, :data:`K_COLUMN`, :data:`SCALE_COLUMN`)."""
    by = list(labels.columns)
    joined = labels.reset_index(drop=True).merge(mapping, on=by, how="left")
    inside = joined[GROUP].notna().to_numpy()
    keys = row_keys(labels.loc[inside], values[inside], None if owners is None else owners[inside])
    group = joined.loc[inside, GROUP].to_numpy(np.int64)
    chunks = _hash_chunks(query.salt, keys, query.resamples + 1)
    subset, weights = subsets_and_weights(
        chunks, joined.loc[inside, K_COLUMN].to_numpy(np.int64),
        joined.loc[inside, SCALE_COLUMN].to_numpy(float),
    )  # fmt: skip
    x = values[inside]
    cells = pd.MultiIndex.from_arrays([group, subset], names=[GROUP, SUBSET])
    columns = {"rows": np.ones(len(group), dtype=np.int64)}
    for name, j, factors in query.sums:
        product = weights[:, j]
        for i in factors:
            product = product * x[:, i]
        columns[name] = product
    return pd.DataFrame(columns, index=cells).groupby(level=[0, 1]).sum().reset_index()
