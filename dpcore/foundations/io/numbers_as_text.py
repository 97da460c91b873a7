"""Why a column of numbers was read as text, and what would fix it."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from dpcore.foundations.io.cleaning import is_text_column

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


_MAY_BE_A_NUMBER = re.compile(
    r"\s*[-+\u2212]?\s*(?:[$€£¥₹]\s*|(?:USD|EUR|GBP)\s+)?[-+\u2212]?\s*(?:\d|\.|inf|nan)", re.I
)
"""How every cell :func:`_written_as` takes for a number begins (a sign, a currency, a digit,
a point, inf or nan): a cell that begins otherwise is text, whatever follows."""
_FEW_ROWS = 1_000


def explain_columns(frame: pd.DataFrame) -> tuple[str, ...]:
    """:func:`explain_not_numeric` of every column of ``frame`` that it explains, in order.

    A frame of at most 1,000 rows (a wide file's shape) has its text cells looked at all at
    once first: a column of which at most half the cells begin like a number is ordinary text,
    and only the others are explained one by one, so 100,000 text columns cost one pass rather
    than 100,000 (about 0.5 ms each)."""
    columns = [c for c, dtype in frame.dtypes.items() if not pd.api.types.is_numeric_dtype(dtype)]
    if len(frame) <= _FEW_ROWS and columns:
        cells = frame[columns].to_numpy(dtype=object)
        filled = pd.notna(cells)
        begins = np.zeros(cells.shape, dtype=bool)
        begins[filled] = [bool(_MAY_BE_A_NUMBER.match(str(cell))) for cell in cells[filled]]
        columns = [c for c, n, k in zip(columns, begins.sum(0), filled.sum(0), strict=True)
                   if 2 * n > k]  # fmt: skip
    explained = (explain_not_numeric(frame[c], str(c)) for c in columns)
    return tuple(message for message in explained if message is not None)


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
    if pd.api.types.is_numeric_dtype(series) or not is_text_column(series):
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
