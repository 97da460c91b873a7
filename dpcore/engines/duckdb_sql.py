"""The SQL of the DuckDB engine's passes (:mod:`dpcore.engines.duckdb_engine`).

Every pass reads ``base``: each row's cell keys (:mod:`dpcore.engines.cell_keys`), its inputs
as doubles (``__v0``, ``__v1``, ...) and its person (``__owner``, NULL without a person
column), then aggregates in one of two ways:

- one row per person (:func:`row_cells_sql`): per cell, the counts and the sums of the
  clipped products over the rows with finite inputs, in one scan;
- with a person column (:func:`totals_sql`, then :func:`bound_sql`): the counts per cell, then
  the contribution bound of :mod:`dpcore.foundations.privacy_unit` as two hash aggregates and
  no sort: per (person, cell) the rows n and the sums; per person the ``max_groups`` cells of
  most counted rows min(n, M) (ties to the cell first in label order, the cells' ranks coming
  from a small registered table), their sums scaled by min(n, M)/n.

Sums of the cells are ``fsum`` (compensated summation, so that a sum hardly depends on the
order in which threads meet the rows). Pure Python; never imports streamlit or plotly.
"""

from __future__ import annotations

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

__all__ = [
    "bound_sql",
    "key_sql",
    "row_cells_sql",
    "totals_sql",
]

RANK = "__rank"
"""The column of a cell's rank in label order, in the registered table of cells."""


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def number(x: float) -> str:
    """A double literal (a bare ``1.0`` is a DECIMAL in DuckDB, whose sums are 128-bit)."""
    return f"CAST({float(x)!r} AS DOUBLE)"


def cell_name(i: int) -> str:
    return f"__cell{i}"


def value_name(i: int) -> str:
    """The name of the query's i-th input column as a double in the SQL."""
    return f"__v{i}"


def cell_names(query: SumsQuery) -> list[str]:
    return [cell_name(i) for i in range(len(query.by))]


def is_nan(x: str) -> str:
    """SQL true where the double ``x`` is NaN. DuckDB's isnan() answers false for the NaN of a
    Parquet column whose statistics leave NaN out (seen with duckdb 2.0), so: neither finite nor
    infinite."""
    return f"(NOT isfinite({x}) AND {x} <> 'inf'::DOUBLE AND {x} <> '-inf'::DOUBLE)"


def key_sql(column: str, kind: str, edges: tuple[float, ...] | None) -> str:
    """A row's key in one grouping column of ``kind`` (:mod:`dpcore.engines.cell_keys`)."""
    col = ident(column)
    kind = key_kind(kind, edges)
    if kind == "bucket":
        x = f"CAST({col} AS DOUBLE)"
        bucket = " + ".join(f"CAST({x} >= {number(e)} AS INTEGER)" for e in edges)
        return f"CASE WHEN {x} IS NULL OR {is_nan(x)} THEN NULL ELSE {bucket} END"
    if kind == "decimal code":  # +0.0 turns −0.0 into 0.0
        x = f"CAST({col} AS DOUBLE)"
        return (
            f"CASE WHEN {x} IS NULL OR {is_nan(x)} THEN NULL "
            f"WHEN {x} = trunc({x}) AND abs({x}) < {LARGEST_CODE} THEN {x} + {number(0.0)} "
            "ELSE 'inf'::DOUBLE END"
        )
    return col


def owner_sql(unit: PrivacyUnit, kinds: dict[str, str]) -> str:
    """A row's person id (NULL without a person column, or for a missing or NaN id)."""
    if unit.column is None:
        return "NULL"
    owner = ident(unit.column)
    if kinds[unit.column] == "decimal number":
        return f"CASE WHEN {is_nan(owner)} THEN NULL ELSE {owner} END"  # NaN: no id
    return owner


