"""GVDP on the whole population or in every group, recombined with public shares, and
the non-private reference beside it (Covington et al., Alg. 1; AAAI 2024 eq. 3 for the
recombination).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from dpcore.analyses.gvdp.blb import Bag, prepare_rows, run_blb
from dpcore.analyses.gvdp.data import GvdpData
from dpcore.analyses.gvdp.estimator import (
    GVDPResult,
    GVDPStratifiedResult,
    NonPrivateCI,
    gvdp,
    gvdp_stratified,
    nonprivate_ci,
    nonprivate_from_moments,
    recombine,
)
from dpcore.analyses.gvdp.found_box import PrivateBox
from dpcore.analyses.gvdp.model import GvdpBoundsSpec, GvdpModel
from dpcore.foundations.choices import Choices
from dpcore.foundations.mechanisms import NoiseSource, as_noise_source
from dpcore.foundations.validation import (
    as_rng,
    instance_of,
    open_unit_interval,
    positive_int,
    positive_number,
)

__all__ = [
    "ALL",
    "DP",
    "NON_PRIVATE",
    "STRATEGIES",
    "NonPrivate",
    "RunSettings",
    "comparison_frame",
    "draw_salt",
    "groups_frame",
    "nonprivate",
    "nonprivate_population",
    "run_groups",
    "run_population",
]


Strategy = Literal["stratified", "global_only"]


STRATEGIES = Choices(
    Strategy,
    {
        "stratified": "per group (stratified), recombined with public shares",
        "global_only": "whole population only",
    },
)


ALL = "All"
"""Group label of the population rows of a release (as in :class:`~dpcore.analyses.mean.MeanPlan`)."""


@dataclass(frozen=True)
class RunSettings:
    """The GVDP settings shared by every run (paper Alg. 1 inputs besides data and bounds).

    ``k`` None chooses the subsets from each run's rows
    (:func:`~dpcore.analyses.gvdp.recommended_subsets`, :meth:`GvdpData.subsets`)."""

    k: int | None
    rho: float
    resamples: int = 10
    steps: int = 5
    beta: float = 0.03
    mean_fraction: float = 0.5
    level: float = 0.95

    def __post_init__(self) -> None:
        if self.k is not None:
            object.__setattr__(self, "k", positive_int("k", self.k))
        object.__setattr__(self, "rho", positive_number("rho", self.rho))
        resamples = positive_int("resamples", self.resamples)
        if resamples < 2:
            raise ValueError(
                f"`resamples` must be >= 2 (the BLB variance needs two resamples), got {resamples}"
            )
        object.__setattr__(self, "steps", positive_int("steps", self.steps))
        for name in ("beta", "mean_fraction", "level"):
            object.__setattr__(self, name, open_unit_interval(name, getattr(self, name)))

    def gvdp_kwargs(self) -> dict:
        return {
            "rho": self.rho, "t": self.steps, "resamples": self.resamples, "level": self.level,
            "mean_fraction": self.mean_fraction, "beta": self.beta,
        }  # fmt: skip


def run_population(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    *,
    rng: np.random.Generator | int | None = None,
    noise: NoiseSource | None = None,
    private_box: PrivateBox | None = None,
) -> GVDPResult:
    """One GVDP run (paper Alg. 1) on the population's complete rows with k subsets (the
    rule's when ``settings.k`` is None); with ``private_box``, inside a box found first by a
    private pass at its share of ρ (:mod:`~dpcore.analyses.gvdp.found_box`; ``bounds`` is then
    the search box)."""
    check_model_bounds(bounds, data.model)
    data.check_k(settings.k, settings.resamples)  # "use k ≤ …" before anything runs
    population, rng, k = data.population, as_rng(rng), data.subsets(settings.k, settings.resamples)
    if not data.in_memory:
        salt = draw_salt(rng)
        population = data.bags.population(salt, k, settings.resamples, data.rows)
    if private_box is not None:
        noise = as_noise_source(noise, rng=rng)
        bag = _pass_bag(data, data.population, k, settings.resamples, data.rows, rng)
        bounds = private_box.find(bag, bounds, settings.rho, noise=noise)
        settings = dataclasses.replace(settings, rho=private_box.rest(settings.rho))
    return gvdp(
        population, data.model.estimator, k=k,
        bounds=bounds.for_rows(data.rows, k, settings.resamples),
        rng=rng, noise=noise, **settings.gvdp_kwargs(),
    )  # fmt: skip


def _pass_bag(data: GvdpData, rows: object, k: int, resamples: int, n: int,
              rng: np.random.Generator) -> Bag:  # fmt: skip
    """A bag of little bootstraps for the private box's pass, apart from the run's: from the
    rows in memory, or drawn by the engine with a salt of its own."""
    if data.in_memory:
        prepared, _ = prepare_rows(rows, data.model.estimator)
        estimates, variances = run_blb(prepared, data.model.estimator, k, resamples, rng)
        return Bag(estimates, variances, n)
    return data.bags.population(draw_salt(rng), k, resamples, n)


def draw_salt(rng: np.random.Generator) -> str:
    """The salt of a bag of little bootstraps drawn where the rows lie
    (:mod:`dpcore.engines.blb`): 64 random bits from the run's generator, never from the data."""
    return f"{int(rng.integers(0, 2**63)):016x}"


