"""A named budget and its records: spend, raise, take on data, and read back.

Each :meth:`Ledger.spend` checks the data and the cost and records the release in one SQLite
transaction, so concurrent callers — threads or separate processes sharing the file — can never
overspend, and a process killed mid-spend leaves either the whole record or nothing. Budget
arithmetic is the exact-decimal arithmetic of :mod:`dpcore.foundations.accounting`.
"""

from __future__ import annotations

import json
import os
import pathlib
import reprlib
import sqlite3
from decimal import Decimal

from dpcore.foundations.accounting import (
    Budget,
    budget_from_components,
    check_affordable,
    check_budget,
    exact_components,
    remaining_after,
)
from dpcore.foundations.ledger.listing import list_ledgers
from dpcore.foundations.ledger.migrate import prepare
from dpcore.foundations.ledger.population import (
    Population,
    bound_datasets,
    granted_total,
    owners_of,
    population_of,
)
from dpcore.foundations.ledger.records import LOCAL_USER, LedgerRecord, append, read_records
from dpcore.foundations.ledger.refusals import (
    LedgerDataset,
    OtherDatasetError,
    ReleasedElsewhereError,
)
from dpcore.foundations.ledger.store import (
    SCHEMA_VERSION,
    connect,
    decode_budget,
    default_ledger_path,
    enable_wal,
    encode_budget,
    non_empty_str,
    schema_version,
    transaction,
    utc_now,
)

__all__ = ["Ledger"]


