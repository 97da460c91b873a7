"""Files whose trouble wants a clear message: nested Parquet columns, stored indexes, decimals,
decimal commas, currencies, thousands separators, percentages, stray words, NUL bytes."""

from __future__ import annotations

from decimal import Decimal

import pandas as pd
import pyarrow as pa

from tests.io_corpus.case import UNCLEAR, Case, Loads, Refused, parquet, utf8


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


UNCLEAR_MESSAGES: tuple[Case, ...] = (
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
)  # fmt: skip
