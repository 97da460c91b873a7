r"""A bag of little bootstraps from an engine's pass (the resampling of GVDP): subsets and
bootstrap weights drawn from a salted integer hash of each privacy unit, and per (group,
subset, resample) the weighted sums a fit that is linear in row weights (the mean, OLS) is
solved from (:func:`dpcore.analyses.gvdp.aggregate.bag_estimates`).

Covington et al. (the "paper"), Alg. 2 partitions the n rows of a run at random into k subsets
and draws r multinomial resamples of size n on each. In memory that is a permutation and
multinomial counts (:func:`dpcore.analyses.gvdp.blb.partition_and_resample`); where the rows stay
(files on disk, Spark) the same draws come from each unit's own key instead, so that one pass
computes everything and every engine draws the same thing.

**The key** is a few 32-bit words. With a person column: the person's id (an integer's two
halves, a double's :func:`double_words`, a yes/no as 0/1, a text's first 8 md5 bytes read
little-endian) — all of a person's rows (as the contribution bound weights them) fall in one
subset of their group and share one weight per resample (the cluster bootstrap). Without one:
the row's group, its model values (:func:`double_words` of each) and its *copy number* among
the rows of its group with the same values (1, 2, …). Rows of equal content are
interchangeable in every statistic of their group, so which of them is copy 1 does not matter:
the keys are a function of the multiset of rows, not of their order, nor of how they are split
into Parquet parts or Spark partitions. Without the copy number identical rows would always
share a subset, which for a 0/1 mean would put every 1 in one subset.

**The hash** of a key with words :math:`w_1..w_q` and the release's 32-bit salt σ is
:math:`s = \mathrm{mix}\big(\sigma \oplus \sum_i (w_i A_i \bmod 2^{32}) \bmod 2^{32}\big)`,
with :data:`WORD_MULTIPLIERS` :math:`A_i` (odd, below :math:`2^{31}`) and mix the two-round
xorshift-multiply function of Wellons' hash-prospector (``[16 21f0aaad 15 735a2d97 15]``,
"Prospecting for hash functions", 2018): a bijection of 32-bit words whose output bits each
flip with probability close to ½ when any input bit flips. Every product is of a word below
:math:`2^{32}` by a constant below :math:`2^{31}`, so nothing exceeds :math:`2^{63}`: numpy's
unsigned integers, DuckDB's BIGINT and Spark's long (ANSI mode included) compute exactly the
same integers, and none of these functions depends on a library's version (DuckDB's own
``hash()`` and Spark's ``xxhash64`` differ from each other, and DuckDB's across releases). The
salt is drawn per release from the release's random generator (never from the data) and is a
public, data-independent choice. One hash per key; the draws come from its bits:

**The subset** of a unit in a run with k subsets is :math:`\lfloor s k / 2^{32} \rfloor`.

**The weight** of a unit in resample j = 1..r is :math:`w_j = 1 + (P_j - 1)/\sqrt{k}` with
:math:`P_j = 2 b_j`, :math:`b_j` bit j mod 32 of :math:`\mathrm{mix}(s \oplus T_{\lfloor j/32
\rfloor})` (:data:`BIT_WORDS` :math:`T_t`): the "double or nothing" bootstrap weight, 0 or 2 with
probability ½ each (Owen & Eckles 2012, *Bootstrapping data arrays of arbitrary order*, §3),
whose mean and variance are 1, those of Poisson(1). This replaces the multinomial count of
Alg. 2 line 7: a row's count there is Binomial(n, 1/b) ≈ Poisson(k), whose mean and variance
are k; :math:`k\,w_j` has the same two moments, and the fits here are invariant to scaling the
weights. One bit per resample where a Poisson draw took a 32-bit word and a dozen comparisons.
The resample's total weight is then ≈ n rather than exactly n, and the subsets' sizes vary
around n/k (Binomial(n, 1/k)) instead of being b or b + 1.

What the paper's guarantee needs, and how this meets it:

- **Privacy** (Thm. C.2 with Sample & Aggregate) rests on the partition: neighbouring datasets
  (one person, or one row, added or removed) must differ in one subset's data per run, whatever
  the resample law. A unit's subset and weights depend only on its key and the public salt, so
  adding a person changes only their own subset in each group they are in; adding a row of
  content x adds the key (x, m + 1) when m copies were there, and leaves every other key —
  hence every other subset's rows and weights — as it was (two keys with one hash would only
  share draws: still one subset changes). Tested on neighbouring datasets.
- **Coverage** (Assumption 2.4) rests on the bootstrap being consistent: the weighted
  (exchangeable-weight) bootstrap with i.i.d. weights of mean μ and variance σ² estimates the
  sampling variance of a smooth estimator at :math:`(\sigma/\mu)^2 = 1/k` of the subset's, i.e.
  at n rows, to first order (Præstgaard & Wellner 1993; Owen & Eckles 2012 for double or
  nothing), as the multinomial does. Checked statistically against the in-memory path.

The fits read, per (group, subset, resample j), :math:`\sum w_j X X^\top` (upper triangle) and
:math:`\sum w_j X y` with X = (1, covariates) and y the outcome (the mean: X = (1), so the fit is
:math:`\sum w y / \sum w`). No row is clipped: GVDP's privacy comes from the partition and
CoinPress' projection of the subset estimates, and clipping rows would bias the estimate away
from the one computed on rows in memory.

Pure numpy/pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.engines.base import GROUP, SumsQuery

__all__ = [
    "BIT_WORDS",
    "MASK",
    "MIX",
    "SUBSET",
    "WORD_MULTIPLIERS",
    "BlbQuery",
    "double_words",
    "product_column",
    "raw_sums",
    "row_bag_sums",
    "sum_names",
    "unit_hashes",
    "weigh",
]

MASK = 0xFFFFFFFF
"""Words are 32-bit: every step keeps the low 32 bits."""
MIX = ((16, 0x21F0AAAD), (15, 0x735A2D97), (15, None))
"""The mixer: per step, x ^= x >> shift, then x = x · multiplier mod 2**32 (module doc)."""
WORD_MULTIPLIERS = tuple((0x9E3779B1 * (2 * i + 1)) & 0x7FFFFFFF | 1 for i in range(64))
"""A_i: the i-th word of a key is multiplied by A_i (odd, below 2**31) before the words add."""
BIT_WORDS = tuple((0x85EBCA6B * (t + 1)) & MASK for t in range(64))
"""T_t: the weights of resamples 32t..32t + 31 are the bits of mix(s ^ T_t)."""
SUBSET = "__subset"
"""The subset column of :meth:`Engine.blb_sums`'s answer."""
K_COLUMN = "__k"
"""The mapping's column of each group's number of subsets."""
SCALE_COLUMN = "__c"
"""The mapping's column of each group's 1/√k (the weights' spread)."""
PERSON_TAG, CONTENT_TAG = 1, 2
"""The first word of a person's key and of a row's content key."""


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
    def salt_word(self) -> int:
        """σ: the salt as a 32-bit word (its first 4 sha256 bytes, big-endian)."""
        return int.from_bytes(hashlib.sha256(self.salt.encode()).digest()[:4], "big")

    @property
    def sums(self) -> tuple[tuple[str, int, tuple[int, ...]], ...]:
        """(name, resample, factors) of every sum: factors index the inputs (0 the outcome y,
        a ≥ 1 the covariate X_a); the weight comes first, X_0 = 1 is left out."""
        return tuple(
            (name, j, factors)
            for j in range(self.resamples)
            for name, factors in sum_names(j, self.design)
        )

    @property
    def products(self) -> list[tuple[int, ...]]:
        """The distinct products of inputs the sums multiply, in order (the count, (), aside):
        each engine computes each once per unit, in its column :func:`product_column`."""
        return sorted({factors for _, _, factors in self.sums if factors})


