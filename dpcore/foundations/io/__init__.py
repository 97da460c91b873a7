"""Reading uploaded tables safely.

:func:`read_table` turns the bytes of an uploaded CSV or Parquet file into a DataFrame, or raises
a ``ValueError`` whose message says what is wrong with the file and how to fix it (the UI shows
it as is).

Pure pandas/pyarrow; never imports streamlit or plotly.
"""

from __future__ import annotations

import pandas as pd

from dpcore.foundations.io.cleaning import MISSING_TOKENS
from dpcore.foundations.io.csv_text import read_csv
from dpcore.foundations.io.limits import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, gunzip
from dpcore.foundations.io.notes import LoadedTable
from dpcore.foundations.io.numbers_as_text import explain_columns, explain_not_numeric
from dpcore.foundations.io.parquet import read_parquet
from dpcore.foundations.validation import positive_int

__all__ = [
    "CSV_EXTENSIONS",
    "DECIMAL_MARKS",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ROWS",
    "MISSING_TOKENS",
    "PARQUET_EXTENSIONS",
    "LoadedTable",
    "explain_columns",
    "explain_not_numeric",
    "load_table",
    "read_table",
]

CSV_EXTENSIONS = (".csv", ".txt", ".csv.gz")
PARQUET_EXTENSIONS = (".parquet", ".pq")
DECIMAL_MARKS = (".", ",")


def read_table(data: bytes, filename: str, **limits) -> pd.DataFrame:
    """The DataFrame of :func:`load_table` (its notes dropped); ``limits`` are its keywords
    (``max_rows``, ``max_bytes``, ``decimal``), with its defaults."""
    return load_table(data, filename, **limits).frame


def load_table(
    data: bytes,
    filename: str,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    decimal: str = ".",
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
    decimal
        The decimal mark of a CSV file's numbers: ``"."`` (3.25) or ``","`` (3,25, with fields
        separated by ``;``, tab or ``|``: a comma-separated file with decimal commas is
        refused). Parquet stores numbers as numbers and ignores it.

    Returns
    -------
    LoadedTable
        ``frame``: column names and string cells stripped of surrounding whitespace; the cell
        texts ``""``, ``"?"``, ``"NA"``, ``"NaN"`` and ``"nan"`` (after stripping) are missing
        values. CSV columns get pandas' type inference (a text column whose stripped cells are
        all numbers becomes numeric); a column of whole numbers beyond the 64-bit range stays
        text (distinct codes stay distinct); infinite values (“inf”, “1e400”, ±inf in Parquet)
        become missing values; byte-order marks inside the text are removed. Parquet decimal
        columns become float64 (whole-number decimals int64, or text beyond the 64-bit range); nested Parquet columns (struct,
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
        number of fields, or an unclosed quote; a comma-separated file read with decimal
        commas; a Parquet file that cannot be read; duplicate column names (compared once
        trimmed and in one Unicode form, NFC); more than ``max_rows`` rows or ``max_bytes``
        bytes; memory running out while reading.

    Notes
    -----
    The CSV delimiter is the one of ``,`` ``;`` tab ``|`` found most often in the header record
    outside double quotes (``,`` if none is). A UTF-8 byte-order mark at the start is ignored.
    Lines may end in LF, CRLF or CR alone. Blank lines are skipped, and so are rows with no
    value in any column (``,,,``), with a note.
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"`data` must be bytes, got {type(data).__name__}")
    if not isinstance(filename, str):
        raise TypeError(f"`filename` must be a string, got {type(filename).__name__}")
    max_rows = positive_int("max_rows", max_rows)
    max_bytes = positive_int("max_bytes", max_bytes)
    if decimal not in DECIMAL_MARKS:
        raise ValueError(f"`decimal` must be one of {DECIMAL_MARKS}, got {decimal!r}")
    data = bytes(data)
    name = filename.strip() or "the file"
    lower = name.lower()
    try:
        loaded = _read_by_extension(data, name, lower, max_rows, max_bytes, decimal)
    except MemoryError:  # pyarrow's ArrowMemoryError is a MemoryError too
        raise ValueError(
            f"'{name}' needs more memory than this machine has free to read. Upload a sample or "
            "a subset of the table, or drop columns you do not need."
        ) from None
    if decimal != "." and not lower.endswith(PARQUET_EXTENSIONS):
        loaded.frame.attrs["decimal"] = decimal  # a release's script reads the file so again
    return loaded


def _read_by_extension(
    data: bytes, name: str, lower: str, max_rows: int, max_bytes: int, decimal: str
) -> LoadedTable:
    if lower.endswith(PARQUET_EXTENSIONS):
        return read_parquet(data, name, max_rows, max_bytes)
    if lower.endswith(".csv.gz"):
        return read_csv(gunzip(data, name, max_bytes), name, max_rows, decimal)
    if lower.endswith((".csv", ".txt")):
        return read_csv(data, name, max_rows, decimal)
    suffix = "." + lower.rsplit(".", 1)[-1] if "." in lower else "no extension"
    raise ValueError(
        f"'{name}' has an unsupported file type ({suffix}). Supported: "
        f"{', '.join(CSV_EXTENSIONS + PARQUET_EXTENSIONS)}. Save the table as CSV (UTF-8) or "
        "Parquet and upload it again."
    )
