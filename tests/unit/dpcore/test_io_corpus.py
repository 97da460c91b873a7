"""The corpus of bad, odd and hostile uploads (``tests/io_corpus/``) through the reader.

Every file but the bombs goes through ``read_table`` and ``load_table``, and every column of
every file that loads through ``explain_not_numeric``; each must give the outcome its case
declares. The bombs are read one after another in one subprocess whose address space is capped,
so a reader that inflates one fails the test instead of exhausting the machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from dpcore.foundations import io as dpio
from tests.io_corpus import CASES, CLASSES, Case, Loads, Refused

FILES = [case for case in CASES if not case.bomb]
LOADING = [case for case in FILES if isinstance(case.expect, Loads)]
BOMBS = [case for case in CASES if case.bomb]


def each(cases: list[Case]):
    return pytest.mark.parametrize("case", cases, ids=[case.name for case in cases])


def read(case: Case, reader=None):
    """``case``'s file through ``reader`` (``read_table`` by default), with its limits."""
    reader = reader or dpio.read_table
    return reader(case.data, case.filename, max_rows=case.max_rows, max_bytes=case.max_bytes)


def load(case: Case):
    return read(case, dpio.load_table)


def cells(series: pd.Series) -> list:
    return [None if pd.isna(value) else value for value in series.tolist()]


def assert_frame_as_declared(frame: pd.DataFrame, expect: Loads) -> None:
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == list(expect.columns)
    assert len(frame) == expect.rows
    dtypes = {column: str(frame[column].dtype) for column in expect.dtypes}
    assert dtypes == dict(expect.dtypes)
    for column, expected in expect.cells.items():
        assert cells(frame[column]) == list(expected), column


def assert_refusal(message: str, case: Case) -> None:
    assert f"'{case.filename}'" in message  # names the file
    missing = [words for words in case.expect.contains if words not in message]
    assert not missing, f"{missing} not in: {message}"


# --------------------------------------------------------------------------------------------
# the corpus itself
# --------------------------------------------------------------------------------------------


def test_the_corpus_has_at_least_80_files_of_every_class_with_unique_names():
    assert len(CASES) >= 80
    assert len({case.name for case in CASES}) == len(CASES)
    assert {case.kind for case in CASES} == set(CLASSES)
    assert all(isinstance(case.expect, Loads | Refused) for case in CASES)
    assert all(case.expect.contains for case in CASES if isinstance(case.expect, Refused))


def test_files_are_small_and_every_loading_file_is_distinct():
    """Only bombs are large; and the Data page parses a file again only when its bytes differ
    from the one in use, so two loading files must never share their bytes."""
    sizes = {case.name: len(case.data) for case in FILES}
    assert max(sizes.values()) < 1_500_000, max(sizes, key=sizes.get)
    assert len({case.data for case in LOADING}) == len(LOADING)
    (wide,) = [case for case in FILES if case.name == "header over 1 MB"]
    assert wide.data.index(b"\n") > 1024**2


# --------------------------------------------------------------------------------------------
# every file through the reader
# --------------------------------------------------------------------------------------------


@each(FILES)
def test_read_table_and_load_table_give_the_declared_outcome(case):
    if isinstance(case.expect, Refused):
        for reader in (dpio.read_table, dpio.load_table):
            with pytest.raises(ValueError) as refused:
                read(case, reader)
            assert_refusal(str(refused.value), case)
        return
    loaded = load(case)
    assert_frame_as_declared(loaded.frame, case.expect)
    pd.testing.assert_frame_equal(loaded.frame, read(case))
    assert isinstance(loaded.notes, tuple) and all(isinstance(n, str) for n in loaded.notes)
    if not case.expect.notes:
        assert loaded.notes == ()
    for words in case.expect.notes:
        assert any(words in note for note in loaded.notes), (words, loaded.notes)


