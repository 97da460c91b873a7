"""The mean's explainers on the Learn page: why small groups pay more, stratify or not, CoinPress step
by step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.analyses.mean import MEAN, MeanSettings
from dpcore.analyses.mean import teaching as mean_teaching
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations import theory
from dpcore.foundations.grouping import Grouping
from dpcore.foundations.labels import CountedGroups
from strata_ui import charts_strata, constants, pipeline
from strata_ui.analyses.base import LearnItem
from strata_ui.analyses.mean.learn_charts import (
    clipping_figure,
    clipping_summary,
    coinpress_figure,
    coinpress_summary,
    figure1_summary,
    figure1_with_alpha,
    group_error_figure,
    group_error_summary,
    share_profile_figure,
    share_profile_summary,
)
from strata_ui.analyses.mean.learn_settings import MeanLearn
from strata_ui.learn import (
    formula,
    show_chart,
)
from strata_ui.state import get_settings, get_state
from strata_ui.style import plain_number
from strata_ui.text import as_written
from strata_ui.widgets import attribute_widget, labelled_radio, log_slider, nearest

T = TypeVar("T")

# Units of the demo data's numeric columns, for axis labels; other columns get "units of `col`".
VALUE_UNITS = {
    "hours_per_week": "hours per week",
    "age": "years",
    "income_over_50k": "share of people, 0 to 1",
    "score": "probability, 0 to 1",
    "value": "units of the synthetic value",
}


@dataclass(frozen=True)
class OccupiedGroups(CountedGroups):
    """The groups that have rows, as the explainers draw them: a declared list may keep groups
    with none, which have no size to take the log of and no mean to show."""

    labels: tuple[str, ...]
    sizes: np.ndarray

    @classmethod
    def of(cls, groups: Grouping | GroupValues) -> OccupiedGroups:
        occupied = np.asarray(groups.sizes) > 0
        return cls(tuple(np.asarray(groups.labels, dtype=object)[occupied]), groups.sizes[occupied])

    def picker(
        self, settings: MeanLearn, field_name: str, *, first: int, key: str, help: str
    ) -> str:
        """A select box of these groups, each with its size, for the Learn setting
        ``field_name``; a stored group that has no rows now gives way to the group at index
        ``first`` (of the groups with rows). Returns the chosen group's label."""
        sized = zip(self.labels, self.sizes, strict=True)
        shown = {group: f"{group} (n = {size:,})" for group, size in sized}
        return labelled_radio(
            "Group", settings, field_name, shown,
            key=key, default=self.labels[first], widget=st.selectbox, help=help,
        )  # fmt: skip


def unit_of(column: str | None) -> str:
    """A plain-language unit for ``column`` (for axis titles and summaries)."""
    if column is None:
        return "units"
    return VALUE_UNITS.get(column, f"units of `{column}`")


def current_or_explain(compute: Callable[[], T], unavailable: str) -> T | None:
    """``compute()`` on the session's choices, or None after an info line that starts with
    ``unavailable`` and says what to fix on the other pages."""
    try:
        return compute()
    except (ValueError, TypeError) as exc:
        st.info(f"{as_written(unavailable)}: {as_written(exc)}", icon=":material/info:")
        return None


def current_grouping() -> Grouping:
    return pipeline.current_grouping(get_state())


def current_values() -> GroupValues:
    """The session's groups with their values of the value column."""
    return pipeline.current_statistics(MEAN, get_settings(MeanSettings))


