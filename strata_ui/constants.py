"""The one home of UI ranges, defaults and page names, shared by widgets and tests."""

from __future__ import annotations

from dataclasses import dataclass

from dpcore.accounting import ZCDP

EPSILON_MIN = 0.01
EPSILON_MAX = 10.0
EPSILON_DEFAULT = 1.0
RHO_MIN = 0.0001
RHO_MAX = 10.0
# δ used only to *display* an (ε, δ)-DP equivalent of a zCDP budget; never spent.
DISPLAY_DELTA = 1e-6

MAX_GROUPS = 5000
# Must equal `server.maxUploadSize` in .streamlit/config.toml (a test checks it).
MAX_UPLOAD_MB = 200

DEFAULT_LEDGER_NAME = "default"
DEFAULT_LEDGER_TOTAL = ZCDP(1.0)

MC_REPLICATES_DEFAULT = 1000
PREVIEW_ROWS = 100


@dataclass(frozen=True)
class PageSpec:
    """One page of the app: its heading, script (relative to app.py), URL path and icon."""

    title: str
    path: str
    url_path: str
    icon: str


# Navigation order; the first page is the default and is served at "/".
PAGES: tuple[PageSpec, ...] = (
    PageSpec("Data", "app_pages/data.py", "data", ":material/table_view:"),
    PageSpec("Strata", "app_pages/strata.py", "strata", ":material/groups:"),
    PageSpec("Estimator", "app_pages/estimator.py", "estimator", ":material/functions:"),
    PageSpec("Budget", "app_pages/budget.py", "budget", ":material/account_balance_wallet:"),
    PageSpec("Compare", "app_pages/compare.py", "compare", ":material/compare_arrows:"),
    PageSpec("Release", "app_pages/release.py", "release", ":material/publish:"),
    PageSpec("Learn", "app_pages/learn.py", "learn", ":material/school:"),
)