def product_column(factors: tuple[int, ...]) -> str:
    """The per-unit column of the bound-weighted product of the inputs ``factors``."""
    return "__p_" + "_".join(str(i) for i in factors) if factors else "__w"


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


def double_words(x: np.ndarray) -> list[np.ndarray]:
    r"""A double's three key words: :math:`x = M\,2^{E-52}` with integers
    :math:`2^{52} \le |M| < 2^{53}` (M = E = 0 for zero), as M's low and high 32 bits and E's
    low 32 bits (two's complement), as the SQL engines compute them."""
    mantissa, exponent = np.frexp(np.asarray(x, dtype=float))
    whole = (mantissa * 2.0**53).astype(np.int64)
    exponent = np.where(mantissa == 0, 0, exponent - 1).astype(np.int64)
    return [whole & MASK, (whole >> 32) & MASK, exponent & MASK]


def mix(x: np.ndarray) -> np.ndarray:
    """The mixer (module doc) on uint64 words below 2**32."""
    x = x.astype(np.uint64)
    for shift, multiplier in MIX:
        x = x ^ (x >> np.uint64(shift))
        if multiplier is not None:
            x = (x * np.uint64(multiplier)) & np.uint64(MASK)
    return x


def unit_hashes(words: list[np.ndarray], salt_word: int) -> np.ndarray:
    """s for each key given its ``words`` (module doc; at most 64 words)."""
    mask = np.uint64(MASK)
    total = np.zeros(len(words[0]), dtype=np.uint64)
    for word, multiplier in zip(words, WORD_MULTIPLIERS[: len(words)], strict=True):
        total = (
            total + ((np.asarray(word).astype(np.uint64) * np.uint64(multiplier)) & mask)
        ) & mask
    return mix(total ^ np.uint64(salt_word))


