"""Files a reader can silently misread: quoted delimiters, a huge header, separator lines, a
stray word or NUL after the parser's first chunk, CR-only line endings."""

from __future__ import annotations

from tests.io_corpus.case import MISREAD, Case, Loads, Refused, utf8

WIDE_NAMES = tuple(f"{'a_long_column_name_' * 110}{i:04d}" for i in range(520))


def wide_header() -> bytes:
    """520 columns named with 2,094 characters each: a header of just over 1 MiB."""
    return (",".join(WIDE_NAMES) + "\n" + ",".join("1" for _ in WIDE_NAMES) + "\n").encode()


def nul_after_8kb() -> bytes:
    """6,000 data lines; line 5,001 (data row 5,000) has a NUL byte in its text cell."""
    lines = ["id,label"] + [f"{i},row{i}" for i in range(1, 6001)]
    lines[5000] = "5000,ro\x00w"
    return ("\n".join(lines) + "\n").encode()


def late_cell(cell: str) -> bytes:
    """A column of 300,000 ones whose last cell is ``cell``: 600 kB, more than the first chunk
    pandas' low-memory parser reads."""
    return ("hours\n" + "1\n" * 299_999 + cell + "\n").encode()


MISREADS: tuple[Case, ...] = (
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
)  # fmt: skip