def render_small_groups() -> None:
    """Expected error of a group's Laplace mean against its size, with the current groups marked."""
    settings = get_settings(MeanLearn)
    mean = get_settings(MeanSettings)
    st.markdown(
        "The noise is added to each group's **sum**, and its size is the same for every "
        "group: one person moves a sum by at most the width of the value range, however many "
        "people the group has. The average divides that sum by the group's **n_g** people, so "
        "the noise left in the average shrinks as **1/(n_g·ε)**, and small groups get the least "
        "accurate numbers."
    )
    left, right = st.columns(2)
    with left:
        log_slider(
            "Size of a group, n_g (people, log scale)",
            settings,
            "group_size",
            options=constants.GROUP_SIZE_OPTIONS,
            key="learn.small_groups.size",
            help="Each step multiplies the group size by about 2 to 2.5.",
            caption="The diamond on the chart follows this size.",
        )
    with right:
        log_slider(
            "ε, the privacy budget (log scale)",
            settings,
            "group_epsilon",
            options=constants.EPSILON_OPTIONS,
            key="learn.small_groups.epsilon",
            help="Doubling ε halves every group's expected error.",
            caption="A bigger ε lowers the whole line; it never changes its slope.",
        )
    if mean.clip_low is None or mean.clip_high is None or mean.clip_low >= mean.clip_high:
        bounds = (0.0, 1.0)
        st.info(
            "No public bounds for the value are set on the Estimator page: the chart uses 0 to 1.",
            icon=":material/info:",
        )
    else:
        bounds = (float(mean.clip_low), float(mean.clip_high))
    width = bounds[1] - bounds[0]
    unit = unit_of(mean.value)
    strata = current_or_explain(current_grouping, "No groups to mark")
    groups = None
    if strata is not None:
        strata = OccupiedGroups.of(strata)
        groups = pd.DataFrame(
            {
                "group": list(strata.labels),
                "size": strata.sizes,
                "error": mean_teaching.laplace_mean_error(
                    strata.sizes, settings.group_epsilon, width
                ),
            }
        )
    chosen_error = float(
        mean_teaching.laplace_mean_error(settings.group_size, settings.group_epsilon, width)
    )
    chosen = (float(settings.group_size), chosen_error)
    show_chart(
        group_error_figure(
            mean_teaching.error_curve(settings.group_epsilon, width),
            groups,
            epsilon=settings.group_epsilon,
            bounds=bounds,
            chosen=chosen,
            unit=unit,
        ),
        key="learn.chart.small_groups",
        summary=group_error_summary(
            groups, epsilon=settings.group_epsilon, chosen=chosen, unit=unit
        ),
    )
    st.caption(
        "Group sizes come from the confidential data (the curator's view, not differentially "
        "private). The line is the Laplace mean with each group's size treated as public."
    )
    formula(
        r"E\,\lvert \hat p_g - p_g \rvert = E\,\lvert \mathrm{Lap}(b_g) \rvert = b_g"
        r"= \frac{U - L}{n_g\,\varepsilon}",
        "the clipped mean plus Laplace noise, Rosenblatt, Stoyanovich & Musco (AAAI 2024), eq. 2 "
        "(eq. 3 in the arXiv version), with sensitivity (U − L)/n_g; a Laplace(b) variable's mean "
        "absolute value is b.",
    )


@st.cache_data(max_entries=64, show_spinner=False)
def _expected_shares(k: int, alpha: float) -> np.ndarray:
    return mean_teaching.expected_sorted_shares(k, alpha)


@st.cache_data(max_entries=16, show_spinner=False)
def _mle_alpha(shares: tuple[float, ...]) -> float:
    return theory.dirichlet_alpha(list(shares), method="mle")


def _reading(
    sizes: np.ndarray, alpha: float, alpha_fit: float, shares: tuple[float, ...]
) -> mean_teaching.Figure1Reading:
    """Theorem 9 read at ``alpha``; the (slow) α fits come from caches keyed on the shares."""
    return mean_teaching.figure1_reading(
        sizes, alpha, alpha_sorted=alpha_fit, alpha_mle=_mle_alpha(shares)
    )


