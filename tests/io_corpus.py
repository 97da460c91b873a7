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
files, unicode). :data:`CLASSES` lists them; every case belongs to one.

``tests/unit/dpcore/test_io_corpus.py`` runs every case through the reader (the bombs in one
subprocess under an address-space cap); ``tests/app/test_data_corpus.py`` uploads every file a
browser can upload to the Data page.
"""

from __future__ import annotations

import functools
import gzip
import io
import struct
import zipfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
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


# --------------------------------------------------------------------------------------------
# building files
# --------------------------------------------------------------------------------------------


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


WIDE_NAMES = tuple(f"{'a_long_column_name_' * 110}{i:04d}" for i in range(520))


def wide_header() -> bytes:
    """520 columns named with 2,094 characters each: a header of just over 1 MiB."""
    return (",".join(WIDE_NAMES) + "\n" + ",".join("1" for _ in WIDE_NAMES) + "\n").encode()


def nul_after_8kb() -> bytes:
    """6,000 data lines; line 5,001 (data row 5,000) has a NUL byte in its text cell."""
    lines = ["id,label"] + [f"{i},row{i}" for i in range(1, 6001)]
    lines[5000] = "5000,ro\x00w"
    return ("\n".join(lines) + "\n").encode()


def decimal_commas() -> bytes:
    """A semicolon file of 1,000 prices written with decimal commas, except rows 10 and 20."""
    prices = [f"{i * 7 % 1000},{i % 100:02d}" for i in range(1, 1001)]
    prices[9] = prices[19] = "12"
    return ("item;price\n" + "".join(f"item{i};{p}\n" for i, p in enumerate(prices, 1))).encode()


def stray_words() -> bytes:
    """1,000 hours, numbers except “n/a” in row 5 and “unknown” in row 700."""
    hours = [str(20 + i % 40) for i in range(1, 1001)]
    hours[4] = "n/a"
    hours[699] = "unknown"
    return ("name,hours\n" + "".join(f"p{i},{h}\n" for i, h in enumerate(hours, 1))).encode()


def late_cell(cell: str) -> bytes:
    """A column of 300,000 ones whose last cell is ``cell``: 600 kB, more than the first chunk
    pandas' low-memory parser reads."""
    return ("hours\n" + "1\n" * 299_999 + cell + "\n").encode()


def rows_csv(n: int) -> bytes:
    return ("n,label\n" + "".join(f"{i},x{i}\n" for i in range(n))).encode()


def huge_field() -> bytes:
    """A 300 kB quoted cell holding commas, quotes and line breaks (more than the 128 kB the
    Python ``csv`` module allows a field by default)."""
    cell = 'word, "quoted"\nnext line ' * 12_000
    return ('id,essay\n1,"' + cell.replace('"', '""') + '"\n2,short\n').encode()


def long_line() -> bytes:
    """One unquoted cell of a million letters, on a 1 MB line."""
    return ("id,blob\n1," + "x" * 1_000_000 + "\n2,y\n").encode()


def huge_column_name() -> bytes:
    return ("id," + "n" * 200_000 + "\n1,2\n").encode()


# ---- renamed and broken binary files --------------------------------------------------------


