"""Valid oddities that must load: BOMs, CRLF, quoted newlines, semicolons, tabs, pipes, blank
lines, missing-value tokens, unicode names, Parquet indexes and types."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from tests.io_corpus.case import (
    ODDITY,
    PEOPLE,
    PEOPLE_CSV,
    Case,
    Loads,
    gzipped,
    parquet,
    people_parquet,
    utf8,
)


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


def parquet_padded_names() -> bytes:
    return parquet(pa.table({" g ": [" a ", "?", "NA"], "": [1, 2, 3]}))


ODDITIES: tuple[Case, ...] = (
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