@each(LOADING)
def test_explain_not_numeric_explains_exactly_the_declared_columns(case):
    frame = read(case)
    for column in frame.columns:
        message = dpio.explain_not_numeric(frame[column], column)
        if column not in case.expect.explain:
            assert message is None, (column, message)
            continue
        assert isinstance(message, str), column
        missing = [words for words in case.expect.explain[column] if words not in message]
        assert not missing, f"{missing} not in: {message}"
        assert len(re.findall(r"row [\d,]+ “", message)) <= 3, message  # the first few only
        assert not re.search(r":\s*\.$", message), message  # a fix follows the colon


# --------------------------------------------------------------------------------------------
# bombs, all in one subprocess under an address-space cap
# --------------------------------------------------------------------------------------------

# Reads each file (path, name, byte limit) in a fresh Python whose address space is capped at
# 8× the largest byte limit above what the imports took, printing one JSON line per file: a file
# materialised in memory (every bomb decodes to gigabytes or close to one) ends as a
# MemoryError, whose message is not the byte limit's, or kills the process, never the machine
# running the tests. The cap bounds virtual memory, not resident memory: at 3× (the bound
# on a refused file's peak) Arrow could not start its threads and the process aborted at exit.
# The resident peak of each read (from its start, the file's bytes loaded) is measured instead.
CAPPED_READS = """
import json, resource, sys
from dpcore.foundations.io import read_table

def status_bytes(field):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(field))

files = json.loads(sys.argv[1])
cap = status_bytes("VmSize") + 8 * max(max_bytes for _, _, max_bytes in files)
resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
for path, name, max_bytes in files:
    with open(path, "rb") as file:
        data = file.read()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the resident peak (VmHWM) restarts here
    before = status_bytes("VmRSS")
    try:
        frame = read_table(data, name, max_bytes=max_bytes)
        outcome = {"loaded": f"{len(frame)} rows, {frame.shape[1]} columns"}
    except ValueError as exc:
        outcome = {"refused": str(exc)}
    except MemoryError as exc:
        outcome = {"memory error": repr(exc)}
    outcome["peak"] = (status_bytes("VmHWM") - before) / max_bytes
    del data
    print(json.dumps({"name": name, **outcome}), flush=True)
"""


@pytest.fixture(scope="module")
def capped_reads(tmp_path_factory):
    """Every bomb read in one capped subprocess: (return code, stderr, each file's outcome)."""
    folder = tmp_path_factory.mktemp("bombs")
    files = []
    for case in BOMBS:
        path = folder / case.filename
        path.write_bytes(case.data)
        files.append((str(path), case.filename, case.max_bytes))
    done = subprocess.run([sys.executable, "-c", CAPPED_READS, json.dumps(files)],
                          capture_output=True, encoding="utf-8", timeout=300)  # fmt: skip
    outcomes = {}
    for line in done.stdout.splitlines():
        outcome = json.loads(line)
        outcomes[outcome.pop("name")] = outcome
    return done.returncode, done.stderr, outcomes


def test_the_bombs_are_at_most_16_mb_each():
    assert len({case.filename for case in BOMBS}) == len(BOMBS) >= 4
    assert all(len(case.data) < 16 * 1024**2 for case in BOMBS)


@each(BOMBS)
def test_a_bomb_is_refused_at_the_byte_limit_without_running_out_of_memory(case, capped_reads):
    returncode, stderr, outcomes = capped_reads
    assert case.filename in outcomes, (
        f"the capped reader died (code {returncode}): {stderr[-2000:]}"
    )
    outcome = outcomes[case.filename]
    assert "refused" in outcome, outcome
    assert_refusal(outcome["refused"], case)
    # Issue 15: a refused file's peak memory stays under 3× the byte limit.
    assert outcome["peak"] < 3, f"peak {outcome['peak']:.2f}× the byte limit"


def test_the_capped_reader_was_not_killed(capped_reads):
    returncode, stderr, outcomes = capped_reads
    assert returncode == 0, stderr[-2000:]
    assert set(outcomes) == {case.filename for case in BOMBS}
