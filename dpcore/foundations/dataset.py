"""A dataset's identity: what a release records about the data it was made from.

Engines compute it from the rows they read, the release layer writes it into every plan and
ledger record; both import it from here, so neither depends on the other.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import pandas as pd

__all__ = ["DatasetRef", "fingerprint_frame"]


def fingerprint_frame(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's column names, dtypes and cell values: identifies the data.

    The same file read the same way gives the same fingerprint, so the ledger can tell whether a
    plan is run on the data a release was made from. It is a deterministic function of every
    cell (whoever knows all rows but one can test candidates for the last), so it stays with the
    curator: in the ledger and on the Release page's review, never in an export.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    digest = hashlib.sha256()
    digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class DatasetRef:
    """What a release says about its data: a name, a fingerprint and a row count; and the
    decimal mark its file was read with (``","`` when decimal commas were asked for, which
    :func:`~dpcore.foundations.io.load_table` records in the frame's ``attrs``), so that an
    exported script reads the file the same way."""

    name: str
    fingerprint: str
    rows: int
    decimal: str = "."

    @classmethod
    def of(cls, frame: pd.DataFrame, name: str) -> DatasetRef:
        return cls(name=name, fingerprint=fingerprint_frame(frame), rows=len(frame),
                   decimal=frame.attrs.get("decimal", "."))  # fmt: skip
