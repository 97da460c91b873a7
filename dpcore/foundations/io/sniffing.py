"""What a CSV file's bytes are: binary or text, its encoding, its delimiter and its header."""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterator

from dpcore.foundations.io.limits import raise_empty

_DELIMITERS = (",", ";", "\t", "|")
EXCEL_SEP_LINE = re.compile(rb"(?:\xef\xbb\xbf)?sep=([,;\t|])\r?\n")

# Magic numbers of files people upload by mistake, so we can say what the file looks like.
_MAGIC = (
    (b"PK\x03\x04", "a ZIP archive or an Excel workbook (.xlsx)", "Export the sheet as CSV UTF-8."),
    (b"\xd0\xcf\x11\xe0", "an old Excel workbook (.xls)", "Export the sheet as CSV UTF-8."),
    (b"PAR1", "a Parquet file", "Give it the extension .parquet."),
    (b"\x1f\x8b", "a gzip-compressed file", "Give it the extension .csv.gz."),
    (b"\x89PNG", "a PNG image", "Upload the data table instead."),
    (b"\xff\xd8\xff", "a JPEG image", "Upload the data table instead."),
    (b"%PDF", "a PDF document", "Upload the data table instead."),
)


def check_bytes(data: bytes, name: str) -> None:
    """Refuse empty, UTF-16 and binary files before parsing (UTF-8 is checked while parsing)."""
    if not data or data.isspace():
        raise_empty(name, len(data))
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError(
            f"'{name}' is encoded as UTF-16, not UTF-8. Re-save it as 'CSV UTF-8' (in Excel: "
            "Save As → CSV UTF-8) and upload it again."
        )
    for magic, what, fix in _MAGIC:
        if data.startswith(magic):
            raise ValueError(f"'{name}' looks like {what}, not a CSV text file. {fix}")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(
            f"'{name}' looks like a binary file, not CSV: it contains a NUL byte (line "
            f"{line_of(data, nul):,}). Upload a comma-separated text file saved as UTF-8, or a "
            "Parquet file."
        )