def base_sql(query: SumsQuery, kinds: dict[str, str], source: str) -> str:
    """Every row of ``source`` as the passes read it (module doc): its keys, its inputs as
    doubles, each input clipped to its bounds (once, not once per product that reads it) and
    ``__one`` (1.0), both NULL where any input is not finite, so that every sum skips such a
    row without a FILTER per sum. Whether the inputs are finite is computed once per row
    (``__ok``), not once per clipped input."""
    keys = [
        f"{key_sql(column, kinds[column], query.edges_of.get(column))} AS {cell_name(i)}"
        for i, column in enumerate(query.by)
    ]
    values = [
        f"CAST({ident(column)} AS DOUBLE) AS {value_name(i)}"
        for i, column in enumerate(query.columns)
    ]
    read = [*keys, *values, f"{owner_sql(query.unit, kinds)} AS __owner"]
    checked = f"SELECT *, {all_finite(query)} AS __ok FROM (SELECT {', '.join(read)} FROM {source})"
    clipped = [
        f"CASE WHEN __ok THEN least(greatest({value_name(i)}, {number(c.low)}), "
        f"{number(c.high)}) END AS {clipped_name(i)}"
        for i, c in enumerate(query.inputs)
    ]
    one = f"CASE WHEN __ok THEN {number(1.0)} END AS __one"
    return f"SELECT * EXCLUDE (__ok), {', '.join([*clipped, one])} FROM ({checked})"


def clipped_name(i: int) -> str:
    """The name of the query's i-th input clipped to its bounds in the SQL."""
    return f"__c{i}"


def all_finite(query: SumsQuery) -> str:
    """SQL true where every input of ``query`` is finite (NULL and NaN are not); a counting
    query, without inputs, uses every row."""
    checks = [f"isfinite({value_name(i)})" for i in range(len(query.inputs))]
    return " AND ".join(checks) or "TRUE"


def product(query: SumsQuery, factors: tuple[str, ...]) -> str:
    """The product of the named inputs, each clipped to its bounds, left to right as
    :class:`~dpcore.engines.pandas_engine.PandasEngine` multiplies; no input: 1.0 (a count);
    NULL for a row whose inputs are not all finite (:func:`base_sql`)."""
    terms = [clipped_name(query.columns.index(column)) for column in factors]
    return " * ".join(terms) or "__one"


def cell_sum(query: SumsQuery, factors: tuple[str, ...]) -> str:
    """A cell's sum of the product of ``factors`` over its finite rows: ``fsum``, or, for no
    factor (a sum of 1.0 per row), the count of those rows as a double — the same number
    exactly (a whole number below 2⁵³), without a compensated sum over every row."""
    return f"fsum({product(query, factors)})" if factors else "CAST(count(__one) AS DOUBLE)"


def not_binary_sql(query: SumsQuery) -> str:
    """The count of finite rows whose declared 0/1 inputs are not 0 or 1 (none declared: no
    column)."""
    if not query.binary:
        return ""
    odd = " OR ".join(f"{value_name(query.columns.index(c))} NOT IN (0, 1)" for c in query.binary)
    return f", count(*) FILTER (WHERE {all_finite(query)} AND ({odd})) AS not_binary"


def row_cells_sql(query: SumsQuery, kinds: dict[str, str], source: str) -> str:
    """One row per person: per cell the rows, the finite ones (all used) and the sums over
    them and the not-0/1 count, in one scan."""
    sums = "".join(f", {cell_sum(query, factors)} AS {ident(name)}" for name, factors in query.sums)
    return f"""
        SELECT {", ".join(cell_names(query))}, count(*) AS rows, count(__one) AS finite,
               count(__one) AS usable{sums}{not_binary_sql(query)}
        FROM ({base_sql(query, kinds, source)}) GROUP BY ALL"""


def totals_sql(query: SumsQuery, kinds: dict[str, str], source: str) -> str:
    """With a person column: per cell the rows, the finite ones, those without a person id,
    and the not-0/1 count (the bound's pass, :func:`bound_sql`, adds the rest)."""
    return f"""
        SELECT {", ".join(cell_names(query))}, count(*) AS rows, count(__one) AS finite,
               count(*) FILTER (WHERE __owner IS NULL) AS missing_person
               {not_binary_sql(query)}
        FROM ({base_sql(query, kinds, source)}) GROUP BY ALL"""


