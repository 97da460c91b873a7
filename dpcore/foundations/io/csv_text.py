"""Parsing CSV text into a frame: pandas' C parser, then checks of what it lets through."""

from __future__ import annotations

import csv
import io
import re
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from dpcore.foundations.io.cleaning import (
    MISSING_TOKENS,
    clean,
    float_blocks,
    may_have_edge_spaces,
)
from dpcore.foundations.io.limits import check_row_limit, raise_empty
from dpcore.foundations.io.notes import LoadedTable, boms_note
from dpcore.foundations.io.sniffing import (
    EXCEL_SEP_LINE,
    check_bytes,
    header,
    raise_not_utf8,
    records,
    sniff_delimiter,
)


def _first_bad_line(data: bytes, sep: str, expected: int) -> tuple[int, int, int] | None:
    """(first line, last line, field count) of the first record without ``expected`` fields."""
    reader = records(data, sep, strict=False)
    header_seen = False
    start = 1
    try:
        for row in reader:
            if row and not header_seen:
                header_seen = True
            elif row and len(row) != expected:
                return start, reader.line_num, len(row)
            start = reader.line_num + 1
    except csv.Error:
        return None
    return None


def _check_field_counts(data: bytes, sep: str, expected: int, name: str) -> None:
    """Refuse rows with too many or too few fields, naming the first one.

    pandas fills short rows with missing values silently, so we check ourselves: a fast pass with
    pyarrow's CSV parser (one column converted) finds whether any record is bad; only then does
    a slower pass with the ``csv`` module confirm it and find its physical line number. If the
    ``csv`` module finds nothing wrong, pandas' own parser has the last word.
    """

    def handler(row: pa_csv.InvalidRow) -> str:
        return "error"

    try:
        pa_csv.read_csv(
            io.BytesIO(data),
            read_options=pa_csv.ReadOptions(
                autogenerate_column_names=True, block_size=16 * 1024 * 1024
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=sep,
                newlines_in_values=b'"' in data,  # slower, but needed for quoted line breaks
                invalid_row_handler=handler,
            ),
            convert_options=pa_csv.ConvertOptions(
                include_columns=["f0"], column_types={"f0": pa.string()}
            ),
        )
    except pa.ArrowInvalid:
        where = _first_bad_line(data, sep, expected)
        if where is None:
            return
        first, last, got = where
        shown = _show_sep(sep)
        fields = f"{got} field{'s' if got != 1 else ''}"
        columns = f"{expected} column{'s' if expected != 1 else ''}"
        if last > first:
            raise ValueError(
                f"'{name}': lines {first:,} to {last:,} were read as one row with {fields}, but "
                f"the header has {columns}. Line {first:,} probably has an unclosed double quote "
                '("); close it or remove it.'
            ) from None
        raise ValueError(
            f"'{name}': line {first:,} has {fields}, but the header has {columns}. Check that "
            f"line for a missing or extra '{shown}' separator (text containing '{shown}' must be "
            'in double quotes "...").'
        ) from None


def _show_sep(sep: str) -> str:
    return {"\t": "tab"}.get(sep, sep)


def read_csv(data: bytes, name: str, max_rows: int, decimal: str = ".") -> LoadedTable:
    """Parse with pandas' C parser in its low-memory mode (about 2× the file in memory rather
    than 4×), then check what that mode and the parser let through: columns that mixed types
    across the parser's chunks are read again as text, and rows with too few fields (which
    pandas fills with missing values) are looked for only when the last column has a missing
    value, as every short row has. ``decimal`` is the decimal mark of the file's numbers."""
    check_bytes(data, name)
    data, boms = _without_inner_boms(data)
    # Trailing lines of spaces (common at the end of exported files) would be read as rows;
    # trailing line breaks alone are skipped, so only a file with such spaces is copied.
    if data[-4096:].rstrip(b"\r\n").endswith(b" "):
        data = data.rstrip(b" \r\n")
    excel_hint = EXCEL_SEP_LINE.match(data)  # Excel's "sep=;" line names the delimiter
    if excel_hint:  # a blank line in its place keeps the line numbers of messages right
        sep, data = excel_hint.group(1).decode(), b"\n" + data[excel_hint.end() :]
    else:
        sep = sniff_delimiter(data)
    if decimal == "," and sep == ",":
        raise ValueError(
            f"'{name}' separates its fields with commas, so its numbers cannot also use "
            "decimal commas. Choose decimal points, or save the file with semicolons (;) "
            "between fields (Excel does so where the decimal mark is a comma)."
        )
    names = header(data, sep, name)
    try:
        df = _parse_csv(data, sep, names, max_rows, decimal=decimal)
    except pd.errors.EmptyDataError:
        raise_empty(name, len(data))
    except UnicodeDecodeError:
        raise_not_utf8(data, name)
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        _check_field_counts(data, sep, len(names), name)
        raise _parser_error(name, exc) from None
    if len(df) == 0:
        raise ValueError(
            f"'{name}' has a header row ({', '.join(names[:10])}"
            f"{', ...' if len(names) > 10 else ''}) but no data rows. Upload a file with at least "
            "one row of data below the header."
        )
    check_row_limit(len(df), max_rows, name)
    if df[names[-1]].isna().any():
        _check_field_counts(data, sep, len(names), name)
    # Types that differ between chunks, and decimals that may be whole numbers beyond int64
    # (the parser reads 20-digit codes with a missing cell as rounded decimals): the cells'
    # text, read again whole and typed by ``clean``.
    mixed = [c for c, dtype in df.dtypes.items() if dtype == np.dtype(object)]
    mixed += _beyond_int64_as_floats(df)
    if mixed:
        again = _parse_csv(data, sep, names, max_rows, usecols=mixed, dtype=str)
        for column in mixed:
            df[column] = again[column]
    typed = set(names) - set(mixed)
    spaces = len(names) < _WIDE or may_have_edge_spaces(data, sep)
    cleaned = clean(df, infer_numbers=True, typed_by_parser=typed, edge_spaces_possible=spaces,
                    decimal=decimal)  # fmt: skip
    table = _without_empty_rows(cleaned)
    return LoadedTable(table.frame, ((boms_note(boms),) if boms else ()) + table.notes)


