"""Cells as the app reads them: text stripped, missing-value tokens missing, numbers inferred."""

from __future__ import annotations

from collections.abc import Collection, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from dpcore.foundations.io.notes import LoadedTable, beyond_int64_note, infinities_note

MISSING_TOKENS = ("", "?", "NA", "NaN", "nan")
"""Cell texts read as missing (after stripping whitespace), in CSV text and Parquet strings."""


def is_text_column(series: pd.Series) -> bool:
    if isinstance(series.dtype, pd.StringDtype):
        return True
    if series.dtype == object:
        return pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")
    return False


def clean(
    df: pd.DataFrame,
    *,
    infer_numbers: bool,
    typed_by_parser: Collection = (),
    edge_spaces_possible: bool = True,
    decimal: str = ".",
) -> LoadedTable:
    """Strip text cells, turn :data:`MISSING_TOKENS` into missing values, re-infer numbers
    (written with ``decimal`` as their decimal mark), keep whole numbers beyond the 64-bit
    range as text, and read infinite values as missing, with a note for each.

    ``typed_by_parser``: CSV columns whose type pandas' parser chose; one it left as text is
    looked at again only if stripping changed it, and not at all when no cell of the file can
    start or end with whitespace (``edge_spaces_possible`` False). Only the columns that
    change are replaced in ``df``, and columns are picked by their dtypes, so a frame of
    100,000 columns costs little Python work per column.
    """
    beyond_int64 = []
    for col in _text_like_columns(df):
        if not edge_spaces_possible and col in typed_by_parser:
            continue  # no cell can lose spaces, so the parser's type stands
        s = original = df[col]
        if isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype("str")
        if is_text_column(s):
            s = _stripped(s, tokens_are_missing=infer_numbers)
            stays_text = col in typed_by_parser and s is original
            if infer_numbers and not stays_text and s.notna().any():
                s, too_long = _maybe_numeric(s, decimal)
                if too_long:
                    beyond_int64.append(str(col))
        if s is not original:
            df[col] = s
    for col in [c for c, dtype in df.dtypes.items() if dtype == np.uint64]:
        if (df[col] > np.iinfo(np.int64).max).any():  # nothing downstream expects uint64
            df[col] = df[col].astype("str")
            beyond_int64.append(str(col))
    infinite = _infinities_as_missing(df)
    notes = ([beyond_int64_note(beyond_int64)] if beyond_int64 else []) + (
        [infinities_note(infinite)] if infinite else []
    )
    return LoadedTable(df, tuple(notes))


def _text_like_columns(df: pd.DataFrame) -> list:
    """Columns that may hold text: object, string or categorical of strings (by dtype; each
    distinct dtype is judged once, so a wide frame costs no Python work per column)."""
    dtypes = df.dtypes.tolist()
    text_like = [dtype for dtype in set(dtypes) if _may_hold_text(dtype)]
    if not text_like:
        return []
    return [column for column, dtype in zip(df.columns, dtypes, strict=True) if dtype in text_like]


def _may_hold_text(dtype) -> bool:
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.api.types.infer_dtype(dtype.categories, skipna=True) in ("string", "empty")
    return dtype == np.dtype(object) or isinstance(dtype, pd.StringDtype)


_INT64_MAX = np.iinfo(np.int64).max
_BEYOND_INT64 = 2.0**63
"""The smallest magnitude of a float that no int64 holds (-2**63 itself is held)."""
_DIGITS = r"[-+]?\d+"
_CELLS_PER_BLOCK = 1 << 22  # floats looked at in one step: the temporaries stay small