def png() -> bytes:
    """A real 1×1 PNG image."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def xlsx() -> bytes:
    """A ZIP archive laid out like an Excel workbook."""
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w") as book:
        book.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        book.writestr("xl/workbook.xml", '<?xml version="1.0"?><workbook/>')
        book.writestr("xl/worksheets/sheet1.xml", "<worksheet><sheetData/></worksheet>")
    return sink.getvalue()


def plain_zip() -> bytes:
    sink = io.BytesIO()
    with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("people.csv", PEOPLE_CSV)
    return sink.getvalue()


OLE_XLS = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"
PDF = b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"


def truncated_gzip() -> bytes:
    whole = gzipped(PEOPLE_CSV.encode() * 50)
    return whole[: len(whole) // 2]


def damaged_parquet() -> bytes:
    """Magic numbers intact, everything between them zeroed."""
    good = people_parquet()
    return good[:4] + bytes(len(good) - 8) + good[-4:]


def truncated_parquet() -> bytes:
    good = people_parquet()
    return good[: len(good) // 2]


# ---- Parquet oddities -----------------------------------------------------------------------


def parquet_decimal() -> bytes:
    prices = pa.array([Decimal("12.50"), Decimal("-3.25"), None], type=pa.decimal128(10, 2))
    return parquet(pa.table({"item": ["a", "b", "c"], "price": prices}))


def parquet_nested() -> bytes:
    return parquet(
        pa.table(
            {
                "id": [1, 2],
                "point": pa.array([{"x": 1.0, "y": 2.0}, {"x": 3.0, "y": 4.0}]),
                "tags": pa.array([["a", "b"], []], type=pa.list_(pa.string())),
                "attrs": pa.array([[("k", 1)], [("j", 2)]], type=pa.map_(pa.string(), pa.int64())),
                "hours": [40.0, 35.5],
            }
        )
    )


def parquet_only_nested() -> bytes:
    return parquet(pa.table({"point": pa.array([{"x": 1.0}, {"x": 2.0}])}))


def parquet_index_named_like_a_column() -> bytes:
    frame = pd.DataFrame(
        {"hours": [40.0, 35.5, 20.0], "group": ["a", "b", "a"]},
        index=pd.Index([7, 8, 9], name="hours"),
    )
    return parquet(frame)


def parquet_stored_index() -> bytes:
    frame = pd.DataFrame({"hours": [40.0, 35.5]}, index=pd.Index([101, 102], name="person"))
    return parquet(frame)


def parquet_types() -> bytes:
    """Types a Parquet export may hold: dictionary text, nullable ints, bools, timestamps,
    large strings and a column of nulls only."""
    return parquet(
        pa.table(
            {
                "group": pa.array(["a", "b", "a"]).dictionary_encode(),
                "count": pa.array([1, None, 3], type=pa.int64()),
                "flag": [True, False, True],
                "when": pa.array([0, 86_400, 172_800], type=pa.timestamp("s", tz="UTC")),
                "essay": pa.array(["x", "y", "z"], type=pa.large_string()),
                "nothing": pa.nulls(3),
            }
        )
    )


def parquet_extremes() -> bytes:
    return parquet(pa.table({"x": [9e307, -9e307, 1.0, 1.7976931348623157e308]}))


def parquet_duplicates() -> bytes:
    return parquet(pa.table([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"]))


def parquet_padded_names() -> bytes:
    return parquet(pa.table({" g ": [" a ", "?", "NA"], "": [1, 2, 3]}))


# ---- bombs ------------------------------------------------------------------------------------


def gzip_bomb_of_members() -> bytes:
    """48 concatenated gzip members of 64 MiB each: 3 GiB of text from about 14 MB."""
    return gzip.compress(b"a,b\n" + b"0" * 64 * 1024**2, compresslevel=1, mtime=0) * 48


def gzip_bomb_of_rows() -> bytes:
    """One gzip member of 1 GiB of ``0,0`` rows, built without compressing 1 GiB: a deflate
    block ended by a full flush refers to nothing before it, so the same block can repeat."""
    header, chunk, repeats = b"a,b\n", b"0,0\n" * (2 * 1024**2), 128
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = deflate.compress(header) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(header)
    for _ in range(repeats):
        crc = zlib.crc32(chunk, crc)
    size = (len(header) + len(chunk) * repeats) % 2**32
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # gzip header: deflate, no name, mtime 0
        + first
        + block * repeats
        + deflate.flush()
        + struct.pack("<II", crc, size)
    )


def parquet_text_dictionary_bomb() -> bytes:
    """Four 50 kB strings repeated 100,000 times: kilobytes stored, 5 GB decoded."""
    dictionary = pa.array([letter * 50_000 for letter in "abcd"])
    indices = pa.array(np.arange(100_000, dtype=np.int32) % 4)
    return parquet(
        pa.table({"label": pa.DictionaryArray.from_arrays(indices, dictionary)}),
        compression="zstd",
    )


def parquet_binary_dictionary_bomb() -> bytes:
    """The same as bytes (binary) rather than text, next to an ordinary column."""
    dictionary = pa.array([letter.encode() * 50_000 for letter in "wxyz"], type=pa.binary())
    indices = pa.array(np.arange(100_000, dtype=np.int32) % 4)
    return parquet(
        pa.table(
            {
                "id": np.arange(100_000),
                "blob": pa.DictionaryArray.from_arrays(indices, dictionary),
            }
        ),
        compression="zstd",
    )


def parquet_numeric_run_bomb() -> bytes:
    """80 int64 columns of a million zeros: run-length encoded, 0.4 MB stored and 640 MB
    decoded (the metadata's uncompressed sizes count the encoded runs, not the values)."""
    zeros = pa.array(np.zeros(1_000_000, dtype=np.int64))
    return parquet(pa.table({f"c{i}": zeros for i in range(80)}), compression="zstd")


GZIP_BOMB_MESSAGE = "decompresses to more than 64 MiB, the limit"
PARQUET_BOMB_MESSAGE = "takes more than 64 MiB once decoded, the limit"


def _bomb(name: str, filename: str, build: Callable[[], bytes], message: str) -> Case:
    return Case(name, BOMB, filename, build, Refused((f"'{filename}' {message}",)),
                max_bytes=BOMB_MAX_BYTES, bomb=True)  # fmt: skip


# --------------------------------------------------------------------------------------------
# the corpus
# --------------------------------------------------------------------------------------------

UNSUPPORTED = ("unsupported file type", "Supported: .csv, .txt, .csv.gz, .parquet, .pq")
NOT_UTF8 = ("not valid UTF-8", "Re-save the file with UTF-8 encoding")
NOT_PARQUET = ("not a valid Parquet file", "Export it again as Parquet, or upload it as CSV")

CASES: tuple[Case, ...] = (
    # ---- decompression bombs -----------------------------------------------------------------
    _bomb("gzip bomb of concatenated members", "bomb.csv.gz", gzip_bomb_of_members,
          GZIP_BOMB_MESSAGE),
    _bomb("gzip bomb of rows in one member", "rows-bomb.csv.gz", gzip_bomb_of_rows,
          GZIP_BOMB_MESSAGE),
    _bomb("Parquet text dictionary bomb", "bomb.parquet", parquet_text_dictionary_bomb,
          PARQUET_BOMB_MESSAGE),
    _bomb("Parquet binary dictionary bomb", "blob-bomb.parquet", parquet_binary_dictionary_bomb,
          PARQUET_BOMB_MESSAGE),
    _bomb("Parquet run-length numeric bomb", "zeros-bomb.pq", parquet_numeric_run_bomb,
          PARQUET_BOMB_MESSAGE),
    # ---- silent misreads ---------------------------------------------------------------------
    Case("header over 1 MB", MISREAD, "wide.csv", wide_header,
         Loads(columns=WIDE_NAMES, rows=1, dtypes={WIDE_NAMES[-1]: "int64"})),
    Case("quoted delimiters in the header", MISREAD, "notes.csv",
         utf8('"notes; a; b",x\n"p; q",1\n"r",3\n'),
         Loads(columns=("notes; a; b", "x"), rows=2, cells={"notes; a; b": ("p; q", "r")})),
    Case("quoted commas in fields", MISREAD, "cities.csv",
         utf8('name,city,n\n"Doe, Jane","Paris, FR",1\n"Roe, R.",Rome,2\n'),
         Loads(columns=("name", "city", "n"), rows=2, dtypes={"n": "int64"},
               cells={"name": ("Doe, Jane", "Roe, R."), "city": ("Paris, FR", "Rome")})),
    Case("quoted commas in a semicolon file", MISREAD, "scores.csv",
         utf8('name;score\n"Smith, J.";1,5\n"Lee, K.";2\n'),
         Loads(columns=("name", "score"), rows=2,
               cells={"name": ("Smith, J.", "Lee, K."), "score": ("1,5", "2")},
               explain={"score": ("1 of 2 cells", "row 1 “1,5”", "decimal comma")})),
    Case("quoted tabs in a comma header", MISREAD, "tabbed.csv",
         utf8('"a\tb",c\n1,2\n'), Loads(columns=("a\tb", "c"), rows=1)),
    Case("commas inside a tab file", MISREAD, "notes.txt",
         utf8("name\tnote\nann\tDoe, Jane\nbob\t1,2,3\n"),
         Loads(columns=("name", "note"), rows=2, cells={"note": ("Doe, Jane", "1,2,3")})),
    Case("escaped quotes", MISREAD, "quotes.csv",
         utf8('"say ""hi""",b\n"a ""quoted"" word",1\n'),
         Loads(columns=('say "hi"', "b"), rows=1, cells={'say "hi"': ('a "quoted" word',)})),
    Case("first data row with too many fields", MISREAD, "long-first-row.csv",
         utf8("a,b\n1,2,3\n4,5\n"),
         Refused(("line 2 has 3 fields, but the header has 2 columns",))),
    Case("comma in a one-column file", MISREAD, "one-column-comma.csv", utf8("score\n1,5\n2\n"),
         Refused(("line 2 has 2 fields, but the header has 1 column",))),
    Case("Excel separator line", MISREAD, "excel-sep.csv", utf8("sep=;\na;b\n1;x\n"),
         Loads(columns=("a", "b"), rows=1, cells={"a": (1,), "b": ("x",)})),
    Case("a stray word after the parser's first chunk", MISREAD, "late-word.csv",
         lambda: late_cell("unknown"),
         Loads(columns=("hours",), rows=300_000, dtypes={"hours": "str"},
               explain={"hours": ("1 of 300,000 cells", "row 300,000 “unknown”")})),
    Case("a decimal after the parser's first chunk", MISREAD, "late-decimal.csv",
         lambda: late_cell("1.5"), Loads(columns=("hours",), rows=300_000,
                                         dtypes={"hours": "float64"})),
    Case("NUL byte after the first 8 KB", MISREAD, "late-nul.csv", nul_after_8kb,
         Refused(("NUL", "line 5,001"))),
    Case("CR-only line endings", MISREAD, "classic-mac.csv",
         utf8("a,b\r1,2\r3,4\r"),
         Loads(columns=("a", "b"), rows=2, dtypes={"a": "int64", "b": "int64"},
               cells={"a": (1, 3), "b": (2, 4)})),
    Case("CR-only line endings with quoted text", MISREAD, "classic-mac-quoted.csv",
         utf8('name,x\r"Doe, Jane",1\r"Roe",2\r'),
         Loads(columns=("name", "x"), rows=2, cells={"name": ("Doe, Jane", "Roe"), "x": (1, 2)})),
    # ---- integers beyond int64 -----------------------------------------------------------------
    Case("integer beyond int64", BIG_INTEGER, "big-id.csv",
         utf8("id,hours\n99999999999999999999,40\n1,35\n"),
         Loads(columns=("id", "hours"), rows=2, dtypes={"id": "str", "hours": "int64"},
               cells={"id": ("99999999999999999999", "1")}, notes=("`id`", "kept as text"))),
    Case("negative integer beyond int64", BIG_INTEGER, "big-negative.csv",
         utf8("balance\n-99999999999999999999\n5\n"),
         Loads(columns=("balance",), rows=2, dtypes={"balance": "str"},
               cells={"balance": ("-99999999999999999999", "5")}, notes=("`balance`",))),
    Case("integer beyond int64 within uint64", BIG_INTEGER, "uint64.csv",
         utf8("id,n\n18446744073709551615,1\n2,2\n"),
         Loads(columns=("id", "n"), rows=2, dtypes={"id": "str", "n": "int64"},
               cells={"id": ("18446744073709551615", "2")}, notes=("`id`",))),
    Case("largest int64 stays int64", BIG_INTEGER, "int64-max.csv",
         utf8("id\n9223372036854775807\n-9223372036854775808\n"),
         Loads(columns=("id",), rows=2, dtypes={"id": "int64"},
               cells={"id": (9223372036854775807, -9223372036854775808)})),
    # ---- extreme finite values -----------------------------------------------------------------
    Case("extreme finite values", EXTREME, "extremes.csv",
         utf8("x,y\n9e307,1\n-9e307,2\n1,3\n"),
         Loads(columns=("x", "y"), rows=3, dtypes={"x": "float64"},
               cells={"x": (9e307, -9e307, 1.0)})),
    Case("largest and smallest doubles", EXTREME, "doubles.csv",
         utf8("x\n1.7976931348623157e308\n-1.7976931348623157e308\n5e-324\n"),
         Loads(columns=("x",), rows=3, dtypes={"x": "float64"},
               cells={"x": (1.7976931348623157e308, -1.7976931348623157e308, 5e-324)})),
    Case("extreme finite values in Parquet", EXTREME, "extremes.parquet", parquet_extremes,
         Loads(columns=("x",), rows=4, dtypes={"x": "float64"},
               cells={"x": (9e307, -9e307, 1.0, 1.7976931348623157e308)})),
    # ---- export injection ----------------------------------------------------------------------
    Case("formula-like labels", INJECTION, "formulas.csv",
         utf8('label,n\n=1+2,1\n+SUM(A1:A9),2\n-2+3,3\n@cmd,4\n"=HYPERLINK(""http://x"")",5\n'),
         Loads(columns=("label", "n"), rows=5, dtypes={"label": "str", "n": "int64"},
               cells={"label": ("=1+2", "+SUM(A1:A9)", "-2+3", "@cmd",
                                '=HYPERLINK("http://x")')})),
    Case("formula-like column names", INJECTION, "formula-names.csv",
         utf8("=cmd,+x,-y,@z\n1,2,3,4\n"), Loads(columns=("=cmd", "+x", "-y", "@z"), rows=1)),
    Case("control characters in cells", INJECTION, "controls.csv",
         utf8("name,x\nbell\x07ring,1\nesc\x1b[31mred,2\nback\x08space,3\n"),
         Loads(columns=("name", "x"), rows=3,
               cells={"name": ("bell\x07ring", "esc\x1b[31mred", "back\x08space")})),
    Case("control character in a column name", INJECTION, "control-name.csv",
         utf8("na\x1bme,x\n1,2\n"), Loads(columns=("na\x1bme", "x"), rows=1)),
    Case("CR in a column name", INJECTION, "cr-name.csv",
         utf8('"a\rb",c\n1,2\n'), Loads(columns=("a\rb", "c"), rows=1)),
    Case("line break in a column name", INJECTION, "lf-name.csv",
         utf8('"first\nsecond",c\n1,2\n'), Loads(columns=("first\nsecond", "c"), rows=1)),
    Case("right-to-left override in a cell", INJECTION, "bidi.csv",
         utf8("name,x\n\u202eexe.txt\u202c,1\nplain,2\n"),
         Loads(columns=("name", "x"), rows=2, cells={"name": ("\u202eexe.txt\u202c", "plain")})),
    # ---- unclear messages ------------------------------------------------------------------------
    Case("nested Parquet columns", UNCLEAR, "nested.parquet", parquet_nested,
         Loads(columns=("id", "hours"), rows=2, dtypes={"id": "int64", "hours": "float64"},
               notes=("`point`", "`tags`", "`attrs`"))),
    Case("Parquet of nested columns only", UNCLEAR, "only-nested.parquet", parquet_only_nested,
         Refused(("only nested columns",))),
    Case("stored index named like a column", UNCLEAR, "indexed.parquet",
         parquet_index_named_like_a_column,
         Loads(columns=("hours (index)", "hours", "group"), rows=3,
               cells={"hours (index)": (7, 8, 9), "hours": (40.0, 35.5, 20.0)},
               notes=("hours (index)",))),
    Case("Parquet decimal128", UNCLEAR, "decimal.parquet", parquet_decimal,
         Loads(columns=("item", "price"), rows=3, dtypes={"price": "float64"},
               cells={"price": (12.5, -3.25, None)})),
    Case("decimal commas", UNCLEAR, "prices.csv", decimal_commas,
         Loads(columns=("item", "price"), rows=1000, dtypes={"price": "str"},
               explain={"price": ("998 of 1,000 cells", "row 1 “7,01”", "decimal comma")})),
    Case("currency in dollars", UNCLEAR, "costs.csv",
         utf8('item,cost\na,"$1,643.83"\nb,$12.00\nc,$7\nd,$0.50\ne,"$1,000,000.00"\n'),
         Loads(columns=("item", "cost"), rows=5, dtypes={"cost": "str"},
               explain={"cost": ("5 of 5 cells", "row 1 “$1,643.83”", "currency")})),
    Case("currency in euros", UNCLEAR, "euros.csv",
         utf8("item;cost\na;€12\nb;€7\nc;€150\n"),
         Loads(columns=("item", "cost"), rows=3, dtypes={"cost": "str"},
               explain={"cost": ("3 of 3 cells", "row 1 “€12”", "currency")})),
    Case("thousands separators", UNCLEAR, "cities-population.csv",
         utf8('city,population\nA,"1,234,567"\nB,"8,336,817"\nC,"12,000,000"\n'),
         Loads(columns=("city", "population"), rows=3, dtypes={"population": "str"},
               explain={"population": ("3 of 3 cells", "row 1 “1,234,567”",
                                       "thousands separator")})),
    Case("percentages", UNCLEAR, "shares.csv",
         utf8("group,share\na,12%\nb,7.5%\nc,80.5%\n"),
         Loads(columns=("group", "share"), rows=3, dtypes={"share": "str"},
               explain={"share": ("3 of 3 cells", "row 1 “12%”", "percent")})),
    Case("a few stray words in a numeric column", UNCLEAR, "hours.csv", stray_words,
         Loads(columns=("name", "hours"), rows=1000, dtypes={"hours": "str"},
               explain={"hours": ("2 of 1,000 cells", "row 5 “n/a”", "row 700 “unknown”")})),
    Case("digits grouped with underscores", UNCLEAR, "counts.csv",
         utf8("label,count\na,1_000\nb,2_500\nc,300\n"),
         Loads(columns=("label", "count"), rows=3, dtypes={"count": "str"},
               explain={"count": ("2 of 3 cells", "row 1 “1_000”", "row 2 “2_500”")})),
    Case("NUL byte in a data line", UNCLEAR, "nul.csv", utf8("a,b\n1,2\n3,\x004\n"),
         Refused(("NUL", "line 3"))),
    # ---- the usual bad files ---------------------------------------------------------------------
    Case("empty CSV", USUAL, "empty.csv", raw(b""), Refused(("is empty (0 bytes)", "header row"))),
    Case("empty Parquet", USUAL, "empty.parquet", raw(b""), Refused(("is empty (0 bytes)",))),
    Case("empty gzip", USUAL, "empty.csv.gz", raw(b""), Refused(("is empty (0 bytes)",))),
    Case("gzip of an empty file", USUAL, "nothing.csv.gz", lambda: gzipped(b""),
         Refused(("is empty (0 bytes)",))),
    Case("whitespace only", USUAL, "blank.csv", raw(b"  \n\t\n \r\n"),
         Refused(("is empty (only whitespace)",))),
    Case("header only", USUAL, "header.csv", utf8("a,b\n"),
         Refused(("header row (a, b) but no data rows",))),
    Case("header and blank lines", USUAL, "header-blank.csv", utf8("a,b\n\n\n\n"),
         Refused(("no data rows",))),
    Case("UTF-16 little-endian", USUAL, "utf16le.csv", lambda: "a,b\n1,2\n".encode("utf-16"),
         Refused(("encoded as UTF-16, not UTF-8", "CSV UTF-8"))),
    Case("UTF-16 big-endian", USUAL, "utf16be.csv",
         lambda: b"\xfe\xff" + "a,b\n1,2\n".encode("utf-16-be"),
         Refused(("encoded as UTF-16, not UTF-8",))),
    Case("UTF-16 without a byte-order mark", USUAL, "utf16-nobom.csv",
         lambda: "a,b\n1,2\n".encode("utf-16-le"), Refused(("NUL",))),
    Case("UTF-32", USUAL, "utf32.csv", lambda: "a,b\n1,2\n".encode("utf-32"),
         Refused(("not UTF-8",))),
    Case("Latin-1", USUAL, "latin1.csv", lambda: "name,city\nJosé,Zürich\n".encode("latin-1"),
         Refused((*NOT_UTF8, "byte 0xe9 at byte offset 13 (line 2)"))),
    Case("Windows-1252 smart quotes", USUAL, "cp1252.csv",
         lambda: "name,quote\nann,\u201chi\u201d\n".encode("cp1252"),
         Refused((*NOT_UTF8, "byte 0x93", "line 2"))),
    Case("random binary", USUAL, "noise.csv", lambda: bytes(range(256)) * 8,
         Refused(("looks like a binary file, not CSV",))),
    Case("ZIP renamed .csv", USUAL, "archive.csv", plain_zip,
         Refused(("looks like a ZIP archive", "Export the sheet as CSV UTF-8"))),
    Case("xlsx renamed .csv", USUAL, "book.csv", xlsx,
         Refused(("Excel workbook (.xlsx)", "Export the sheet as CSV UTF-8"))),
    Case("xls renamed .csv", USUAL, "old-book.csv", raw(OLE_XLS),
         Refused(("old Excel workbook (.xls)",))),
    Case("PNG renamed .csv", USUAL, "chart.csv", png, Refused(("looks like a PNG image",))),
    Case("JPEG renamed .txt", USUAL, "photo.txt", raw(JPEG), Refused(("looks like a JPEG",))),
    Case("PDF renamed .csv", USUAL, "report.csv", raw(PDF), Refused(("looks like a PDF",))),
    Case("gzip renamed .csv", USUAL, "people.csv", lambda: gzipped(PEOPLE_CSV.encode()),
         Refused(("gzip-compressed", "Give it the extension .csv.gz"))),
    Case("truncated gzip", USUAL, "cut.csv.gz", truncated_gzip,
         Refused(("not a valid gzip file", "compress it again"))),
    Case("plain CSV named .csv.gz", USUAL, "plain.csv.gz", utf8(PEOPLE_CSV),
         Refused(("not a valid gzip file",))),
    Case("gzip inside gzip", USUAL, "twice.csv.gz",
         lambda: gzipped(gzipped(PEOPLE_CSV.encode())), Refused(("gzip-compressed",))),
    Case("truncated Parquet", USUAL, "cut.parquet", truncated_parquet, Refused(NOT_PARQUET)),
    Case("damaged Parquet", USUAL, "damaged.parquet", damaged_parquet,
         Refused(("could not be read as Parquet", "export it again"))),
    Case("Parquet renamed .csv", USUAL, "table.csv", people_parquet,
         Refused(("looks like a Parquet file", "Give it the extension .parquet"))),
    Case("CSV renamed .parquet", USUAL, "table.parquet", utf8(PEOPLE_CSV), Refused(NOT_PARQUET)),
    Case("Excel workbook with its own extension", USUAL, "book.xlsx", xlsx,
         Refused((*UNSUPPORTED, "(.xlsx)"))),
    Case("JSON", USUAL, "people.json", utf8('[{"a": 1}]'), Refused((*UNSUPPORTED, "(.json)"))),
    Case("TSV extension", USUAL, "people.tsv", utf8("a\tb\n1\t2\n"),
         Refused((*UNSUPPORTED, "(.tsv)"))),
    Case("no extension", USUAL, "people", utf8(PEOPLE_CSV),
         Refused((*UNSUPPORTED, "(no extension)"))),
    Case("zipped CSV", USUAL, "people.csv.zip", plain_zip, Refused((*UNSUPPORTED, "(.zip)"))),
    Case("duplicate column names", USUAL, "dups.csv", utf8("a,b,a\n1,2,3\n"),
         Refused(("duplicate column names", "'a' in columns 1, 3"))),
    Case("duplicate names after trimming", USUAL, "dups-spaced.csv", utf8("a, a ,b\n1,2,3\n"),
         Refused(("duplicate column names (after trimming spaces)", "'a' in columns 1, 2"))),
    Case("duplicate Parquet columns", USUAL, "dups.parquet", parquet_duplicates,
         Refused(("duplicate column names", "'x' in columns 1, 2"))),
    Case("row with too many fields", USUAL, "long-row.csv", utf8("a,b\n1,2\n3,4,5\n6,7\n"),
         Refused(("line 3 has 3 fields, but the header has 2 columns",))),
    Case("row with too few fields", USUAL, "short-row.csv", utf8("a,b,c\n1,2,3\n4,5\n"),
         Refused(("line 3 has 2 fields, but the header has 3 columns",))),
    Case("ragged semicolon file", USUAL, "ragged-semi.csv", utf8("a;b\n1;2\n3;4;5\n"),
         Refused(("line 3 has 3 fields", "';'"))),
    Case("unclosed quote", USUAL, "open-quote.csv", utf8('a,b\n1,2\n"oops,3\n4,5\n'),
         Refused(("lines 3 to 4", "unclosed double quote"))),
    Case("unclosed quote on the last line", USUAL, "open-quote-end.csv",
         utf8('a,b\n1,2\n3,"oops\n'), Refused(("unclosed double quote",))),
    Case("too many rows", USUAL, "rows.csv", lambda: rows_csv(11), Refused(("more than 10 rows",)),
         max_rows=10),
    Case("too many rows in gzip", USUAL, "rows.csv.gz", lambda: gzipped(rows_csv(11)),
         Refused(("more than 10 rows",)), max_rows=10),
    Case("too many rows in Parquet", USUAL, "rows.parquet",
         lambda: parquet(pa.table({"n": range(11)})), Refused(("more than 10 rows",)),
         max_rows=10),
    Case("exactly the row limit", USUAL, "ten-rows.csv", lambda: rows_csv(10),
         Loads(columns=("n", "label"), rows=10, dtypes={"n": "int64"}), max_rows=10),
    Case("Parquet without rows", USUAL, "no-rows.parquet",
         lambda: parquet(pa.table({"a": pa.array([], type=pa.float64())})),
         Refused(("columns (a) but no data rows",))),
    Case("Parquet without columns", USUAL, "no-columns.parquet",
         lambda: parquet(pa.table({})), Refused(("no columns",))),
    Case("huge column name", USUAL, "huge-name.csv", huge_column_name,
         Refused(("a name in the header row is longer than", "Shorten the column names"))),
    Case("huge single field", USUAL, "essay.csv", huge_field,
         Loads(columns=("id", "essay"), rows=2, dtypes={"id": "int64"})),
    Case("very long line", USUAL, "long-line.csv", long_line,
         Loads(columns=("id", "blob"), rows=2, cells={"blob": ("x" * 1_000_000, "y")})),
    Case("spaces-only line between rows", USUAL, "spaced-rows.csv", utf8("a,b\n1,2\n   \n3,4\n"),
         Loads(columns=("a", "b"), rows=2, cells={"a": (1, 3)})),
    # ---- valid oddities that must load -----------------------------------------------------------
    Case("people CSV", ODDITY, "people-plain.csv", utf8(PEOPLE_CSV), PEOPLE),
    Case("people Parquet", ODDITY, "people.parquet", people_parquet, PEOPLE),
    Case("people Parquet as .pq", ODDITY, "people.PQ", lambda: people_parquet("gzip"), PEOPLE),
    Case("people gzip", ODDITY, "people.csv.gz", lambda: gzipped(PEOPLE_CSV.encode()), PEOPLE),
    Case("gzip of two members", ODDITY, "two-members.csv.gz",
         lambda: gzipped(b"age,sex,hours\n39,Male,40\n50,Female,13.5\n")
         + gzipped(b"38,,\n53,Male,40\n"), PEOPLE),
    Case("upper-case extension", ODDITY, "PEOPLE.CSV", utf8(PEOPLE_CSV.replace("53", "54")),
         Loads(columns=PEOPLE.columns, rows=4)),
    Case("text extension", ODDITY, "people.txt", utf8(PEOPLE_CSV.replace("53", "55")),
         Loads(columns=PEOPLE.columns, rows=4)),
    Case("byte-order mark", ODDITY, "bom.csv", lambda: b"\xef\xbb\xbf" + PEOPLE_CSV.encode(),
         PEOPLE),
    Case("byte-order mark and semicolons", ODDITY, "bom-semi.csv",
         lambda: "\ufeffage;sex\n39;Male\n50;Female\n".encode(),
         Loads(columns=("age", "sex"), rows=2, dtypes={"age": "int64"})),
    Case("byte-order mark in gzip", ODDITY, "bom.csv.gz",
         lambda: gzipped(b"\xef\xbb\xbf" + PEOPLE_CSV.encode()), PEOPLE),
    Case("CRLF line endings", ODDITY, "crlf.csv", utf8(PEOPLE_CSV.replace("\n", "\r\n")), PEOPLE),
    Case("mixed line endings", ODDITY, "mixed-endings.csv", utf8("a,b\r\n1,x\n3,y\r\n"),
         Loads(columns=("a", "b"), rows=2, cells={"a": (1, 3), "b": ("x", "y")})),
    Case("quoted line breaks", ODDITY, "multiline.csv",
         utf8('name,x\n"two\nlines",1\n"three\nshort\nlines",2\n'),
         Loads(columns=("name", "x"), rows=2,
               cells={"name": ("two\nlines", "three\nshort\nlines"), "x": (1, 2)})),
    Case("quoted line breaks with CRLF", ODDITY, "multiline-crlf.csv",
         utf8('name,x\r\n"two\r\nlines",1\r\n"b",2\r\n'),
         Loads(columns=("name", "x"), rows=2, cells={"name": ("two\r\nlines", "b")})),
    Case("semicolons", ODDITY, "semi.csv", utf8("name;score\nann;1.5\nbob;2\n"),
         Loads(columns=("name", "score"), rows=2, dtypes={"score": "float64"},
               cells={"score": (1.5, 2.0)})),
    Case("tabs", ODDITY, "tabs.txt", utf8("name\tscore\nann\t1.5\nbob\t2\n"),
         Loads(columns=("name", "score"), rows=2, dtypes={"score": "float64"})),
    Case("pipes", ODDITY, "pipes.csv", utf8("a|b\n1|x\n2|y\n"),
         Loads(columns=("a", "b"), rows=2, dtypes={"a": "int64"})),
    Case("blank lines", ODDITY, "gaps.csv", utf8("a,b\n\n1,2\n\n\n3,4\n\n"),
         Loads(columns=("a", "b"), rows=2, cells={"a": (1, 3), "b": (2, 4)})),
    Case("blank lines before the header", ODDITY, "late-header.csv", utf8("\n\na,b\n1,2\n"),
         Loads(columns=("a", "b"), rows=1, cells={"a": (1,)})),
    Case("trailing spaces", ODDITY, "padded.csv", utf8("a , b \n 1 , x \n2,y   \n   \n\n"),
         Loads(columns=("a", "b"), rows=2, dtypes={"a": "int64"},
               cells={"a": (1, 2), "b": ("x", "y")})),
    Case("non-breaking spaces around numbers", ODDITY, "nbsp.csv",
         utf8("x,y\n\u00a040\u00a0,1\n12,2\n"),
         Loads(columns=("x", "y"), rows=2, dtypes={"x": "int64"}, cells={"x": (40, 12)})),
    Case("only one column", ODDITY, "one.csv", utf8("score\n1\n2\n3\n"),
         Loads(columns=("score",), rows=3, dtypes={"score": "int64"})),
    Case("only one text column", ODDITY, "names.csv", utf8("name\nann\nbob\n"),
         Loads(columns=("name",), rows=2, dtypes={"name": "str"})),
    Case("missing-value tokens", ODDITY, "missing.csv", utf8("a,b\n1,?\nNA,x\nnan,NaN\n4,\n"),
         Loads(columns=("a", "b"), rows=3, dtypes={"a": "float64"},
               cells={"a": (1.0, None, 4.0), "b": (None, "x", None)},
               notes=("1 row with no value in any column (every cell empty or marked missing, "
                      "as in “,,,”) was left out.",))),
    Case("booleans", ODDITY, "flags.csv", utf8("flag,n\nTrue,1\nFalse,2\n"),
         Loads(columns=("flag", "n"), rows=2, dtypes={"flag": "bool"})),
    Case("integers and decimals in one column", ODDITY, "mixed-numbers.csv",
         utf8("x\n1\n2.5\n-3\n"), Loads(columns=("x",), rows=3, dtypes={"x": "float64"})),
    Case("empty column name", ODDITY, "unnamed.csv", utf8(",b\n1,2\n"),
         Loads(columns=("Unnamed: 0", "b"), rows=1)),
    Case("trailing delimiter", ODDITY, "trailing-comma.csv", utf8("a,b,\n1,2,\n3,4,\n"),
         Loads(columns=("a", "b", "Unnamed: 2"), rows=2, cells={"Unnamed: 2": (None, None)})),
    Case("unicode column names", ODDITY, "unicode.csv",
         utf8("âge,名前,Ωmega,straße\n1,太郎,2,x\n"),
         Loads(columns=("âge", "名前", "Ωmega", "straße"), rows=1, cells={"名前": ("太郎",)})),
    Case("emoji", ODDITY, "emoji.csv", utf8("😀 mood,label\n1,🎉 party\n2,🚀\n"),
         Loads(columns=("😀 mood", "label"), rows=2, cells={"label": ("🎉 party", "🚀")})),
    Case("right-to-left text", ODDITY, "rtl.csv", utf8("الاسم,العمر\nمحمد,30\nשרה,25\n"),
         Loads(columns=("الاسم", "العمر"), rows=2, dtypes={"العمر": "int64"},
               cells={"الاسم": ("محمد", "שרה")})),
    Case("zero-width space in a column name", ODDITY, "zwsp.csv", utf8("\u200bage,b\n1,2\n"),
         Loads(columns=("\u200bage", "b"), rows=1)),
    Case("Parquet with padded and empty names", ODDITY, "padded.parquet", parquet_padded_names,
         Loads(columns=("g", "Unnamed: 1"), rows=3, cells={"g": ("a", None, None)})),
    Case("Parquet with a stored index", ODDITY, "person-index.parquet", parquet_stored_index,
         Loads(columns=("person", "hours"), rows=2, cells={"person": (101, 102)})),
    Case("Parquet types", ODDITY, "types.parquet", parquet_types,
         Loads(columns=("group", "count", "flag", "when", "essay", "nothing"), rows=3,
               dtypes={"group": "str", "count": "float64", "flag": "bool", "essay": "str"},
               cells={"group": ("a", "b", "a"), "count": (1.0, None, 3.0),
                      "nothing": (None, None, None)})),
)  # fmt: skip