def line_of(data: bytes, offset: int) -> int:
    """The line (from 1) that byte ``offset`` is on, whether lines end in LF, CRLF or CR."""
    head = data[:offset]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def raise_not_utf8(data: bytes, name: str) -> None:
    """Name the first byte that is not UTF-8 (called once parsing has found one)."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"'{name}' is not valid UTF-8 text: byte 0x{data[exc.start : exc.start + 1].hex()} "
            f"at byte offset {exc.start:,} (line {line_of(data, exc.start):,}) cannot be "
            "decoded. Re-save the file with UTF-8 encoding (in Excel: Save As → CSV UTF-8) and "
            "upload it again."
        ) from None


def records(data: bytes, sep: str, strict: bool = True) -> Iterator[list[str]]:
    """The file's CSV records, decoded as they are read (the whole text is never held at once),
    a byte-order mark dropped and LF, CRLF or CR alone ending a line."""
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", newline="")
    return csv.reader(text, delimiter=sep, strict=strict)


def sniff_delimiter(data: bytes) -> str:
    """The one of , ; tab | found most often in the header record outside double quotes (a
    quoted separator is data: ``group,"note;a;b"`` has two columns), ties going to the earlier;
    ``,`` if none is found. Quotes are told apart before the delimiter is known, as a CSV
    reader pairs them; a header whose quotes never close is split as each candidate's CSV
    reader splits it instead (the most fields win)."""
    outside = _header_outside_quotes(data)
    if outside is None:
        return _delimiter_splitting_most(data)
    counts = {sep: outside.count(sep.encode()) for sep in _DELIMITERS}
    best = max(_DELIMITERS, key=counts.__getitem__)
    return best if counts[best] else ","


_LEADING_BLANKS = re.compile(rb"(?:\xef\xbb\xbf|[\r\n])*")
_LINE_END = re.compile(rb"[\r\n]")


def _header_outside_quotes(data: bytes) -> bytes | None:
    """The bytes of the first non-blank record that stand outside double quotes (linear in the
    record's length; the separators, quotes and line breaks are ASCII, so no decoding is
    needed), or None if a quote opened in it never closes."""
    pos = _LEADING_BLANKS.match(data).end()
    outside = []
    while True:
        quote = data.find(b'"', pos)
        limit = quote if quote >= 0 else len(data)
        line_end = _LINE_END.search(data, pos, limit)
        if line_end:
            outside.append(data[pos : line_end.start()])
            return b"".join(outside)
        outside.append(data[pos:limit])
        if quote < 0:
            return b"".join(outside)
        closing = data.find(b'"', quote + 1)  # a doubled "" inside closes and reopens
        if closing < 0:
            return None
        pos = closing + 1


def _delimiter_splitting_most(data: bytes) -> str:
    fields = {}
    for sep in _DELIMITERS:
        try:
            fields[sep] = len(_first_record(data, sep) or ())
        except (csv.Error, UnicodeDecodeError):
            fields[sep] = 0
    best = max(_DELIMITERS, key=lambda d: fields[d])
    return best if fields[best] > 1 else ","


def _first_record(data: bytes, sep: str) -> list[str] | None:
    """The first non-blank record, however long; only the lines it spans are read."""
    return next((row for row in records(data, sep) if row), None)


def header(data: bytes, sep: str, name: str) -> list[str]:
    """Column names of the first non-blank record, stripped, with duplicates refused."""
    try:
        raw = _first_record(data, sep)
    except csv.Error as exc:
        if "field limit" in str(exc):
            raise ValueError(
                f"'{name}': a name in the header row is longer than {csv.field_size_limit():,} "
                "characters. Shorten the column names (or check that the file's first line is "
                "its header) and upload it again."
            ) from None
        if "unexpected end of data" in str(exc):
            raise ValueError(
                f"'{name}': the header row opens a double quote (\") that never closes, so the "
                "rest of the file would read as one column name (an unclosed double quote). "
                "Close the quote or remove it, then upload again."
            ) from None
        raise ValueError(
            f"'{name}': the header row cannot be parsed as CSV ({exc}). Check its double quotes "
            '(a quoted name is written "like this", a quote inside it doubled ""), then upload '
            "again."
        ) from None
    except UnicodeDecodeError:
        raise_not_utf8(data, name)
    if raw is None:
        raise_empty(name, 1)
    names = [c.strip() or f"Unnamed: {i}" for i, c in enumerate(raw)]
    check_unique(names, name)
    return names


def check_unique(names: list[str], name: str) -> None:
    """Refuse two columns whose names read the same: equal once trimmed and written in one
    Unicode form (NFC), so "café" typed with an accented é and with e + a combining accent
    are one name, as they look."""
    keys = [column if column.isascii() else unicodedata.normalize("NFC", column)
            for column in names]  # fmt: skip
    if len(set(keys)) == len(keys):
        return
    columns: dict[str, list[int]] = defaultdict(list)
    for position, key in enumerate(keys, start=1):
        columns[key].append(position)
    dups = [(column, positions) for column, positions in columns.items() if len(positions) > 1]
    where = "; ".join(
        f"{column!r} in columns {', '.join(map(str, positions[:10]))}"
        f"{', ...' if len(positions) > 10 else ''}"
        for column, positions in dups[:5]
    )
    more = f" and {len(dups) - 5:,} more names" if len(dups) > 5 else ""
    forms = any(len({names[i - 1] for i in positions}) > 1 for _, positions in dups)
    how = " (some written with different Unicode characters that look the same)" if forms else ""
    raise ValueError(
        f"'{name}' has duplicate column names (after trimming spaces): {where}{more}{how}. "
        "Rename them so that every column has a unique name, then upload again."
    )
