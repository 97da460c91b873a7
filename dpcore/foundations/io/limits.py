"""How much a file may take: inflating gzip within a byte limit, and the row and byte limits'
messages."""

from __future__ import annotations

import zlib

DEFAULT_MAX_ROWS = 5_000_000
DEFAULT_MAX_BYTES = 1024**3
"""The most a table may take once decompressed and decoded (1 GiB): 5 million rows of about 200
bytes. A compressed file that would inflate beyond it is refused while inflating."""
_INFLATE_CHUNK_BYTES = 8 * 1024**2


def gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """Inflate gzip members chunk by chunk, refusing as soon as the output passes ``max_bytes``:
    a small file that inflates to gigabytes (a decompression bomb) never lands in memory."""
    if not data:
        raise_empty(name, 0)
    out = bytearray()
    rest = data
    try:
        while rest:  # one gzip member per round (concatenated gzip files are valid gzip)
            inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
            chunk = inflater.decompress(rest, _INFLATE_CHUNK_BYTES)
            while chunk:
                out += chunk
                if len(out) > max_bytes:
                    raise ValueError(
                        f"'{name}' decompresses to more than {show_bytes(max_bytes)}, the "
                        "limit; upload a smaller sample of the table."
                    )
                chunk = inflater.decompress(inflater.unconsumed_tail, _INFLATE_CHUNK_BYTES)
            if not inflater.eof:
                raise zlib.error("the compressed data ends early")
            rest = inflater.unused_data.lstrip(b"\0")  # gzip allows zero padding after a member
    except zlib.error as exc:
        raise ValueError(
            f"'{name}' is not a valid gzip file ({exc}). Upload the plain .csv file, or compress "
            "it again with gzip."
        ) from None
    return bytes(out)


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
