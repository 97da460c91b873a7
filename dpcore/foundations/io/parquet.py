"""Reading Parquet within the byte limit: metadata and dictionaries checked before decoding."""

from __future__ import annotations

import io

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from dpcore.foundations.io.cleaning import clean
from dpcore.foundations.io.limits import (
    TooLargeError,
    check_row_limit,
    raise_empty,
    raise_too_large,
)
from dpcore.foundations.io.notes import (
    LoadedTable,
    beyond_int64_note,
    boms_note,
    column_list,
)
from dpcore.foundations.io.sniffing import check_unique


def read_parquet(data: bytes, name: str, max_rows: int, max_bytes: int) -> LoadedTable:
    if not data or data.isspace():  # without copying the bytes, as strip() would
        raise_empty(name, len(data))
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
    check_unique(names, name)
    if n_rows == 0:
        raise ValueError(
            f"'{name}' has columns ({', '.join(names[:10])}{', ...' if len(names) > 10 else ''}) "
            "but no data rows. Upload a file with at least one row."
        )
    check_row_limit(n_rows, max_rows, name)
    try:
        table = _read_parquet_within(data, pfile, name, max_bytes, nested)
        df = table.to_pandas()
    except (TooLargeError, MemoryError):  # Arrow's memory error is an ArrowException too
        raise
    except (pa.ArrowException, OSError, ValueError, TypeError) as exc:
        raise _parquet_error(name, exc) from None
    notes = [_nested_note(nested)] if nested else []
    if not isinstance(df.index, pd.RangeIndex):  # a stored index (e.g. from pandas)
        df, renamed = _index_as_columns(df)
        notes += [_index_note(old, new) for old, new in renamed]
    boms = sum(str(c).count("\ufeff") for c in df.columns) + _remove_boms_from_text(df)
    names = [str(c).replace("\ufeff", "").strip() or f"Unnamed: {i}"
             for i, c in enumerate(df.columns)]  # fmt: skip
    check_unique(names, name)
    df.columns = names
    notes += [boms_note(boms)] if boms else []
    codes = [f.name for f in schema if pa.types.is_decimal(f.type) and df[f.name].dtype == "str"]
    notes += [beyond_int64_note(codes)] if codes else []
    loaded = clean(df, infer_numbers=False)
    return LoadedTable(loaded.frame, tuple(notes) + loaded.notes)


def _remove_boms_from_text(df: pd.DataFrame) -> int:
    """Remove byte-order marks (U+FEFF) from text cells, where they would make "\ufeffb" a
    label apart from "b"; returns how many there were."""
    removed = 0
    for column, dtype in df.dtypes.items():
        if isinstance(dtype, pd.StringDtype):
            marks = int(df[column].str.count("\ufeff").sum())
            if marks:
                df[column] = df[column].str.replace("\ufeff", "", regex=False)
                removed += marks
    return removed


def _nested_note(columns: list[str]) -> str:
    return (
        f"Left out {column_list(columns)}: nested values (struct, list or map) can be neither "
        "a value to estimate nor a group. Flatten them into plain columns to use them."
    )


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
        raise_too_large(name, max_bytes)
    fields = [f for f in pfile.schema_arrow if f.name not in nested]
    # Run-length or dictionary encoding stores a million equal numbers in a few bytes; decoded,
    # each fixed-width column takes its width times the rows, known before reading.
    fixed = sum(metadata.num_rows * _byte_width(f.type) for f in fields)
    if fixed > max_bytes:
        raise_too_large(name, max_bytes)
    text = [f.name for f in fields if _is_text_type(f.type)]
    table = pq.ParquetFile(io.BytesIO(data), read_dictionary=text).read(
        columns=[f.name for f in fields], use_pandas_metadata=True
    )
    decoded = sum(_decoded_bytes(column) for column in table.columns)
    if decoded > max_bytes:
        raise_too_large(name, max_bytes)
    # Decoded text as stored; decimals as numbers pandas computes with (as objects they would
    # be neither numbers nor text to the app).
    wanted = pa.schema(
        [f.with_type(_decimal_as(table.column(f.name), f.type)) for f in fields],
        metadata=table.schema.metadata,
    )
    return table.cast(wanted)


def _decimal_as(column: pa.ChunkedArray, arrow_type: pa.DataType) -> pa.DataType:
    """The type a column is read as: a decimal of whole numbers (scale 0) as int64 when every
    value fits, as text when one does not (as float64, distinct 20-digit codes would round to
    one number); other decimals as float64; any other type as stored."""
    if not pa.types.is_decimal(arrow_type):
        return arrow_type
    if arrow_type.scale != 0:
        return pa.float64()
    try:
        column.cast(pa.int64())
    except pa.ArrowInvalid:  # a value beyond the 64-bit range
        return pa.string()
    return pa.int64()


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


def _parquet_error(name: str, exc: Exception) -> ValueError:
    return ValueError(
        f"'{name}' could not be read as Parquet ({str(exc).strip() or type(exc).__name__}). The "
        "file may be damaged or use an unsupported feature; export it again, or upload it as CSV."
    )
