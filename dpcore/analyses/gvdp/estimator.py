"""GVDP's entry points: one release, the non-private reference, per-group releases and
coverage by simulation (Covington et al., Alg. 1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict, Unpack

import numpy as np
from scipy.special import expit, ndtri

from dpcore.analyses.gvdp.blb import Bag, fit_logistic, prepare_rows, run_blb
from dpcore.analyses.gvdp.bounds import (
    Data,
    Estimator,
    GVDPBounds,
    RhoSpent,
    RunParameters,
    frozen_array,
)
from dpcore.analyses.gvdp.private import readonly_array, release_estimates
from dpcore.foundations.accounting import ZCDP, parallel
from dpcore.foundations.intervals import Interval
from dpcore.foundations.mechanisms import NoiseKind, NoiseSource, SimulationNoise, as_noise_source
from dpcore.foundations.shares import PublicShares, share_values
from dpcore.foundations.validation import (
    as_rng,
    open_unit_interval,
    positive_int,
    shown,
)

__all__ = [
    "GVDPCoverage",
    "GvdpRun",
    "GVDPResult",
    "GVDPStratifiedResult",
    "NonPrivateCI",
    "gvdp",
    "gvdp_coverage",
    "gvdp_stratified",
    "nonprivate_ci",
    "nonprivate_from_moments",
]


METHOD = "GVDP (Covington et al.)"
NON_PRIVATE_METHOD = "non-private (sandwich variance)"
CLASSICAL_METHOD = "non-private (classical variance: the data stay where they lie)"


@dataclass(frozen=True, eq=False, kw_only=True)
class GVDPResult(Interval):
    r"""One GVDP release: per-coordinate estimate, interval and variance, with diagnostics.

    Attributes
    ----------
    estimate, low, high : ndarray, shape (d,)
        :math:`\tilde\theta` (Thm. 2.11) and the interval of Thm. 2.12 / Cor. E.1.
    variance : ndarray, shape (d,)
        The interval's variance, ``sampling_variance + noise_variance``.
    sampling_variance : ndarray, shape (d,)
        :math:`\tilde\Sigma_{jj}`, the private upper bound on the estimator's sampling variance
        (Thm. 2.10 / Cor. D.1, with the negative part of the estimate clipped), or the public
        ``bounds.variance_high`` for a coordinate whose Cor. D.1 bound came out ≤ 0 (see
        :func:`_variance_bound`). The mean step whitens with :math:`\sqrt{k\,\tilde\Sigma_{jj}}`.
    noise_variance : ndarray, shape (d,)
        :math:`(\Sigma_{\tilde\theta})_{jj} = 1/\sum_m \sigma_{\theta,m,j}^{-2}`, the variance of
        the privacy noise in ``estimate`` (Thm. 2.11).
    mean_iterates, mean_iterate_variances : ndarray, shape (t, d)
        CoinPress's t estimates :math:`\tilde\theta_m` and their noise variances.
    variance_iterates, variance_iterate_variances : ndarray, shape (t, d)
        The same for the BLB variances :math:`\tilde V_m`.
    subset_estimates, subset_variances : ndarray, shape (k, d)
        :math:`\hat\theta_i^{BLB}` and :math:`\hat V_i^{BLB}`. **Not private**: the curator's
        diagnostic of the BLB (paper Fig. 3); never release them.
    rho : RhoSpent
        The budget per part and step; ``rho.total`` equals ``cost.rho``.
    """

    estimator: Estimator
    variance: np.ndarray
    sampling_variance: np.ndarray
    noise_variance: np.ndarray
    method: str = METHOD
    mean_iterates: np.ndarray
    mean_iterate_variances: np.ndarray
    variance_iterates: np.ndarray
    variance_iterate_variances: np.ndarray
    subset_estimates: np.ndarray
    subset_variances: np.ndarray
    rho: RhoSpent
    cost: ZCDP
    n: int
    k: int
    resamples: int


@dataclass(frozen=True, eq=False, kw_only=True)
class NonPrivateCI(Interval):
    """Ordinary (non-private) estimate and normal interval. **Not private**: a curator preview."""

    estimator: Estimator
    variance: np.ndarray
    method: str = NON_PRIVATE_METHOD


@dataclass(frozen=True, eq=False)
class GVDPCoverage:
    """Replicated GVDP runs on freshly generated data; ``coverage[j]`` = share of intervals that
    contain ``truth[j]``. Arrays of shape (replications, d) hold every run."""

    truth: np.ndarray
    estimates: np.ndarray
    low: np.ndarray
    high: np.ndarray
    variance: np.ndarray
    level: float

    @property
    def covered(self) -> np.ndarray:
        return (self.low <= self.truth) & (self.truth <= self.high)

    @property
    def coverage(self) -> np.ndarray:
        return self.covered.mean(axis=0)

    @property
    def replications(self) -> int:
        return self.estimates.shape[0]


@dataclass(frozen=True, eq=False, kw_only=True)
class GVDPStratifiedResult(Interval):
    r"""Per-group GVDP releases and their recombination :math:`\sum_g w_g \tilde\theta_g`.

    ``estimate``, ``low``, ``high``, ``variance`` (shape (d,)) describe the recombined estimate,
    with :math:`\operatorname{Var} = \sum_g w_g^2 \operatorname{Var}_g` (disjoint groups and
    independent noise make the group estimates independent).
    """

    labels: tuple[str, ...]
    groups: tuple[GVDPResult, ...]
    shares: np.ndarray
    variance: np.ndarray
    cost: ZCDP
    method: str = METHOD

    def __post_init__(self) -> None:
        for name in ("shares", "estimate", "low", "high", "variance"):  # read-only float copies
            object.__setattr__(self, name, readonly_array(getattr(self, name)))

    @property
    def subsets(self) -> np.ndarray:
        """Each group's number of BLB subsets :math:`k_g`."""
        return np.array([group.k for group in self.groups], dtype=int)