def run_groups(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    *,
    rng: np.random.Generator | int | None = None,
    noise: NoiseSource | None = None,
    private_box: PrivateBox | None = None,
) -> GVDPStratifiedResult:
    r"""GVDP in every group with the full ρ (parallel composition), recombined with the public
    shares: :func:`~dpcore.analyses.gvdp.gvdp_stratified` with the app's rule for k.

    With a chosen k every group uses the population's subset size b, so group g gets
    :math:`k_g = \max(1, \lfloor n_g/b \rfloor)` subsets; with k None each group's
    :math:`k_g` follows the rule from its own rows (:meth:`GvdpData.group_subsets`). Each
    variance bound is scaled to the group's own :math:`n_g` rows. The recombination uses the
    **DP** group estimates, each first clamped into the bounds' public range
    (:func:`~dpcore.analyses.gvdp.estimator.clamp_group`). With ``private_box`` each group
    finds its own box first (parallel composition: the groups are disjoint).
    """
    check_model_bounds(bounds, data.model)
    data.check_k(settings.k, settings.resamples)
    problem = data.group_problem(settings.k, settings.resamples)
    if problem is not None:
        raise ValueError(problem)
    subsets = data.group_subsets(settings.k, settings.resamples)
    groups, rng = data.groups, as_rng(rng)
    if not data.in_memory:
        salt = draw_salt(rng)
        groups = data.bags.groups(salt, tuple(subsets), settings.resamples, data.group_rows)
    specs = [bounds] * len(subsets)
    if private_box is not None:
        noise = as_noise_source(noise, rng=rng)
        if data.in_memory:
            bags = [
                _pass_bag(data, rows, int(k_g), settings.resamples, int(n_g), rng)
                for rows, n_g, k_g in zip(data.groups, data.group_rows, subsets, strict=True)
            ]
        else:  # one more engine pass, with a salt of its own
            bags = data.bags.groups(draw_salt(rng), tuple(subsets), settings.resamples,
                                    data.group_rows)  # fmt: skip
        specs = [private_box.find(bag, bounds, settings.rho, noise=noise) for bag in bags]
        settings = dataclasses.replace(settings, rho=private_box.rest(settings.rho))
    return gvdp_stratified(
        dict(zip(data.labels, groups, strict=True)),
        data.model.estimator,
        data.shares,
        k=[int(k_g) for k_g in subsets],
        bounds=[
            spec.for_rows(int(n_g), int(k_g), settings.resamples)
            for spec, n_g, k_g in zip(specs, data.group_rows, subsets, strict=True)
        ],
        rng=rng,
        noise=noise,
        public_range=bounds.public_range(),
        **settings.gvdp_kwargs(),
    )


@dataclass(frozen=True, eq=False)
class NonPrivate:
    """The ordinary estimates and intervals (**not private**: curator previews only)."""

    population: NonPrivateCI
    groups: tuple[NonPrivateCI, ...]
    recombined: tuple[np.ndarray, np.ndarray, np.ndarray] | None


