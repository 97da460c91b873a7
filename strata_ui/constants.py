"""The one home of UI ranges, defaults and page names, shared by widgets and tests."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpcore.analyses.sample.plan import MAX_RECORDS as SAMPLE_RECORDS_MAX
from dpcore.analyses.synth.config import MAX_ROWS as SYNTH_ROWS_MAX
from dpcore.analyses.synth.config import MIN_ROWS as SYNTH_ROWS_MIN
from dpcore.foundations import grouping, validation
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.private_bounds import GRID_DECADES, UNKNOWN_RANGE_DECADES

EPSILON_MIN = 0.01
EPSILON_MAX = 10.0
EPSILON_DEFAULT = 1.0
RHO_MIN = 0.0001
RHO_MAX = 10.0
# The largest ε the Budget page takes for one release: ρ = ε²/2 then fills the largest ledger a
# curator can start (ρ = RHO_MAX). The Compare page's sweeps still reach EPSILON_MAX.
BUDGET_EPSILON_MAX = math.sqrt(2 * RHO_MAX)
# δ used only to *display* an (ε, δ)-DP equivalent of a zCDP budget; never spent.
DISPLAY_DELTA = 1e-6

MAX_GROUPS = grouping.MAX_GROUPS  # the library's limit, named on the Strata page
# Must equal `server.maxUploadSize` in .streamlit/config.toml (a test checks it).
MAX_UPLOAD_MB = 200
# Largest codebook or file of public shares: one short row per category or group. Their uploaders
# show this limit and refuse larger files in the browser (Streamlit's MB is 2**20 bytes).
SMALL_FILE_MAX_MB = 1
SMALL_FILE_MAX_BYTES = SMALL_FILE_MAX_MB * 2**20

DEFAULT_LEDGER_NAME = "default"
# ρ = 2 affords four releases at the default ε = 1 per release (each ρ = ε²/2 = 0.5), for
# every analysis; see the Budget page's "One release costs" line.
DEFAULT_LEDGER_TOTAL = ZCDP(2.0)

MC_REPLICATES_DEFAULT = 1000
MC_REPLICATES_MIN = 100
MC_REPLICATES_MAX = 5000


def _log_options(low: float, high: float) -> tuple[float, ...]:
    """Round numbers from ``low`` to ``high`` on a log scale: 1, 1.5, 2, 3, 5, 7 per decade."""
    mantissas = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0)
    values = {round(m * 10.0**e, 10) for e in range(-8, 4) for m in mantissas}
    return tuple(sorted(v for v in values if low <= v <= high))


# Budget sliders move on a log scale (Streamlit's own sliders are linear), over these values.
EPSILON_OPTIONS = _log_options(EPSILON_MIN, EPSILON_MAX)
RHO_OPTIONS = _log_options(RHO_MIN, RHO_MAX)
# δ values at which a zCDP budget's (ε, δ)-DP equivalent is shown (display only).
EQUIVALENT_DELTAS = (1e-5, 1e-6, 1e-8)
GLOBAL_FRACTION_MIN = 0.1
GLOBAL_FRACTION_MAX = 0.9
# The share of a release's budget that finds its bounds privately (Estimator page).
BOUNDS_FRACTION_OPTIONS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
# The share of each group's values a found bound leaves beyond it; 0 is the automatic aim.
BOUNDS_TAILS = (0.0, 0.005, 0.01, 0.02, 0.05)
# The depth of the search grid in decades: the default, or a range typed by no one (the CLI's
# `--bounds auto` without `--search-range`). No widget sets it; the address holds it to these.
BOUNDS_DECADES = (GRID_DECADES, UNKNOWN_RANGE_DECADES)
COINPRESS_STEPS_MAX = 10
# Public bounds typed in widgets: the library's limit (dpcore.foundations.validation), so that a
# widget never offers what the library refuses.
BOUND_MAGNITUDE_MAX = validation.MAX_BOUND_MAGNITUDE
# The privacy–utility curve on the Compare page: this many budgets, log-spaced over the range.
SWEEP_POINTS = 8
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
    PageSpec("Plan", "app_pages/plan.py", "plan", ":material/target:"),
    PageSpec("Compare", "app_pages/compare.py", "compare", ":material/compare_arrows:"),
    PageSpec("Release", "app_pages/release.py", "release", ":material/publish:"),
    PageSpec("Learn", "app_pages/learn.py", "learn", ":material/school:"),
)

# Where each page leads: the page's URL path → (next page's URL path, what the user does there).
NEXT_STEPS: dict[str, tuple[tuple[str, str], ...]] = {
    "data": (("strata", "Choose the groups"), ("learn", "Learn how the noise works first")),
    "strata": (("estimator", "Choose what to estimate"), ("compare", "Compare the strategies")),
    "estimator": (("budget", "Set the budget"), ("compare", "Compare the strategies")),
    "budget": (("plan", "Find the budget an accuracy needs"), ("compare", "See what it buys")),
    "plan": (("compare", "Compare the strategies"), ("release", "Preview and release")),
    "compare": (("release", "Preview and release"), ("strata", "Try another grouping")),
    "release": (("budget", "The budget and its ledgers"), ("strata", "Plan another release")),
    "learn": (("data", "Try it on the demo or your data"), ("compare", "Compare the strategies")),
}
# The first screen's three ways in: (URL path, what it is, what the user does there).
JOURNEYS = (
    ("strata", "Compare ways of grouping",
     "Choose groups, then see who pays for the noise: one estimate per group or one for "
     "everyone, per group and overall."),
    ("learn", "Teach or learn",
     "Explainers and the papers' results with sliders; workshop mode fits a projector and "
     "spends nothing."),
    ("release", "Preview and release",
     "See what a release would publish, then spend budget once and download it."),
)  # fmt: skip
# Workshop mode opens on this page.
WORKSHOP_START_PAGE = "learn"

# Strata page
MIN_GROUP_SIZE_MIN = 2
MIN_GROUP_SIZE_MAX = 1_000_000
HOLDOUT_FRACTION_MIN = 0.05
HOLDOUT_FRACTION_MAX = 0.5
SMALL_GROUP_SHARE = 0.01  # groups under this share of the rows are flagged on the size chart
ALPHA_AXIS = (0.01, 10.0)  # x range of the Figure-1 style plot (extended to show the fitted α)

# Learn page and workshop mode
# Charts in workshop mode fit a projector's first screen (1024 × 768 or 1280 × 720) below an
# explainer's sentences and sliders, with bigger text.
WORKSHOP_CHART_HEIGHT = 330
WORKSHOP_FONT_SIZE = 18
LEARN_CHART_HEIGHT = 480
LEARN_FONT_SIZE = 14
# Pages left out of the navigation menu in workshop mode (their URL shows a notice instead).
WORKSHOP_HIDDEN_PAGES = ("release",)
# The query parameter that carries workshop mode in the URL (a shared link opens in workshop mode).
WORKSHOP_QUERY_KEY = "workshop"
# Sliders on the Learn page: group sizes and Dirichlet α move on log scales.
GROUP_SIZE_OPTIONS = (*(m * 10**e for e in range(1, 6) for m in (1, 2, 5)), 1_000_000)
ALPHA_OPTIONS = _log_options(0.01, 10.0)
LEARN_DELTA_OPTIONS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-8, 1e-10)
# Datasets loaded by a Learn preset carry this fingerprint prefix: built-in, not an upload.
PRESET_FINGERPRINT_PREFIX = "preset:"

# Random seeds of the simulations (numpy takes any non-negative integer; 32 bits are plenty)
SEED_MAX = 2**32 - 1
# Interval levels offered by the Release page, the ratio's settings and the planner
RELEASE_LEVELS = (0.8, 0.9, 0.95, 0.99)

# Each analysis' widgets
MEAN_COINPRESS_SIGMA_MIN = 1e-6
MEAN_COINPRESS_BETA = (0.0001, 0.5)
MEAN_VARIANCE_FRACTIONS = (0.1, 0.2, 0.3, 0.5)
RATIO_DELTAS = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)
RATIO_DRAWS = (50, 1000)  # Monte Carlo draws B of the ratio's corrected interval
RATIO_REPLICATES = (100, 2000)  # simulated releases on the ratio's Compare page
GVDP_SUBSETS_MIN = 1  # k; its largest depends on the data's rows (GVDP's settings say which)
GVDP_RESAMPLES = (2, 50)
GVDP_STEPS = (1, 10)
GVDP_MEAN_FRACTION = (0.1, 0.9)
GVDP_BETAS = (0.001, 0.005, 0.01, 0.03, 0.05, 0.1)
GVDP_BOX_FRACTIONS = (0.1, 0.2, 0.3, 0.4)  # the share of ρ that finds GVDP's box privately
GVDP_FACTORS = (1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0)
GVDP_REPLICATIONS = (5, 500)  # R on GVDP's Compare page
SYNTH_ROUNDS = (1, 20)  # MWEM
SYNTH_RUNS = (1, 10)  # simulated synthetic releases per ε on the Compare page
SAMPLE_RUNS = (200, 20_000)


@dataclass(frozen=True)
class Limit:
    """The numbers a widget offers: a range (``low`` to ``high``, either end open when None)
    or a list of ``options``. A widget drawn with :func:`strata_ui.widgets.bind` offers its
    field's :class:`Limit` (:data:`ADDRESS_LIMITS`), and the address bar holds a value to it, so
    a link cannot ask for what the page would not let anyone choose."""

    low: float | None = None
    high: float | None = None
    options: tuple[float, ...] = ()

    def admits(self, x: float) -> bool:
        if self.options:
            return any(math.isclose(x, option, rel_tol=1e-9) for option in self.options)
        return (self.low is None or x >= self.low) and (self.high is None or x <= self.high)

    def widget_range(self) -> dict[str, float]:
        """``min_value`` and ``max_value`` for a slider or number box (an open end left out)."""
        ends = {"min_value": self.low, "max_value": self.high}
        return {name: end for name, end in ends.items() if end is not None}

    def __str__(self) -> str:
        if self.options:
            return "one of " + ", ".join(map(plain_number, self.options))
        if self.high is None:
            return f"at least {plain_number(self.low)}"
        return f"from {plain_number(self.low)} to {plain_number(self.high)}"


def plain_number(x: float) -> str:
    """A number as people write it: ``10,000,000``, ``0.01``, ``1e-06``."""
    if math.isfinite(x) and float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:g}"


def _between(bounds: tuple[float, float]) -> Limit:
    return Limit(*bounds)


ADDRESS_LIMITS: dict[str, Limit] = {
    "epsilon": Limit(EPSILON_MIN, BUDGET_EPSILON_MAX),
    "rho": Limit(RHO_MIN, RHO_MAX),
    "compare_epsilon": Limit(options=EPSILON_OPTIONS),  # the Compare page's own slider stops
    "compare_rho": Limit(options=RHO_OPTIONS),
    "replicates": Limit(MC_REPLICATES_MIN, MC_REPLICATES_MAX),
    "seed": Limit(0, SEED_MAX),
    "min_group_size": Limit(MIN_GROUP_SIZE_MIN, MIN_GROUP_SIZE_MAX),
    "holdout_fraction": Limit(HOLDOUT_FRACTION_MIN, HOLDOUT_FRACTION_MAX),
    "max_rows_per_person": Limit(1),
    "max_groups_per_person": Limit(1),
    "release_level": Limit(options=RELEASE_LEVELS),
    "mean.coinpress_sigma": Limit(MEAN_COINPRESS_SIGMA_MIN),
    "mean.coinpress_steps": Limit(1, COINPRESS_STEPS_MAX),
    "mean.coinpress_beta": _between(MEAN_COINPRESS_BETA),
    "mean.global_fraction": Limit(GLOBAL_FRACTION_MIN, GLOBAL_FRACTION_MAX),
    "mean.variance_fraction": Limit(options=MEAN_VARIANCE_FRACTIONS),
    "mean.bounds_fraction": Limit(options=BOUNDS_FRACTION_OPTIONS),
    "mean.bounds_tail": Limit(options=BOUNDS_TAILS),
    "mean.bounds_decades": Limit(options=BOUNDS_DECADES),
    "ratio.delta": Limit(options=RATIO_DELTAS),
    "ratio.B": _between(RATIO_DRAWS),
    "ratio_view.replicates": _between(RATIO_REPLICATES),
    "gvdp.ks": Limit(GVDP_SUBSETS_MIN),
    "gvdp.factor": Limit(options=GVDP_FACTORS),
    "gvdp.resamples": _between(GVDP_RESAMPLES),
    "gvdp.steps": _between(GVDP_STEPS),
    "gvdp.beta": Limit(options=GVDP_BETAS),
    "gvdp.mean_fraction": _between(GVDP_MEAN_FRACTION),
    "gvdp.box_fraction": Limit(options=GVDP_BOX_FRACTIONS),
    "gvdp_view.replications": _between(GVDP_REPLICATIONS),
    "gvdp_view.synthetic_factor": Limit(options=GVDP_FACTORS),
    "synth.n_rows": Limit(SYNTH_ROWS_MIN, SYNTH_ROWS_MAX),
    "synth.rounds": _between(SYNTH_ROUNDS),
    "synth_view.runs": _between(SYNTH_RUNS),
    "synth_view.seed": Limit(0, SEED_MAX),
    "sample.records": Limit(1, SAMPLE_RECORDS_MAX),
    "sample_view.runs": _between(SAMPLE_RUNS),
    "sample_view.seed": Limit(0, SEED_MAX),
}
"""The limits of the address bar's numbers and of their widgets, by parameter (every number
inside a parameter's value: each k of ``gvdp.ks``). A number with no entry here (a clipping bound, a bucket edge, a
share) has no widget bounds; the address holds it to being finite."""