def float_blocks(df: pd.DataFrame) -> Iterator[tuple[list[int], np.ndarray]]:
    """The float columns of ``df`` as (their positions, a 2-D array of their values), in blocks
    of about four million cells: one column at a time for a tall table, thousands at once for
    a wide one, so neither costs Python work per cell nor per column."""
    floats = [i for i, dtype in enumerate(df.dtypes.tolist()) if dtype.kind == "f"]
    per_block = max(1, _CELLS_PER_BLOCK // max(len(df), 1))
    if per_block == 1:  # a tall table: each column as it is stored, not copied
        for position in floats:
            yield [position], df.iloc[:, position].to_numpy()[:, np.newaxis]
        return
    for start in range(0, len(floats), per_block):
        positions = floats[start : start + per_block]
        yield positions, df.iloc[:, positions].to_numpy()


def _infinities_as_missing(df: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Turn ±inf in float columns (“inf”, “Infinity”, or “1e400”, beyond the largest float)
    into missing values; returns each changed column's count and its first data row (from 1)."""
    found = {}
    for positions, values in float_blocks(df):
        infinite = np.isinf(values)
        for j in np.flatnonzero(infinite.any(axis=0)):
            found[positions[j]] = (int(infinite[:, j].sum()), int(infinite[:, j].argmax()) + 1)
    for position in found:
        column = df.iloc[:, position]
        df.isetitem(position, column.mask(np.isinf(column)))
    return {str(df.columns[position]): seen for position, seen in found.items()}


def _stripped(s: pd.Series, *, tokens_are_missing: bool) -> pd.Series:
    """Text cells without surrounding whitespace, :data:`MISSING_TOKENS` missing. The CSV
    parser already read the tokens as missing (``tokens_are_missing``): then only a cell that
    lost whitespace can have become one, and the look-up is skipped when none did. Most files
    have no such cell, and stripping one costs as much as parsing it (fresh buffers), so a
    column whose cells' edge bytes hold no whitespace is returned as it is."""
    if tokens_are_missing and not _may_have_surrounding_space(s):
        return s
    stripped = s.str.strip()
    if tokens_are_missing and _text_bytes(stripped) == _text_bytes(s):
        return stripped
    return stripped.mask(stripped.isin(MISSING_TOKENS))


def _whitespace_edge_bytes() -> tuple[np.ndarray, np.ndarray]:
    """Lookup tables of the bytes a whitespace character can start, and end, with in UTF-8.
    Python's ``str.isspace`` and Arrow's ``utf8_trim_whitespace`` (what ``str.strip`` runs on
    Arrow strings) agree on these 29 characters; a unit test checks it over all of Unicode."""
    first, last = np.zeros(256, dtype=bool), np.zeros(256, dtype=bool)
    for code in range(0x3001):  # U+3000 is the highest whitespace character
        if chr(code).isspace():
            encoded = chr(code).encode()
            first[encoded[0]] = last[encoded[-1]] = True
    return first, last


_SPACE_FIRST_BYTE, _SPACE_LAST_BYTE = _whitespace_edge_bytes()
_FILE_BLOCK = 1 << 24  # bytes of a file looked at per step


def may_have_edge_spaces(data: bytes, sep: str) -> bool:
    """Whether a cell of the CSV text ``data`` may start or end with whitespace, judged from
    its bytes at once: a False is certain, so no column needs looking at one by one (which
    costs a wide file more than parsing it). Only a file without double quotes and with a
    separator other than tab is judged (its cells then hold no line break, quote or tab of
    their own); any other is True. A byte next to a separator or a line break that may belong
    to a whitespace character counts as one."""
    if sep == "\t" or b'"' in data:
        return True
    edge = np.zeros(256, dtype=bool)
    edge[[ord(sep), ord("\r"), ord("\n")]] = True
    first, last = _SPACE_FIRST_BYTE.copy(), _SPACE_LAST_BYTE.copy()
    first[edge] = last[edge] = False  # the separator and line breaks are no cell's content
    for start in range(0, len(data), _FILE_BLOCK):
        # One byte on each side of the block, so that no edge between blocks is missed.
        block = np.frombuffer(data[max(start - 1, 0) : start + _FILE_BLOCK + 1], dtype=np.uint8)
        after_edge = (
            np.concatenate(([True], edge[block[:-1]]))
            if start == 0
            else np.concatenate(([False], edge[block[:-1]]))
        )
        before_edge = np.concatenate((edge[block[1:]], [start + _FILE_BLOCK >= len(data)]))
        if (first[block] & after_edge).any() or (last[block] & before_edge).any():
            return True
    return False


_EDGE_BLOCK = 1 << 18  # cells looked at per step: the temporaries stay small and warm


def _may_have_surrounding_space(s: pd.Series) -> bool:
    """Whether a cell of ``s`` may start or end with whitespace. Reads each Arrow string's
    first and last byte in place; a byte that only *may* belong to a whitespace character
    (0xE2 also starts "–") counts as one, so a False is certain and a True only costs a
    strip. Anything but Arrow strings is True."""
    if not isinstance(s.array, pd.arrays.ArrowStringArray):
        return True
    for chunk in s.array.__arrow_array__().chunks:  # the Arrow protocol: no copy
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
            return True
        _, offsets_buffer, data_buffer = chunk.buffers()
        if data_buffer is None or len(chunk) == 0:
            continue
        width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(offsets_buffer, dtype=width)[chunk.offset :][: len(chunk) + 1]
        data = np.frombuffer(data_buffer, dtype=np.uint8)
        for start in range(0, len(chunk), _EDGE_BLOCK):
            edges = offsets[start : start + _EDGE_BLOCK + 1]
            begins, ends = edges[:-1], edges[1:]
            filled = ends > begins  # empty and missing cells have no edge bytes
            if _SPACE_FIRST_BYTE[data[begins[filled]]].any():
                return True
            if _SPACE_LAST_BYTE[data[ends[filled] - 1]].any():
                return True
    return False


def _text_bytes(s: pd.Series) -> int:
    """The size of the text in ``s`` (bytes if Arrow-backed, read off each chunk's offsets
    without allocating; characters otherwise): it changes when stripping removed anything."""
    if not isinstance(s.array, pd.arrays.ArrowStringArray):
        return int(s.str.len().sum())
    total = 0
    for chunk in s.array.__arrow_array__().chunks:  # the Arrow protocol: no copy
        width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], dtype=width)
        total += int(offsets[chunk.offset + len(chunk)] - offsets[chunk.offset])
    return total


def _maybe_numeric(s: pd.Series, decimal: str) -> tuple[pd.Series, bool]:
    """``s`` as numbers if every non-missing cell is a number (written with ``decimal`` as the
    decimal mark), else ``s`` unchanged; and whether it stayed text because whole numbers in it
    are beyond the 64-bit range (as decimals, distinct 20-digit codes round to one number)."""
    written = s.str.replace(",", ".", regex=False) if decimal == "," else s
    try:
        pd.to_numeric(written.dropna().head(1000))  # cheap early exit for text columns
        numbers = pd.to_numeric(written)
    except (TypeError, ValueError):
        return s, False
    if numbers.dtype == np.dtype(object) or (
        numbers.dtype == np.uint64 and (numbers > _INT64_MAX).any()
    ):
        return s, True
    if numbers.dtype.kind == "f" and (np.abs(numbers) >= _BEYOND_INT64).any():
        # Whole numbers with missing cells come as decimals; written as digits, they are codes.
        if s.dropna().str.fullmatch(_DIGITS).all():
            return s, True
    return numbers, False