class GvdpRun(TypedDict):
    """The settings of one GVDP run that :func:`gvdp` and :func:`gvdp_coverage` share (each
    documented at :func:`gvdp`); the unset ones take the defaults of
    :meth:`~dpcore.analyses.gvdp.bounds.RunParameters.build`, which checks them all: t = 5,
    level = 0.95, mean_fraction = ½, beta = 0.03."""

    k: int
    rho: float | ZCDP
    resamples: int
    t: NotRequired[int]
    level: NotRequired[float]
    mean_fraction: NotRequired[float]
    beta: NotRequired[float]


def gvdp(
    data: Data,
    estimator: Estimator,
    *,
    bounds: GVDPBounds,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource | None = None,
    **run: Unpack[GvdpRun],
) -> GVDPResult:
    r"""Private estimate and per-coordinate confidence intervals by GVDP (paper Alg. 1).

    Parameters
    ----------
    data
        By ``estimator``:

        - ``"mean"``: an array x of shape (n,) or (n, d), or ``{"x": x}``; one mean per column.
        - ``"weighted_mean"``: ``(x, weights)`` or ``{"x": x, "weights": w}``, w > 0 of shape
          (n,); :math:`\sum_i w_i x_i / \sum_i w_i` per column.
        - ``"ols"``: ``(X, y)`` or ``{"X": X, "y": y}``, X of shape (n, p) used as given (add a
          column of ones for an intercept), y of shape (n,).
        - ``"logistic"``: as ``"ols"`` with y in {0, 1}; see :func:`fit_logistic`.
        - any estimator: a :class:`~dpcore.analyses.gvdp.blb.Bag`, the bag of little
          bootstraps already drawn where the rows lie (:mod:`dpcore.engines.blb`); ``k`` and
          ``resamples`` must be the bag's.
    estimator : {"mean", "weighted_mean", "ols", "logistic"}
        The non-private estimator :math:`\hat\theta`, applied through row weights.
    k : int
        Number of BLB subsets. Privacy noise shrinks like 1/k, but the BLB needs subsets of
        b = n/k rows large enough to mimic the sampling distribution (App. G.4): take the largest
        k for which the subset estimates, tried on similar public data, still look like the
        full-data sampling law (paper §3: k = 500–1,000 for n = 50,000–100,000 OLS). We require
        b ≥ 5 rows per coordinate. A nonlinear estimator (logistic) keeps its small-sample bias
        at b rows, not n (App. G.1), so larger b also means less bias.
    rho : float or ZCDP
        Total zCDP budget ρ.
    t : int
        CoinPress steps per part (paper: t = 5 in every experiment).
    resamples : int
        r ≥ 2 multinomial resamples per subset (the paper's OLS demo uses 10).
    bounds : GVDPBounds
        Public bounds (:class:`GVDPBounds`).
    level : float
        Confidence level 1 − α of the intervals.
    mean_fraction : float
        Share of ρ for the estimate; the rest estimates the variance. Default ½ (the paper's
        experiments and public code).
    beta : float
        Total failure probability, split equally: β/3 for the variance step
        (:math:`\beta^{\tilde\Sigma}`), β/3 for its upper bound (:math:`\beta^{ub}`), β/3 for the
        mean step (:math:`\beta^{\tilde\theta}`). Default 0.03. Within a part, each of the t steps
        gets β/(3t), half for :math:`\gamma_1` and half for :math:`\gamma_2` (Alg. 3–4).
    rng
        Randomness of the partition and the resamples, and of the privacy noise unless ``noise``
        is given.
    noise
        Source of the privacy noise: ``"simulation"`` (numpy, seeded by ``rng``; the default),
        ``"secure"`` (OpenDP, for releases) or a :class:`~dpcore.foundations.mechanisms.NoiseSource`.

    Returns
    -------
    GVDPResult

    Notes
    -----
    With :math:`S = \operatorname{diag}(s)` a public scale, step m of a part (Alg. 4) projects each
    whitened point :math:`y_i = S^{-1}x_i` onto :math:`B_2(\tilde\mu_{m-1}, r_{m-1} + \gamma_1)`,
    releases :math:`\tilde\mu_m = \frac1k\sum_i y_i + N(0, \sigma_m^2 I)` with
    :math:`\sigma_m = 2(r_{m-1}+\gamma_1)/(k\sqrt{2\rho_m})`, and sets
    :math:`r_m = \gamma_2\sqrt{1/k + \sigma_m^2}`. The variance part uses :math:`s = \tau`
    (``bounds.spread``); the mean part uses :math:`s = \sqrt{k\tilde\Sigma}` (App. C.6), with
    :math:`\tilde\Sigma` from :func:`_variance_bound` (floored; the public :math:`v_j` where
    Cor. D.1's bound came out ≤ 0). Both BLB summaries come from the same partition and
    resamples (Alg. 1 lines 2–3); each part is private on its own and the parts compose. The number of rows n is treated as public (paper §2.2).
    Errors about the data (shapes, rank, subset size, a singular resample) are raised before any
    noise is drawn, so no budget is spent on a failed run.
    """
    gen = as_rng(rng)
    if isinstance(data, Bag):
        plan = _bag_parameters(data, bounds, **run)
        theta_blb, var_blb = data.estimates, data.variances
    else:
        rows, d = prepare_rows(data, estimator)
        plan = _run_parameters(rows, d, bounds, **run)
        theta_blb, var_blb = run_blb(rows, estimator, plan.k, plan.resamples, gen)
    release = release_estimates(theta_blb, var_blb, bounds, plan, as_noise_source(noise, rng=gen))
    return GVDPResult(
        estimator=estimator,
        **release,
        level=plan.level,
        subset_estimates=readonly_array(theta_blb),
        subset_variances=readonly_array(var_blb),
        rho=plan.rho,
        cost=ZCDP(plan.rho_total),
        n=plan.n,
        k=plan.k,
        resamples=plan.resamples,
    )


