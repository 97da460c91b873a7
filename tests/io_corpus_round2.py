"""Hostile files, round 2 (issue 38, item 5): each with the outcome the reader must give.

The same :class:`~tests.io_corpus.Case` shapes as round 1 (``tests/io_corpus/``): a file loads
with the declared columns, types, cells and notes, or is refused with a message naming the
problem and its fix. :data:`ISSUE_EXAMPLES` are the misreads the issue reported; :data:`CASES`
are at least 40 more, different from them and from round 1. ``decimal`` is the reader's
decimal mark (a request, as the Data page's choice and the CLI's ``--decimal-comma`` make it).
Every file is built here, small; the slow ones (a million gzip members, 100,000 columns) are in
``benchmarks/bench_hostile_readers.py``.
"""

from __future__ import annotations

import gzip
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import pyarrow as pa

from tests.io_corpus import Loads, Refused, gzipped, parquet, raw, utf8

BOM = "\ufeff"
NFD_CAFE = unicodedata.normalize("NFD", "café")
INFINITE = "Infinite values were read as missing values"
KEPT_AS_TEXT = "kept as text"
BOMS_REMOVED = "removed from inside the file"
DUPLICATES = ("duplicate column names", "different Unicode characters", "Rename them")


@dataclass(frozen=True)
class Case:
    """One hostile file or request: its ``name``, the ``filename`` it is read as, its bytes'
    builder, the outcome, and the decimal mark asked for."""

    name: str
    filename: str
    build: Callable[[], bytes]
    expect: Loads | Refused
    decimal: str = "."


def members(*texts: str) -> Callable[[], bytes]:
    """A gzip file of one member per text."""
    return lambda: b"".join(gzipped(text.encode()) for text in texts)


def zero_padded_members() -> bytes:
    """Two members with zero padding after each (gzip allows it; tar pads so)."""
    return gzipped(b"g,x\na,1\n") + bytes(16) + gzipped(b"b,2\n") + bytes(5)


def members_after_empty_ones() -> bytes:
    return gzip.compress(b"", mtime=0) * 10_000 + gzipped(b"g,x\na,1\nb,2\n")


def late_code() -> bytes:
    """300,000 small numbers, then a 20-digit code past pandas' first chunk."""
    return ("code\n" + "1\n" * 299_999 + "12345678901234567890\n").encode()


def wide(columns: int, cell: Callable[[int], str], rows: int = 2) -> Callable[[], bytes]:
    """A file of ``columns`` columns c0, c1, ... whose cells are ``cell(column)``."""
    header = ",".join(f"c{i}" for i in range(columns))
    line = ",".join(cell(i) for i in range(columns))
    return utf8(header + "\n" + "\n".join([line] * rows) + "\n")


def wide_with_a_padded_cell() -> bytes:
    header = ",".join(f"c{i}" for i in range(1_500))
    cells = [str(i) for i in range(1_500)]
    cells[700] = " 7 "
    return (
        header + "\n" + ",".join(cells) + "\n" + ",".join(map(str, range(1_500))) + "\n"
    ).encode()


def wide_duplicates() -> bytes:
    names = [f"c{i % 1_000}" for i in range(2_000)]
    return (",".join(names) + "\n" + ",".join("1" * 2_000) + "\n").encode()


def parquet_with_boms() -> bytes:
    return parquet(pa.table({BOM + "group": ["b", BOM + "b", "c"], "x": [1, 2, 3]}))


def parquet_infinities(kind: pa.DataType) -> Callable[[], bytes]:
    values = pa.array([1.0, np.inf, None, -np.inf, float("nan")], type=kind)
    return lambda: parquet(pa.table({"g": ["a", "b", "c", "d", "e"], "x": values}))


def parquet_big_unsigned() -> bytes:
    codes = pa.array([18_446_744_073_709_551_615, 9_223_372_036_854_775_808, 1], pa.uint64())
    return parquet(pa.table({"code": codes, "n": [1, 2, 3]}))


