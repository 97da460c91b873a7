"""The Spark engine's passes as DataFrame expressions (:mod:`dpcore.engines.spark_engine`),
the same passes as the DuckDB SQL of :mod:`dpcore.engines.duckdb_sql` (its module doc): cell
keys (:mod:`dpcore.engines.cell_keys`), one aggregate per cell for one row per person, the
contribution bound as an aggregate per (person, cell) then one per person, and the bag of
little bootstraps' integer hash (:mod:`dpcore.engines.blb`) in long arithmetic that never
exceeds 2**63 (so Spark's ANSI mode finds no overflow).

PySpark is imported inside each function, so that importing this module needs no JVM. Never
imports streamlit or plotly.
"""

from __future__ import annotations

import functools
import operator

from dpcore.engines.base import GROUP, LARGEST_CODE, SumsQuery
from dpcore.engines.blb import (
    BIT_WORDS,
    CONTENT_TAG,
    K_COLUMN,
    MASK,
    MIX,
    PERSON_TAG,
    SUBSET,
    WORD_MULTIPLIERS,
    BlbQuery,
    product_column,
    raw_sums,
)
from dpcore.engines.cell_keys import key_kind
from dpcore.foundations.privacy_unit import PrivacyUnit

RANK = "__rank"
"""The column of a cell's rank in label order, in the table of cells."""


def quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def cell_names(by: tuple[str, ...]) -> list[str]:
    return [f"__cell{i}" for i in range(len(by))]


def value_name(i: int) -> str:
    return f"__v{i}"


def key_column(column: str, kind: str, edges: tuple[float, ...] | None):
    """A row's key in one grouping column of ``kind`` (:mod:`dpcore.engines.cell_keys`)."""
    from pyspark.sql import functions as F

    col = F.col(quoted(column))
    kind = key_kind(kind, edges)
    if kind == "bucket":
        x = col.cast("double")
        bucket = sum((x >= F.lit(e)).cast("int") for e in edges)
        return F.when(x.isNull() | F.isnan(x), F.lit(None)).otherwise(bucket)
    if kind == "decimal code":  # +0.0 turns −0.0 into 0.0
        x = col.cast("double")
        whole = (x == F.floor(x)) & (F.abs(x) < F.lit(LARGEST_CODE))
        return (
            F.when(x.isNull() | F.isnan(x), F.lit(None).cast("double"))
            .when(whole, x + F.lit(0.0))
            .otherwise(F.lit(float("inf")))
        )
    if kind == "text":  # a date, ... keyed by its text (a string's cast is no operation)
        return col.cast("string")
    return col


def owner_column(unit: PrivacyUnit, kinds: dict[str, str]):
    """A row's person id (null without a person column, or for a missing or NaN id)."""
    from pyspark.sql import functions as F

    if unit.column is None:
        return F.lit(None)
    owner = F.col(quoted(unit.column))
    if kinds[unit.column] == "decimal number":
        return F.when(F.isnan(owner), F.lit(None)).otherwise(owner)  # NaN: no id
    return owner


def base(frame, query: SumsQuery, kinds: dict[str, str]):
    """Every row as the passes read it: its cell keys, its inputs as doubles ``__v0``, ...,
    and its person ``__owner``."""
    from pyspark.sql import functions as F

    keys = [
        key_column(column, kinds[column], query.edges_of.get(column)).alias(name)
        for column, name in zip(query.by, cell_names(query.by), strict=True)
    ]
    values = [
        F.col(quoted(column)).cast("double").alias(value_name(i))
        for i, column in enumerate(query.columns)
    ]
    return frame.select(*keys, *values, owner_column(query.unit, kinds).alias("__owner"))


def finite(x):
    from pyspark.sql import functions as F

    return x.isNotNull() & ~F.isnan(x) & (F.abs(x) != F.lit(float("inf")))


def all_finite(query: SumsQuery):
    """True where every input of ``query`` is finite; a counting query uses every row."""
    from pyspark.sql import functions as F

    checks = [finite(F.col(value_name(i))) for i in range(len(query.inputs))]
    return functools.reduce(operator.and_, checks, F.lit(True))