def nonprivate_ci(data: Data, estimator: Estimator, level: float = 0.95) -> NonPrivateCI:
    r"""The ordinary estimate and its normal interval :math:`\hat\theta_j \pm z\,\widehat{se}_j`.

    **Not private**: for the curator to show beside the DP interval. Standard errors:

    - mean: :math:`s_j^2/n` (sample variance, ddof = 1);
    - weighted mean: linearisation (sandwich)
      :math:`\sum_i w_i^2 (x_{ij} - \hat\theta_j)^2 / (\sum_i w_i)^2`;
    - OLS and logistic: the sandwich (HC0) :math:`A^{-1} B A^{-1}` with
      :math:`A = \sum_i h_i x_i x_i^\top` (:math:`h_i` = 1 for OLS, :math:`\mu_i(1-\mu_i)` for
      logistic) and :math:`B = \sum_i e_i^2 x_i x_i^\top` (:math:`e_i` the residual). The
      bootstrap inside GVDP resamples rows, so it estimates this same sandwich variance.

    The logistic fit is the one GVDP uses (:func:`fit_logistic`) with unit weights.
    """
    rows, _ = prepare_rows(data, estimator)
    level = open_unit_interval("level", level)
    estimate, variance = _NONPRIVATE[estimator](*rows)
    half = ndtri(0.5 + level / 2) * np.sqrt(variance)
    return NonPrivateCI(
        estimator=estimator, estimate=readonly_array(estimate), low=readonly_array(estimate - half),
        high=readonly_array(estimate + half), variance=readonly_array(variance), level=level,
    )  # fmt: skip


