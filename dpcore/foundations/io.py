"""Reading uploaded tables safely.

:func:`read_table` turns the bytes of an uploaded CSV or Parquet file into a DataFrame, or raises
a ``ValueError`` whose message says what is wrong with the file and how to fix it (the UI shows
it as is).

Pure pandas/pyarrow; never imports streamlit or plotly.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from dpcore.foundations.validation import positive_int

__all__ = [
    "CSV_EXTENSIONS",
    "MISSING_TOKENS",
    "PARQUET_EXTENSIONS",
    "LoadedTable",
    "explain_not_numeric",
    "load_table",
    "read_table",
]

CSV_EXTENSIONS = (".csv", ".txt", ".csv.gz")
PARQUET_EXTENSIONS = (".parquet", ".pq")

MISSING_TOKENS = ("", "?", "NA", "NaN", "nan")
"""Cell texts read as missing (after stripping whitespace), in CSV text and Parquet strings."""

DEFAULT_MAX_ROWS = 5_000_000
DEFAULT_MAX_BYTES = 1024**3
"""The most a table may take once decompressed and decoded (1 GiB): 5 million rows of about 200
bytes. A compressed file that would inflate beyond it is refused while inflating."""
_INFLATE_CHUNK_BYTES = 8 * 1024**2
_DELIMITERS = (",", ";", "\t", "|")
_EXCEL_SEP_LINE = re.compile(rb"(?:\xef\xbb\xbf)?sep=([,;\t|])\r?\n")

# Magic numbers of files people upload by mistake, so we can say what the file looks like.
_MAGIC = (
    (b"PK\x03\x04", "a ZIP archive or an Excel workbook (.xlsx)", "Export the sheet as CSV UTF-8."),
    (b"\xd0\xcf\x11\xe0", "an old Excel workbook (.xls)", "Export the sheet as CSV UTF-8."),
    (b"PAR1", "a Parquet file", "Give it the extension .parquet."),
    (b"\x1f\x8b", "a gzip-compressed file", "Give it the extension .csv.gz."),
    (b"\x89PNG", "a PNG image", "Upload the data table instead."),
    (b"\xff\xd8\xff", "a JPEG image", "Upload the data table instead."),
    (b"%PDF", "a PDF document", "Upload the data table instead."),
)


@dataclass(frozen=True)
class LoadedTable:
    """A table read from a file, and what reading it changed (see :func:`load_table`)."""

    frame: pd.DataFrame
    notes: tuple[str, ...] = ()
    """Plain sentences for the user about columns read differently from how the file stores
    them (left out, renamed, or turned into decimals); empty when nothing was."""


def read_table(
    data: bytes,
    filename: str,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> pd.DataFrame:
    """The DataFrame of :func:`load_table` (its notes dropped)."""
    return load_table(data, filename, max_rows=max_rows, max_bytes=max_bytes).frame


def load_table(
    data: bytes,
    filename: str,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> LoadedTable:
    """Parse an uploaded CSV or Parquet file into a DataFrame, with notes on what changed.

    Parameters
    ----------
    data
        The file's bytes.
    filename
        The file's name; its extension picks the format: ``.csv``, ``.txt``, ``.csv.gz``
        (gzip-compressed CSV), ``.parquet`` or ``.pq`` (case-insensitive).
    max_rows
        Refuse tables with more data rows than this.
    max_bytes
        Refuse tables larger than this once decompressed (gzip) or decoded (Parquet), checked
        while inflating and, for Parquet, from the file's metadata and its dictionaries before
        any column is materialised; a file refused so never takes much more memory than this.

    Returns
    -------
    LoadedTable
        ``frame``: column names and string cells stripped of surrounding whitespace; the cell
        texts ``""``, ``"?"``, ``"NA"``, ``"NaN"`` and ``"nan"`` (after stripping) are missing
        values. CSV columns get pandas' type inference (a text column whose stripped cells are
        all numbers becomes numeric); whole numbers beyond the 64-bit range become decimals
        (float64). Parquet decimal columns become float64; nested Parquet columns (struct,
        list, map) are left out, as they can be neither a value nor a group; a stored index
        becomes a column, renamed "<name> (index)" if a column has its name. ``notes`` says
        which of these happened, naming the columns.

    Raises
    ------
    TypeError
        If ``data`` is not bytes or ``filename`` is not a string.
    ValueError
        With a message for the user, for: an unsupported extension; an empty file; a CSV that
        is binary (a NUL byte anywhere), not UTF-8, has only a header, has a row with the wrong
        number of fields, or an unclosed quote; a Parquet file that cannot be read; duplicate column names; more than
        ``max_rows`` rows or ``max_bytes`` bytes; memory running out while reading.

    Notes
    -----
    The CSV delimiter is the one of ``,`` ``;`` tab ``|`` that splits the header record into the
    most fields, quotes respected (``,`` if none splits it). A UTF-8 byte-order mark is ignored.
    Lines may end in LF, CRLF or CR alone. Blank lines are skipped, and so are rows with no
    value in any column (``,,,``), with a note.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"`data` must be bytes, got {type(data).__name__}")
    if not isinstance(filename, str):
        raise TypeError(f"`filename` must be a string, got {type(filename).__name__}")
    max_rows = positive_int("max_rows", max_rows)
    max_bytes = positive_int("max_bytes", max_bytes)
    data = bytes(data)
    name = filename.strip() or "the file"
    lower = name.lower()
    try:
        return _read_by_extension(data, name, lower, max_rows, max_bytes)
    except MemoryError:  # pyarrow's ArrowMemoryError is a MemoryError too
        raise ValueError(
            f"'{name}' needs more memory than this machine has free to read. Upload a sample or "
            "a subset of the table, or drop columns you do not need."
        ) from None


