"""A persistent privacy-budget ledger in SQLite, safe across threads and processes, whose
history can be audited.

Where the ledger lives
----------------------
One SQLite file can hold several named ledgers. Passing ``path=None`` uses
:func:`default_ledger_path`:

1. the file named by the environment variable ``STRATA_LAB_LEDGER`` (:data:`LEDGER_PATH_ENV`),
   if it is set and not empty;
2. otherwise ``$XDG_DATA_HOME/strata-lab/ledger.sqlite``, if ``XDG_DATA_HOME`` is an absolute path;
3. otherwise ``~/.local/share/strata-lab/ledger.sqlite``.

Missing parent folders, the database file and its tables are created on first use; a file
written by an older version is migrated (:mod:`.migrate`).

The budget belongs to the people
--------------------------------
A :class:`Ledger` is a named total plus its records (:mod:`.records`). Its first release binds
it to that release's data, identified by content (:mod:`dpcore.foundations.dataset`), however
the data was read. Then:

- a release on other data asks whether it is about the same people
  (:class:`OtherDatasetError`; ``allow_other_dataset=True`` records that approval);
- a release on data that another ledger — live, or archived by an older version's reset — has
  released on is refused (:class:`ReleasedElsewhereError`): a new ledger is no new budget for
  the same people. A curator may let a ledger take such data on (:meth:`Ledger.take_on`): the
  people's total rises by that ledger's, and the raise, its reason and who made it are recorded;
- there is no reset: a total grows only by :meth:`Ledger.raise_total`, an appended record with a
  reason. Nothing is forgotten.

The ledgers and data joined this way are one *population* (:mod:`.population`); what its people
have lost in all, across every ledger and kind of budget, is stated on every page and in every
release's metadata.

Every record names who made it (``actor``: the signed-in user, :data:`LOCAL_USER` when nobody
signs in). Which acts are a curator's is :data:`CURATOR_ENTRIES`, for a caller that checks roles.

An auditable record
-------------------
Every record is sealed into one digest chain (:mod:`.records`); :func:`verify_ledger_file` names
an edited, deleted or reordered record. A population's trail downloads as CSV or JSON with its
own chain (:mod:`.audit`), checked by :func:`verify_audit`. Identities are a function of the
confidential rows: they stay in the ledger file, never in a trail or an export.
"""

from dpcore.foundations.accounting import BudgetExceededError
from dpcore.foundations.ledger.audit import (
    AuditTrail,
    audit_trail,
    compare_with_ledger,
    read_audit,
    to_audit_csv,
    to_audit_json,
    verify_audit,
)
from dpcore.foundations.ledger.ledger import Ledger
from dpcore.foundations.ledger.listing import (
    DatasetSummary,
    LedgerSummary,
    list_datasets,
    list_ledgers,
    upgrade,
)
from dpcore.foundations.ledger.migrate import MIGRATED
from dpcore.foundations.ledger.population import Population
from dpcore.foundations.ledger.records import ENTRIES, LOCAL_USER, LedgerRecord
from dpcore.foundations.ledger.refusals import (
    LedgerDataset,
    OtherDatasetError,
    ReleasedElsewhereError,
)
from dpcore.foundations.ledger.store import (
    LEDGER_PATH_ENV,
    SCHEMA_VERSION,
    LedgerUnavailableError,
    default_ledger_path,
)
from dpcore.foundations.ledger.verify import ChainReport, Problem, verify_ledger_file

CURATOR_ENTRIES = frozenset({"start", "raise", "join", "cover"})
"""The records only a curator may make: starting a ledger, raising a total, letting a ledger
take on released data, approving that other data is about the same people. A release
(``"release"``) may be an analyst's, within what the caller allows
(:meth:`Ledger.spent` ``by=`` an actor gives what they have spent)."""

__all__ = [
    "CURATOR_ENTRIES",
    "ENTRIES",
    "LEDGER_PATH_ENV",
    "LOCAL_USER",
    "MIGRATED",
    "SCHEMA_VERSION",
    "AuditTrail",
    "BudgetExceededError",
    "ChainReport",
    "DatasetSummary",
    "Ledger",
    "LedgerDataset",
    "LedgerRecord",
    "LedgerSummary",
    "LedgerUnavailableError",
    "OtherDatasetError",
    "Population",
    "Problem",
    "ReleasedElsewhereError",
    "audit_trail",
    "compare_with_ledger",
    "default_ledger_path",
    "list_datasets",
    "list_ledgers",
    "read_audit",
    "to_audit_csv",
    "to_audit_json",
    "upgrade",
    "verify_audit",
    "verify_ledger_file",
]
