"""Release: commit a planned release and keep the record."""

import streamlit as st

from strata_ui.data import history_table
from strata_ui.state import open_ledger_or_stop

st.title("Release")
st.markdown(
    "Preview a release with its error and confidence intervals, then commit it. Committing spends "
    "the budget for real, once, and records the release in the ledger below."
)

ledger = open_ledger_or_stop()

st.subheader(f"Released so far from ledger “{ledger.name}”")
records = ledger.history()
if records:
    st.dataframe(history_table(records), hide_index=True)
else:
    st.markdown(
        ":material/inbox: No releases yet. Each committed release will be listed here with its "
        "cost and time."
    )

st.caption(
    ":material/upcoming: Coming next: preview and commit a release of the estimate set up on the "
    "Estimator page."
)