def nonprivate(data: GvdpData, level: float = 0.95) -> NonPrivate:
    """:func:`~dpcore.analyses.gvdp.nonprivate_ci` for the population and every group, and the
    share-weighted recombination of the group estimates (what the DP recombination targets)."""
    estimator = data.model.estimator
    population = nonprivate_population(data, level)
    if data.in_memory:
        groups = tuple(nonprivate_ci(g, estimator, level) for g in data.groups)
    else:
        runs = range(len(data.labels)) if data.group_error is None else ()
        groups = tuple(_from_moments(data, g, level) for g in runs)
    recombined = None
    if groups:
        estimate, _, low, high = recombine(
            data.shares, [g.estimate for g in groups], [g.variance for g in groups], level
        )
        recombined = (estimate, low, high)
    return NonPrivate(population, groups, recombined)


def nonprivate_population(data: GvdpData, level: float = 0.95) -> NonPrivateCI:
    """The ordinary estimate and interval on every row (**not private**: a curator preview):
    from the rows in memory, or from the sums an engine computed
    (:func:`~dpcore.analyses.gvdp.estimator.nonprivate_from_moments`)."""
    if data.in_memory:
        return nonprivate_ci(data.population, data.model.estimator, level)
    return _from_moments(data, len(data.labels), level)


def _from_moments(data: GvdpData, run: int, level: float) -> NonPrivateCI:
    """The ordinary fit of run ``run`` (a group, or the population after the groups) from an
    engine's sums (:class:`~dpcore.analyses.gvdp.data.Moments`)."""
    moments = data.moments
    return nonprivate_from_moments(
        moments.gram[run], moments.xy[run], moments.yy[run], data.model.estimator, level
    )


def check_model_bounds(bounds: object, model: GvdpModel) -> None:
    instance_of("bounds", bounds, GvdpBoundsSpec)
    if bounds.coefficients != model.coefficients:
        raise ValueError(
            f"`bounds` are for the coefficients {list(bounds.coefficients)}, but the model "
            f"estimates {list(model.coefficients)}"
        )


DP = "DP (GVDP)"


NON_PRIVATE = "Non-private"


def comparison_frame(model: GvdpModel, result: GVDPResult, reference: NonPrivateCI) -> pd.DataFrame:
    """Per coefficient, the DP and the non-private estimate and interval (long format)."""
    rows = []
    for method, fit in ((DP, result), (NON_PRIVATE, reference)):
        for j, name in enumerate(model.coefficients):
            rows.append(
                {
                    "coefficient": name, "method": method, "estimate": float(fit.estimate[j]),
                    "low": float(fit.low[j]), "high": float(fit.high[j]),
                }
            )  # fmt: skip
    return pd.DataFrame(rows)


def groups_frame(
    model: GvdpModel, grouped: GVDPStratifiedResult, reference: NonPrivate, rows: np.ndarray
) -> pd.DataFrame:
    """Per group and coefficient, the DP and non-private estimates, plus the recombined rows
    (``group`` = :data:`ALL`, ``level`` = "population")."""
    out = []
    fits = [
        (
            label,
            "group",
            int(n),
            int(k),
            dp.estimate,
            dp.low,
            dp.high,
            np_.estimate,
            np_.low,
            np_.high,
        )  # fmt: skip
        for label, n, k, dp, np_ in zip(
            grouped.labels, rows, grouped.subsets, grouped.groups, reference.groups, strict=True
        )
    ]
    if reference.recombined is not None:
        fits.append(
            (ALL, "population", int(np.sum(rows)), int(np.sum(grouped.subsets)),
             grouped.estimate, grouped.low, grouped.high, *reference.recombined)
        )  # fmt: skip
    for label, level, n, k, est, low, high, np_est, np_low, np_high in fits:
        for j, name in enumerate(model.coefficients):
            for method, values in ((DP, (est, low, high)), (NON_PRIVATE, (np_est, np_low, np_high))):  # fmt: skip
                out.append(
                    {
                        "level": level, "group": label, "rows": n, "subsets": k,
                        "coefficient": name, "method": method,
                        "estimate": float(values[0][j]), "low": float(values[1][j]),
                        "high": float(values[2][j]),
                    }
                )  # fmt: skip
    return pd.DataFrame(out)
