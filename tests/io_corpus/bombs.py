"""Decompression bombs: gzip members or rows, Parquet dictionaries and run-length numbers that
inflate far past the byte limit they are read with (read under an address-space cap)."""

from __future__ import annotations

import gzip
import struct
import zlib
from collections.abc import Callable

import numpy as np
import pyarrow as pa

from tests.io_corpus.case import BOMB, BOMB_MAX_BYTES, Case, Refused, parquet


def gzip_bomb_of_members() -> bytes:
    """48 concatenated gzip members of 64 MiB each: 3 GiB of text from about 14 MB."""
    return gzip.compress(b"a,b\n" + b"0" * 64 * 1024**2, compresslevel=1, mtime=0) * 48


def gzip_bomb_of_rows() -> bytes:
    """One gzip member of 1 GiB of ``0,0`` rows, built without compressing 1 GiB: a deflate
    block ended by a full flush refers to nothing before it, so the same block can repeat."""
    header, chunk, repeats = b"a,b\n", b"0,0\n" * (2 * 1024**2), 128
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    first = deflate.compress(header) + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = zlib.crc32(header)
    for _ in range(repeats):
        crc = zlib.crc32(chunk, crc)
    size = (len(header) + len(chunk) * repeats) % 2**32
    return (
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"  # gzip header: deflate, no name, mtime 0
        + first
        + block * repeats
        + deflate.flush()
        + struct.pack("<II", crc, size)
    )


def parquet_text_dictionary_bomb() -> bytes:
    """Four 50 kB strings repeated 100,000 times: kilobytes stored, 5 GB decoded."""
    dictionary = pa.array([letter * 50_000 for letter in "abcd"])
    indices = pa.array(np.arange(100_000, dtype=np.int32) % 4)
    return parquet(
        pa.table({"label": pa.DictionaryArray.from_arrays(indices, dictionary)}),
        compression="zstd",
    )


def parquet_binary_dictionary_bomb() -> bytes:
    """The same as bytes (binary) rather than text, next to an ordinary column."""
    dictionary = pa.array([letter.encode() * 50_000 for letter in "wxyz"], type=pa.binary())
    indices = pa.array(np.arange(100_000, dtype=np.int32) % 4)
    return parquet(
        pa.table(
            {
                "id": np.arange(100_000),
                "blob": pa.DictionaryArray.from_arrays(indices, dictionary),
            }
        ),
        compression="zstd",
    )


def parquet_numeric_run_bomb() -> bytes:
    """80 int64 columns of a million zeros: run-length encoded, 0.4 MB stored and 640 MB
    decoded (the metadata's uncompressed sizes count the encoded runs, not the values)."""
    zeros = pa.array(np.zeros(1_000_000, dtype=np.int64))
    return parquet(pa.table({f"c{i}": zeros for i in range(80)}), compression="zstd")


GZIP_BOMB_MESSAGE = "decompresses to more than 64 MiB, the limit"
PARQUET_BOMB_MESSAGE = "takes more than 64 MiB once decoded, the limit"


def _bomb(name: str, filename: str, build: Callable[[], bytes], message: str) -> Case:
    return Case(name, BOMB, filename, build, Refused((f"'{filename}' {message}",)),
                max_bytes=BOMB_MAX_BYTES, bomb=True)  # fmt: skip


BOMBS: tuple[Case, ...] = (
    _bomb("gzip bomb of concatenated members", "bomb.csv.gz", gzip_bomb_of_members,
          GZIP_BOMB_MESSAGE),
    _bomb("gzip bomb of rows in one member", "rows-bomb.csv.gz", gzip_bomb_of_rows,
          GZIP_BOMB_MESSAGE),
    _bomb("Parquet text dictionary bomb", "bomb.parquet", parquet_text_dictionary_bomb,
          PARQUET_BOMB_MESSAGE),
    _bomb("Parquet binary dictionary bomb", "blob-bomb.parquet", parquet_binary_dictionary_bomb,
          PARQUET_BOMB_MESSAGE),
    _bomb("Parquet run-length numeric bomb", "zeros-bomb.pq", parquet_numeric_run_bomb,
          PARQUET_BOMB_MESSAGE),
)  # fmt: skip
