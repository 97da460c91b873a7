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
import zlib
from collections import Counter
from collections.abc import Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from dpcore._validate import positive_int

__all__ = ["CSV_EXTENSIONS", "MISSING_TOKENS", "PARQUET_EXTENSIONS", "read_table"]

CSV_EXTENSIONS = (".csv", ".txt", ".csv.gz")
PARQUET_EXTENSIONS = (".parquet", ".pq")

MISSING_TOKENS = ("", "?", "NA", "NaN", "nan")
"""Cell texts read as missing (after stripping whitespace), in CSV text and Parquet strings."""

DEFAULT_MAX_ROWS = 5_000_000
DEFAULT_MAX_BYTES = 1024**3
"""The most a table may take once decompressed and decoded (1 GiB): 5 million rows of about 200
bytes. A compressed file that would inflate beyond it is refused while inflating."""
_INFLATE_CHUNK_BYTES = 8 * 1024**2
_SNIFF_BYTES = 8192
_DELIMITERS = (",", ";", "\t", "|")

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


def read_table(
    data: bytes,
    filename: str,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> pd.DataFrame:
    """Parse an uploaded CSV or Parquet file into a DataFrame.

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
    pandas.DataFrame
        Column names and string cells stripped of surrounding whitespace; the cell texts
        ``""``, ``"?"``, ``"NA"``, ``"NaN"`` and ``"nan"`` (after stripping) are missing values.
        CSV columns get pandas' type inference (a text column whose stripped cells are all
        numbers becomes numeric).

    Raises
    ------
    TypeError
        If ``data`` is not bytes or ``filename`` is not a string.
    ValueError
        With a message for the user, for: an unsupported extension; an empty file; a CSV that
        is binary, not UTF-8, has only a header, has a row with the wrong number of fields, or an
        unclosed quote; a Parquet file that cannot be read; duplicate column names; more than
        ``max_rows`` rows or ``max_bytes`` bytes; memory running out while reading.

    Notes
    -----
    The CSV delimiter is the one of ``,`` ``;`` tab ``|`` that splits the header record into the
    most fields, quotes respected (``,`` if none splits it). A UTF-8 byte-order mark is ignored.
    Blank lines are skipped.
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
) -> pd.DataFrame:
    if lower.endswith(PARQUET_EXTENSIONS):
        df = _read_parquet(data, name, max_rows, max_bytes)
    elif lower.endswith(".csv.gz"):
        df = _read_csv(_gunzip(data, name, max_bytes), name, max_rows)
    elif lower.endswith((".csv", ".txt")):
        df = _read_csv(data, name, max_rows)
    else:
        suffix = "." + lower.rsplit(".", 1)[-1] if "." in lower else "no extension"
        raise ValueError(
            f"'{name}' has an unsupported file type ({suffix}). Supported: "
            f"{', '.join(CSV_EXTENSIONS + PARQUET_EXTENSIONS)}. Save the table as CSV (UTF-8) "
            "or Parquet and upload it again."
        )
    return df


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


def _check_text(data: bytes, name: str) -> str:
    """Refuse binary and non-UTF-8 files; return the decoded text (without a BOM)."""
    if not data.strip():
        _raise_empty(name, len(data))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(
            f"'{name}' is encoded as UTF-16, not UTF-8. Re-save it as 'CSV UTF-8' (in Excel: "
            "Save As → CSV UTF-8) and upload it again."
        )
    head = data[:_SNIFF_BYTES]
    for magic, what, fix in _MAGIC:
        if head.startswith(magic):
            raise ValueError(f"'{name}' looks like {what}, not a CSV text file. {fix}")
    if b"\x00" in head:
        raise ValueError(
            f"'{name}' looks like a binary file, not CSV (it contains NUL bytes). Upload a "
            "comma-separated text file saved as UTF-8, or a Parquet file."
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        bad = data[exc.start : exc.start + 1].hex()
        raise ValueError(
            f"'{name}' is not valid UTF-8 text: byte 0x{bad} at byte offset {exc.start:,} "
            f"(line {line:,}) cannot be decoded. Re-save the file with UTF-8 encoding (in Excel: "
            "Save As → CSV UTF-8) and upload it again."
        ) from None


def _sniff_delimiter(text: str) -> str:
    """The delimiter that splits the header record into the most fields, reading quotes as CSV
    does (a quoted "notes; a; b" is one field); ties go to the earlier of , ; tab |."""
    fields = {}
    for sep in _DELIMITERS:
        try:
            fields[sep] = len(_first_record(text, sep) or ())
        except csv.Error:
            fields[sep] = 0
    best = max(_DELIMITERS, key=lambda d: fields[d])
    return best if fields[best] > 1 else ","


def _first_record(text: str, sep: str) -> list[str] | None:
    """The first non-blank record, however long; only the lines it spans are read."""
    return next((row for row in csv.reader(_lines(text), delimiter=sep) if row), None)


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one at a time, without copying the rest of it."""
    start = 0
    while start < len(text):
        end = text.find("\n", start) + 1 or len(text)
        yield text[start:end]
        start = end


def _header(text: str, sep: str, name: str) -> list[str]:
    """Column names of the first non-blank record, stripped, with duplicates refused."""
    try:
        raw = _first_record(text, sep)
    except csv.Error as exc:
        raise ValueError(f"'{name}': the header row cannot be parsed as CSV ({exc}).") from None
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


def _first_bad_line(text: str, sep: str, expected: int) -> tuple[int, int, int] | None:
    """(first line, last line, field count) of the first record without ``expected`` fields."""
    reader = csv.reader(io.StringIO(text), delimiter=sep, strict=False)
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


def _check_field_counts(data: bytes, text: str, sep: str, expected: int, name: str) -> None:
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
        where = _first_bad_line(text, sep, expected)
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


def _read_csv(data: bytes, name: str, max_rows: int) -> pd.DataFrame:
    text = _check_text(data, name)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    # Trailing blank lines or spaces (common at the end of exported files) are not rows.
    data = data.rstrip(b" \r\n") + b"\n"
    text = text.rstrip(" \r\n") + "\n"
    sep = _sniff_delimiter(text)
    names = _header(text, sep, name)
    _check_field_counts(data, text, sep, len(names), name)
    try:
        df = pd.read_csv(
            io.BytesIO(data),
            sep=sep,
            header=0,
            names=names,
            index_col=False,
            encoding="utf-8",
            engine="c",
            on_bad_lines="error",
            na_values=list(MISSING_TOKENS),
            keep_default_na=False,
            skipinitialspace=True,
            skip_blank_lines=True,
            nrows=max_rows + 1,
            low_memory=False,
        )
    except pd.errors.EmptyDataError:
        _raise_empty(name, len(data))
    except pd.errors.ParserError as exc:
        msg = str(exc)
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
        if m:
            raise ValueError(
                f"'{name}': line {m.group(2)} has {m.group(3)} fields, but the header has "
                f"{m.group(1)} columns. Check that line for a missing or extra separator."
            ) from None
        raise ValueError(
            f"'{name}' could not be parsed as CSV ({msg.strip()}). Check for an unclosed double "
            'quote (").'
        ) from None
    if len(df) == 0:
        raise ValueError(
            f"'{name}' has a header row ({', '.join(names[:10])}"
            f"{', ...' if len(names) > 10 else ''}) but no data rows. Upload a file with at least "
            "one row of data below the header."
        )
    _check_row_limit(len(df), max_rows, name)
    return _clean(df, infer_numbers=True)


# --------------------------------------------------------------------------------------------
# Parquet
# --------------------------------------------------------------------------------------------


def _read_parquet(data: bytes, name: str, max_rows: int, max_bytes: int) -> pd.DataFrame:
    if not data.strip():
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
        names = [str(c).strip() for c in pfile.schema_arrow.names]
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _parquet_error(name, exc) from None
    if not names:
        raise ValueError(f"'{name}' has no columns. Upload a table with at least one column.")
    _check_unique(names, name)
    if n_rows == 0:
        raise ValueError(
            f"'{name}' has columns ({', '.join(names[:10])}{', ...' if len(names) > 10 else ''}) "
            "but no data rows. Upload a file with at least one row."
        )
    _check_row_limit(n_rows, max_rows, name)
    try:
        table = _read_parquet_within(data, pfile, name, max_bytes)
        df = table.to_pandas()
    except _TooLargeError:
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise _parquet_error(name, exc) from None
    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()  # a stored index (e.g. from pandas) becomes ordinary columns
    names = [str(c).strip() or f"Unnamed: {i}" for i, c in enumerate(df.columns)]
    _check_unique(names, name)
    df.columns = names
    return _clean(df, infer_numbers=False)


def _read_parquet_within(data: bytes, pfile: pq.ParquetFile, name: str, max_bytes: int) -> pa.Table:
    """The file's table, after checking it stays within ``max_bytes`` once decoded.

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
    schema = pfile.schema_arrow
    text = [f.name for f in schema if _is_text_type(f.type)]
    table = pq.ParquetFile(io.BytesIO(data), read_dictionary=text).read()
    decoded = sum(_decoded_bytes(column) for column in table.columns)
    if decoded > max_bytes:
        _raise_too_large(name, max_bytes)
    return table.cast(schema) if text else table


_TEXT_TYPES = (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
               pa.types.is_large_binary)  # fmt: skip


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


def _clean(df: pd.DataFrame, *, infer_numbers: bool) -> pd.DataFrame:
    """Strip text cells, turn :data:`MISSING_TOKENS` into missing values, re-infer numbers."""
    out = {}
    for col in df.columns:
        s = df[col]
        if isinstance(s.dtype, pd.CategoricalDtype) and pd.api.types.infer_dtype(
            s.cat.categories, skipna=True
        ) in ("string", "empty"):
            s = s.astype("str")
        if _is_text_column(s):
            s = s.str.strip()
            s = s.mask(s.isin(MISSING_TOKENS))
            if infer_numbers and s.notna().any():
                s = _maybe_numeric(s)
        out[col] = s
    return pd.DataFrame(out, index=df.index)


def _maybe_numeric(s: pd.Series) -> pd.Series:
    """``s`` as numbers if every non-missing cell is a number, else ``s`` unchanged."""
    try:
        pd.to_numeric(s.dropna().head(1000))  # cheap early exit for text columns
        return pd.to_numeric(s)
    except (TypeError, ValueError):
        return s