def draws(hashes: np.ndarray, k: np.ndarray, resamples: int) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's subset and its (units, r) bits b_j from its hash s (module doc)."""
    subset = ((hashes * k.astype(np.uint64)) >> np.uint64(32)).astype(np.int64)
    bits = np.empty((hashes.shape[0], resamples), dtype=np.int64)
    for t in range(-(-resamples // 32)):
        word = mix(hashes ^ np.uint64(BIT_WORDS[t]))
        for j in range(32 * t, min(32 * t + 32, resamples)):
            bits[:, j] = ((word >> np.uint64(j - 32 * t)) & np.uint64(1)).astype(np.int64)
    return subset, bits


def raw_sums(query: BlbQuery) -> list[tuple[str, int | None, tuple[int, ...]]]:
    r"""What an engine sums per (group, subset), before the resample weights: for every
    product of inputs the sums need (no input: the unit's counted rows), its sum over every
    unit (``all_*``, resample None) and over the units whose bit :math:`b_j` is 1
    (``bit{j}_*``). Since :math:`w_j = 1 - c + 2cb_j`, :math:`\sum w_j x = (1 - c)\sum x +
    2c\sum_{b_j = 1} x` (:func:`weigh`): sums of integers stay exact whatever the order in
    which an engine adds them, so every engine gives the same weighted sums."""
    products = [(), *query.products]  # every resample sums the weight itself (xx_0_0)
    out = [(raw_name("all", f), None, f) for f in products]
    out += [(raw_name(f"bit{j}", f), j, f) for j in range(query.resamples) for f in products]
    return out


def raw_name(prefix: str, factors: tuple[int, ...]) -> str:
    return f"{prefix}_" + "_".join(str(i) for i in factors) if factors else f"{prefix}_w"


def weigh(raw: pd.DataFrame, query: BlbQuery, mapping: pd.DataFrame) -> pd.DataFrame:
    """:meth:`Engine.blb_sums`'s answer from an engine's :func:`raw_sums` per (group, subset):
    the rows, and each of ``query.sums`` with the resample weights of ``mapping``'s groups
    (their 1/√k, :data:`SCALE_COLUMN`) applied."""
    scale_of = mapping.drop_duplicates(GROUP).set_index(GROUP)[SCALE_COLUMN]
    c = scale_of.reindex(raw[GROUP]).to_numpy(float)
    out = raw[[GROUP, SUBSET, "rows"]].astype(np.int64)
    for name, j, factors in query.sums:
        every, ones = raw[raw_name("all", factors)], raw[raw_name(f"bit{j}", factors)]
        out[name] = (1.0 - c) * every.to_numpy(float) + 2.0 * c * ones.to_numpy(float)
    return out


def person_words(owners: pd.Series) -> list[np.ndarray]:
    """A person id's key words, as the SQL engines compute them (module doc)."""
    kind = owners.dtype
    if pd.api.types.is_bool_dtype(kind):
        return [np.asarray(owners, dtype=np.int64)]
    if pd.api.types.is_integer_dtype(kind):
        ids = np.asarray(owners, dtype=np.int64)
        return [ids & MASK, (ids >> 32) & MASK]
    if pd.api.types.is_float_dtype(kind):
        return double_words(np.asarray(owners, dtype=float))
    codes, uniques = pd.factorize(owners.astype(str))
    digests = b"".join(hashlib.md5(str(u).encode()).digest()[:8] for u in uniques)
    words = np.frombuffer(digests, dtype="<u4").reshape(len(uniques), 2).astype(np.int64)
    return [words[codes, 0], words[codes, 1]]


def row_bag_sums(
    query: BlbQuery,
    group: np.ndarray,
    values: np.ndarray,
    weights: np.ndarray,
    owners: pd.Series | None,
    mapping: pd.DataFrame,
) -> pd.DataFrame:
    """The pandas engine's :meth:`~dpcore.engines.base.Engine.blb_sums` on its counted rows:
    each row's ``group`` (−1 for none), its ``values`` (the inputs), its ``weights`` under the
    contribution bound and its person (``owners``, or None), with each group's k and 1/√k
    from ``mapping`` (one row per group, :data:`K_COLUMN`, :data:`SCALE_COLUMN`)."""
    inside = group >= 0
    group, values, weights = group[inside], values[inside], weights[inside]
    per_group = mapping.drop_duplicates(GROUP).set_index(GROUP)
    k = per_group[K_COLUMN].reindex(np.arange(group.max() + 1 if group.size else 0)).to_numpy()
    if owners is not None:
        words = [np.full(group.size, PERSON_TAG), *person_words(owners[inside])]
    else:
        values = values + 0.0  # −0.0 is 0.0, as in SQL
        content = pd.DataFrame({"g": group, **dict(enumerate(values.T))})
        copy = content.groupby(list(content.columns), sort=False).cumcount().to_numpy() + 1
        words = [np.full(group.size, CONTENT_TAG), group]
        for i in range(values.shape[1]):
            words += double_words(values[:, i])
        words.append(copy)
    hashes = unit_hashes(words, query.salt_word)
    subset, bits = draws(hashes, k[group].astype(np.int64), query.resamples)
    cells = pd.MultiIndex.from_arrays([group, subset], names=[GROUP, SUBSET])
    columns = {"rows": weights}
    for name, j, factors in raw_sums(query):
        product = weights if j is None else weights * bits[:, j]
        for i in factors:
            product = product * values[:, i]
        columns[name] = product
    raw = pd.DataFrame(columns, index=cells).groupby(level=[0, 1]).sum().reset_index()
    return weigh(raw.assign(rows=raw["rows"].round()), query, mapping)