def _read_by_extension(
    data: bytes, name: str, lower: str, max_rows: int, max_bytes: int
) -> LoadedTable:
    if lower.endswith(PARQUET_EXTENSIONS):
        return _read_parquet(data, name, max_rows, max_bytes)
    if lower.endswith(".csv.gz"):
        return _read_csv(_gunzip(data, name, max_bytes), name, max_rows)
    if lower.endswith((".csv", ".txt")):
        return _read_csv(data, name, max_rows)
    suffix = "." + lower.rsplit(".", 1)[-1] if "." in lower else "no extension"
    raise ValueError(
        f"'{name}' has an unsupported file type ({suffix}). Supported: "
        f"{', '.join(CSV_EXTENSIONS + PARQUET_EXTENSIONS)}. Save the table as CSV (UTF-8) or "
        "Parquet and upload it again."
    )


# --------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------


def _gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """Inflate gzip members chunk by chunk, refusing as soon as the output passes ``max_bytes``:
    a small file that inflates to gigabytes (a decompression bomb) never lands in memory."""
    if not data:
        _raise_empty(name, 0)
    out = bytearray()
    rest = data
    try:
        while rest:  # one gzip member per round (concatenated gzip files are valid gzip)
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            chunk = inflater.decompress(rest, _INFLATE_CHUNK_BYTES)
            while chunk:
                out += chunk
                if len(out) > max_bytes:
                    raise ValueError(
                        f"'{name}' decompresses to more than {_show_bytes(max_bytes)}, the "
                        "limit; upload a smaller sample of the table."
                    )
                chunk = inflater.decompress(inflater.unconsumed_tail, _INFLATE_CHUNK_BYTES)
            if not inflater.eof:
                raise zlib.error("the compressed data ends early")
            rest = inflater.unused_data.lstrip(b"\0")  # gzip allows zero padding after a member
    except zlib.error as exc:
        raise ValueError(
            f"'{name}' is not a valid gzip file ({exc}). Upload the plain .csv file, or compress "
            "it again with gzip."
        ) from None
    return bytes(out)


def _show_bytes(size: int) -> str:
    return f"{size / 1024**3:g} GiB" if size >= 1024**3 else f"{size / 1024**2:g} MiB"