def render_stratify() -> None:
    """The current groups' size profile, their fitted Dirichlet α, and Figure 1 with the data."""
    settings = get_settings(MeanLearn)
    st.markdown(
        "Estimating each group separately (stratifying) adds up k noisy numbers, so the "
        "population figure gets noisier. How much noisier depends on how uneven the groups are: "
        "the paper measures it by the **sum of the logs of the group sizes**, and summarises "
        "unevenness by a Dirichlet **α** (small α: a few big groups and many small ones)."
    )
    strata = current_or_explain(current_grouping, "Choose groups first")
    if strata is None:
        return
    strata = OccupiedGroups.of(strata)
    if strata.k < 2:
        st.info("Stratifying needs at least two groups: add a grouping column on the Strata page.")
        return
    shares = tuple(round(float(s), 6) for s in strata.sizes / strata.n)
    alpha_fit = pipeline.fitted_alpha(shares)
    if settings.alpha is None:
        settings.alpha = nearest(constants.ALPHA_OPTIONS, alpha_fit)
    log_slider(
        "Dirichlet α to compare with (log scale)",
        settings,
        "alpha",
        options=constants.ALPHA_OPTIONS,
        key="learn.stratify.alpha",
        help="Small α: one or two groups hold almost everyone. Large α: groups of similar size.",
        caption=f"It starts at the α fitted to these groups ({alpha_fit:.2g}). Slide it to see "
        "what groups look like at other α (dashed line, top) and where Theorem 9 puts them "
        "(bottom).",
    )
    sizes = charts_strata.group_size_frame(strata.labels, strata.sizes)
    reading = _reading(strata.sizes, float(settings.alpha), alpha_fit, shares)
    # The chart first, the readings under it: on a projector the chart is in the first screen.
    show_chart(
        share_profile_figure(
            sizes, _expected_shares(strata.k, float(settings.alpha)), alpha=settings.alpha
        ),
        key="learn.chart.stratify.sizes",
        summary=share_profile_summary(sizes, alpha_fit=alpha_fit),
    )
    fit, total, position = st.columns(3)
    fit.metric("Fitted Dirichlet α", f"{alpha_fit:.2g}")
    total.metric("Σ log n_g of these groups", f"{reading.observed:.1f}")
    position.metric(
        "From worst case towards best",
        f"{100 * reading.better_observed:.0f}%",
        help="0%: all groups equal (most extra noise); 100%: one group holds almost everyone.",
    )
    curves = charts_strata.log_size_curves(strata.n, strata.k, charts_strata.alpha_grid(alpha_fit))
    show_chart(
        figure1_with_alpha(
            curves,
            n=strata.n,
            k=strata.k,
            alpha_fit=alpha_fit,
            observed=reading.observed,
            alpha_marks={f"Thm. 9 at your α = {settings.alpha:g}": settings.alpha},
        ),
        key="learn.chart.stratify.figure1",
        summary=figure1_summary(reading),
    )
    st.caption(
        "Group sizes are the curator's view of the confidential data, not differentially private."
    )
    formula(
        r"\underbrace{(k-1) + \log(n-k)}_{\text{one majority group}} \;\lesssim\;"
        r"E\Big[\sum_{i=1}^{k} \log |G_i|\Big] \le k\big(\psi(\alpha) - \psi(k\alpha) + \log n\big)"
        r"\;\le\; \underbrace{k \log(n/k)}_{\text{equal groups}}",
        "Rosenblatt, Stoyanovich & Musco (AAAI 2024), Prop. 8 (worst case) and Thm. 9 (the "
        "Dirichlet bound; ψ is the digamma function), plotted as their Figure 1. The bound falls "
        "below the best case for very small α, where it is loose.",
    )