def _beyond_int64_as_floats(df: pd.DataFrame) -> list:
    """Float columns holding a finite magnitude no int64 holds."""
    columns = []
    for positions, values in float_blocks(df):
        with np.errstate(invalid="ignore"):  # NaN compares False: missing cells are no codes
            beyond = (values >= 2.0**63) | (values <= -(2.0**63))
        for j in np.flatnonzero(beyond.any(axis=0)):  # infinities too; rare, so told apart here
            if np.isfinite(values[:, j][beyond[:, j]]).any():
                columns.append(df.columns[positions[j]])
    return columns


_BOM = b"\xef\xbb\xbf"
_WIDE = 1_000
"""Columns from which a file's bytes are looked at once for spaces around cells, rather than
each text column on its own (which costs about 0.1 ms a column), and which are parsed in one
pass when the file is at most :data:`_WIDE_IN_ONE_PASS_BYTES`."""
_WIDE_IN_ONE_PASS_BYTES = 256 * 1024**2


def _without_inner_boms(data: bytes) -> tuple[bytes, int]:
    """The file without byte-order marks other than one at its start, and how many there were.

    A mark inside the text (where files were joined, or a doubled one at the start) would
    become part of a name or a label, invisible: "\ufeffb" a group apart from "b". Only a file
    holding one is copied."""
    if data.find(_BOM[:1], 1) < 0:  # no 0xEF byte past the start (memchr: most files, fast)
        return data, 0
    inner = data.count(_BOM) - data.startswith(_BOM)
    return (data.replace(_BOM, b""), inner) if inner else (data, 0)


def _without_empty_rows(table: LoadedTable) -> LoadedTable:
    """Leave out rows with no value in any column (``,,,,`` lines, as spreadsheets export
    their blank rows, or cells all marked missing): they tell nothing about anybody, and
    would count as people in groups of missing values. Only rows whose last cell is missing
    are looked at, so a file without such rows is not scanned again."""
    df = table.frame
    last_missing = df[df.columns[-1]].isna()
    if not last_missing.any():
        return table
    candidates = df.loc[last_missing]
    empty = candidates.index[candidates.isna().all(axis=1)]
    if empty.empty:
        return table
    if len(empty) == len(df):
        raise ValueError(
            "The file has no value in any of its rows: every cell is empty. Upload the table "
            "with its data."
        )
    kept = df.drop(index=empty).reset_index(drop=True)
    for column in kept.columns:  # whole numbers the empty rows had turned into decimals
        s = kept[column]
        if s.dtype.kind == "f" and s.notna().all() and np.array_equal(s, np.floor(s)):
            if np.abs(s).max() < 2.0**53:  # exactly representable, so exactly whole
                kept[column] = s.astype(np.int64)
    many = len(empty) > 1
    note = (
        f"{len(empty):,} row{'s' if many else ''} with no value in any column (every cell "
        f"empty or marked missing, as in “,,,”) {'were' if many else 'was'} left out."
    )
    return LoadedTable(kept, (*table.notes, note))


def _parse_csv(data: bytes, sep: str, names: list[str], max_rows: int, **options) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pd.errors.DtypeWarning)  # handled by the caller
        # pandas drops the extra fields of a first data row longer than the names, with only
        # this warning: it must stop the read.
        warnings.simplefilter("error", pd.errors.ParserWarning)
        return pd.read_csv(
            io.BytesIO(data),
            sep=sep,
            header=0,
            names=names,
            index_col=False,
            encoding="utf-8",  # a byte-order mark is on the header line, which names replace
            engine="c",
            on_bad_lines="error",
            na_values=list(MISSING_TOKENS),
            keep_default_na=False,
            # Spaces after a separator only matter before a quote (`a, "b,c"`); skipping them
            # costs a third of the parse, so only files with such a quote pay it.
            skipinitialspace=b'"' in data and f'{sep} "'.encode() in data,
            skip_blank_lines=True,
            nrows=max_rows + 1,
            # The low-memory mode parses in chunks and joins each column's pieces: for a
            # wide file that joining takes longer than the parse, and its memory is small.
            low_memory=len(names) < _WIDE or len(data) > _WIDE_IN_ONE_PASS_BYTES,
            **options,
        )


def _parser_error(name: str, exc: Exception) -> ValueError:
    msg = str(exc)
    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
    if m:
        return ValueError(
            f"'{name}': line {m.group(2)} has {m.group(3)} fields, but the header has "
            f"{m.group(1)} columns. Check that line for a missing or extra separator."
        )
    return ValueError(
        f"'{name}' could not be parsed as CSV ({msg.strip()}). Check for an unclosed double "
        'quote (").'
    )