def _raise_empty(name: str, size: int) -> None:
    what = "0 bytes" if size == 0 else "only whitespace"
    raise ValueError(
        f"'{name}' is empty ({what}). Upload a file with a header row of column names and at "
        "least one data row."
    )


def _check_bytes(data: bytes, name: str) -> None:
    """Refuse empty, UTF-16 and binary files before parsing (UTF-8 is checked while parsing)."""
    if not data or data.isspace():
        _raise_empty(name, len(data))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(
            f"'{name}' is encoded as UTF-16, not UTF-8. Re-save it as 'CSV UTF-8' (in Excel: "
            "Save As → CSV UTF-8) and upload it again."
        )
    for magic, what, fix in _MAGIC:
        if data.startswith(magic):
            raise ValueError(f"'{name}' looks like {what}, not a CSV text file. {fix}")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(
            f"'{name}' looks like a binary file, not CSV: it contains a NUL byte (line "
            f"{_line_of(data, nul):,}). Upload a comma-separated text file saved as UTF-8, or a "
            "Parquet file."
        )


def _line_of(data: bytes, offset: int) -> int:
    """The line (from 1) that byte ``offset`` is on, whether lines end in LF, CRLF or CR."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def _raise_not_utf8(data: bytes, name: str) -> None:
    """Name the first byte that is not UTF-8 (called once parsing has found one)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"'{name}' is not valid UTF-8 text: byte 0x{data[exc.start : exc.start + 1].hex()} "
            f"at byte offset {exc.start:,} (line {_line_of(data, exc.start):,}) cannot be "
            "decoded. Re-save the file with UTF-8 encoding (in Excel: Save As → CSV UTF-8) and "
            "upload it again."
        ) from None