def parquet_whole_decimals() -> bytes:
    return parquet(pa.table({
        "code": pa.array([Decimal(10**25 + 1), Decimal(10**25 + 2)], pa.decimal128(38, 0)),
        "count": pa.array([Decimal(5), Decimal(7)], pa.decimal128(18, 0)),
    }))  # fmt: skip


def parquet_nfd_names() -> bytes:
    return parquet(pa.table([pa.array([1]), pa.array([2])], names=["café", NFD_CAFE]))


PEOPLE = Loads(columns=("g", "x"), rows=2, cells={"g": ("a", "b"), "x": (1, 2)})

ISSUE_EXAMPLES: tuple[Case, ...] = (
    Case("a header cell quoting the other separator", "note.csv",
         utf8('group,"note;a;b"\nx,"1;2"\ny,3\n'),
         Loads(columns=("group", "note;a;b"), rows=2, cells={"note;a;b": ("1;2", "3")})),
    Case("a doubled byte-order mark", "double-bom.csv", utf8(BOM * 2 + "g,x\na,1\nb,2\n"),
         Loads(columns=("g", "x"), rows=2, notes=(BOMS_REMOVED,))),
    Case("a byte-order mark inside the file", "joined.csv", utf8("g,x\nb,1\n" + BOM + "b,2\n"),
         Loads(columns=("g", "x"), rows=2, cells={"g": ("b", "b")}, notes=(BOMS_REMOVED,))),
    Case("infinities in a numeric column", "inf.csv",
         utf8("g,x\na,inf\nb,-inf\nc,Infinity\nd,1e400\ne,5\n"),
         Loads(columns=("g", "x"), rows=5, dtypes={"x": "float64"},
               cells={"x": (None, None, None, None, 5.0)},
               notes=(INFINITE, "`x` 4 (first in data row 1)"))),
    Case("±inf in Parquet", "inf.parquet", parquet_infinities(pa.float64()),
         Loads(columns=("g", "x"), rows=5, cells={"x": (1.0, None, None, None, None)},
               notes=(INFINITE, "`x` 2 (first in data row 2)"))),
    Case("three 20-digit codes", "codes.csv",
         utf8("code,n\n12345678901234567890,1\n12345678901234567891,2\n12345678901234567892,3\n"),
         Loads(columns=("code", "n"), rows=3, dtypes={"code": "str"},
               cells={"code": ("12345678901234567890", "12345678901234567891",
                               "12345678901234567892")}, notes=("`code`", KEPT_AS_TEXT))),
    Case("café in NFC and NFD", "cafe.csv", utf8(f"café,{NFD_CAFE}\n1,2\n"),
         Refused((*DUPLICATES, "'café' in columns 1, 2"))),
)  # fmt: skip