def nonprivate_from_moments(
    gram: np.ndarray, xy: np.ndarray, yy: float, estimator: Estimator, level: float = 0.95
) -> NonPrivateCI:
    r"""The ordinary estimate of a mean or OLS from the unweighted sums of its rows (what an
    engine returns instead of the rows): :math:`\hat\theta = (\sum XX^\top)^{-1}\sum Xy`.

    **Not private**: for the curator. The mean's variance is :math:`s^2/n` as in
    :func:`nonprivate_ci`; OLS's is the classical :math:`\hat\sigma^2 (X^\top X)^{-1}_{jj}`
    with :math:`\hat\sigma^2 = \text{RSS}/(n - p)`, since the sandwich would need fourth
    moments of the rows (:data:`CLASSICAL_METHOD`)."""
    level = open_unit_interval("level", level)
    n = float(gram[0, 0])
    estimate = np.linalg.solve(gram, xy)
    rss = max(float(yy - 2 * estimate @ xy + estimate @ gram @ estimate), 0.0)
    if estimator == "mean":
        variance, method = np.array([rss / (n - 1) / n]), NON_PRIVATE_METHOD
    else:
        p = estimate.shape[0]
        variance = rss / (n - p) * np.diag(np.linalg.inv(gram))
        method = CLASSICAL_METHOD
    half = ndtri(0.5 + level / 2) * np.sqrt(variance)
    return NonPrivateCI(
        estimator=estimator, estimate=readonly_array(estimate),
        low=readonly_array(estimate - half), high=readonly_array(estimate + half),
        variance=readonly_array(variance), level=level, method=method,
    )  # fmt: skip


def gvdp_stratified(
    groups: Mapping[str, Data] | Sequence[Data],
    estimator: Estimator,
    shares: PublicShares | np.ndarray | Sequence[float],
    *,
    k: int | Sequence[int],
    rho: float | ZCDP,
    t: int = 5,
    resamples: int,
    bounds: GVDPBounds | Sequence[GVDPBounds],
    level: float = 0.95,
    mean_fraction: float = 0.5,
    beta: float = 0.03,
    rng: np.random.Generator | int | None = None,
    noise: NoiseKind | NoiseSource | None = None,
    public_range: tuple[np.ndarray, np.ndarray] | None = None,
) -> GVDPStratifiedResult:
    r"""GVDP per group with the full budget, recombined with public shares.

    Each group (disjoint rows) gets its own :func:`gvdp` release and interval with the whole ρ;
    by parallel composition the total cost is ρ. The population estimate recombines the **DP**
    group estimates (never the exact group statistics):

    .. math:: \tilde\theta = \sum_g w_g \tilde\theta_g, \qquad
              \operatorname{Var}(\tilde\theta) = \sum_g w_g^2 \operatorname{Var}(\tilde\theta_g),

    with the interval :math:`\tilde\theta \pm z_{1-\alpha/2}\sqrt{\operatorname{Var}}`. Each group
    variance is the conservative GVDP variance, so the combined interval is conservative too.
    With ``public_range`` (where every coefficient lies, :meth:`GvdpBoundsSpec.public_range`)
    each group is brought into it before the recombination (:func:`clamp_group`), so that a
    group with few subsets cannot swing the population to a bound.

    ``k`` and ``bounds`` are either one value for every group or one per group (groups differ in
    size, and the variance bound refers to each group's own n). Every group draws from its own
    stream spawned from ``rng``; a failure names the group. Other arguments as :func:`gvdp`.
    """
    labels, datasets = _group_items(groups)
    weights = share_values(shares, len(datasets))
    ks = _per_group("k", k, len(datasets), (int, np.integer))
    all_bounds = _per_group("bounds", bounds, len(datasets), (GVDPBounds,))
    gen = as_rng(rng)
    source = as_noise_source(noise, rng=gen)
    common = dict(rho=rho, t=t, resamples=resamples, level=level, mean_fraction=mean_fraction,
                  beta=beta, noise=source)  # fmt: skip
    # One independent stream per group, so a group's draws do not depend on the groups before it.
    streams = gen.spawn(len(datasets))
    results = []
    for label, group, k_g, b_g, stream in zip(
        labels, datasets, ks, all_bounds, streams, strict=True
    ):
        try:
            results.append(gvdp(group, estimator, k=k_g, bounds=b_g, rng=stream, **common))
        except ValueError as exc:
            raise ValueError(f"group {label!r} (k = {k_g}): {exc}") from exc
    parts = [clamp_group(r.estimate, r.variance, public_range) for r in results]
    estimate, variance, low, high = recombine(
        weights, [e for e, _ in parts], [v for _, v in parts], results[0].level
    )
    return GVDPStratifiedResult(
        labels=labels, groups=tuple(results), shares=weights, estimate=estimate, low=low,
        high=high, variance=variance, level=results[0].level,
        cost=parallel(*[r.cost for r in results]),
    )  # fmt: skip