def _records(data: bytes, sep: str, strict: bool = True) -> Iterator[list[str]]:
    """The file's CSV records, decoded as they are read (the whole text is never held at once),
    a byte-order mark dropped and LF, CRLF or CR alone ending a line."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    return csv.reader(text, delimiter=sep, strict=strict)


def _sniff_delimiter(data: bytes) -> str:
    """The delimiter that splits the header record into the most fields, reading quotes as CSV
    does (a quoted "notes; a; b" is one field); ties go to the earlier of , ; tab |."""
    fields = {}
    for sep in _DELIMITERS:
        try:
            fields[sep] = len(_first_record(data, sep) or ())
        except (csv.Error, UnicodeDecodeError):
            fields[sep] = 0
    best = max(_DELIMITERS, key=lambda d: fields[d])
    return best if fields[best] > 1 else ","


def _first_record(data: bytes, sep: str) -> list[str] | None:
    """The first non-blank record, however long; only the lines it spans are read."""
    return next((row for row in _records(data, sep) if row), None)


def _header(data: bytes, sep: str, name: str) -> list[str]:
    """Column names of the first non-blank record, stripped, with duplicates refused."""
    try:
        raw = _first_record(data, sep)
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise ValueError(
                f"'{name}': a name in the header row is longer than {csv.field_size_limit():,} "
                "characters. Shorten the column names (or check that the file's first line is "
                "its header) and upload it again."
            ) from None
        raise ValueError(f"'{name}': the header row cannot be parsed as CSV ({exc}).") from None
    except UnicodeDecodeError:
        _raise_not_utf8(data, name)
    if raw is None:
        _raise_empty(name, 1)
    names = [c.strip() or f"Unnamed: {i}" for i, c in enumerate(raw)]
    _check_unique(names, name)
    return names


def _check_unique(names: list[str], name: str) -> None:
    dups = [c for c, count in Counter(names).items() if count > 1]
    if dups:
        where = "; ".join(
            f"{c!r} in columns {', '.join(str(i + 1) for i, n in enumerate(names) if n == c)}"
            for c in dups
        )
        raise ValueError(
            f"'{name}' has duplicate column names (after trimming spaces): {where}. Rename them "
            "so that every column has a unique name, then upload again."
        )


def _first_bad_line(data: bytes, sep: str, expected: int) -> tuple[int, int, int] | None:
    """(first line, last line, field count) of the first record without ``expected`` fields."""
    reader = _records(data, sep, strict=False)
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


def _read_csv(data: bytes, name: str, max_rows: int) -> LoadedTable:
    """Parse with pandas' C parser in its low-memory mode (about 2× the file in memory rather
    than 4×), then check what that mode and the parser let through: columns that mixed types
    across the parser's chunks are read again as text, and rows with too few fields (which
    pandas fills with missing values) are looked for only when the last column has a missing
    value, as every short row has."""
    _check_bytes(data, name)
    # Trailing lines of spaces (common at the end of exported files) would be read as rows;
    # trailing line breaks alone are skipped, so only a file with such spaces is copied.
    if data[-4096:].rstrip(b"\r\n").endswith(b" "):
        data = data.rstrip(b" \r\n")
    excel_hint = _EXCEL_SEP_LINE.match(data)  # Excel's "sep=;" line names the delimiter
    if excel_hint:  # a blank line in its place keeps the line numbers of messages right
        sep, data = excel_hint.group(1).decode(), b"\n" + data[excel_hint.end() :]
    else:
        sep = _sniff_delimiter(data)
    names = _header(data, sep, name)
    try:
        df = _parse_csv(data, sep, names, max_rows)
    except pd.errors.EmptyDataError:
        _raise_empty(name, len(data))
    except UnicodeDecodeError:
        _raise_not_utf8(data, name)
    except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
        _check_field_counts(data, sep, len(names), name)
        raise _parser_error(name, exc) from None
    if len(df) == 0:
        raise ValueError(
            f"'{name}' has a header row ({', '.join(names[:10])}"
            f"{', ...' if len(names) > 10 else ''}) but no data rows. Upload a file with at least "
            "one row of data below the header."
        )
    _check_row_limit(len(df), max_rows, name)
    if df[names[-1]].isna().any():
        _check_field_counts(data, sep, len(names), name)
    mixed = [c for c in df.columns if df[c].dtype == object]
    if mixed:  # types that differ between chunks: the cells' text, read again whole
        again = _parse_csv(data, sep, names, max_rows, usecols=mixed, dtype=str)
        for column in mixed:
            df[column] = again[column]
    return _without_empty_rows(_clean(df, infer_numbers=True))


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


# --------------------------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------------------------


def _read_parquet(data: bytes, name: str, max_rows: int, max_bytes: int) -> LoadedTable:
    if not data or data.isspace():  # without copying the bytes, as strip() would
        _raise_empty(name, len(data))
    if len(data) < 12 or not (data.startswith(b"PAR1") and data.endswith(b"PAR1")):
        raise ValueError(
            f"'{name}' is not a valid Parquet file (Parquet files start and end with 'PAR1'; "
            "the file may be truncated or be another format renamed to .parquet). Export it "
            "again as Parquet, or upload it as CSV."
        )
    try:
        pfile = pq.ParquetFile(io.BytesIO(data))
        n_rows = pfile.metadata.num_rows
        schema = pfile.schema_arrow
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _parquet_error(name, exc) from None
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    names = [str(f.name).strip() for f in schema if f.name not in nested]
    if not names:
        what = "only nested columns (struct, list or map)" if nested else "no columns"
        raise ValueError(f"'{name}' has {what}. Upload a table with at least one column of "
                         "numbers or text.")  # fmt: skip
    _check_unique(names, name)
    if n_rows == 0:
        raise ValueError(
            f"'{name}' has columns ({', '.join(names[:10])}{', ...' if len(names) > 10 else ''}) "
            "but no data rows. Upload a file with at least one row."
        )
    _check_row_limit(n_rows, max_rows, name)
    try:
        table = _read_parquet_within(data, pfile, name, max_bytes, nested)
        df = table.to_pandas()
    except (_TooLargeError, MemoryError):  # Arrow's memory error is an ArrowException too
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise _parquet_error(name, exc) from None
    notes = [_nested_note(nested)] if nested else []
    if not isinstance(df.index, pd.RangeIndex):  # a stored index (e.g. from pandas)
        df, renamed = _index_as_columns(df)
        notes += [_index_note(old, new) for old, new in renamed]
    names = [str(c).strip() or f"Unnamed: {i}" for i, c in enumerate(df.columns)]
    _check_unique(names, name)
    df.columns = names
    loaded = _clean(df, infer_numbers=False)
    return LoadedTable(loaded.frame, tuple(notes) + loaded.notes)


def _nested_note(columns: list[str]) -> str:
    return (
        f"Left out {_column_list(columns)}: nested values (struct, list or map) can be neither "
        "a value to estimate nor a group. Flatten them into plain columns to use them."
    )


def _column_list(columns: list[str]) -> str:
    named = ", ".join(f"`{c}`" for c in columns)
    return f"column {named}" if len(columns) == 1 else f"columns {named}"


def _index_as_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """The stored index levels as ordinary columns; a level named like a column (pandas stores
    such an index under another name) becomes "<name> (index)". Returns the renames."""
    columns = {str(c).strip() for c in df.columns}
    renamed = []
    levels = []
    for level in df.index.names:
        if level is not None and str(level).strip() in columns:
            renamed.append((str(level), f"{level} (index)"))
            levels.append(f"{level} (index)")
        else:
            levels.append(level)
    return df.rename_axis(index=levels).reset_index(), renamed


def _index_note(old: str, new: str) -> str:
    return (
        f"The file stores an index named `{old}` as well as a column `{old}`; the index is the "
        f"column `{new}`."
    )


def _read_parquet_within(
    data: bytes, pfile: pq.ParquetFile, name: str, max_bytes: int, nested: list[str]
) -> pa.Table:
    """The file's table without its ``nested`` columns and with decimals as float64, after
    checking it stays within ``max_bytes`` once decoded.

    The metadata gives every column chunk's uncompressed size, but a dictionary-encoded column
    is stored as its distinct values plus indices: a few long strings repeated a million times
    take kilobytes on disk and gigabytes decoded. Text columns are therefore read as
    dictionaries (memory bounded by the metadata's sizes), and their decoded size, the sum of
    the lengths of the values the indices point at, is checked before any is decoded.
    """
    metadata = pfile.metadata
    stored = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    if stored > max_bytes:
        _raise_too_large(name, max_bytes)
    fields = [f for f in pfile.schema_arrow if f.name not in nested]
    # Run-length or dictionary encoding stores a million equal numbers in a few bytes; decoded,
    # each fixed-width column takes its width times the rows, known before reading.
    fixed = sum(metadata.num_rows * _byte_width(f.type) for f in fields)
    if fixed > max_bytes:
        _raise_too_large(name, max_bytes)
    text = [f.name for f in fields if _is_text_type(f.type)]
    table = pq.ParquetFile(io.BytesIO(data), read_dictionary=text).read(
        columns=[f.name for f in fields], use_pandas_metadata=True
    )
    decoded = sum(_decoded_bytes(column) for column in table.columns)
    if decoded > max_bytes:
        _raise_too_large(name, max_bytes)
    # Decoded text as stored; decimals as float64, which pandas computes with (as objects they
    # would be neither numbers nor text to the app).
    wanted = pa.schema(
        [f.with_type(pa.float64()) if pa.types.is_decimal(f.type) else f for f in fields],
        metadata=table.schema.metadata,
    )
    return table.cast(wanted)


_TEXT_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
               pa.types.is_large_binary)  # fmt: skip


def _byte_width(arrow_type: pa.DataType) -> float:
    """Bytes a value of a fixed-width type takes decoded (0 for text, counted after reading)."""
    try:
        return arrow_type.bit_width / 8
    except ValueError:  # not fixed-width
        return 0.0


def _is_text_type(arrow_type: pa.DataType) -> bool:
    return any(is_type(arrow_type) for is_type in _TEXT_TYPES)


def _decoded_bytes(column: pa.ChunkedArray) -> int:
    """Bytes ``column`` takes once its dictionaries are decoded (its own size otherwise)."""
    if not pa.types.is_dictionary(column.type):
        return column.nbytes
    total = 0
    for chunk in column.chunks:
        lengths = pc.binary_length(chunk.dictionary).fill_null(0)
        total += pc.sum(pc.take(lengths, chunk.indices)).as_py() or 0
        total += chunk.indices.nbytes
    return total


class _TooLargeError(ValueError):
    """A table over the byte limit (told apart from Arrow's own ValueErrors)."""


def _raise_too_large(name: str, max_bytes: int) -> None:
    raise _TooLargeError(
        f"'{name}' takes more than {_show_bytes(max_bytes)} once decoded, the limit. Upload a "
        "sample or a subset of the table, or drop columns you do not need."
    )


def _parquet_error(name: str, exc: Exception) -> ValueError:
    return ValueError(
        f"'{name}' could not be read as Parquet ({str(exc).strip() or type(exc).__name__}). The "
        "file may be damaged or use an unsupported feature; export it again, or upload it as CSV."
    )


# --------------------------------------------------------------------------------------------
# Shared
# --------------------------------------------------------------------------------------------


def _check_row_limit(n_rows: int, max_rows: int, name: str) -> None:
    if n_rows > max_rows:
        raise ValueError(
            f"'{name}' has more than {max_rows:,} rows, the limit. Upload a sample or a subset of "
            "the table."
        )


def _is_text_column(series: pd.Series) -> bool:
    if isinstance(series.dtype, pd.StringDtype):
        return True
    if series.dtype == object:
        return pd.api.types.infer_dtype(series, skipna=True) in ("string", "empty")
    return False


def _clean(df: pd.DataFrame, *, infer_numbers: bool) -> LoadedTable:
    """Strip text cells, turn :data:`MISSING_TOKENS` into missing values, re-infer numbers.

    Only the columns that change are replaced in ``df``, so numeric columns are never copied.
    """
    too_large = []
    for col in df.columns:
        s = original = df[col]
        if isinstance(s.dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(
            s.cat.categories, skipna=True
        ) in ("string", "empty"):
            s = s.astype("str")
        if _is_text_column(s):
            s = _stripped(s, tokens_are_missing=infer_numbers)
            if infer_numbers and s.notna().any():
                s = _maybe_numeric(s)
        if _beyond_int64(s):
            s = s.astype(np.float64)
            too_large.append(str(col))
        if s is not original:
            df[col] = s
    notes = (
        f"The {_column_list(too_large)} held whole numbers beyond the 64-bit range "
        "(about ±9.2 × 10¹⁸): they are read as decimals, which keep their first 15–17 digits.",
    ) if too_large else ()  # fmt: skip
    return LoadedTable(df, notes)


def _beyond_int64(s: pd.Series) -> bool:
    """Whole numbers pandas could not hold as int64: Python ints in an object column, or
    unsigned 64-bit values above the int64 range (which nothing downstream expects)."""
    if s.dtype == object:
        return pd.api.types.infer_dtype(s, skipna=True) == "integer"
    return s.dtype == np.uint64 and bool((s > np.iinfo(np.int64).max).any())


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


def _maybe_numeric(s: pd.Series) -> pd.Series:
    """``s`` as numbers if every non-missing cell is a number, else ``s`` unchanged."""
    try:
        pd.to_numeric(s.dropna().head(1000))  # cheap early exit for text columns
        return pd.to_numeric(s)
    except (TypeError, ValueError):
        return s


# --------------------------------------------------------------------------------------------
# Numbers written as text
# --------------------------------------------------------------------------------------------

_CURRENCY = re.compile(r"^\s*[-+]?\s*[$€£¥₹]\s*|\s*[$€£¥₹]\s*$|^\s*(?:USD|EUR|GBP)\s+", re.I)
_THOUSANDS = re.compile(r"^[-+]?\d{1,3}([,_ \u00a0\u202f])\d{3}(?:\1\d{3})*(?:\.\d+)?$")
_UNICODE_MINUS = "\u2212"
_DECIMAL_COMMA = re.compile(r"^[-+]?(?:\d{1,3}(?:[. ]\d{3})+|\d+),\d+$")
_PERCENT = re.compile(r"^([-+]?[\d.,]+)\s*%$")
_EXAMPLES = 3
_CLASSIFIED = 10_000  # bad cells whose way of writing is looked at (Python, cell by cell)

_FIXES = {
    "currency": "a currency sign ($, €, £ …): remove it and any thousands separators",
    "thousands": "a thousands separator (“,”, a space or “_”): remove it",
    "minus": "a typographic minus sign (−): write a hyphen-minus (-) instead",
    "decimal comma": "a decimal comma: write a decimal point instead (3,25 → 3.25)",
    "percent": "a percent sign: remove it (12% then reads as 12)",
}


def explain_not_numeric(series: pd.Series, column: str) -> str | None:
    """Why a column that is mostly numbers was read as text, and what would fix it; None for a
    numeric column or ordinary text (names, categories).

    A text column counts as mostly numbers when more than half of its non-missing cells are
    numbers, as they are or once a currency sign, thousands separators, a decimal comma or a
    percent sign is removed (judged on its first 1,000 cells, then on all of them). The message
    says how many cells are not plain numbers, shows the first few with their row numbers (data
    rows counted from 1, the header not counted), and names each way of writing found (among
    the first 10,000 such cells) with its fix; cells that are not numbers in any of these ways
    (such as "n/a") are named as such.
    """
    if pd.api.types.is_numeric_dtype(series) or not _is_text_column(series):
        return None
    cells = series.dropna().astype(str)
    head = cells.head(1000)
    if cells.empty or (head.map(_written_as) == "text").mean() >= 0.5:
        return None
    bad = cells[pd.to_numeric(cells, errors="coerce").isna()]
    kinds = bad.head(_CLASSIFIED).map(_written_as)
    numbers = len(cells) - len(bad) + (kinds != "text").mean() * len(bad) if len(bad) else 0
    if bad.empty or numbers <= len(cells) / 2:
        return None
    rows = series.index.get_indexer(bad.index[:_EXAMPLES]) + 1
    shown = ", ".join(f"row {r:,} “{t}”" for r, t in zip(rows, bad.head(_EXAMPLES), strict=True))
    fixes = [f"cells with {_FIXES[kind]}" for kind in _FIXES if (kinds == kind).any()]
    words = bad.head(_CLASSIFIED)[kinds == "text"]
    if not words.empty:
        fixes.append(
            f"cells that are words or symbols, not numbers (such as “{words.iloc[0]}”): clear "
            "them, or write NA where a value is missing"
        )
    return (
        f"`{column}` was read as text: {len(bad):,} of {len(cells):,} cells are not plain "
        f"numbers, e.g. {shown}. To use it as numbers, fix these in the file and upload it "
        f"again: {'; '.join(fixes)}."
    )


def _written_as(text: str) -> str:
    """How a cell writes its number: "plain", "currency", "thousands", "minus", "decimal
    comma", "percent", or "text" when it is not a number in any of these ways."""
    if _is_number(text):
        return "plain"
    bare = _CURRENCY.sub("", text)
    if bare != text and _written_as(bare) != "text":
        return "currency"
    if _THOUSANDS.match(text):
        return "thousands"
    if text.startswith(_UNICODE_MINUS) and _written_as("-" + text[1:]) != "text":
        return "minus"
    if _DECIMAL_COMMA.match(text):
        return "decimal comma"
    percent = _PERCENT.match(text)
    if percent and _written_as(percent.group(1)) != "text":
        return "percent"
    return "text"


def _is_number(text: str) -> bool:
    """Whether pandas reads ``text`` as a number (Python's ``float`` also takes "1_000")."""
    try:
        float(text)
    except ValueError:
        return False
    return "_" not in text