def chosen_sql(
    query: SumsQuery, kinds: dict[str, str], source: str, table: str, cells: int,
    summands: list[tuple[str, str]],
) -> str:  # fmt: skip
    """The contribution bound (module doc): every person's ``max_groups`` chosen (person,
    cell) pairs, each with ``__owner``, ``__key`` (min(n, M)·cells + cells − 1 − the cell's
    rank :data:`RANK`) and ``__t0``, ``__t1``, ...: each of ``summands`` (name, SQL over a
    row) summed over the person's rows with finite inputs in the cell, scaled by min(n, M)/n.
    ``table`` holds every cell's keys and rank (and the columns ``summands`` read from it);
    there are ``cells`` cells. Each row is matched to its cell's rank first, so that the pairs
    are grouped by two numbers rather than by the cells' keys."""
    unit = query.unit
    names = cell_names(query)
    same_cell = " AND ".join(f"d.{c} IS NOT DISTINCT FROM t.{c}" for c in names) or "TRUE"
    sums = "".join(f", sum({expr}) AS __s{i}" for i, (_, expr) in enumerate(summands))
    rows = f"""SELECT d.*, t.* EXCLUDE ({", ".join(names)})
        FROM ({base_sql(query, kinds, source)}) d JOIN {table} t ON {same_cell}
        WHERE {all_finite(query)} AND d.__owner IS NOT NULL"""
    pairs = f"SELECT __owner, {RANK}, count(*) AS __n{sums} FROM ({rows}) GROUP BY ALL"
    counted = f"least(__n, {unit.max_rows})"
    scaled = [f"__s{i} * {counted} / __n AS __t{i}" for i in range(len(summands))]
    # One key per (person, cell): most counted rows first, then the first cell in label order.
    key = f"{counted} * {cells} + ({cells - 1} - {RANK}) AS __key"
    scored = f"SELECT __owner, {', '.join([key, *scaled])} FROM ({pairs})"
    if unit.max_groups == 1:  # a hash aggregate per person: the largest key and its sums
        # Keys are distinct within a person (one per cell), so each arg_max is the sums of the
        # pair with the largest key: the same row as max(struct_pack(key, sums)) chose, at a
        # quarter less of the bound's time at 1e8 rows (no struct built and compared per pair).
        sums_of_best = "".join(f", arg_max(__t{i}, __key) AS __t{i}" for i in range(len(summands)))
        return f"SELECT __owner, max(__key) AS __key{sums_of_best} FROM ({scored}) GROUP BY ALL"
    # Several cells per person: the pairs sorted within each person.
    return f"""SELECT * EXCLUDE (__place) FROM (SELECT *, row_number() OVER (
        PARTITION BY __owner ORDER BY __key DESC) AS __place FROM ({scored}))
        WHERE __place <= {unit.max_groups}"""


def bound_sql(
    query: SumsQuery, kinds: dict[str, str], source: str, table: str, cells: int,
    summands: list[tuple[str, str]],
) -> str:  # fmt: skip
    """Per cell rank (:data:`RANK`) the counted rows ``usable`` and the bound's sums of each of
    ``summands`` (:func:`chosen_sql`, which takes the same arguments)."""
    chosen = chosen_sql(query, kinds, source, table, cells, summands)
    totals = "".join(f", fsum(__t{i}) AS {ident(name)}" for i, (name, _) in enumerate(summands))
    return f"""
        SELECT {cells - 1} - __key % {cells} AS {RANK}, sum(__key // {cells}) AS usable{totals}
        FROM ({chosen}) GROUP BY ALL"""


def preview_sql(
    by: tuple[str, ...], edges: dict[str, tuple[float, ...]], unit: PrivacyUnit,
    kinds: dict[str, str], source: str,
) -> str:  # fmt: skip
    """What the bound would leave out (:meth:`Engine.bound_preview`): per person and cell the
    rows n, then per person the rows kept, min(n, M) summed over the G cells where that is
    largest; a curator's view, so a sort of the pairs is acceptable here."""
    keys = [
        f"{key_sql(column, kinds[column], edges.get(column))} AS {cell_name(i)}"
        for i, column in enumerate(by)
    ]
    pair = ", ".join(["__owner", *(cell_name(i) for i in range(len(by)))])
    return f"""
        WITH base AS (SELECT {"".join(k + ", " for k in keys)}{owner_sql(unit, kinds)} AS __owner
                      FROM {source}),
        pairs AS (
            SELECT __owner, count(*) AS n, least(count(*), {unit.max_rows}) AS capped
            FROM base WHERE __owner IS NOT NULL GROUP BY {pair}),
        ranked AS (
            SELECT *, row_number() OVER (PARTITION BY __owner ORDER BY capped DESC) AS r
            FROM pairs),
        people AS (
            SELECT sum(n) AS rows, sum(capped) FILTER (WHERE r <= {unit.max_groups}) AS kept,
                   count(*) AS groups, max(n) AS most
            FROM ranked GROUP BY __owner)
        SELECT coalesce(sum(rows), 0) AS rows, count(*) AS people,
               coalesce(sum(rows - kept), 0) AS dropped,
               count(*) FILTER (WHERE rows > kept) AS people_affected,
               coalesce(max(most), 0) AS most_rows_in_a_group,
               coalesce(max(groups), 0) AS most_groups,
               (SELECT count(*) FROM base WHERE __owner IS NULL) AS missing_person
        FROM people"""