class Ledger:
    """A named privacy budget whose records are kept durably in an SQLite file.

    Parameters
    ----------
    path : str, os.PathLike or None
        The SQLite file. ``None`` uses :func:`default_ledger_path`. Created, with its parent
        folders, if missing; a file written by an older version is migrated.
    name : str
        Which ledger in the file. Created with ``total`` if missing.
    total : PureDP, ApproxDP or ZCDP
        The total the ledger started with. Must equal the stored one when the ledger exists
        (raises since are records: :meth:`granted`).
    actor : str, keyword-only
        Who starts the ledger, if it is new (recorded with its start).

    Raises
    ------
    TypeError
        If ``path``, ``name`` or ``total`` has the wrong type.
    ValueError
        If ``name`` is empty, if the ledger exists with a different total, or if ``path`` is not a
        ledger database.

    Notes
    -----
    Every operation opens its own connection, so one ``Ledger`` may be shared by threads, and any
    number of processes may open the same file.

    Examples
    --------
    >>> from dpcore.foundations.accounting import PureDP
    >>> ledger = Ledger("budget.sqlite", "survey-2024", PureDP(1.0))  # doctest: +SKIP
    >>> record = ledger.spend("mean income", PureDP(0.25), {"mean": 41_200.0})  # doctest: +SKIP
    >>> ledger.remaining()  # doctest: +SKIP
    {'epsilon': 0.75}
    """

    def __init__(
        self, path: str | os.PathLike | None, name: str, total: Budget, *, actor: str = LOCAL_USER
    ) -> None:
        if path is None:
            path = default_ledger_path()
        elif not isinstance(path, str | os.PathLike):
            raise TypeError(
                f"`path` must be a str, an os.PathLike or None, got {type(path).__name__} {path!r}"
            )
        # Absolute, so a later os.chdir cannot point the per-operation connections elsewhere.
        self._path = pathlib.Path(path).expanduser().absolute()
        self._name = non_empty_str("name", name)
        self._total = check_budget("total", total)
        actor = non_empty_str("actor", actor)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        try:
            stored = self._stored_total()
            if stored is None:
                stored = self._create(actor)
        except sqlite3.DatabaseError as exc:
            if exc.sqlite_errorname != "SQLITE_NOTADB":
                raise
            raise ValueError(
                f"`path` must be an SQLite ledger file, got {str(self._path)!r}, which is not an "
                "SQLite database"
            ) from exc
        if stored != self._total:
            raise ValueError(
                f"ledger {self._name!r} in {str(self._path)!r} already has total {stored!r}, but "
                f"`total` is {self._total!r}; open it with its stored total or choose another "
                "`name`"
            )

    def _stored_total(self) -> Budget | None:
        """The total of this ledger if the file already holds it, read without writing: opening
        an existing ledger then needs neither the write lock (another process may hold it
        during a spend) nor a writable file, so a read-only ledger can still be viewed."""
        if not self._path.exists():
            return None
        with connect(self._path) as conn:
            if schema_version(conn) != SCHEMA_VERSION:
                return None  # a new file, or an older schema that _create migrates
            row = conn.execute(
                "SELECT kind, total FROM ledgers WHERE name = ?", (self._name,)
            ).fetchone()
        return None if row is None else decode_budget(*row)

    def _create(self, actor: str) -> Budget:
        """Create the schema (a new file) or migrate an older one, and this ledger with its
        start record if missing; return its total."""
        with connect(self._path, writing=True) as conn:
            enable_wal(conn)
            with transaction(conn):
                prepare(conn, str(self._path))
                row = conn.execute(
                    "SELECT kind, total FROM ledgers WHERE name = ?", (self._name,)
                ).fetchone()
                if row is not None:
                    return decode_budget(*row)
                created_at = utc_now()
                conn.execute(
                    "INSERT INTO ledgers (name, kind, total, created_at) VALUES (?, ?, ?, ?)",
                    (self._name, self._total.kind, encode_budget(self._total), created_at),
                )
                append(
                    conn, ledger=self._name, entry="start", label=f"started with {self._total}",
                    cost=self._total, actor=actor, created_at=created_at,
                )  # fmt: skip
        return self._total

    @property
    def path(self) -> pathlib.Path:
        """Absolute path of the SQLite file."""
        return self._path

    @property
    def name(self) -> str:
        """Name of this ledger within the file."""
        return self._name

    @property
    def total(self) -> Budget:
        """The total the ledger started with (:meth:`granted` adds its raises)."""
        return self._total

    def __repr__(self) -> str:
        return f"Ledger({str(self._path)!r}, {self._name!r}, {self._total!r})"

    @classmethod
    def open(cls, path: str | os.PathLike | None, name: str) -> Ledger:
        """Open an existing ledger with its stored total; ``ValueError`` if there is none."""
        for summary in list_ledgers(path):
            if summary.name == name:
                return cls(path, name, summary.total)
        raise ValueError(f"`name` must be an existing ledger, got {name!r}")

    # --- spending ---------------------------------------------------------------------------

    def spend(
        self,
        label: str,
        cost: Budget,
        payload: dict,
        *,
        key: str | None = None,
        dataset: LedgerDataset | None = None,
        allow_other_dataset: bool = False,
        actor: str = LOCAL_USER,
    ) -> LedgerRecord:
        """Charge ``cost`` to the ledger and record it with ``payload``, atomically.

        Parameters
        ----------
        label : str
            Non-empty description of the release.
        cost : PureDP, ApproxDP or ZCDP
            Privacy cost, converted to the total's kind (pure DP counts as ρ = ε²/2 against a
            zCDP total and as δ = 0 against an (ε, δ) total).
        payload : dict
            JSON-serialisable data stored with the spend, typically the released result.
        key : str or None, keyword-only
            Idempotency key. If the ledger already has a record with this key (any ledger of
            the file, for a release on data: the key names the data), that record is returned
            and nothing is spent, so a retried release is never charged twice.
        dataset : LedgerDataset or None, keyword-only
            The data the release is made on (its ``added_at`` is ignored). The ledger's first
            release on data binds the ledger to it. A release on data another ledger has
            released on is refused (:class:`ReleasedElsewhereError`); on other data, unless
            ``allow_other_dataset`` (:class:`OtherDatasetError`). ``None``: no dataset.
        allow_other_dataset : bool, keyword-only
            ``actor`` confirms that ``dataset`` is about the same people as the data the ledger
            covers, so that they share its budget; the ledger then covers ``dataset`` too, and
            the approval is recorded.
        actor : str, keyword-only
            Who commits the release (the signed-in user; :data:`LOCAL_USER` when nobody signs
            in).

        Returns
        -------
        LedgerRecord
            The new record, or the existing one for ``key``. A release on data records, as
            ``cumulative``, what its people have lost in all with it.

        Raises
        ------
        BudgetExceededError
            If ``cost`` exceeds what remains; the message gives Requested, Remaining and
            Difference. Nothing is recorded.
        OtherDatasetError, ReleasedElsewhereError
            The data is not this ledger's (above). Nothing is recorded.
        TypeError
            If an argument has the wrong type or ``payload`` is not JSON-serialisable.
        ValueError
            If ``label``, ``key`` or ``actor`` is empty, or ``cost`` cannot be expressed in the
            total's kind (zCDP against (ε, δ) or the reverse).
        LedgerUnavailableError
            If the file is busy beyond the wait, read-only or on a full disk; nothing is
            recorded. Reads (history, remaining) raise it too, after a short wait.
        """
        label = non_empty_str("label", label)
        actor = non_empty_str("actor", actor)
        check_budget("cost", cost)
        # Fail on an impossible kind before the key lookup could mask it with an old record.
        exact_components(cost, self._total.kind)
        payload_json = _encode_payload(payload)
        if key is not None:
            key = non_empty_str("key", key)
        if dataset is not None:
            _check_dataset_type(dataset)
        with connect(self._path, writing=True) as conn, transaction(conn):
            if key is not None and (existing := self._keyed(conn, key, anywhere=bool(dataset))):
                return existing
            binding = None if dataset is None else self._admit(conn, dataset, allow_other_dataset)
            check_affordable(self._granted(conn), self._costs(conn), cost)
            if binding in ("cover", "alias"):
                self._cover(conn, dataset, actor, binding)
            figure = None
            if dataset is not None:
                before = population_of(conn, ledger=self._name)
                figure = Population(
                    before.ledgers, before.datasets, before.granted, (*before.costs, cost)
                ).figure()
            return append(
                conn, ledger=self._name, entry="release", label=label, cost=cost,
                payload=payload_json, key=key, actor=actor, cumulative=figure,
                dataset=None if dataset is None else dataset.identity,
                dataset_name="" if dataset is None else dataset.name,
            )  # fmt: skip

    def _admit(
        self, conn: sqlite3.Connection, dataset: LedgerDataset, allow_other_dataset: bool
    ) -> str | None:
        """Whether a release on ``dataset`` may be charged here: None (the ledger covers it),
        ``"first"`` (its first data), ``"alias"`` (data the ledger released on under an older
        identity) or ``"cover"`` (other data, confirmed); refused otherwise."""
        owners = owners_of(conn, dataset.identity)
        if self._name in owners:
            return None
        known = [o for alias in dataset.aliases for o in owners_of(conn, alias)]
        if self._name in known:  # the ledger released on it, identified by an older version
            return "alias"
        if others := list(dict.fromkeys((*owners, *known))):
            loss = self._population_of(conn, dataset).loss
            raise ReleasedElsewhereError(self._name, dataset.name, others, loss)
        covered = bound_datasets(conn, self._name)
        if not covered:
            return "first"
        if not allow_other_dataset:
            raise OtherDatasetError(self._name, covered, dataset.name)
        return "cover"

    def _cover(
        self, conn: sqlite3.Connection, dataset: LedgerDataset, actor: str, why: str
    ) -> None:
        """Record the approval that ``dataset`` is about the people this ledger covers: the
        ``actor``'s confirmation, or (``why="alias"``) the data it released on under an
        identity an older version computed."""
        covered = " and ".join(f"“{d.name}”" for d in bound_datasets(conn, self._name))
        reason = (
            "the same data as released here before, identified by an older version of Strata "
            "Lab" if why == "alias" else ""
        )  # fmt: skip
        append(
            conn, ledger=self._name, entry="cover", cost=None, reason=reason,
            actor=actor if why == "cover" else "Strata Lab", dataset=dataset.identity,
            label=f"covers “{dataset.name}” too: the same people as {covered}",
            dataset_name=dataset.name,
        )  # fmt: skip

    def _population_of(self, conn: sqlite3.Connection, dataset: LedgerDataset) -> Population:
        """The people of ``dataset``: as bound under its identity, else under an alias."""
        for identity in (dataset.identity, *dataset.aliases):
            people = population_of(conn, identity=identity)
            if people.ledgers:
                return people
        return population_of(conn, identity=dataset.identity)

    def check_dataset(self, dataset: LedgerDataset, *, allow_other_dataset: bool = False) -> None:
        """Raise :class:`OtherDatasetError` or :class:`ReleasedElsewhereError` if a release on
        ``dataset`` would be refused now. Records nothing: :meth:`spend` checks again inside
        its transaction."""
        _check_dataset_type(dataset)
        with connect(self._path) as conn:
            self._admit(conn, dataset, allow_other_dataset)

    def covers(self, dataset: LedgerDataset) -> bool:
        """Whether a release on ``dataset`` may be charged here without a confirmation: the
        ledger covers it, or has no release on any data yet and no other ledger has released
        on it."""
        try:
            self.check_dataset(dataset)
        except (OtherDatasetError, ReleasedElsewhereError):
            return False
        return True

    def check_affordable(self, cost: Budget) -> None:
        """Raise ``BudgetExceededError`` (Requested / Remaining / Difference) if ``cost`` exceeds
        what remains now. Records nothing: :meth:`spend` checks again inside its transaction."""
        check_budget("cost", cost)
        exact_components(cost, self._total.kind)
        with connect(self._path) as conn:
            check_affordable(self._granted(conn), self._costs(conn), cost)

    # --- raising ----------------------------------------------------------------------------

    def raise_total(
        self, amount: Budget, *, reason: str, actor: str, key: str | None = None
    ) -> LedgerRecord:
        """Raise the ledger's total by ``amount`` (in its kind, or pure ε against a zCDP
        total), for ``reason``, recorded for good with ``actor``: the only way a budget grows
        once its people have been released on. Nothing is forgotten: the releases so far keep
        counting toward what the people have lost. A curator's act (:data:`CURATOR_ENTRIES`).
        ``key``: as for a spend, a raise already recorded under it is returned (a form
        submitted twice by a double click raises once)."""
        check_budget("amount", amount)
        reason, actor = non_empty_str("reason", reason), non_empty_str("actor", actor)
        kind = self._total.kind
        raised = budget_from_components(kind, exact_components(amount, kind))
        with connect(self._path, writing=True) as conn, transaction(conn):
            if key is not None and (existing := self._keyed(conn, key, anywhere=False)):
                return existing
            return append(
                conn, ledger=self._name, entry="raise", label=f"total raised by {raised}",
                cost=raised, actor=actor, reason=reason, key=key,
            )  # fmt: skip

    def take_on(
        self, dataset: LedgerDataset, *, reason: str, actor: str, key: str | None = None
    ) -> LedgerRecord:
        """Let this ledger release on ``dataset``, which other ledgers (live or archived) have
        released on: its people's total rises by this ledger's :meth:`granted` total, for
        ``reason``, recorded for good with ``actor``. How a new ledger, or a ledger started
        afresh, may serve data that was released on. A curator's act.

        ``key`` as for :meth:`raise_total`.

        Raises
        ------
        ValueError
            No reason or actor; data this ledger covers already, or that no ledger has released
            on (its first release here binds it, no raise needed).
        """
        _check_dataset_type(dataset)
        reason, actor = non_empty_str("reason", reason), non_empty_str("actor", actor)
        with connect(self._path, writing=True) as conn, transaction(conn):
            if key is not None and (existing := self._keyed(conn, key, anywhere=False)):
                return existing
            if self._name in owners_of(conn, dataset.identity):
                raise ValueError(f"ledger “{self._name}” already covers “{dataset.name}”")
            # Bound under its identity, or under an alias only (an older version's fingerprint):
            # the record names the identity the owners know, joining their people.
            bound = [i for i in (dataset.identity, *dataset.aliases) if owners_of(conn, i)]
            if not bound:
                raise ValueError(
                    f"no ledger has released on “{dataset.name}”: a release on it here binds "
                    "this ledger to it, and needs no raise"
                )
            owners = owners_of(conn, bound[0])
            granted = self._granted(conn)
            names = " and ".join(f"“{owner}”" for owner in owners)
            return append(
                conn, ledger=self._name, entry="join", cost=granted, actor=actor, reason=reason,
                label=f"takes on “{dataset.name}”, released under {names}: its people's "
                f"total rises by {granted}",
                dataset=bound[0], dataset_name=dataset.name, key=key,
            )  # fmt: skip

    # --- reading ----------------------------------------------------------------------------

    def granted(self) -> Budget:
        """The ledger's whole total: what it started with and every raise since."""
        with connect(self._path) as conn:
            return self._granted(conn)

    def remaining(self) -> dict[str, float]:
        """What is left of the total, per component, e.g. ``{"rho": 0.75}`` (exact, may be 0)."""
        with connect(self._path) as conn:
            left = remaining_after(self._granted(conn), self._costs(conn))
        return {k: float(v) for k, v in left.items()}

    def spent(self, *, by: str | None = None) -> dict[str, float]:
        """Everything spent so far (``by`` one actor only: an analyst's allowance), per
        component, in the total's kind (exact, 0 if nothing)."""
        with connect(self._path) as conn:
            costs = self._costs(conn, by=by)
        total = {k: Decimal(0) for k in exact_components(self._total, self._total.kind)}
        for cost in costs:
            for k, v in exact_components(cost, self._total.kind).items():
                total[k] += v
        return {k: float(v) for k, v in total.items()}

    def history(self, *, payloads: bool = True) -> list[LedgerRecord]:
        """Every release recorded in this ledger, oldest first.

        ``payloads=False`` leaves each record's payload empty (``{}``): listing a ledger then
        never reads or decodes the stored results, which may be large (synthetic rows).
        """
        with connect(self._path) as conn:
            return read_records(
                conn, "ledger = ? AND entry = 'release'", (self._name,), payloads=payloads
            )

    def records(self) -> list[LedgerRecord]:
        """Every record of this ledger (start, releases, raises, approvals), oldest first,
        without payloads."""
        with connect(self._path) as conn:
            return read_records(conn, "ledger = ?", (self._name,), payloads=False)

    def get(self, key: str) -> LedgerRecord | None:
        """The release recorded with idempotency key ``key`` in this ledger, else in any ledger
        of the file (a release's key names its data: the same plan on the same data is one
        release, whichever ledger recorded it); ``None`` if there is none."""
        key = non_empty_str("key", key)
        with connect(self._path) as conn:
            return self._keyed(conn, key, anywhere=True)

    def datasets(self) -> list[LedgerDataset]:
        """The datasets this ledger covers, the one it was first released on first."""
        with connect(self._path) as conn:
            return bound_datasets(conn, self._name)

    def population(self) -> Population:
        """This ledger's people: every ledger and dataset joined to it, and their loss."""
        with connect(self._path) as conn:
            return population_of(conn, ledger=self._name)

    def population_of(self, dataset: LedgerDataset) -> Population:
        """The people of ``dataset`` in this file (any ledger's, under its identity or an
        alias), and their loss."""
        _check_dataset_type(dataset)
        with connect(self._path) as conn:
            return self._population_of(conn, dataset)

    def _keyed(self, conn: sqlite3.Connection, key: str, *, anywhere: bool) -> LedgerRecord | None:
        own = read_records(conn, "ledger = ? AND key = ?", (self._name, key))
        if own or not anywhere:
            return own[0] if own else None
        found = read_records(conn, "key = ? AND entry = 'release'", (key,))
        return found[0] if found else None

    def _granted(self, conn: sqlite3.Connection) -> Budget:
        return granted_total(conn, self._name, self._total)

    def _costs(self, conn: sqlite3.Connection, *, by: str | None = None) -> list[Budget]:
        # A fixed order keeps the decimal sums reproducible whichever index SQLite picks.
        sql = "SELECT kind, cost FROM records WHERE ledger = ? AND entry = 'release'"
        params: tuple[str, ...] = (self._name,)
        if by is not None:
            sql, params = sql + " AND actor = ?", (*params, by)
        return [
            decode_budget(kind, cost) for kind, cost in conn.execute(sql + " ORDER BY id", params)
        ]


def _check_dataset_type(dataset: object) -> None:
    if not isinstance(dataset, LedgerDataset):
        raise TypeError(
            f"`dataset` must be a LedgerDataset, got {type(dataset).__name__} {dataset!r}"
        )
    non_empty_str("dataset.identity", dataset.identity)


def _encode_payload(payload: object) -> str:
    if not isinstance(payload, dict):
        raise TypeError(f"`payload` must be a dict, got {type(payload).__name__} {payload!r}")
    try:
        return json.dumps(payload)
    except (TypeError, ValueError) as exc:  # ValueError: circular reference
        raise TypeError(
            f"`payload` must be JSON-serialisable (dict, list, str, int, float, bool, None), "
            f"got {reprlib.repr(payload)}: {exc}"
        ) from None
