"""The shape of a corpus case (what the reader must do with one upload), its classes, and the
builders of file bytes that several kinds of file share (text, gzip, Parquet, the people file)."""

from __future__ import annotations

import functools
import gzip
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dpcore.foundations.io import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS

BOMB_MAX_BYTES = 64 * 1024**2
"""The byte limit the bombs are read with (each inflates or decodes to far more)."""

BOMB = "decompression bomb"
MISREAD = "silent misread"
BIG_INTEGER = "integer beyond int64"
EXTREME = "extreme finite value"
INJECTION = "export injection"
UNCLEAR = "unclear message"
USUAL = "usual bad file"
ODDITY = "valid oddity"
CLASSES = (BOMB, MISREAD, BIG_INTEGER, EXTREME, INJECTION, UNCLEAR, USUAL, ODDITY)


@dataclass(frozen=True)
class Loads:
    """The file loads into a frame with exactly these ``columns`` (in order) and ``rows``.

    ``dtypes`` and ``cells`` (every cell of a column, top to bottom, None for a missing one)
    are checked for the columns they name. ``notes`` are words each of which some note of
    ``load_table`` must contain; with none, ``load_table`` must give no notes. ``explain`` maps
    a column to words ``explain_not_numeric`` must say of it; of every other column it must say
    nothing (return None).
    """

    columns: tuple[str, ...]
    rows: int
    dtypes: Mapping[str, str] = field(default_factory=dict)
    cells: Mapping[str, tuple] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    explain: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Refused:
    """The reader raises ``ValueError`` with a message containing each of ``contains`` (and,
    always, the file's name in quotes)."""

    contains: tuple[str, ...]


@dataclass(frozen=True)
class Case:
    """One upload: its ``name`` (unique), its class (``kind``, one of :data:`CLASSES`), the
    ``filename`` it is uploaded as (the extension picks the format), a function building its
    bytes, the outcome expected, and the limits it is read with (a bomb's ``max_bytes`` is
    :data:`BOMB_MAX_BYTES`; a row-limit case passes a small ``max_rows``)."""

    name: str
    kind: str
    filename: str
    build: Callable[[], bytes]
    expect: Loads | Refused
    max_rows: int = DEFAULT_MAX_ROWS
    max_bytes: int = DEFAULT_MAX_BYTES
    bomb: bool = False

    @property
    def data(self) -> bytes:
        """The file's bytes, built on first use and kept for the process."""
        return _built(self.build)


@functools.cache
def _built(build: Callable[[], bytes]) -> bytes:
    return build()


def utf8(text: str) -> Callable[[], bytes]:
    return lambda: text.encode("utf-8")


def raw(data: bytes) -> Callable[[], bytes]:
    return lambda: data


def parquet(table: pa.Table | pd.DataFrame, **options) -> bytes:
    sink = io.BytesIO()
    if isinstance(table, pd.DataFrame):
        table.to_parquet(sink, **options)
    else:
        pq.write_table(table, sink, **options)
    return sink.getvalue()


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


PEOPLE_CSV = "age,sex,hours\n39,Male,40\n50,Female,13.5\n38,,\n53,Male,40\n"
PEOPLE = Loads(
    columns=("age", "sex", "hours"),
    rows=4,
    dtypes={"age": "int64", "sex": "str", "hours": "float64"},
    cells={"sex": ("Male", "Female", None, "Male"), "hours": (40.0, 13.5, None, 40.0)},
)


def people_parquet(compression: str = "snappy") -> bytes:
    people = {"age": [39, 50, 38, 53], "sex": ["Male", "Female", None, "Male"],
              "hours": [40.0, 13.5, None, 40.0]}  # fmt: skip
    return parquet(pa.table(people), compression=compression)
