"""An engine's content identity (a full read of its files) runs beside its pass, not after it:
on 1e8 rows the two took 0.5 s and 0.7 s one after the other."""

from __future__ import annotations

import threading

import pytest

from dpcore.analyses.mean.aggregate import aggregate_mean
from dpcore.engines import DuckDBEngine, PandasEngine
from dpcore.engines.parts import parts_identity
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.privacy_unit import ROW

WAIT_S = 10.0


class MeetingEngine(PandasEngine):
    """Its identity and its pass each wait until the other has begun: they finish only if
    they run at the same time (one after the other, the first waits out ``WAIT_S``)."""

    identity_beside_pass = True

    def __init__(self, frame):
        super().__init__(frame, identity=None)
        self.identity_began, self.pass_began = threading.Event(), threading.Event()
        self.met = []

    def identity(self) -> str:
        self.identity_began.set()
        self.met.append(self.pass_began.wait(WAIT_S))
        return "content:" + "0" * 64

    def cells(self, query):
        self.pass_began.set()
        self.met.append(self.identity_began.wait(WAIT_S))
        return super().cells(query)


def test_the_identity_is_read_while_the_pass_runs(frame):
    engine = MeetingEngine(frame)
    aggregated = aggregate_mean(engine, GroupingSpec(by=("region",)), "v", (0.0, 10.0), ROW)
    assert engine.met[:2] == [True, True]
    assert aggregated.dataset.identity == "content:" + "0" * 64


def test_a_folder_s_identity_beside_the_pass_is_its_files_identity(frame, parquet_folder):
    """The same identity as the files' own."""
    engine = DuckDBEngine(parquet_folder)
    aggregated = aggregate_mean(engine, GroupingSpec(by=("region",)), "v", (0.0, 10.0), ROW)
    assert aggregated.dataset.identity == parts_identity(engine._files)


def test_an_identity_that_fails_beside_the_pass_is_raised_by_the_release(frame):
    class Unreadable(MeetingEngine):
        def identity(self) -> str:
            self.identity_began.set()
            raise ValueError("cannot read the files")

    with pytest.raises(ValueError, match="cannot read the files"):
        aggregate_mean(Unreadable(frame), GroupingSpec(by=("region",)), "v", (0.0, 10.0), ROW)
