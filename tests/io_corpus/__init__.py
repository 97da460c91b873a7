"""A corpus of bad, odd and hostile uploads, each with the outcome the reader must give.

Issue 15, item 8. Every file is generated here, in code (no binary blobs in the repository), and
only when a test asks for it. Each :class:`Case` says what :func:`dpcore.foundations.io.read_table` (and
:func:`dpcore.foundations.io.load_table`) must do with it: load it (:class:`Loads`: the columns, some
dtypes and cells, the notes about what changed while reading, and which text columns
:func:`dpcore.foundations.io.explain_not_numeric` explains), or refuse it with a ``ValueError`` whose message
contains some words (:class:`Refused`).

The classes, from the issue: decompression bombs; silent misreads; integers beyond int64;
extreme finite values; export injection; unclear messages; the usual bad files; and the valid
oddities that must load (BOM, CRLF, quoted newlines, formula-like labels, semicolon and tab
files, unicode). :data:`CLASSES` lists them; every case belongs to one, and each kind of file has
its module here (``case.py`` holds the shapes and the builders several kinds share); this package
is the one import point.

``tests/unit/dpcore/test_io_corpus.py`` runs every case through the reader (the bombs in one
subprocess under an address-space cap); ``tests/app/test_data_corpus.py`` uploads every file a
browser can upload to the Data page.
"""

from __future__ import annotations

from tests.io_corpus.big_numbers import BIG_INTEGERS, EXTREMES
from tests.io_corpus.bombs import BOMBS
from tests.io_corpus.case import (
    BOMB_MAX_BYTES,
    CLASSES,
    Case,
    Loads,
    Refused,
    gzipped,
    parquet,
    raw,
    utf8,
)
from tests.io_corpus.injection import INJECTIONS
from tests.io_corpus.misreads import MISREADS
from tests.io_corpus.oddities import ODDITIES
from tests.io_corpus.unclear import UNCLEAR_MESSAGES
from tests.io_corpus.usual import USUAL_BAD_FILES

__all__ = [
    "BOMB_MAX_BYTES",
    "CASES",
    "CLASSES",
    "Case",
    "Loads",
    "Refused",
    "gzipped",
    "parquet",
    "raw",
    "utf8",
]

CASES: tuple[Case, ...] = (
    *BOMBS,
    *MISREADS,
    *BIG_INTEGERS,
    *EXTREMES,
    *INJECTIONS,
    *UNCLEAR_MESSAGES,
    *USUAL_BAD_FILES,
    *ODDITIES,
)
