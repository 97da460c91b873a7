r"""The Learn page's interactive explainers, one function each, listed in :data:`EXPLAINERS`.

Each explainer is drawn inside its own expander, and only while that expander is open, so the page
stays fast. An explainer has: two or three plain sentences, controls with a caption or help text
beside each, a chart (through :func:`strata_ui.learn_common.show_chart`, which adds the one-sentence
summary and projector sizing), and the formula with its source (:func:`strata_ui.learn_common.formula`).
Explainers only simulate: they never spend budget or change the plan on the other pages.

Adding an explainer
-------------------
Write ``render_<name>() -> None`` (in a new module such as ``strata_ui/learn_ratio.py`` if it is
long), keep its choices in a settings dataclass through :func:`strata_ui.state.get_settings`, prefix
its widget keys with ``learn.<key>.`` and its chart keys with ``learn.chart.<key>.``, and append an
:class:`Explainer` to :data:`EXPLAINERS`. Heavy simulations go in :mod:`dpcore.teaching` and
are cached here with ``st.cache_data`` on primitives and the session's seed (``ratio_ci`` and
``gvdp_bounds`` are examples).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import teaching, theory
from dpcore.analyses.gvdp import teaching as gvdp_teaching
from dpcore.analyses.mean import teaching as mean_teaching
from dpcore.analyses.ratio import teaching as ratio_teaching
from strata_ui import charts_learn, charts_strata, constants
from strata_ui.learn_common import (
    LearnSettings,
    current_grouping_or_none,
    current_values_or_none,
    fitted_alpha,
    formula,
    nearest,
    show_chart,
    unit_of,
)
from strata_ui.sidebar import format_delta
from strata_ui.state import get_settings, get_state


@dataclass(frozen=True)
class Explainer:
    """One explainer: its key (for widget keys), expander title and icon, and the function that
    draws it inside the open expander."""

    key: str
    title: str
    icon: str
    render: Callable[[], None]


# ---- What ε means -------------------------------------------------------------------------------


def render_epsilon() -> None:
    """Laplace and Gaussian noise on two neighbouring datasets, and the e^ε ratio between them."""
    settings = get_settings(LearnSettings)
    st.markdown(
        "Differential privacy promises that adding or removing **one person** changes the chance "
        "of any published result by at most a factor **e^ε**. Here a count is published with "
        "noise, once on a dataset D and once on D′, which has one more person. Slide ε and watch "
        "how far apart the two curves are."
    )
    left, right = st.columns(2)
    with left:
        settings.epsilon = st.select_slider(
            "ε, the privacy budget (log scale)",
            options=constants.EPSILON_OPTIONS,
            value=nearest(constants.EPSILON_OPTIONS, settings.epsilon),
            format_func=lambda v: f"{v:g}",
            key="learn.epsilon.epsilon",
            help="Smaller ε means stronger privacy: wider noise and curves that overlap more.",
        )
        st.caption("Smaller ε → wider noise → the two curves are harder to tell apart.")
    with right:
        settings.delta = st.select_slider(
            "δ, the Gaussian's small failure chance (log scale)",
            options=constants.LEARN_DELTA_OPTIONS,
            value=nearest(constants.LEARN_DELTA_OPTIONS, settings.delta),
            format_func=format_delta,
            key="learn.epsilon.delta",
            help="Gaussian noise cannot meet the e^ε limit everywhere; δ is the chance it may "
            "exceed it. Laplace noise needs no δ.",
        )
        st.caption("Smaller δ → a wider Gaussian. Laplace ignores δ.")
    noise = teaching.neighbour_noise(settings.epsilon, settings.delta)
    show_chart(
        charts_learn.epsilon_density_figure(noise),
        key="learn.chart.epsilon.density",
        summary=charts_learn.epsilon_density_summary(noise),
    )
    show_chart(
        charts_learn.epsilon_ratio_figure(noise),
        key="learn.chart.epsilon.ratio",
        summary=charts_learn.epsilon_ratio_summary(noise),
    )
    formula(
        r"\frac{p(x \mid D)}{p(x \mid D')} = \exp\!\left(\frac{|x - f(D')| - |x - f(D)|}{b}\right)"
        r"\le e^{\Delta / b} = e^{\varepsilon}, \qquad b = \frac{\Delta}{\varepsilon}",
        "the Laplace mechanism, Dwork, McSherry, Nissim & Smith (2006); Dwork & Roth (2014), "
        "Thm. 3.6. The Gaussian's σ is the analytic Gaussian mechanism of Balle & Wang (2018), "
        "Thm. 8. Here Δ = 1: one person changes a count by one.",
    )


# ---- Why small groups pay more ------------------------------------------------------------------


def render_small_groups() -> None:
    """Expected error of a group's Laplace mean against its size, with the current groups marked."""
    settings = get_settings(LearnSettings)
    state = get_state()
    st.markdown(
        "The noise added to a group's average does not depend on how many people the group has, "
        "but the average does: one person moves the average of **n_g** people by only 1/n_g of "
        "the value range. So the noise needed shrinks as **1/(n_g·ε)**, and small groups get "
        "the least accurate numbers."
    )
    left, right = st.columns(2)
    with left:
        settings.group_size = st.select_slider(
            "Size of a group, n_g (people, log scale)",
            options=constants.GROUP_SIZE_OPTIONS,
            value=nearest(constants.GROUP_SIZE_OPTIONS, settings.group_size),
            format_func=lambda v: f"{v:,}",
            key="learn.small_groups.size",
            help="Each step multiplies the group size by about 2 to 2.5.",
        )
        st.caption("The diamond on the chart follows this size.")
    with right:
        settings.group_epsilon = st.select_slider(
            "ε, the privacy budget (log scale)",
            options=constants.EPSILON_OPTIONS,
            value=nearest(constants.EPSILON_OPTIONS, settings.group_epsilon),
            format_func=lambda v: f"{v:g}",
            key="learn.small_groups.epsilon",
            help="Doubling ε halves every group's expected error.",
        )
        st.caption("A bigger ε lowers the whole line; it never changes its slope.")
    if state.clip_low is None or state.clip_high is None or state.clip_low >= state.clip_high:
        bounds = (0.0, 1.0)
        st.info(
            "No public bounds for the value are set on the Estimator page: the chart uses 0 to 1.",
            icon=":material/info:",
        )
    else:
        bounds = (float(state.clip_low), float(state.clip_high))
    width = bounds[1] - bounds[0]
    unit = unit_of(state.value_column)
    strata, message = current_grouping_or_none()
    groups = None
    if strata is None:
        st.info(f"No groups to mark: {message}", icon=":material/info:")
    else:
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
        charts_learn.group_error_figure(
            mean_teaching.error_curve(settings.group_epsilon, width),
            groups,
            epsilon=settings.group_epsilon,
            bounds=bounds,
            chosen=chosen,
            unit=unit,
        ),
        key="learn.chart.small_groups",
        summary=charts_learn.group_error_summary(
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


# ---- Stratify or not ----------------------------------------------------------------------------


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
    settings = get_settings(LearnSettings)
    st.markdown(
        "Estimating each group separately (stratifying) adds up k noisy numbers, so the "
        "population figure gets noisier. How much noisier depends on how uneven the groups are: "
        "the paper measures it by the **sum of the logs of the group sizes**, and summarises "
        "unevenness by a Dirichlet **α** (small α: a few big groups and many small ones)."
    )
    strata, message = current_grouping_or_none()
    if strata is None:
        st.info(f"Choose groups first: {message}", icon=":material/info:")
        return
    if strata.k < 2:
        st.info("Stratifying needs at least two groups: add a grouping column on the Strata page.")
        return
    shares = tuple(round(float(s), 6) for s in strata.sizes / strata.n)
    alpha_fit = fitted_alpha(shares)
    if settings.alpha is None:
        settings.alpha = nearest(constants.ALPHA_OPTIONS, alpha_fit)
    settings.alpha = st.select_slider(
        "Dirichlet α to compare with (log scale)",
        options=constants.ALPHA_OPTIONS,
        value=nearest(constants.ALPHA_OPTIONS, settings.alpha),
        format_func=lambda v: f"{v:g}",
        key="learn.stratify.alpha",
        help="Small α: one or two groups hold almost everyone. Large α: groups of similar size.",
    )
    st.caption(
        f"It starts at the α fitted to these groups ({alpha_fit:.2g}). Slide it to see what "
        "groups look like at other α (dashed line, top) and where Theorem 9 puts them (bottom)."
    )
    sizes = charts_strata.group_size_frame(strata.labels, strata.sizes)
    fit, total, position = st.columns(3)
    reading = _reading(strata.sizes, float(settings.alpha), alpha_fit, shares)
    fit.metric("Fitted Dirichlet α", f"{alpha_fit:.2g}")
    total.metric("Σ log n_g of these groups", f"{reading.observed:.1f}")
    position.metric(
        "From worst case towards best",
        f"{100 * reading.better_observed:.0f}%",
        help="0%: all groups equal (most extra noise); 100%: one group holds almost everyone.",
    )
    show_chart(
        charts_learn.share_profile_figure(
            sizes, _expected_shares(strata.k, float(settings.alpha)), alpha=settings.alpha
        ),
        key="learn.chart.stratify.sizes",
        summary=charts_learn.share_profile_summary(sizes, alpha_fit=alpha_fit),
    )
    curves = charts_strata.log_size_curves(strata.n, strata.k, charts_strata.alpha_grid(alpha_fit))
    show_chart(
        charts_learn.figure1_with_alpha(
            curves,
            n=strata.n,
            k=strata.k,
            alpha_fit=alpha_fit,
            observed=reading.observed,
            alpha_marks={f"Thm. 9 at your α = {settings.alpha:g}": settings.alpha},
        ),
        key="learn.chart.stratify.figure1",
        summary=charts_learn.figure1_summary(reading),
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


# ---- CoinPress step by step ---------------------------------------------------------------------


def render_coinpress() -> None:
    """CoinPress's interval shrinking over t steps on one group of the current strata."""
    settings = get_settings(LearnSettings)
    state = get_state()
    st.markdown(
        "CoinPress does not need tight bounds up front. It starts from a wide public interval, "
        "spends a little budget to find a noisy mean, and keeps only an interval around it that "
        "is almost sure to hold the true mean; each step clips less and so needs less noise."
    )
    strata, message = current_values_or_none()
    if strata is None:
        st.info(f"Choose groups first: {message}", icon=":material/info:")
        return
    if state.clip_low is None or state.clip_high is None:
        st.info(
            "Enter public bounds for the value on the Estimator page: CoinPress starts from them.",
            icon=":material/info:",
        )
        return
    labels = list(strata.labels)
    if settings.coinpress_group not in labels:
        settings.coinpress_group = labels[-1]  # groups are ordered largest first
    sizes = dict(zip(labels, strata.sizes, strict=True))
    group_col, steps_col, rho_col = st.columns(3)
    with group_col:
        settings.coinpress_group = st.selectbox(
            "Group",
            labels,
            index=labels.index(settings.coinpress_group),
            format_func=lambda g: f"{g} (n = {sizes[g]:,})",
            key="learn.coinpress.group",
            help="Small groups need more steps, or more budget, to narrow the interval.",
        )
        st.caption("Starts at the smallest group.")
    with steps_col:
        settings.coinpress_steps = st.slider(
            "Steps t",
            min_value=1,
            max_value=constants.COINPRESS_STEPS_MAX,
            value=int(settings.coinpress_steps),
            key="learn.coinpress.steps",
            help="Each step gets a share of ρ: the last step 3/4, the earlier steps 1/4 together.",
        )
        st.caption("More steps spread the same budget thinner.")
    with rho_col:
        settings.coinpress_rho = st.select_slider(
            "ρ, the budget (zCDP, log scale)",
            options=constants.RHO_OPTIONS,
            value=nearest(constants.RHO_OPTIONS, settings.coinpress_rho),
            format_func=lambda v: f"{v:g}",
            key="learn.coinpress.rho",
            help="zero-concentrated DP; ρ = ε²/2 matches a pure ε budget.",
        )
        st.caption("A bigger ρ: less noise per step, narrower intervals.")
    g = labels.index(settings.coinpress_group)
    steps = mean_teaching.coinpress_steps(
        strata,
        g,
        prior=(float(state.clip_low), float(state.clip_high)),
        sigma=state.coinpress_sigma,
        steps=int(settings.coinpress_steps),
        rho=float(settings.coinpress_rho),
        beta=state.coinpress_beta,
        rng=state.seed,
    )
    unit = unit_of(state.value_column)
    true_mean = float(strata.means[g])
    show_chart(
        charts_learn.coinpress_figure(
            steps,
            group=settings.coinpress_group,
            size=int(strata.sizes[g]),
            true_mean=true_mean,
            value=str(state.value_column),
            unit=unit,
        ),
        key="learn.chart.coinpress",
        summary=charts_learn.coinpress_summary(
            steps, true_mean=true_mean, unit=unit, group=settings.coinpress_group
        ),
    )
    st.caption(
        f"Prior [ℓ, r] = [{state.clip_low:g}, {state.clip_high:g}], σ = {state.coinpress_sigma:g} "
        f"and β = {state.coinpress_beta:g} come from the Estimator page; the noise is a seeded "
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


# ---- Why confidence intervals break under DP ----------------------------------------------------

RATIO_CI_WEIGHTING = {
    False: "Unweighted (every row counts once)",
    True: "Weighted (survey weights w ~ Exp(1), clipped to [1/3, 3])",
}


@st.cache_data(max_entries=32, show_spinner="Simulating 400 releases per ε (cached)…")
def _ratio_sweep(n: int, weighted: bool, seed: int) -> pd.DataFrame:
    return ratio_teaching.ratio_coverage_sweep(n, weighted=weighted, seed=seed)


def render_ratio_ci() -> None:
    """Coverage of ratio intervals with no correction, Monte Carlo and analytical correction."""
    settings = get_settings(LearnSettings)
    st.markdown(
        "A 95% confidence interval promises to contain the true value 95% of the time. DP adds "
        "noise to the published sums, and an interval built as if they were exact is too narrow: "
        "in Miao & Li's simulation of a ratio of two sums, ignoring the noise made 95% intervals "
        "cover as little as **7.6%** of the time. Adding the noise's variance to the interval's "
        "(by formula or by simulation) brings it back to 95%."
    )
    left, right = st.columns(2)
    with left:
        settings.ratio_ci_n = st.select_slider(
            "Rows in the data, n (log scale)",
            options=ratio_teaching.RATIO_CI_SIZES,
            value=nearest(ratio_teaching.RATIO_CI_SIZES, settings.ratio_ci_n),
            format_func=lambda v: f"{v:,}",
            key="learn.ratio_ci.n",
            help="The noise does not grow with n but the sums do, so with more rows the noise "
            "matters less and even the uncorrected interval covers better.",
        )
        st.caption("The paper uses 5,000 and 10,000.")
    with right:
        settings.ratio_ci_weighted = st.radio(
            "Weights",
            list(RATIO_CI_WEIGHTING),
            index=int(settings.ratio_ci_weighted),
            format_func=RATIO_CI_WEIGHTING.__getitem__,
            key="learn.ratio_ci.weighted",
            help="Weights up to 3 triple the sensitivity of every sum, so the same ε needs three "
            "times the noise, and one more sum (Σw²) shares the budget.",
        )
        st.caption("Weighted data need more noise: coverage falls further.")
    seed = get_state().seed
    sweep = _ratio_sweep(int(settings.ratio_ci_n), bool(settings.ratio_ci_weighted), seed)
    show_chart(
        charts_learn.ratio_coverage_figure(sweep),
        key="learn.chart.ratio_ci.coverage",
        summary=charts_learn.ratio_coverage_summary(sweep),
    )
    show_chart(
        charts_learn.ratio_width_figure(sweep),
        key="learn.chart.ratio_ci.width",
        summary=charts_learn.ratio_width_summary(sweep),
    )
    st.caption(
        "The paper's simulation (§3): s ~ Beta(2, 2), y ~ Bernoulli(s/1.1), so the true ratio "
        "Σs/Σy is 1.1; classic Gaussian noise (eq. 5), δ = 1e-6, ε split evenly over the 5 "
        "released sums (6 weighted); Monte Carlo correction with B = 200 draws; "
        f"{ratio_teaching.RATIO_CI_REPS} data sets, the same for every ε, seed {seed} (from the "
        "Compare page). Releases whose noisy sums leave no interval count as misses, as in the "
        "paper's code. Simulated data only: nothing is released or spent."
    )
    formula(
        r"\begin{gathered}"
        r"\widehat{\mathrm{Var}}(\hat r) = \frac{\hat\sigma^2_{S} + \sigma^2_{\mathrm{dp},S}}{T_y^2}"
        r"- \frac{2\,T_s}{T_y^3}\,\hat\sigma_{SY}"
        r"+ \frac{T_s^2}{T_y^4}\big(\hat\sigma^2_{Y} + \sigma^2_{\mathrm{dp},Y}\big) \\"
        r"\hat r \pm 1.96\sqrt{\widehat{\mathrm{Var}}(\hat r)}, \quad \hat r = \frac{T_s}{T_y}"
        r"\\ \sigma_{\mathrm{dp}} = \frac{\Delta\sqrt{2\log(1.25/\delta')}}{\varepsilon'}"
        r"\end{gathered}",
        "Miao & Li, Privacy-Preserving Inference on the Ratio of Two Gaussians Using Sums (JDS "
        "2022): the delta method, eq. 1, applied to the noisy sums T_s = (Σws)_dp and "
        "T_y = (Σwy)_dp, with the variances and covariance of the sums from eq. 2–4; the "
        "analytical correction (§2.4.3, steps 1–4) adds the noise variances σ²_dp of eq. 5 "
        "(ε′, δ′: each sum's share of the budget). Without the two σ²_dp terms it is the "
        "no-correction interval (§2.4.1); the Monte Carlo correction (§2.4.2) estimates their "
        "effect by re-noising the sums B times.",
    )


# ---- Loose bounds, still valid ------------------------------------------------------------------

GVDP_BOUNDS_RHO_OPTIONS = tuple(v for v in constants.RHO_OPTIONS if 0.01 <= v <= 1.0)


@st.cache_data(
    max_entries=16, show_spinner="Running GVDP on 100 simulated data sets per bound (cached)…"
)
def _loose_bounds(rho: float, seed: int) -> pd.DataFrame:
    return gvdp_teaching.loose_bounds_study(rho, seed=seed)


def render_gvdp_bounds() -> None:
    """GVDP vs a clipped mean as the public bounds get looser."""
    settings = get_settings(LearnSettings)
    st.markdown(
        "Most DP means clip every value to a public range chosen before seeing the data: too "
        "tight and the answer is **biased**, too loose and the **noise, which grows with the "
        "range**, swamps it. GVDP (Covington et al.) asks instead for loose bounds on the "
        "*answer* (the mean and its variance) and narrows them privately, so bounds 1,000 times "
        "too loose still give a valid interval, only a few times wider. Here both methods get "
        "the same public range [−c, c] for a true mean of 1."
    )
    settings.gvdp_bounds_rho = st.select_slider(
        "ρ, the budget (zCDP, log scale)",
        options=GVDP_BOUNDS_RHO_OPTIONS,
        value=nearest(GVDP_BOUNDS_RHO_OPTIONS, settings.gvdp_bounds_rho),
        format_func=lambda v: f"{v:g}",
        key="learn.gvdp_bounds.rho",
        help="Both methods spend the same ρ. The paper uses ρ = 0.1. A bigger ρ makes both "
        "intervals narrower; the clipped mean's still grows in proportion to c.",
    )
    st.caption("Each ρ is simulated once (under a second) and then cached.")
    seed = get_state().seed
    rho = float(settings.gvdp_bounds_rho)
    study = _loose_bounds(rho, seed)
    show_chart(
        charts_learn.loose_bounds_figure(study, rho=rho, n=gvdp_teaching.LOOSE_N),
        key="learn.chart.gvdp_bounds.estimates",
        summary=charts_learn.loose_bounds_summary(study),
    )
    show_chart(
        charts_learn.loose_coverage_figure(study, rho=rho),
        key="learn.chart.gvdp_bounds.coverage",
        summary=charts_learn.loose_coverage_summary(study),
    )
    st.caption(
        f"n = {gvdp_teaching.LOOSE_N:,} rows x ~ N(1, 1), {gvdp_teaching.LOOSE_REPLICATIONS} data sets "
        f"(seed {seed}), the same for every c. GVDP: k = {gvdp_teaching.LOOSE_K} subsets of "
        f"{gvdp_teaching.LOOSE_N // gvdp_teaching.LOOSE_K} rows, {gvdp_teaching.LOOSE_RESAMPLES} bootstrap "
        "resamples each, t = 5 CoinPress steps, ρ split evenly between the mean and its "
        "variance; its variance bound is c times the true one. Clipped mean: every row clipped "
        "to [−c, c], Gaussian noise for ρ-zCDP; its interval adds the noise variance to the "
        "clipped rows' sample variance (read from the data, not private — a favour to it). The "
        "paper's Table 1 (n = 50,000, k = 500, ρ = 0.1) reports GVDP's average standard error "
        "0.208 with the tightest bounds and 0.701 with bounds 1,000 times too large, covering "
        "97.5% and 96.1%."
    )
    formula(
        r"\begin{gathered}"
        r"\text{GVDP: } \tilde\theta \pm z_{0.975}\sqrt{\tilde\Sigma + \Sigma_{\tilde\theta}}"
        r"\\ \text{clipped mean: } \frac{1}{n}\sum_{i=1}^{n}\mathrm{clip}_{[-c,\,c]}(x_i)"
        r"+ N\!\Big(0, \Big(\frac{2c}{n\sqrt{2\rho}}\Big)^{2}\Big)"
        r"\end{gathered}",
        "Covington, He, Honaker & Kamath, Unbiased Statistical Estimation and Valid Confidence "
        "Intervals Under Differential Privacy: Alg. 1 and Thm. 2.12 (Σ̃ the private bound on "
        "the sampling variance, Thm. 2.10; Σ_θ̃ the variance of the CoinPress noise, Thm. 2.11); "
        "bounds c times too loose as in their §3 and App. F.3. The clipped mean is the Gaussian "
        "mechanism for ρ-zCDP with sensitivity 2c/n (Bun & Steinke 2016, Prop. 1.6).",
    )


EXPLAINERS: tuple[Explainer, ...] = (
    Explainer(
        "epsilon",
        "What ε means: noise on two neighbouring datasets",
        ":material/tune:",
        render_epsilon,
    ),
    Explainer(
        "small_groups",
        "Why small groups pay more: error ∝ 1/(n·ε)",
        ":material/group_remove:",
        render_small_groups,
    ),
    Explainer(
        "stratify",
        "Stratify or not: how uneven are the groups?",
        ":material/stacked_bar_chart:",
        render_stratify,
    ),
    Explainer(
        "coinpress",
        "CoinPress step by step: an interval that shrinks",
        ":material/compress:",
        render_coinpress,
    ),
    Explainer(
        "ratio_ci",
        "Why confidence intervals break under DP",
        ":material/error:",
        render_ratio_ci,
    ),
    Explainer(
        "gvdp_bounds",
        "Loose bounds, still valid: GVDP against clipping",
        ":material/open_in_full:",
        render_gvdp_bounds,
    ),
)