CASES: tuple[Case, ...] = (
    # ---- separators inside quotes ------------------------------------------------------------
    Case("quoted commas in a semicolon header", "semi-quoted.csv",
         utf8('id;"a,b,c";x\n1;"p,q";2\n'),
         Loads(columns=("id", "a,b,c", "x"), rows=1, cells={"a,b,c": ("p,q",)})),
    Case("quoted pipes in a tab header", "tab-quoted.txt", utf8('"a|b|c"\t"d"\n1\t2\n'),
         Loads(columns=("a|b|c", "d"), rows=1, dtypes={"d": "int64"})),
    Case("quoted commas in a pipe header", "pipe-quoted.csv", utf8('a|"b,c,d"|e\n1|2|3\n'),
         Loads(columns=("a", "b,c,d", "e"), rows=1)),
    Case("doubled quotes around a separator", "doubled.csv", utf8('"a "";"" b",c\n1,2\n'),
         Loads(columns=('a ";" b', "c"), rows=1)),
    Case("a quoted line break holding semicolons", "break.csv",
         utf8('"first;\nsecond;third",x\n1,2\n'),
         Loads(columns=("first;\nsecond;third", "x"), rows=1)),
    Case("every header cell quoted, each holding the other separator", "both.csv",
         utf8('"a;b";"c,d"\n1;2\n'), Loads(columns=("a;b", "c,d"), rows=1)),
    Case("an unclosed quote in the header", "open-header.csv", utf8('"a,b\n1,2\n'),
         Refused(("unclosed double quote",))),
    # ---- byte-order marks --------------------------------------------------------------------
    Case("a byte-order mark inside a number", "bom-number.csv", utf8("x\n1\n" + BOM + "2\n3\n"),
         Loads(columns=("x",), rows=3, dtypes={"x": "int64"}, cells={"x": (1, 2, 3)},
               notes=(BOMS_REMOVED,))),
    Case("three files joined, each with its mark", "three.csv",
         utf8(BOM + "g,x\na,1\n" + BOM + "a,2\n" + BOM + "c,3\n"),
         Loads(columns=("g", "x"), rows=3, cells={"g": ("a", "a", "c")},
               notes=("2 byte-order marks",))),
    Case("three marks at the start", "triple-bom.csv", utf8(BOM * 3 + "g;x\na;1\n"),
         Loads(columns=("g", "x"), rows=1, notes=(BOMS_REMOVED,))),
    Case("a mark in each gzip member", "members.csv.gz",
         members(BOM + "g,x\na,1\n", BOM + "b,2\n"),
         Loads(columns=("g", "x"), rows=2, cells={"g": ("a", "b")}, notes=(BOMS_REMOVED,))),
    Case("a mark inside a quoted cell", "bom-quoted.csv", utf8('g,x\n"' + BOM + 'b",1\nb,2\n'),
         Loads(columns=("g", "x"), rows=2, cells={"g": ("b", "b")}, notes=(BOMS_REMOVED,))),
    Case("marks in Parquet names and labels", "bom.parquet", parquet_with_boms,
         Loads(columns=("group", "x"), rows=3, cells={"group": ("b", "b", "c")},
               notes=("2 byte-order marks",))),
    Case("a doubled mark making two equal names", "bom-dups.csv", utf8(BOM * 2 + "a,a\n1,2\n"),
         Refused(("duplicate column names", "'a' in columns 1, 2"))),
    # ---- infinities and numbers beyond a float ---------------------------------------------
    Case("infinities written every way", "inf-ways.csv",
         utf8("g,x\na,+inf\nb,INF\nc,-Infinity\nd,infinity\ne,2.5\n"),
         Loads(columns=("g", "x"), rows=5, dtypes={"x": "float64"},
               cells={"x": (None, None, None, None, 2.5)}, notes=("`x` 4",))),
    Case("numbers just beyond the largest double", "beyond.csv",
         utf8("g,x\na,1.8e308\nb,-1e309\nc,1.7e308\n"),
         Loads(columns=("g", "x"), rows=3, cells={"x": (None, None, 1.7e308)},
               notes=("`x` 2 (first in data row 1)",))),
    Case("a column of infinities only", "all-inf.csv", utf8("g,x\na,inf\nb,-inf\n"),
         Loads(columns=("g", "x"), rows=2, dtypes={"x": "float64"}, cells={"x": (None, None)},
               notes=(INFINITE,))),
    Case("an infinity in the only column", "lone-inf.csv", utf8("x\n1\ninf\n3\n"),
         Loads(columns=("x",), rows=2, cells={"x": (1.0, 3.0)},
               notes=(INFINITE, "1 row with no value in any column"))),
    Case("infinities in two columns", "two-inf.csv", utf8("x,y\ninf,1\n2,-inf\n3,inf\n"),
         Loads(columns=("x", "y"), rows=3, notes=("`x` 1 (first in data row 1); `y` 2 (first "
                                                  "in data row 2)",))),
    Case("float32 infinities in Parquet", "inf32.parquet", parquet_infinities(pa.float32()),
         Loads(columns=("g", "x"), rows=5, dtypes={"x": "float32"}, notes=("`x` 2",))),
    Case("an infinity in gzip", "inf.csv.gz", lambda: gzipped(b"g,x\na,1\nb,inf\n"),
         Loads(columns=("g", "x"), rows=2, cells={"x": (1.0, None)}, notes=(INFINITE,))),
    Case("a number below the smallest double", "tiny.csv", utf8("x\n1e-400\n2\n"),
         Loads(columns=("x",), rows=2, dtypes={"x": "float64"}, cells={"x": (0.0, 2.0)})),
    # ---- whole numbers beyond 64 bits ----------------------------------------------------------
    Case("codes with leading zeros beyond 64 bits", "zeros.csv",
         utf8("code\n0001234567890123456789012\n0001234567890123456789013\n"),
         Loads(columns=("code",), rows=2, dtypes={"code": "str"},
               cells={"code": ("0001234567890123456789012", "0001234567890123456789013")},
               notes=(KEPT_AS_TEXT,))),
    Case("19-digit codes within 64 bits", "int64-codes.csv",
         utf8("code\n1234567890123456789\n1234567890123456788\n"),
         Loads(columns=("code",), rows=2, dtypes={"code": "int64"},
               cells={"code": (1234567890123456789, 1234567890123456788)})),
    Case("20-digit codes with missing cells", "codes-missing.csv",
         utf8("code,n\n99999999999999999999,1\n,2\n99999999999999999998,3\n"),
         Loads(columns=("code", "n"), rows=3,
               cells={"code": ("99999999999999999999", None, "99999999999999999998")},
               notes=(KEPT_AS_TEXT,))),
    Case("negative codes beyond 64 bits", "negative-codes.csv",
         utf8("code\n-99999999999999999999\n-99999999999999999998\n"),
         Loads(columns=("code",), rows=2, dtypes={"code": "str"}, notes=(KEPT_AS_TEXT,))),
    Case("a 20-digit code after the parser's first chunk", "late-code.csv", late_code,
         Loads(columns=("code",), rows=300_000, dtypes={"code": "str"}, notes=("`code`",))),
    Case("unsigned 64-bit Parquet codes", "uint64.parquet", parquet_big_unsigned,
         Loads(columns=("code", "n"), rows=3, dtypes={"code": "str"},
               cells={"code": ("18446744073709551615", "9223372036854775808", "1")},
               notes=(KEPT_AS_TEXT,))),
    Case("Parquet whole-number decimals", "whole-decimals.parquet", parquet_whole_decimals,
         Loads(columns=("code", "count"), rows=2, dtypes={"code": "str", "count": "int64"},
               cells={"code": (str(10**25 + 1), str(10**25 + 2)), "count": (5, 7)},
               notes=("`code`", KEPT_AS_TEXT))),
    # ---- names in other Unicode forms ----------------------------------------------------------
    Case("NFC and NFD names in Parquet", "cafe.parquet", parquet_nfd_names,
         Refused(DUPLICATES)),
    Case("Å precomposed and combined", "angstrom.csv", utf8("\u00c5,A\u030a\n1,2\n"),
         Refused(DUPLICATES)),
    Case("the ångström sign and Å", "sign.csv", utf8("\u212b;\u00c5\n1;2\n"),
         Refused(DUPLICATES)),
    Case("a ligature is another name", "ligature.csv", utf8("\ufb01le,file\n1,2\n"),
         Loads(columns=("\ufb01le", "file"), rows=1)),
    # ---- gzip members ----------------------------------------------------------------------------
    Case("zero padding after gzip members", "padded.csv.gz", zero_padded_members, PEOPLE),
    Case("garbage after a gzip member", "garbage.csv.gz",
         lambda: gzipped(b"g,x\na,1\n") + b"not gzip at all",
         Refused(("not a valid gzip file", "compress it again with gzip"))),
    Case("10,000 empty members before the table", "late-table.csv.gz", members_after_empty_ones,
         Loads(columns=("g", "x"), rows=2, cells={"g": ("a", "b")})),
    Case("an empty first member", "empty-first.csv.gz", members("", "g,x\na,1\nb,2\n"),
         Loads(columns=("g", "x"), rows=2, cells={"x": (1, 2)})),
    # ---- decimal commas, on request ------------------------------------------------------------
    Case("decimal commas read as asked", "comma-prices.csv",
         utf8("item;price\na;3,25\nb;-0,5\nc;12\n"),
         Loads(columns=("item", "price"), rows=3, dtypes={"price": "float64"},
               cells={"price": (3.25, -0.5, 12.0)}), decimal=","),
    Case("decimal commas asked of a comma-separated file", "comma-both.csv",
         utf8("item,price\na,3\n"),
         Refused(("separates its fields with commas", "decimal points", "semicolons")),
         decimal=","),
    Case("decimal commas in a tab file", "comma-tabs.txt", utf8("g\tx\na\t1,5\nb\t2\n"),
         Loads(columns=("g", "x"), rows=2, cells={"x": (1.5, 2.0)}), decimal=","),
    Case("decimal commas in gzip", "comma.csv.gz", lambda: gzipped(b"g;x\na;0,25\n"),
         Loads(columns=("g", "x"), rows=1, cells={"x": (0.25,)}), decimal=","),
    Case("decimal commas asked of Parquet", "commas.parquet",
         lambda: parquet(pa.table({"x": [1.5]})),
         Loads(columns=("x",), rows=1, cells={"x": (1.5,)}), decimal=","),
    # ---- markup in the data: loaded as written (the pages show it as text) ---------------------
    Case("a markdown image and link as a label", "beacon.csv",
         utf8("g,x\n![x](http://host/beacon.png) [Verify your account](http://evil/),1\nb,2\n"),
         Loads(columns=("g", "x"), rows=2,
               cells={"g": ("![x](http://host/beacon.png) [Verify your account](http://evil/)",
                            "b")})),
    Case("an HTML tag as a label", "html.csv", utf8('g,x\n"<img src=x onerror=alert(1)>",1\n'),
         Loads(columns=("g", "x"), rows=1, cells={"g": ("<img src=x onerror=alert(1)>",)})),
    Case("markdown in a column name", "md-name.csv", utf8('"**bold** [l](http://x)",x\n1,2\n'),
         Loads(columns=("**bold** [l](http://x)", "x"), rows=1)),
    Case("Streamlit colour and LaTeX directives", "directives.csv",
         utf8("g,x\n:red[alert] $x^2$,1\n"),
         Loads(columns=("g", "x"), rows=1, cells={"g": (":red[alert] $x^2$",)})),
    # ---- wide files ------------------------------------------------------------------------------
    Case("1,500 columns, one padded cell", "wide-padded.csv", wide_with_a_padded_cell,
         Loads(columns=tuple(f"c{i}" for i in range(1_500)), rows=2,
               dtypes={"c700": "int64"}, cells={"c700": (7, 700)})),
    Case("2,000 columns of numbers and labels", "wide-mixed.csv",
         wide(2_000, lambda i: f"g{i}" if i % 2 else str(i)),
         Loads(columns=tuple(f"c{i}" for i in range(2_000)), rows=2,
               dtypes={"c0": "int64", "c1": "str", "c1999": "str"})),
    Case("2,000 quoted columns, one padded label", "wide-quoted.csv",
         wide(2_000, lambda i: '" a "' if i == 3 else f'"{i}"'),
         Loads(columns=tuple(f"c{i}" for i in range(2_000)), rows=2,
               dtypes={"c0": "int64", "c3": "str"}, cells={"c3": ("a", "a")})),
    Case("1,500 columns, an infinity in the last", "wide-inf.csv",
         wide(1_500, lambda i: "inf" if i == 1_499 else "1"),
         Loads(columns=tuple(f"c{i}" for i in range(1_500)), rows=2,
               dtypes={"c1499": "float64"}, notes=("`c1499` 2",))),
    Case("2,000 columns, 1,000 names twice", "wide-dups.csv", wide_duplicates,
         Refused(("duplicate column names", "'c0' in columns 1, 1001", "and 995 more names"))),
    Case("a 100,000-character quoted name holding every separator", "long-quoted-name.csv",
         lambda: ('"' + ",;\t|" * 25_000 + '",x\n1,2\n').encode(),
         Loads(columns=(",;\t|" * 25_000, "x"), rows=1)),
    Case("raw bytes of a header quote never closed, NUL free", "only-quote.csv", raw(b'"\n'),
         Refused(("unclosed double quote",))),
)  # fmt: skip
