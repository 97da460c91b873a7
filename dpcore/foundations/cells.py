"""Text cells made safe for a spreadsheet, for every CSV download (a release, an audit trail)."""

from __future__ import annotations

import re

__all__ = ["escape_cell"]

_FORMULA_PREFIXES = ("=", "+", "-", "@")
# C0 and C1 control characters (tab, CR and LF among them), DEL and Unicode's line and paragraph
# separators: each could start a new physical line in some reader, and that line could begin
# with a formula.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _visible(text: str) -> str:
    """``text`` with every control character written as its escape (CR as ``\\r``, ESC as
    ``\\x1b``), so that it stays on one line and shows what was there."""
    return _CONTROL.sub(lambda match: match.group().encode("unicode_escape").decode(), text)


def escape_cell(value: object) -> object:
    """A text cell made safe for a spreadsheet: control characters escaped (:func:`_visible`),
    then a leading ' before text starting with = + - or @.

    Numbers are left as numbers (a negative number is data, not a formula); only text cells,
    which a spreadsheet could evaluate (e.g. a group called ``=HYPERLINK(...)``), are escaped.
    """
    if not isinstance(value, str):
        return value
    value = _visible(value)
    return "'" + value if value.startswith(_FORMULA_PREFIXES) else value