def clamp_group(
    estimate: np.ndarray, variance: np.ndarray, public_range: tuple[np.ndarray, np.ndarray] | None
) -> tuple[np.ndarray, np.ndarray]:
    r"""A group's estimate and variance as they enter the recombination: the estimate clipped
    into the public range :math:`[\ell_j, h_j]` of each coefficient (post-processing of a DP
    output), and the variance capped at :math:`((h_j - \ell_j)/2)^2`, the largest variance of
    any quantity confined to that range (Popoviciu's inequality), which the clipped estimate
    is. Unchanged without a range. Our choice: neither the GVDP paper nor AAAI 2024 (eq. 4,
    which recombines raw estimates) clamps before recombining."""
    if public_range is None:
        return estimate, variance
    low, high = (np.asarray(end, dtype=float) for end in public_range)
    return np.clip(estimate, low, high), np.minimum(variance, ((high - low) / 2) ** 2)


def recombine(
    shares: np.ndarray,
    estimates: Sequence[np.ndarray],
    variances: Sequence[np.ndarray],
    level: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Share-weighted recombination of independent group estimates (see
    :func:`gvdp_stratified`): :math:`\sum_g w_g\theta_g`, its variance
    :math:`\sum_g w_g^2 V_g` and the normal interval at ``level``; returns (estimate, variance,
    low, high)."""
    weights = np.asarray(shares, dtype=float)
    estimate = weights @ np.stack(estimates)
    variance = (weights**2) @ np.stack(variances)
    half = ndtri(0.5 + level / 2) * np.sqrt(variance)
    return estimate, variance, estimate - half, estimate + half


def gvdp_coverage(
    generate: Callable[[np.random.Generator], Data],
    truth: object,
    estimator: Estimator,
    *,
    replications: int,
    bounds: GVDPBounds,
    rng: np.random.Generator | int | None = None,
    **run: Unpack[GvdpRun],
) -> GVDPCoverage:
    """Coverage of GVDP intervals over ``replications`` fresh data sets (simulation only).

    Each replication draws a new data set with ``generate(rng)`` (same n every time) and runs the
    BLB on it; the private stage (both CoinPress runs and the post-processing) then runs for all
    replications at once, vectorized, with numpy noise. Regenerating the data is what makes the
    coverage of the *true* parameter ``truth`` meaningful: fixed data with fresh noise would only
    measure coverage of that sample's BLB estimate. Arguments as :func:`gvdp`.
    """
    replications = positive_int("replications", replications)
    if not callable(generate):
        raise TypeError(f"`generate` must be a function rng -> data, got {generate!r}")
    gen = as_rng(rng)
    rows, d = prepare_rows(generate(gen), estimator)
    plan = _run_parameters(rows, d, bounds, **run)
    truth = frozen_array("truth", truth)
    if truth.size != d:
        raise ValueError(f"`truth` must have d = {d} entries, got {truth.size}")
    blbs = [run_blb(rows, estimator, plan.k, plan.resamples, gen)]
    for _ in range(replications - 1):
        rows, _ = prepare_rows(generate(gen), estimator)
        if rows[0].shape[0] != plan.n:
            raise ValueError(f"`generate` must return n = {plan.n} rows every time")
        blbs.append(run_blb(rows, estimator, plan.k, plan.resamples, gen))
    theta_blb, var_blb = (np.stack(parts) for parts in zip(*blbs, strict=True))
    release = release_estimates(theta_blb, var_blb, bounds, plan, SimulationNoise(rng=gen))
    return GVDPCoverage(
        truth=truth,
        estimates=release["estimate"],
        low=release["low"],
        high=release["high"],
        variance=release["variance"],
        level=plan.level,
    )


def _run_parameters(
    rows: tuple[np.ndarray, ...], d: int, bounds: object, **settings: object
) -> RunParameters:
    """The validated run settings for ``rows`` (n of them, d coordinates), after checking that
    ``bounds`` are for d coordinates (shared by :func:`gvdp` and :func:`gvdp_coverage`)."""
    plan = RunParameters.build(**settings, n=rows[0].shape[0], d=d)
    _check_bounds(bounds, d)
    return plan


def _bag_parameters(bag: Bag, bounds: object, **settings: object) -> RunParameters:
    """The validated run settings of a bag drawn by an engine, which must have ``k`` subsets."""
    plan = RunParameters.build(**settings, n=bag.n, d=bag.d)
    _check_bounds(bounds, bag.d)
    if bag.k != plan.k:
        raise ValueError(f"the bag has {bag.k} subsets, but `k` = {plan.k}")
    return plan


def _check_bounds(bounds: object, d: int) -> None:
    if not isinstance(bounds, GVDPBounds):
        raise TypeError(f"`bounds` must be a GVDPBounds, got {type(bounds).__name__} {bounds!r}")
    if bounds.d != d:
        raise ValueError(
            f"`bounds` are for d = {bounds.d} coordinates but the estimate has d = {d}"
        )


def _group_items(groups: object) -> tuple[tuple[str, ...], list]:
    if isinstance(groups, Mapping):
        labels, datasets = tuple(str(g) for g in groups), list(groups.values())
    elif isinstance(groups, Sequence) and not isinstance(groups, str):
        labels, datasets = tuple(str(g) for g in range(len(groups))), list(groups)
    else:
        raise TypeError(f"`groups` must be a mapping label -> data or a sequence, got {groups!r}")
    if not datasets:
        raise ValueError("`groups` must hold at least one group")
    return labels, datasets


def _per_group(name: str, value: object, count: int, kinds: tuple[type, ...]) -> list:
    if isinstance(value, kinds):
        return [value] * count
    if not isinstance(value, Sequence) or len(value) != count:
        raise ValueError(
            f"`{name}` must be one value or one per group ({count}), got {shown(value)}"
        )
    return list(value)


def _plain_mean(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return x.mean(axis=0), x.var(axis=0, ddof=1) / x.shape[0]


def _plain_weighted_mean(x: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = weights.sum()
    estimate = weights @ x / total
    return estimate, (weights**2) @ (x - estimate) ** 2 / total**2


def _sandwich(X: np.ndarray, curvature: np.ndarray, residual: np.ndarray) -> np.ndarray:
    bread = np.linalg.inv((X * curvature[:, None]).T @ X)
    meat = (X * residual[:, None] ** 2).T @ X
    return np.diag(bread @ meat @ bread)


def _plain_ols(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    return coef, _sandwich(X, np.ones(len(y)), y - X @ coef)


def _plain_logistic(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    coef = fit_logistic([X[None], y[None]], np.ones((1, 1, len(y))), len(y))[0, 0]
    mu = expit(X @ coef)
    return coef, _sandwich(X, mu * (1 - mu), y - mu)


_NONPRIVATE: dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]] = {
    "mean": _plain_mean,
    "weighted_mean": _plain_weighted_mean,
    "ols": _plain_ols,
    "logistic": _plain_logistic,
}