def render_coinpress() -> None:
    """CoinPress's interval shrinking over t steps on one group of the current strata."""
    settings = get_settings(MeanLearn)
    state, mean = get_state(), get_settings(MeanSettings)
    st.markdown(
        "CoinPress does not need tight bounds up front. It starts from a wide public interval, "
        "spends a little budget to find a noisy mean, and keeps only an interval around it that "
        "is almost sure to hold the true mean; each step clips less and so needs less noise."
    )
    strata = current_or_explain(current_values, "Choose groups first")
    if strata is None:
        return
    if mean.clip_low is None or mean.clip_high is None:
        st.info(
            "Enter public bounds for the value on the Estimator page: CoinPress starts from them.",
            icon=":material/info:",
        )
        return
    if not isinstance(strata, GroupValues):  # sums from files read where they lie
        st.info(
            "This walk-through runs CoinPress step by step on one group's rows, which stay in "
            "the files in use. Upload the data (or a sample of it) on the Data page to see it "
            "on your data.",
            icon=":material/memory:",
        )
        return
    occupied = OccupiedGroups.of(strata)
    group_col, steps_col, rho_col = st.columns(3)
    with group_col:
        occupied.picker(
            settings, "coinpress_group", first=int(np.argmin(occupied.sizes)),
            key="learn.coinpress.group",
            help="Small groups need more steps, or more budget, to narrow the interval.",
        )  # fmt: skip
        st.caption("Starts at the smallest group.")
    with steps_col:
        attribute_widget(
            st.slider,
            "Steps t",
            settings,
            "coinpress_steps",
            min_value=1,
            max_value=constants.COINPRESS_STEPS_MAX,
            value=int(settings.coinpress_steps),
            key="learn.coinpress.steps",
            help="Each step gets a share of ρ: the last step 3/4, the earlier steps 1/4 together.",
        )
        st.caption("More steps spread the same budget thinner.")
    with rho_col:
        log_slider(
            "ρ, the budget (zCDP, log scale)",
            settings,
            "coinpress_rho",
            options=constants.RHO_OPTIONS,
            key="learn.coinpress.rho",
            help="zero-concentrated DP; ρ = ε²/2 matches a pure ε budget.",
            caption="A bigger ρ: less noise per step, narrower intervals.",
        )
    g = list(strata.labels).index(settings.coinpress_group)  # among all groups, empty ones too
    steps = mean_teaching.coinpress_steps(
        strata,
        g,
        prior=(float(mean.clip_low), float(mean.clip_high)),
        sigma=mean.coinpress_sigma,
        steps=int(settings.coinpress_steps),
        rho=float(settings.coinpress_rho),
        beta=mean.coinpress_beta,
        rng=state.seed,
    )
    unit = unit_of(mean.value)
    true_mean = float(strata.means[g])
    show_chart(
        coinpress_figure(
            steps,
            group=settings.coinpress_group,
            size=int(strata.sizes[g]),
            true_mean=true_mean,
            value=str(mean.value),
            unit=unit,
        ),
        key="learn.chart.coinpress",
        summary=coinpress_summary(
            steps, true_mean=true_mean, unit=unit, group=settings.coinpress_group
        ),
    )
    st.caption(
        f"Prior [ℓ, r] = [{plain_number(mean.clip_low, 6)}, {plain_number(mean.clip_high, 6)}], σ = {plain_number(mean.coinpress_sigma, 6)} "
        f"and β = {mean.coinpress_beta:g} come from the Estimator page; the noise is a seeded "
        f"simulation (seed {state.seed} from the Compare page): nothing is released or spent. The "
        "true mean is the curator's view of the confidential data, not private."
    )
    formula(
        r"Z_i = \frac{1}{n}\sum_{x} \mathrm{clip}_{[\ell_{i-1} - w_i,\; r_{i-1} + w_i]}(x)"
        r"+ N\!\Big(0, \tfrac{\Delta_i^2}{2\rho_i}\Big), \quad"
        r"[\ell_i, r_i] = Z_i \pm \sqrt{2\Big(\tfrac{\sigma^2}{n} + \tfrac{\Delta_i^2}{2\rho_i}\Big)"
        r"\log\tfrac{2}{\beta_i}}",
        "UVM and UVMRec, Rosenblatt, Stoyanovich & Musco (AAAI 2024), appendix B, Alg. 1–2, after "
        "Biswas, Dong, Kamath & Ullman (2020). Here w_i = σ√(2 log(2n/β_i)) and "
        "Δ_i = (r − ℓ + 2w_i)/n.",
    )


