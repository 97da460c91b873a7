"""What every release plan provides (:class:`ReleasePlan`) and what it says about its data."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields
from typing import Protocol

import numpy as np
import pandas as pd

from dpcore.accounting import Budget
from dpcore.grouping import GroupingSpec
from dpcore.mechanisms import NoiseSource
from dpcore.shares import PublicShares

__all__ = [
    "DatasetRef",
    "ReleasePlan",
    "fingerprint_frame",
]


def fingerprint_frame(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's column names, dtypes and cell values — identifies data, reveals none.

    The same file read the same way gives the same fingerprint, so a script can check that it is
    run on the data a release was made from.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    digest = hashlib.sha256()
    digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class DatasetRef:
    """What a release says about its data: a name, a fingerprint and a row count."""

    name: str
    fingerprint: str
    rows: int

    @classmethod
    def of(cls, frame: pd.DataFrame, name: str) -> DatasetRef:
        return cls(name=name, fingerprint=fingerprint_frame(frame), rows=len(frame))


def _init_fields(obj: object) -> dict:
    """Constructor arguments of a frozen dataclass, as plain JSON-ready values."""
    return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj) if f.init}


def _plain(value: object) -> object:
    if isinstance(value, tuple | list):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _data_line(dataset: DatasetRef) -> str:
    return (
        f"**Data:** {dataset.name}, {dataset.rows:,} rows (SHA-256 `{dataset.fingerprint[:12]}…`)"
    )


def _strata_line(spec: GroupingSpec, k: int, shares: PublicShares | None) -> str:
    line = f"**Strata:** {' × '.join(spec.by)} — {k} groups"
    return line if shares is None else f"{line}; shares: {shares.description.lower()}"


class ReleasePlan(Protocol):
    """What :func:`release` needs from a plan (:class:`MeanPlan` and the other analyses' plans).

    ``run`` returns one dict per released estimate with at least ``level`` ("group" or
    "population"), ``group``, ``estimate``, ``low`` and ``high``; ``parameters`` is the plan's
    JSON-ready identity and includes ``statistic``, ``dataset``, ``strata`` and ``estimator``;
    ``script_body`` is Python that rebuilds the plan from a frame named ``frame``.
    """

    label: str
    level: float

    @property
    def cost(self) -> Budget: ...

    @property
    def interval_description(self) -> str: ...

    def parameters(self) -> dict: ...

    def review_lines(self) -> list[str]: ...

    def run(self, noise: NoiseSource) -> list[dict]: ...

    def script_body(self) -> str: ...