# ---- the bag of little bootstraps (:mod:`dpcore.engines.blb`) ------------------------------


def mixed_sql(inner: str, column: str) -> str:
    """``inner`` with its ``column`` (a word below 2**32) put through the mixer, one projection
    per round (a nested expression would repeat ``column`` at every level)."""
    sql = inner
    for shift, multiplier in MIX:
        step = f"xor({column}, {column} >> {shift})"
        if multiplier is not None:
            step = f"({step} * {multiplier}) & {MASK}"
        sql = f"SELECT * REPLACE ({step} AS {column}) FROM ({sql})"
    return sql


def double_words_sql(inner: str, x: str, prefix: str) -> str:
    """``inner`` with the key words of its double column ``x`` (:func:`~dpcore.engines.blb.
    double_words`) as ``{prefix}0`` .. ``{prefix}2``, from integers only (nothing depends on how
    a double is printed): E from ⌊log2 |x|⌋ corrected by one where log2 rounded, then M."""
    e0 = f"floor(log2(abs({x})))"
    ratio = f"abs({x}) / pow(2.0, {e0})"
    exponent = (
        f"CASE WHEN {x} = 0 THEN 0 ELSE CAST({e0} AS BIGINT) + "
        f"CASE WHEN {ratio} >= 2 THEN 1 WHEN {ratio} < 1 THEN -1 ELSE 0 END END"
    )
    with_e = f"SELECT *, {exponent} AS {prefix}e FROM ({inner})"
    mantissa = f"CAST({x} / pow(2.0, {prefix}e) * 4503599627370496.0 AS BIGINT)"
    with_m = f"SELECT *, {mantissa} AS {prefix}m FROM ({with_e})"
    return (
        f"SELECT * EXCLUDE ({prefix}e, {prefix}m), {prefix}m & {MASK} AS {prefix}0, "
        f"({prefix}m >> 32) & {MASK} AS {prefix}1, {prefix}e & {MASK} AS {prefix}2 "
        f"FROM ({with_m})"
    )


def linear_words(words: list[str], first: int = 0) -> str:
    """Σ (w_i · A_i mod 2**32) mod 2**32 over ``words``, A_i from the ``first``-th on."""
    # Each term parenthesised: SQL's + binds tighter than &.
    terms = [
        f"((({word}) * {WORD_MULTIPLIERS[first + i]}) & {MASK})" for i, word in enumerate(words)
    ]
    return f"({' + '.join(terms)}) & {MASK}"