def render_clipping() -> None:
    """The clipping trade-off on one group of the current data, with the bounds found privately
    on the same picture (item 6 of issue 39)."""
    settings, state, mean = get_settings(MeanLearn), get_state(), get_settings(MeanSettings)
    st.markdown(
        "Every private mean clips the values to a range [L, U] before it adds noise. Too narrow a "
        "range moves the mean (**clipping bias**); too wide a range makes the noise, which grows "
        "with U − L, drown it. Move U, and see where a typed bound and bounds found privately "
        "land on the same curve."
    )
    strata = current_or_explain(current_values, "Choose groups first")
    if strata is None or not isinstance(strata, GroupValues):
        if strata is not None:
            st.info("This picture reads one group's values: upload the data (or a sample) on the "
                    "Data page to see it on yours.", icon=":material/memory:")  # fmt: skip
        return
    if mean.clip_low is None or mean.clip_high is None:
        st.info("Enter public bounds (or a search range) on the Estimator page first.",
                icon=":material/info:")  # fmt: skip
        return
    occupied = OccupiedGroups.of(strata)
    group_col, epsilon_col, share_col = st.columns(3)
    with group_col:
        occupied.picker(
            settings, "clipping_group", first=int(np.argsort(occupied.sizes)[occupied.k // 2]),
            key="learn.clipping.group",  # a middle-sized group first: both errors show
            help="A small group pays more noise for the same range.",
        )  # fmt: skip
    with epsilon_col:
        log_slider("ε, the budget (log scale)", settings, "clipping_epsilon",
                   options=constants.EPSILON_OPTIONS, key="learn.clipping.epsilon",
                   help="More budget: less noise, so a wider range costs less.")  # fmt: skip
    with share_col:
        attribute_widget(
            st.select_slider, "Share of ε that finds the bounds", settings, "clipping_fraction",
            options=constants.BOUNDS_FRACTION_OPTIONS,
            value=nearest(constants.BOUNDS_FRACTION_OPTIONS, settings.clipping_fraction),
            format_func="{:.0%}".format, key="learn.clipping.fraction",
            help="The bounds and the mean share ε: more for the bounds finds them more "
            "reliably and leaves more noise on the mean.",
        )  # fmt: skip
    g = list(strata.labels).index(settings.clipping_group)
    group = GroupValues.from_values(strata.group_values(g), label=settings.clipping_group)
    low, high = float(mean.clip_low), float(mean.clip_high)
    epsilon, fraction = float(settings.clipping_epsilon), float(settings.clipping_fraction)
    found = mean_teaching.found_bounds_draws(group, (low, high), epsilon, fraction,
                                             rng=state.seed)  # fmt: skip
    top = max(high, float(group.sorted_values[-1]) * 1.5)  # the curve reaches past the typed U
    # From the median or the lowest found bounds, whichever is lower: a found U that lands too
    # low sits on the curve's too-narrow side instead of beyond it (a log axis has no 0).
    lowest_found = float(np.percentile(found["high"], 5))
    start = max(min(float(np.quantile(group.sorted_values, 0.5)), lowest_found),
                low + (top - low) * 1e-5)  # fmt: skip
    curve = mean_teaching.clipping_tradeoff(group, low, np.geomspace(start, top, 160), epsilon)
    unit = unit_of(mean.value)
    show_chart(
        clipping_figure(curve, found, typed_high=high, group=settings.clipping_group,
                        size=int(group.n), epsilon=epsilon, fraction=fraction, unit=unit),
        key="learn.chart.clipping",
        summary=clipping_summary(curve, found, typed_high=high, unit=unit),
    )  # fmt: skip
    st.caption(
        f"L = {low:g} and the typed U = {high:g} (or the search range) come from the Estimator "
        "page. The found bounds are 400 seeded simulated releases of this group alone: each spends "
        "its share of ε finding [L, U] privately on the group's values, then the rest on the "
        "mean (a release of every group finds one range on all of them, a steadier one). The bias is the curator's view of "
        "the confidential data: nothing is released or spent."
    )
    formula(
        r"\mathrm{error}(U)^2 = \big(\bar x_{[L,U]} - \bar x\big)^2"
        r" + 2\Big(\tfrac{U-L}{n\,\varepsilon}\Big)^2",
        "Clipping bias squared plus the noise's variance: the Laplace mean of n values clipped "
        "to [L, U], public n (AAAI 2024, eq. 3); the bounds found privately are quantiles chosen "
        "by the exponential mechanism (Smith 2011).",
    )


EXPLAINERS: tuple[LearnItem, ...] = (
    LearnItem(
        "small_groups",
        "Why small groups pay more: error ∝ 1/(n·ε)",
        ":material/group_remove:",
        render_small_groups,
    ),
    LearnItem(
        "stratify",
        "Stratify or not: how uneven are the groups?",
        ":material/stacked_bar_chart:",
        render_stratify,
    ),
    LearnItem(
        "coinpress",
        "CoinPress step by step: an interval that shrinks",
        ":material/compress:",
        render_coinpress,
    ),
    LearnItem(
        "clipping",
        "Too narrow or too wide: where to clip, and bounds found privately",
        ":material/straighten:",
        render_clipping,
    ),
)
