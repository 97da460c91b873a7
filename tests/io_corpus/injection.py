"""Export injection: formula-like labels and names, control characters, line breaks and
right-to-left overrides in cells and column names, all kept as they are."""

from __future__ import annotations

from tests.io_corpus.case import INJECTION, Case, Loads, utf8

INJECTIONS: tuple[Case, ...] = (
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
)  # fmt: skip
