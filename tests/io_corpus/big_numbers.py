"""Numbers at the edges: integers beyond int64 (kept as text, with a note) and extreme finite
values in CSV and Parquet."""

from __future__ import annotations

import pyarrow as pa

from tests.io_corpus.case import BIG_INTEGER, EXTREME, Case, Loads, parquet, utf8


def parquet_extremes() -> bytes:
    return parquet(pa.table({"x": [9e307, -9e307, 1.0, 1.7976931348623157e308]}))


BIG_INTEGERS: tuple[Case, ...] = (
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



)  # fmt: skip


EXTREMES: tuple[Case, ...] = (
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
)  # fmt: skip
