"""Strings from data shown as text, never as markdown or HTML (issue 38, item 3).

Streamlit renders markdown in ``st.markdown``, ``st.info``/``warning``/``error``/``success``,
``st.caption``, widget labels, radio options, tabs and expanders: a group label
``![x](http://host/beacon.png)`` would fetch an image there, ``[Verify](http://…)`` become a link,
``:red[…]`` a colour and ``$…$`` a formula. Plotly renders a subset of HTML in every text of a
figure (``<a href>`` a link, ``<b>`` bold). So every string that comes from data — a column
name, a group label, a file name, a cell, a ledger's name, a message quoting any of them — goes
through one of these before it is shown:

- :func:`as_text`: one data string inside markdown (escaped, on one line);
- :func:`as_written`: a whole message that quotes data, with its own `code` spans kept;
- :func:`chart_text`: one data string inside a Plotly figure (HTML-escaped);
- :func:`in_label`: a column's name inside a widget's label, which is also its accessible name.

``tests/unit/strata_ui/test_text.py`` scans every page and UI module's syntax tree for data
joined into a markdown call without them.
"""

from __future__ import annotations

import html
import re

_CODE_SPAN = re.compile(r"(`[^`]*`)")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_PUNCTUATION_BUT_BACKTICK = re.compile(r"([!-/:-@\[-^_{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
# Markdown makes a link of a bare web address or e-mail address even with its punctuation
# escaped (GitHub's autolinks): an invisible word joiner after "://", "www" and "@" keeps the
# text as written on screen and stops the link.
_AUTOLINKS = re.compile(r"(://|(?i:\bwww)(?=\.)|@)")
_WORD_JOINER = "\u2060"


def _unlinked(text: str) -> str:
    return _AUTOLINKS.sub(lambda found: found.group(0) + _WORD_JOINER, text)


def as_text(value: object) -> str:
    """``value`` as literal text inside markdown: every ASCII punctuation character escaped
    with a backslash (links, images, emphasis, code, HTML tags, headings, lists, Streamlit's
    ``:colour[…]`` and ``:material/…:`` directives and ``$`` formulas all become plain
    characters), bare web and e-mail addresses kept from becoming links, and line breaks turned
    into spaces, so that a label stays on its line."""
    return _PUNCTUATION.sub(r"\\\1", _unlinked(_LINE_BREAKS.sub(" ", str(value))))


def as_written(message: str) -> str:
    """``message`` for Streamlit's markdown, showing the text of a user's file as written: ASCII
    punctuation outside `code` spans is backslash-escaped, so that "$1,000.50 … $2" is not read
    as a formula, nor ``*`` or ``_`` as emphasis, nor ``[a](b)`` as a link. Text inside a code
    span is shown literally by markdown itself; a backtick left unpaired stays a backtick."""
    parts = _CODE_SPAN.split(str(message))
    return "".join(
        p if i % 2 else _PUNCTUATION_BUT_BACKTICK.sub(r"\\\1", _unlinked(p))
        for i, p in enumerate(parts)
    )


# A name markdown shows as it is written: letters and digits, then also spaces, "_" between two
# of them, and , . ( ) % ' -; but not a list's "1. " nor a "www." that becomes a link.
_PLAIN_NAME = re.compile(r"[^\W_](?:[^\W_]|[ ,.()%'-]|(?<=[^\W_])_(?=[^\W_]))*")
_LIST_OR_LINK = re.compile(r"^\d+[.)](?:\s|$)|(?i:www\.)")


def in_label(name: object) -> str:
    """A column's name inside a widget's label. Streamlit gives the label's source text to screen
    readers as the control's name, so a plain name stays as it is, in words: not in backticks
    (read out as "backtick") nor escaped (read out as "backslash"). A name that markdown would
    change is escaped as :func:`as_text` escapes it."""
    text = str(name)
    if _PLAIN_NAME.fullmatch(text) and not _LIST_OR_LINK.search(text):
        return text
    return as_text(text)


def chart_text(value: object) -> str:
    """``value`` as literal text inside a Plotly figure: ``<``, ``>`` and ``&`` escaped, so that
    a label ``<a href="…">`` is shown, not followed."""
    return html.escape(str(value), quote=False)


def as_code(value: object) -> str:
    """``value`` as an inline code span whatever backticks it holds: fenced with one backtick
    more than its longest run of them (CommonMark), so it can never close the span early."""
    text = _LINE_BREAKS.sub(" ", str(value))
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if "`" in text else f"`{text}`"