def product(query: SumsQuery, factors: tuple[str, ...]):
    """The product of the named inputs, each clipped to its bounds, left to right as the other
    engines multiply; no input: 1.0 (a count)."""
    from pyspark.sql import functions as F

    out = F.lit(1.0)
    for column in factors:
        i = query.columns.index(column)
        clipped = query.inputs[i]
        low, high = F.lit(float(clipped.low)), F.lit(float(clipped.high))
        out = out * F.least(F.greatest(F.col(value_name(i)), low), high)
    return out


def counts(query: SumsQuery, person: bool) -> list:
    """The per-cell counts every pass returns: rows, finite rows, rows without a person id,
    and rows not 0/1 where declared."""
    from pyspark.sql import functions as F

    usable = all_finite(query)
    out = [
        F.count(F.lit(1)).alias("rows"),
        F.sum(usable.cast("long")).alias("finite"),
    ]
    if person:
        out.append(F.sum(F.col("__owner").isNull().cast("long")).alias("missing_person"))
    if query.binary:
        odd = [~F.col(value_name(query.columns.index(c))).isin(0.0, 1.0) for c in query.binary]
        not_binary = usable & functools.reduce(operator.or_, odd)
        out.append(F.sum(not_binary.cast("long")).alias("not_binary"))
    return out


def row_cells(frame, query: SumsQuery, kinds: dict[str, str]):
    """One row per person: per cell the counts and the sums over the finite rows, one scan."""
    from pyspark.sql import functions as F

    usable = all_finite(query)
    sums = [
        F.sum(F.when(usable, product(query, factors))).alias(name) for name, factors in query.sums
    ]
    return (
        base(frame, query, kinds).groupBy(*cell_names(query.by))
        .agg(*counts(query, False), F.sum(usable.cast("long")).alias("usable"), *sums)
    )  # fmt: skip


def totals(frame, query: SumsQuery, kinds: dict[str, str]):
    """With a person column: per cell the counts (the bound's pass adds the rest)."""
    return (
        base(frame, query, kinds).groupBy(*cell_names(query.by))
        .agg(*counts(query, True))
    )  # fmt: skip


def chosen(frame, query: SumsQuery, kinds: dict[str, str], table, cells: int, summands):
    """Every person's ``max_groups`` chosen (person, cell) pairs with ``__owner``, ``__key``
    and the bound's scaled sums ``__t0``, ... of ``summands`` (name, Column over a row), as
    :func:`dpcore.engines.duckdb_sql.chosen_sql` computes them (each row matched to its cell's
    rank in ``table`` first)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    unit = query.unit
    rows = base(frame, query, kinds).where(all_finite(query) & F.col("__owner").isNotNull())
    sums = [F.sum(expr).alias(f"__s{i}") for i, (_, expr) in enumerate(summands)]
    pairs = (
        join_cells(rows, table, cell_names(query.by)).groupBy("__owner", RANK)
        .agg(F.count(F.lit(1)).alias("__n"), *sums)
    )  # fmt: skip
    counted = F.least(F.col("__n"), F.lit(unit.max_rows))
    scaled = [
        (F.col(f"__s{i}") * counted / F.col("__n")).alias(f"__t{i}") for i in range(len(summands))
    ]
    key = (counted * F.lit(cells) + (F.lit(cells - 1) - F.col(RANK))).alias("__key")
    scored = pairs.select("__owner", key, *scaled)
    terms = [f"__t{i}" for i in range(len(summands))]
    if unit.max_groups == 1:  # the largest (key, sums) of each person
        best = scored.groupBy("__owner").agg(F.max(F.struct("__key", *terms)).alias("__best"))
        return best.select("__owner", *(F.col(f"__best.{n}").alias(n) for n in ["__key", *terms]))
    place = F.row_number().over(Window.partitionBy("__owner").orderBy(F.desc("__key")))
    return scored.withColumn("__place", place).where(F.col("__place") <= unit.max_groups)


def join_cells(frame, table, names: list[str]):
    """``frame`` with the columns of the table of cells, matched on the keys (nulls equal)."""
    from pyspark.sql import functions as F

    cells = table.select(*(F.col(n).alias(f"{n}__t") for n in names),
                         *(c for c in table.columns if c not in names))  # fmt: skip
    condition = functools.reduce(
        operator.and_, (F.col(n).eqNullSafe(F.col(f"{n}__t")) for n in names), F.lit(True)
    )
    joined = frame.join(F.broadcast(cells), on=condition)
    return joined.drop(*(f"{n}__t" for n in names))


def bound(frame, query: SumsQuery, kinds: dict[str, str], table, cells: int, summands):
    """Per cell rank the counted rows ``usable`` and the bound's sums of ``summands``."""
    from pyspark.sql import functions as F

    picked = chosen(frame, query, kinds, table, cells, summands)
    return picked.groupBy((F.lit(cells - 1) - F.col("__key") % F.lit(cells)).alias(RANK)).agg(
        F.sum(F.floor(F.col("__key") / F.lit(cells))).alias("usable"),
        *(F.sum(f"__t{i}").alias(name) for i, (name, _) in enumerate(summands)),
    )


