"""The usual bad files: empty, wrong encodings, renamed or broken binaries, unsupported types,
duplicate names, ragged rows, unclosed quotes, too many rows, huge names and fields."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import pyarrow as pa

from tests.io_corpus.case import (
    PEOPLE_CSV,
    USUAL,
    Case,
    Loads,
    Refused,
    gzipped,
    parquet,
    people_parquet,
    raw,
    utf8,
)


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


def parquet_duplicates() -> bytes:
    return parquet(pa.table([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"]))


UNSUPPORTED = ("unsupported file type", "Supported: .csv, .txt, .csv.gz, .parquet, .pq")
NOT_UTF8 = ("not valid UTF-8", "Re-save the file with UTF-8 encoding")
NOT_PARQUET = ("not a valid Parquet file", "Export it again as Parquet, or upload it as CSV")


USUAL_BAD_FILES: tuple[Case, ...] = (
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
)  # fmt: skip