def draws_sql(inner: str, query: BlbQuery, *, one_row_units: bool = False) -> str:
    """The (group, subset) :func:`~dpcore.engines.blb.raw_sums` from ``inner``: per unit its
    group ``__group``, its k ``__k``, its hash ``__s``, its weight ``__w`` (its counted rows)
    and its products of inputs ``__p_*`` (:func:`product_column`). With ``one_row_units``
    every weight is 1, and the weights' sums are counts: integer sums of the resample bits,
    the same doubles exactly, without a double product and sum per bit and row."""
    sql = inner
    for t in range(-(-query.resamples // 32)):
        sql = mixed_sql(f"SELECT *, xor(__s, {BIT_WORDS[t]}) AS __b{t} FROM ({sql})", f"__b{t}")
    sums = []
    for name, j, factors in raw_sums(query):
        bit = None if j is None else f"((__b{j // 32} >> {j % 32}) & 1)"
        if factors:
            total = f"fsum({product_column(factors)}{'' if bit is None else ' * ' + bit})"
        elif one_row_units:
            total = f"CAST({'count(*)' if bit is None else f'sum({bit})'} AS DOUBLE)"
        else:  # a unit's weight counts rows (a whole number as a double): a plain sum is exact
            total = f"sum(__w{'' if bit is None else ' * ' + bit})"
        sums.append(f"{total} AS {name}")
    rows = "CAST(count(*) AS DOUBLE)" if one_row_units else "sum(__w)"
    return f"""SELECT __group AS {GROUP}, (__s * __k) >> 32 AS {SUBSET}, {rows} AS rows,
        {", ".join(sums)} FROM ({sql}) GROUP BY ALL"""


def blb_rows_sql(query: BlbQuery, kinds: dict[str, str], source: str, table: str) -> str:
    """A bag of little bootstraps over rows without a person column: per group the rows of
    each content (values) counted, its copies numbered 1..m, each copy hashed (module doc of
    :mod:`dpcore.engines.blb`)."""
    rows = query.rows
    values = [value_name(i) for i in range(len(rows.inputs))]
    same_cell = " AND ".join(f"d.{c} IS NOT DISTINCT FROM t.{c}" for c in cell_names(rows))
    normalised = ", ".join(f"d.{v} + {number(0.0)} AS {v}" for v in values)  # −0.0 is 0.0
    mapped = f"""SELECT t.{GROUP} AS __group, t.{K_COLUMN} AS __k,
        {normalised} FROM ({base_sql(rows, kinds, source)}) d JOIN {table} t ON {same_cell}
        WHERE {all_finite(rows)} AND t.{GROUP} >= 0"""
    contents = f"SELECT *, count(*) AS __m FROM ({mapped}) GROUP BY ALL"
    worded = contents
    for i, v in enumerate(values):
        worded = double_words_sql(worded, v, f"__d{i}_")
    words = [str(CONTENT_TAG), "__group"]
    words += [f"__d{i}_{part}" for i in range(len(values)) for part in range(3)]
    products = "".join(f", {product_sql(f, values)} AS {product_column(f)}" for f in query.products)
    copy_word = f"((__copy * {WORD_MULTIPLIERS[len(words)]}) & {MASK})"
    copies = f"SELECT *, unnest(range(1, __m + 1)) AS __copy FROM ({worded})"
    hashed = f"""SELECT __group, __k, {number(1.0)} AS __w{products},
        xor((({linear_words(words)}) + {copy_word}) & {MASK}, {query.salt_word}) AS __s
        FROM ({copies})"""
    return draws_sql(mixed_sql(hashed, "__s"), query, one_row_units=True)


def blb_people_sql(query: BlbQuery, kinds: dict[str, str], source: str, table: str,
                   cells: int) -> str:  # fmt: skip
    """A bag of little bootstraps over people: the contribution bound's chosen pair of each
    person (:func:`chosen_sql`; GVDP bounds a person to one group) with its bound-weighted
    sums of products, hashed by the person's id (module doc of :mod:`dpcore.engines.blb`)."""
    rows = query.rows
    values = [value_name(i) for i in range(len(rows.inputs))]
    factors = query.products
    summands = [(product_column(f), product_sql(f, values)) for f in factors]
    chosen = chosen_sql(rows, kinds, source, table, cells, summands)
    columns = "".join(f", __t{i} AS {product_column(f)}" for i, f in enumerate(factors))
    joined = f"""SELECT d.__owner, t.{GROUP} AS __group, t.{K_COLUMN} AS __k,
        CAST(d.__key // {cells} AS DOUBLE) AS __w{columns}
        FROM ({chosen}) d JOIN {table} t ON t.{RANK} = {cells - 1} - d.__key % {cells}
        WHERE t.{GROUP} >= 0"""
    kind = kinds[rows.unit.column]
    if kind == "decimal number":
        worded = double_words_sql(joined, "CAST(__owner AS DOUBLE)", "__o")
        words = ["__o0", "__o1", "__o2"]
    elif kind == "yes / no":
        worded, words = joined, ["CAST(__owner AS BIGINT)"]
    elif kind == "whole number":
        worded, words = (
            joined,
            [f"CAST(__owner AS BIGINT) & {MASK}", f"(CAST(__owner AS BIGINT) >> 32) & {MASK}"],
        )
    else:  # the first 8 bytes of the md5 of its text, little-endian (md5_number_upper)
        digest = "md5_number_upper(CAST(__owner AS VARCHAR))"
        worded, words = (
            joined,
            [f"CAST({digest} & {MASK} AS BIGINT)", f"CAST({digest} >> 32 AS BIGINT)"],
        )
    hashed = f"""SELECT *, xor({linear_words([str(PERSON_TAG), *words])}, {query.salt_word})
        AS __s FROM ({worded})"""
    return draws_sql(mixed_sql(hashed, "__s"), query)


def product_sql(factors: tuple[int, ...], values: list[str]) -> str:
    return " * ".join(values[i] for i in factors)