# ---- the bag of little bootstraps (:mod:`dpcore.engines.blb`) ------------------------------


def mixed(x):
    """The mixer on a long column below 2**32 (every product stays below 2**63)."""
    from pyspark.sql import functions as F

    for shift, multiplier in MIX:
        x = x.bitwiseXOR(F.shiftright(x, shift))
        if multiplier is not None:
            x = (x * F.lit(multiplier)).bitwiseAND(F.lit(MASK))
    return x


def linear_words(words: list, first: int = 0):
    """Σ (w_i · A_i mod 2**32) mod 2**32 over the long columns ``words``."""
    from pyspark.sql import functions as F

    terms = [
        (w * F.lit(WORD_MULTIPLIERS[first + i])).bitwiseAND(F.lit(MASK))
        for i, w in enumerate(words)
    ]
    return functools.reduce(operator.add, terms).bitwiseAND(F.lit(MASK))


def double_words(x) -> list:
    """A double's key words (:func:`dpcore.engines.blb.double_words`), from integers only."""
    from pyspark.sql import functions as F

    e0 = F.floor(F.log2(F.abs(x)))
    ratio = F.abs(x) / F.pow(F.lit(2.0), e0)
    e = F.when(x == 0, F.lit(0).cast("long")).otherwise(
        e0.cast("long") + F.when(ratio >= 2, 1).when(ratio < 1, -1).otherwise(0)
    )
    whole = (x / F.pow(F.lit(2.0), e) * F.lit(4503599627370496.0)).cast("long")
    return [
        whole.bitwiseAND(F.lit(MASK)), F.shiftright(whole, 32).bitwiseAND(F.lit(MASK)),
        e.bitwiseAND(F.lit(MASK)),
    ]  # fmt: skip


def owner_words(owner, kind: str) -> list:
    """A person id's key words, as :func:`dpcore.engines.blb.person_words` computes them."""
    from pyspark.sql import functions as F

    if kind == "decimal number":
        return double_words(owner.cast("double"))
    if kind == "yes / no":
        return [owner.cast("long")]
    if kind == "whole number":
        ids = owner.cast("long")
        return [ids.bitwiseAND(F.lit(MASK)), F.shiftright(ids, 32).bitwiseAND(F.lit(MASK))]
    digest = F.md5(owner.cast("string"))  # its first 8 bytes, as two little-endian words
    return [
        F.conv(F.concat(*(F.substring(digest, 1 + 8 * w + 2 * b, 2) for b in (3, 2, 1, 0))),
               16, 10).cast("long")
        for w in (0, 1)
    ]  # fmt: skip


