"""The audit trail on the Budget page: per dataset, every start, release, raise and approval of
its people, in order, with who, when and what it cost; downloads as CSV and JSON with a digest
chain that ``strata-lab ledger verify`` checks (:mod:`dpcore.foundations.ledger.audit`).

A dataset is chosen by the name it was released under; its identity never reaches the page.
"""

from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from dpcore.foundations.ledger import (
    AuditTrail,
    Ledger,
    LedgerDataset,
    audit_trail,
    list_datasets,
    to_audit_csv,
    to_audit_json,
)

__all__ = ["render_audit"]

COLUMNS = {
    "entry": "#",
    "when": "when (UTC)",
    "what": "what",
    "ledger": "ledger",
    "who": "who",
    "description": "description",
    "reason": "reason",
    "cost": "cost or amount",
    "loss_after": "lost in all after",
    "total_after": "granted in all after",
}


def render_audit(ledger: Ledger, in_use: LedgerDataset | None) -> None:
    """Choose a dataset (by default the one in use, else this ledger's), list its trail and
    offer its downloads."""
    datasets = list_datasets(ledger.path)
    own = f"the people of ledger “{ledger.name}”"
    labels = [own] + [
        f"“{d.dataset.name}” (released under {', '.join(d.ledgers)})" for d in datasets
    ]
    identities = [None] + [d.dataset.identity for d in datasets]
    default = identities.index(in_use.identity) if in_use and in_use.identity in identities else 0
    chosen = st.selectbox(
        "Whose history", range(len(labels)), index=default, format_func=labels.__getitem__,
        key="budget.audit_choice",
        help="Every ledger that released on a dataset's people, archived ones included: their "
        "starts, releases, raises and approvals, in the order they were made.",
    )  # fmt: skip
    identity = identities[chosen]
    trail = (
        audit_trail(ledger.path, ledger=ledger.name) if identity is None
        else audit_trail(ledger.path, identity=identity)
    )  # fmt: skip
    _render_trail(trail, "ledger-" + ledger.name if identity is None else trail.datasets[0])


def _render_trail(trail: AuditTrail, name: str) -> None:
    if not trail.rows:
        st.caption("Nothing recorded yet.")
        return
    table = pd.DataFrame(trail.rows)[list(COLUMNS)].rename(columns=COLUMNS)
    table["when (UTC)"] = table["when (UTC)"].str[:19].str.replace("T", " ")
    small, medium = ("#", "who", "ledger"), ("when (UTC)", "what", "cost or amount", "reason")
    widths = {c: st.column_config.TextColumn(width="small") for c in small if c != "#"}
    widths |= {c: st.column_config.TextColumn(width="medium") for c in medium}
    st.dataframe(table, hide_index=True, column_config={"#": st.column_config.NumberColumn(
        width="small"), **widths})  # fmt: skip
    stem = "audit-" + (re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "trail")
    csv_col, json_col = st.columns(2)
    csv_col.download_button(
        "Audit trail (CSV)", to_audit_csv(trail), f"{stem}.csv", "text/csv",
        key="budget.audit_csv", icon=":material/download:", on_click="ignore",
    )  # fmt: skip
    json_col.download_button(
        "Audit trail (JSON)", to_audit_json(trail), f"{stem}.json", "application/json",
        key="budget.audit_json", icon=":material/download:", on_click="ignore",
    )  # fmt: skip
    st.caption(
        f"Each entry carries a digest of itself and of the one before it; the last is "
        f"`{trail.head[:16]}…`. `strata-lab ledger verify FILE` names any entry edited, "
        "deleted or moved in a download; `strata-lab ledger verify --ledger PATH` checks the "
        "ledger file itself. Keep the last digest elsewhere to notice a history rewritten "
        "whole."
    )
