"""Turning what a user uploads or types (a path of files on this machine, a table in Spark) into
session state, with messages they can act on.

No numerics here: files are parsed by :func:`dpcore.foundations.io.read_table`; this module only decides what
an upload does to the session's choices, and parses typed lists of bucket edges.
"""

from __future__ import annotations

import hashlib
import math
import re

from dpcore.engines import EngineError
from dpcore.foundations.dataset import bytes_identity
from dpcore.foundations.datasets import DEMO_DATASET_NAME
from dpcore.foundations.io import explain_columns, load_table
from strata_ui import engine_sources, roles
from strata_ui.analyses import every
from strata_ui.state import AppState
from strata_ui.style import plain_number

DEMO_FINGERPRINT = "demo"
DEMO_STRATA_COLUMNS = ("race", "sex")


def fingerprint(data: bytes) -> str:
    """The first 16 hex digits of the SHA-256 of a file's bytes: the dataset's cache key."""
    return hashlib.sha256(data).hexdigest()[:16]


def handle_upload(state: AppState, data: bytes, filename: str) -> str | None:
    """Make an uploaded file the session's dataset; return an error message, or None on success.

    A file that cannot be read leaves the session untouched (the previous dataset stays in use).
    Choices that depend on the columns (grouping columns, bucket edges, a public shares table,
    and each analysis' own, such as the mean's value column and its public bounds) are reset
    only when the file differs from the one in use, so a rerun with the same file keeps them.
    What reading changed, and columns of numbers that were read as text, are kept as
    :attr:`AppState.upload_notes` for the Data page.
    """
    decimal = "," if state.decimal_comma else "."
    # Read with decimal commas, the same bytes give another table: another key, read again.
    key = fingerprint(data) + (".decimal-comma" if state.decimal_comma else "")
    if key == state.dataset_fingerprint and state.uploaded is not None:
        return None  # the same file again (every rerun): nothing to parse, nothing to reset
    try:
        roles.require(roles.Action.UPLOAD)  # new data sources are the curator's
        loaded = load_table(data, filename, decimal=decimal)
    except (ValueError, TypeError, roles.NotAllowed) as exc:
        return str(exc)
    frame = loaded.frame
    state.uploaded = frame
    state.source = None
    state.dataset_name = filename
    state.dataset_fingerprint = key
    # The bytes identify the data, as the command line and a release's script identify the
    # same file (decompressed): one read, of bytes already in memory. Read with decimal commas
    # they are the same people, so the same identity, though another cache key.
    state.dataset_identity = bytes_identity(data)
    state.upload_notes = loaded.notes + explain_columns(frame)
    state.strata_columns = []
    _reset_groups(state)
    _reset_analyses(demo=False)
    return None


def open_source(state: AppState, source: engine_sources.EngineSource) -> str | None:
    """Make the data of ``source`` the session's dataset, read where it lies
    (:mod:`strata_ui.engine_sources`); return an error message, or None on success.

    As :func:`handle_upload`: data that cannot be opened leaves the session untouched, and the
    choices tied to the columns are reset only when the data differs from the data in use.
    """
    try:
        roles.require(roles.Action.OPEN_DATA)
        fingerprint = source.fingerprint()
        engine_sources.opened(source, fingerprint)
    except (EngineError, roles.NotAllowed) as exc:
        return str(exc)
    same_data = fingerprint == state.dataset_fingerprint and state.source is not None
    state.uploaded = None
    state.dataset_identity = None  # the engine identifies data read where it lies
    state.source = source  # as typed now: the address shows it
    state.dataset_name = source.name
    if same_data:
        return None  # the same data again (another spelling of its path): nothing to reset
    state.dataset_fingerprint = fingerprint
    state.upload_notes = ()
    state.strata_columns = []
    _reset_groups(state)
    _reset_analyses(demo=False)
    state.upload_generation += 1  # an empty uploader: the source replaced any upload
    return None


def restore_demo(state: AppState) -> None:
    """Go back to the demo data and its default choices (groups by race × sex; each analysis
    restores its own, such as the mean's hours per week in 0–100)."""
    state.uploaded = None
    state.dataset_identity = None
    state.source = None
    state.dataset_name = DEMO_DATASET_NAME
    state.dataset_fingerprint = DEMO_FINGERPRINT
    state.upload_notes = ()
    state.strata_columns = list(DEMO_STRATA_COLUMNS)
    _reset_groups(state)
    _reset_analyses(demo=True)
    state.upload_generation += 1  # a fresh, empty uploader widget


def _reset_groups(state: AppState) -> None:
    """Forget the previous dataset's bucket edges, shares and list of groups, and its person
    column: another dataset's categories are no list of this one's groups."""
    state.forget_person_column()
    state.bucket_edges, state.share_table = {}, {}
    state.group_list, state.declared_categories, state.codebook_columns = "declared", {}, []


def _reset_analyses(*, demo: bool) -> None:
    for ui in every():
        ui.on_dataset_change(demo=demo)


def parse_edges(text: str, column: str) -> list[float]:
    """Parse typed bucket edges such as ``"25, 35, 50, 65"`` (commas, semicolons or spaces
    between them) into increasing numbers.

    Returns an empty list for blank text. Raises ``ValueError`` naming the bad token, or saying
    the edges are not strictly increasing.
    """
    tokens = re.split(r"[,;\s]+", text.strip())
    edges: list[float] = []
    for token in tokens:
        if not token:
            continue
        try:
            edge = float(token)
        except ValueError:
            raise ValueError(
                f"Bucket edges for `{column}`: “{token}” is not a number. Type numbers separated "
                "by commas, e.g. 25, 35, 50, 65."
            ) from None
        if not math.isfinite(edge):
            raise ValueError(
                f"Bucket edges for `{column}`: “{token}” is not a finite number. Type numbers "
                "separated by commas, e.g. 25, 35, 50, 65."
            )
        edges.append(edge)
    for low, high in zip(edges, edges[1:], strict=False):
        if high <= low:
            raise ValueError(
                f"Bucket edges for `{column}` must increase from left to right, but {plain_number(high, 6)} "
                f"follows {plain_number(low, 6)}. Example: 25, 35, 50, 65."
            )
    return edges


def format_edges(edges: list[float]) -> str:
    """The inverse of :func:`parse_edges`, for pre-filling a text box."""
    return ", ".join(f"{e:g}" for e in edges)  # no separators: a comma splits edges
