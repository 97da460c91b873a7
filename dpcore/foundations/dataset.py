"""A dataset's identity: one name for one dataset, whatever reads it.

The identity is computed from the data's content, the same way by the app (an upload or a
path), the command line (every engine) and a release's exported script, so that the ledger can
tell a release on the same data from one on other data, and one plan on one dataset is one
release however it is committed:

- **content** (``content:…``): the bytes of a file, after gzip decompression (detected by its
  magic bytes, not by its name, so ``survey.csv`` and ``survey.csv.gz`` are one dataset), or of
  every part of a folder or glob. Each part is hashed in chunks of :data:`CHUNK_BYTES` (SHA-256
  of each chunk, then of the chunks' digests: the chunks hash in parallel threads, since hashlib
  releases the GIL), and the dataset is the SHA-256 of its parts' digests in sorted order: a
  stable order that moving, renaming or re-listing the parts does not change. One read of the
  bytes (``benchmarks/bench_identity.py`` measures it), remembered across runs while a file's
  status is unchanged (:mod:`~dpcore.foundations.identity_cache`).
- **snapshot** (``snapshot:…``): a Spark table's version where its catalog keeps one (Delta,
  Iceberg).
- **declared** (``declared:…``): what the curator declares for data whose bytes cannot be read
  and whose catalog keeps no snapshot (a Spark view, a remote path).
- **frame** (``frame:…``): a frame built in memory from no file (a teaching preset, a frame
  passed to the library), hashed cell by cell (:func:`frame_identity`).

An identity is a deterministic function of the confidential rows (whoever knows every row but
one can test candidates for the last), so it stays with the curator: in the ledger and on the
Release page's review, never in an export.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import threading
import time
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pandas as pd

from dpcore.foundations import identity_cache

__all__ = [
    "CHUNK_BYTES",
    "DatasetRef",
    "bytes_identity",
    "declared_identity",
    "describe_identity",
    "files_identity",
    "frame_identity",
    "read_dataset",
    "snapshot_identity",
]

CHUNK_BYTES = 8 * 2**20
"""The bytes of a part hashed as one chunk (8 MiB): large enough for hashlib's full speed,
small enough that a few in flight per thread keep memory low."""
GZIP_MAGIC = b"\x1f\x8b"
LEGACY = "legacy:"
"""How a ledger migrated from an older version marks the fingerprints that version computed."""
_PART = b"strata-lab part v1\n"
_DATASET = b"strata-lab dataset v1\n"
_WORKERS = max(1, min(4, os.cpu_count() or 1))
_IN_FLIGHT = 2 * _WORKERS
"""Chunks read ahead of the hashing threads: bounds memory at a few chunks per thread."""
KINDS = {
    "content": "the bytes of its files",
    "snapshot": "the snapshot its catalog keeps",
    "declared": "what the curator declared",
    "frame": "its cells, as read into memory",
}
"""What an identity of each kind is computed from, for the curator's review."""


def bytes_identity(data: bytes | bytearray | memoryview) -> str:
    """The identity of one file's bytes held in memory (an upload): equal to
    :func:`files_identity` of the same file on disk.

    Raises
    ------
    ValueError
        Bytes that start as gzip but do not decompress.
    """
    view = memoryview(data)
    if bytes(view[:2]) == GZIP_MAGIC:
        return _dataset([_gunzipped_part(io.BytesIO(view), "the uploaded file")])
    chunks = (view[start : start + CHUNK_BYTES] for start in range(0, len(view), CHUNK_BYTES))
    return _dataset([_part_digest(chunks)])


def files_identity(paths: Sequence[str | os.PathLike]) -> str:
    """The identity of data stored as the files ``paths`` (one file, or every part of a folder
    or glob): one read of their bytes.

    Raises
    ------
    ValueError
        No file, a file that cannot be read, or one that starts as gzip but does not decompress.
    """
    if not paths:
        raise ValueError("`paths` must name at least one file, got none")
    with identity_cache.open_cache(_scheme()) as cache:
        return _dataset([_file_part(Path(path), cache) for path in paths])


def frame_identity(frame: pd.DataFrame) -> str:
    """The identity of a frame built in memory from no file: SHA-256 of its column names,
    dtypes and cell values. Data read from a file is identified by the file's bytes instead
    (:func:`bytes_identity`, :func:`files_identity`), whatever reads it."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    digest = hashlib.sha256()
    digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return "frame:" + digest.hexdigest()


def snapshot_identity(table: str, snapshot: object) -> str:
    """The identity of a table's snapshot as its catalog names it (``table`` and the catalog's
    id and version of that snapshot)."""
    text = json.dumps([table, snapshot], sort_keys=True, default=str)
    return "snapshot:" + hashlib.sha256(text.encode()).hexdigest()


def declared_identity(text: str) -> str:
    """The identity a curator declares for data whose bytes cannot be read and whose catalog
    keeps no snapshot (e.g. ``"survey 2024, extract of 1 March"``): the same words name the
    same data. Surrounding spaces do not count."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            f"`text` must name the data (e.g. 'survey 2024, extract of 1 March'), got {text!r}"
        )
    return "declared:" + hashlib.sha256(text.strip().encode()).hexdigest()


