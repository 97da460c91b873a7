"""Hostile files, round 2 (``tests/io_corpus_round2.py``) through the reader: each gives the
outcome its case declares, through ``read_table`` and ``load_table`` alike."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.foundations import io as dpio
from tests.io_corpus import Refused
from tests.io_corpus_round2 import CASES, ISSUE_EXAMPLES, Case
from tests.unit.dpcore.test_io_corpus import assert_frame_as_declared

ALL = ISSUE_EXAMPLES + CASES


def read(case: Case, reader=dpio.read_table):
    return reader(case.build(), case.filename, decimal=case.decimal)


def test_at_least_40_new_cases_beside_the_issue_examples_with_unique_names():
    assert len(CASES) >= 40
    assert len({case.name for case in ALL}) == len(ALL)
    assert all(case.expect.contains for case in ALL if isinstance(case.expect, Refused))


@pytest.mark.parametrize("case", ALL, ids=[case.name for case in ALL])
def test_each_hostile_file_gives_its_declared_outcome(case):
    if isinstance(case.expect, Refused):
        for reader in (dpio.read_table, dpio.load_table):
            with pytest.raises(ValueError) as refused:
                read(case, reader)
            message = str(refused.value)
            assert f"'{case.filename}'" in message
            missing = [words for words in case.expect.contains if words not in message]
            assert not missing, f"{missing} not in: {message}"
        return
    loaded = read(case, dpio.load_table)
    assert_frame_as_declared(loaded.frame, case.expect)
    pd.testing.assert_frame_equal(loaded.frame, read(case))
    if not case.expect.notes:
        assert loaded.notes == ()
    for words in case.expect.notes:
        assert any(words in note for note in loaded.notes), (words, loaded.notes)


def test_explaining_every_column_at_once_says_what_each_column_alone_says():
    """The Data page explains all columns at once (one pass over a wide file's text cells);
    it must give exactly the messages of explaining each column on its own, on both corpora."""
    from tests.io_corpus import CASES as ROUND_1
    from tests.io_corpus import Loads

    loading = [case for case in ROUND_1 if not case.bomb and isinstance(case.expect, Loads)]
    frames = [dpio.read_table(case.data, case.filename, max_rows=case.max_rows)
              for case in loading]  # fmt: skip
    frames += [read(case) for case in ALL if not isinstance(case.expect, Refused)]
    explained = 0
    for frame in frames:
        alone = tuple(
            message for column in frame.columns
            if (message := dpio.explain_not_numeric(frame[column], str(column))) is not None
        )  # fmt: skip
        assert dpio.explain_columns(frame) == alone
        explained += len(alone)
    assert explained >= 8  # the corpora hold columns to explain, not only plain ones
