"""How much a file may take: inflating gzip within a byte limit, and the row and byte limits'
messages."""

from __future__ import annotations

import re
import zlib

import pyarrow as pa

DEFAULT_MAX_ROWS = 5_000_000
DEFAULT_MAX_BYTES = 1024**3
"""The most a table may take once decompressed and decoded (1 GiB): 5 million rows of about 200
bytes. A compressed file that would inflate beyond it is refused while inflating."""
_INFLATE_CHUNK_BYTES = 8 * 1024**2


def gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """Inflate every gzip member chunk by chunk, refusing as soon as the output passes
    ``max_bytes``: a small file that inflates to gigabytes (a decompression bomb) never lands in
    memory. Arrow's stream walks concatenated members in C++, so a million empty members cost
    about a second at most; a file it cannot read (zero padding between members, which gzip
    allows, or damage) is walked again member by member, which also names the damage."""
    if not data:
        raise_empty(name, 0)
    try:
        return _inflate_with_arrow(data, name, max_bytes)
    except (OSError, pa.ArrowInvalid):
        return _inflate_member_by_member(data, name, max_bytes)


def _inflate_with_arrow(data: bytes, name: str, max_bytes: int) -> bytes:
    stream = pa.CompressedInputStream(pa.BufferReader(data), "gzip")
    out = bytearray()
    while chunk := stream.read(_INFLATE_CHUNK_BYTES):
        out += chunk
        _check_inflated(len(out), name, max_bytes)
    return bytes(out)


def _check_inflated(size: int, name: str, max_bytes: int) -> None:
    if size > max_bytes:
        raise ValueError(
            f"'{name}' decompresses to more than {show_bytes(max_bytes)}, the limit; upload a "
            "smaller sample of the table."
        )


_ZERO_PADDING = re.compile(rb"\0*")


def _inflate_member_by_member(data: bytes, name: str, max_bytes: int) -> bytes:
    """Inflate the members one after another, each found by its offset in ``data`` (never by
    slicing off the rest of the file, which made a million members take hours)."""
    out = bytearray()
    view = memoryview(data)
    offset = 0
    try:
        while offset < len(data):
            offset = _inflate_member(view, offset, out, name, max_bytes)
            offset = _ZERO_PADDING.match(data, offset).end()  # gzip allows zeros after a member
    except zlib.error as exc:
        raise ValueError(
            f"'{name}' is not a valid gzip file ({exc}). Upload the plain .csv file, or compress "
            "it again with gzip."
        ) from None
    return bytes(out)


def _inflate_member(view: memoryview, offset: int, out: bytearray, name: str,
                    max_bytes: int) -> int:  # fmt: skip
    """Inflate the member at ``offset`` into ``out``; return the offset just after it. Its
    bytes are fed in windows growing from 64 bytes, since zlib keeps a copy of the input a
    member leaves unused: a tiny member costs a tiny copy."""
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    window = 64
    while not inflater.eof:
        if offset >= len(view):
            raise zlib.error("the compressed data ends early")
        piece = view[offset : offset + window]
        offset += len(piece)
        chunk = inflater.decompress(piece, _INFLATE_CHUNK_BYTES)
        while chunk:
            out += chunk
            _check_inflated(len(out), name, max_bytes)
            chunk = inflater.decompress(inflater.unconsumed_tail, _INFLATE_CHUNK_BYTES)
        window = min(2 * window, _INFLATE_CHUNK_BYTES)
    return offset - len(inflater.unused_data)


def show_bytes(size: int) -> str:
    return f"{size / 1024**3:g} GiB" if size >= 1024**3 else f"{size / 1024**2:g} MiB"


def raise_empty(name: str, size: int) -> None:
    what = "0 bytes" if size == 0 else "only whitespace"
    raise ValueError(
        f"'{name}' is empty ({what}). Upload a file with a header row of column names and at "
        "least one data row."
    )


class TooLargeError(ValueError):
    """A table over the byte limit (told apart from Arrow's own ValueErrors)."""


def raise_too_large(name: str, max_bytes: int) -> None:
    raise TooLargeError(
        f"'{name}' takes more than {show_bytes(max_bytes)} once decoded, the limit. Upload a "
        "sample or a subset of the table, or drop columns you do not need."
    )


def check_row_limit(n_rows: int, max_rows: int, name: str) -> None:
    if n_rows > max_rows:
        raise ValueError(
            f"'{name}' has more than {max_rows:,} rows, the limit. Upload a sample or a subset of "
            "the table."
        )