def draws(units, query: BlbQuery):
    """The (group, subset) :func:`~dpcore.engines.blb.raw_sums` from ``units``: per unit
    ``__group``, ``__k``, its hash ``__s``, its weight ``__w`` and its products ``__p_*`` (as
    the DuckDB SQL)."""
    from pyspark.sql import functions as F

    s = F.col("__s")
    for t in range(-(-query.resamples // 32)):
        units = units.withColumn(f"__b{t}", mixed(s.bitwiseXOR(F.lit(BIT_WORDS[t]))))
    sums = []
    for name, j, factors in raw_sums(query):
        summand = F.col(product_column(factors))
        if j is not None:
            summand = summand * F.shiftright(F.col(f"__b{j // 32}"), j % 32).bitwiseAND(F.lit(1))
        sums.append(F.sum(summand).alias(name))
    subset = F.shiftright(s * F.col("__k"), 32).alias(SUBSET)
    return units.groupBy(F.col("__group").alias(GROUP), subset).agg(
        F.round(F.sum("__w")).alias("rows"), *sums
    )


def product_of_values(factors: tuple[int, ...]):
    from pyspark.sql import functions as F

    return functools.reduce(operator.mul, (F.col(value_name(i)) for i in factors))


def blb_rows(frame, query: BlbQuery, kinds: dict[str, str], table):
    """The bag over rows without a person column: contents counted, copies numbered 1..m
    (``explode``), each copy hashed."""
    from pyspark.sql import functions as F

    rows = query.rows
    names = cell_names(rows.by)
    values = [value_name(i) for i in range(len(rows.inputs))]
    mapped = join_cells(base(frame, rows, kinds).where(all_finite(rows)), table, names).where(
        F.col(GROUP) >= 0
    )
    contents = mapped.select(
        F.col(GROUP).alias("__group"), F.col(K_COLUMN).alias("__k"),
        *((F.col(v) + F.lit(0.0)).alias(v) for v in values),
    ).groupBy("__group", "__k", *values).agg(F.count(F.lit(1)).alias("__m"))  # fmt: skip
    words = [F.lit(CONTENT_TAG).cast("long"), F.col("__group").cast("long")]
    for v in values:
        words += double_words(F.col(v))
    copies = contents.withColumn("__lin", linear_words(words)).withColumn(
        "__copy", F.explode(F.sequence(F.lit(1).cast("long"), F.col("__m")))
    )
    copy_word = (F.col("__copy") * F.lit(WORD_MULTIPLIERS[len(words)])).bitwiseAND(F.lit(MASK))
    key = (F.col("__lin") + copy_word).bitwiseAND(F.lit(MASK)).bitwiseXOR(F.lit(query.salt_word))
    units = copies.select(
        "__group", "__k", F.lit(1.0).alias("__w"),
        *(product_of_values(f).alias(product_column(f)) for f in query.products),
        mixed(key).alias("__s"),
    )  # fmt: skip
    return draws(units, query)


def blb_people(frame, query: BlbQuery, kinds: dict[str, str], table, cells: int):
    """The bag over people: each person's chosen pair (GVDP bounds a person to one group) with
    its bound-weighted products, hashed by the person's id."""
    from pyspark.sql import functions as F

    rows = query.rows
    factors = query.products
    summands = [(product_column(f), product_of_values(f)) for f in factors]
    picked = chosen(frame, rows, kinds, table, cells, summands)
    rank = F.lit(cells - 1) - F.col("__key") % F.lit(cells)
    joined = picked.join(F.broadcast(table.select(RANK, GROUP, K_COLUMN)),
                         on=rank == F.col(RANK)).where(F.col(GROUP) >= 0)  # fmt: skip
    words = [
        F.lit(PERSON_TAG).cast("long"),
        *owner_words(F.col("__owner"), kinds[rows.unit.column]),
    ]
    key = linear_words(words).bitwiseXOR(F.lit(query.salt_word))
    units = joined.select(
        F.col(GROUP).alias("__group"), F.col(K_COLUMN).alias("__k"),
        F.floor(F.col("__key") / F.lit(cells)).alias("__w"),
        *(F.col(f"__t{i}").alias(product_column(f)) for i, f in enumerate(factors)),
        mixed(key).alias("__s"),
    )  # fmt: skip
    return draws(units, query)