def describe_identity(identity: str) -> str:
    """What ``identity`` was computed from, for the curator's review (never exported)."""
    kind = identity.partition(":")[0]
    return KINDS.get(kind, "unknown")


@dataclass(frozen=True)
class DatasetRef:
    """What a release says about its data: a name, its identity (module doc; empty when the
    data has none yet, such as a Spark view no curator has declared) and its row count.
    ``aliases`` are identities older versions gave the same data (``legacy:`` and the frame's
    digest, the fingerprint versions before content identities recorded), for the ledger of a
    migrated file; they are no part of a plan. ``decimal`` is the decimal mark its file was read
    with (``","`` when decimal commas were asked for, which
    :func:`~dpcore.foundations.io.load_table` records in the frame's ``attrs``), so that an
    exported script reads the file the same way."""

    name: str
    identity: str
    rows: int
    aliases: tuple[str, ...] = ()
    decimal: str = "."

    @classmethod
    def of(cls, frame: pd.DataFrame, name: str, *, data: bytes | None = None) -> DatasetRef:
        """``frame`` named ``name``, identified by the file's bytes ``data`` it was read from
        (:func:`bytes_identity`), or by its cells when it comes from no file."""
        cells = frame_identity(frame)
        identity = cells if data is None else bytes_identity(data)
        return cls(
            name, identity, len(frame), aliases=(LEGACY + cells.removeprefix("frame:"),),
            decimal=frame.attrs.get("decimal", "."),
        )  # fmt: skip


def read_dataset(path: str | os.PathLike, decimal: str = ".") -> tuple[pd.DataFrame, DatasetRef]:
    """The table in the file at ``path`` (:func:`dpcore.foundations.io.read_table`, its numbers
    written with the decimal mark ``decimal``) and its reference, identified by the file's
    bytes: what a release's script reads, as the app does with an upload of the same file."""
    from dpcore.foundations.io import read_table  # io is heavy; identity alone needs none of it

    path = Path(path)
    data = path.read_bytes()
    frame = read_table(data, path.name, decimal=decimal)
    return frame, DatasetRef.of(frame, path.name, data=data)


# --- hashing --------------------------------------------------------------------------------


def _dataset(part_digests: Iterable[str]) -> str:
    listing = "\n".join(sorted(part_digests)).encode()
    return "content:" + hashlib.sha256(_DATASET + listing).hexdigest()


def _file_part(path: Path, cache: identity_cache.PartCache) -> str:
    """The part digest of one file: remembered from an earlier read while the open file's
    status is unchanged (:mod:`~dpcore.foundations.identity_cache`), else read and hashed."""
    try:
        with path.open("rb") as handle:
            descriptor = handle.fileno()
            digest = cache.remembered(path, descriptor)
            if digest is None:
                started, before = time.time(), identity_cache.status(descriptor)
                digest = _read_part(handle, str(path))
                cache.remember(path, descriptor, before, started, digest)
            return digest
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_part(handle: BinaryIO, name: str) -> str:
    """The part digest of an open file's bytes (decompressed, if they are gzip)."""
    if handle.read(2) == GZIP_MAGIC:
        handle.seek(0)
        return _gunzipped_part(handle, name)
    handle.seek(0)
    return _part_digest(iter(lambda: handle.read(CHUNK_BYTES), b""))


def _scheme() -> str:
    """What a part digest depends on besides the bytes (its header and chunk size): the
    remembered digests of another scheme are never used."""
    return hashlib.sha256(_PART + CHUNK_BYTES.to_bytes(8, "big")).hexdigest()


def _gunzipped_part(handle: BinaryIO, name: str) -> str:
    """The part digest of a gzip stream's decompressed bytes (every member, as gzip reads them)."""
    reader = gzip.GzipFile(fileobj=handle, mode="rb")
    try:
        return _part_digest(iter(lambda: reader.read(CHUNK_BYTES), b""))
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(
            f"{name} starts as a gzip file but does not decompress ({exc}); compress it again "
            "with gzip, or give the plain file"
        ) from None


def _part_digest(chunks: Iterator[bytes | memoryview]) -> str:
    """SHA-256 over the part's size and the SHA-256 of each of its chunks, in order. Chunks are
    hashed by a few threads while the next ones are read (or decompressed)."""
    digests: list[bytes] = []
    size = 0
    pending: deque[Future[bytes]] = deque()
    for chunk in chunks:
        size += len(chunk)
        pending.append(_pool().submit(_sha256, chunk))
        if len(pending) >= _IN_FLIGHT:
            digests.append(pending.popleft().result())
    digests.extend(future.result() for future in pending)
    header = _PART + size.to_bytes(8, "big")
    return hashlib.sha256(header + b"".join(digests)).hexdigest()


def _sha256(chunk: bytes | memoryview) -> bytes:
    return hashlib.sha256(chunk).digest()


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The hashing threads, started on first use and shared by every caller (an app hashes
    from several sessions at once; a pool per part would cost more than a small part)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(_WORKERS, thread_name_prefix="strata-identity")
        return _POOL
