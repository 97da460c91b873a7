"""The corpus of bad, odd and hostile uploads (``tests/io_corpus/``) through the Data page.

One session uploads file after file, as a user trying one export after another would: each
refused file must show its message and "Still using …" in ``st.error``, each file that loads
must show "Using “<file name>”", its size, and its notes and explanations of columns of numbers
read as text; no file may raise. Left out: the bombs (read under an address-space cap in
``tests/unit/dpcore/test_io_corpus.py``), files the uploader itself does not offer (its list of
extensions), and cases that need a row or byte limit other than the page's.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from dpcore.foundations.io import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS
from tests.app.helpers import errors, metric, start, text
from tests.io_corpus import CASES, Case, Loads

PAGE_CASES = [
    case
    for case in CASES
    if not case.bomb and case.max_rows == DEFAULT_MAX_ROWS and case.max_bytes == DEFAULT_MAX_BYTES
]


def problems_after_upload(at: AppTest, case: Case) -> list[str]:
    """What the page got wrong about ``case``'s file (nothing when it is right)."""
    if at.exception:
        return [f"exception: {[e.value for e in at.exception]}"]
    shown = errors(at)
    success = text(at.main.success)
    if not isinstance(case.expect, Loads):
        words = (f"'{case.filename}'", *case.expect.contains, "Still using")
        found = [f"{w!r} not in the error ({shown!r})" for w in words if w not in shown]
        return found + ([f"shown as loaded: {success!r}"] if "Using" in success else [])
    if f"Using “{case.filename}”" not in success or "Still using" in shown:
        return [f"not loaded: {shown!r}"]
    found = []
    if metric(at, "Rows") != f"{case.expect.rows:,}":
        found.append(f"Rows {metric(at, 'Rows')}, expected {case.expect.rows:,}")
    if metric(at, "Columns") != str(len(case.expect.columns)):
        found.append(f"Columns {metric(at, 'Columns')}, expected {len(case.expect.columns)}")
    notes = text(at.main.info) + " " + text(at.main.warning)
    explained = [w for words in case.expect.explain.values() for w in words]
    found += [f"{w!r} not among the notes ({notes!r})" for w in case.expect.notes if w not in notes]
    found += [f"{w!r} not explained ({notes!r})" for w in explained if w not in notes]
    if not case.expect.notes and not explained and "was read as text" in notes:
        found.append(f"a column explained that needs no explanation: {notes!r}")
    return found


def test_every_corpus_file_uploaded_in_one_session_shows_its_outcome():
    at = start("data")
    accepted = tuple(at.file_uploader[0].allowed_type)
    assert ".csv" in accepted and ".parquet" in accepted
    uploadable = [case for case in PAGE_CASES if case.filename.lower().endswith(accepted)]
    assert len(uploadable) >= 80
    wrong = {}
    for case in uploadable:
        at.file_uploader[0].set_value((case.filename, case.data, "application/octet-stream"))
        at.run()
        if found := problems_after_upload(at, case):
            wrong[case.name] = found
    assert not wrong, "\n".join(f"{name}: {found}" for name, found in wrong.items())
