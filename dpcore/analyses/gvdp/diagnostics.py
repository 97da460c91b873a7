"""How far GVDP's intervals can be trusted: coverage by replication and the k diagnostic.

Coverage on the current data (rows resampled) and on synthetic data with a known truth, and the
bag-of-little-bootstraps diagnostic across k (Covington et al., App. G.4; Fig. 3).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import expit

from dpcore.analyses.gvdp.bounds import ROWS_PER_COEFFICIENT, GVDPBounds, recommended_subsets
from dpcore.analyses.gvdp.data import GvdpData
from dpcore.analyses.gvdp.estimator import (
    GVDPCoverage,
    gvdp_coverage,
    nonprivate_ci,
)
from dpcore.analyses.gvdp.groups import RunSettings, check_model_bounds, run_population
from dpcore.analyses.gvdp.model import INTERCEPT, MODELS, GvdpBoundsSpec, ModelKind
from dpcore.foundations.metrics import binomial_band, clopper_pearson
from dpcore.foundations.validation import (
    as_rng,
    positive_int,
)

__all__ = [
    "BlbDiagnostic",
    "blb_diagnostic",
    "coverage_frame",
    "coverage_on_data",
    "coverage_synthetic",
    "k_ladder",
    "synthetic_coefficients",
    "synthetic_description",
    "synthetic_truth",
]


def coverage_on_data(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    *,
    replications: int,
    rng: np.random.Generator | int | None = None,
) -> GVDPCoverage:
    r"""Coverage of the full-data non-private estimate over fresh GVDP randomness on fixed data.

    Each replication redraws the BLB partition and resamples and the privacy noise on the same
    rows (:func:`~dpcore.analyses.gvdp.gvdp_coverage` with a generator that returns the data).
    The truth is the ordinary full-data estimate :math:`\hat\theta`. This is not the paper's
    coverage of θ (that needs fresh samples from the population, :func:`coverage_synthetic`):
    since the interval also allows for sampling error, it should cover :math:`\hat\theta` *at
    least* at the nominal rate, and falling below flags a bias — subsets too small for the
    estimator (lower k; App. G.1) or bounds that clip.
    """
    data.require_rows("Coverage on the current data")
    check_model_bounds(bounds, data.model)
    data.check_k(settings.k, settings.resamples)
    k = data.subsets(settings.k, settings.resamples)
    truth = nonprivate_ci(data.population, data.model.estimator, settings.level).estimate
    return gvdp_coverage(
        lambda _rng: data.population, truth, data.model.estimator,
        replications=replications, k=k,
        bounds=bounds.for_rows(data.rows, k, settings.resamples), rng=rng,
        **settings.gvdp_kwargs(),
    )  # fmt: skip


SYNTHETIC_SLOPE = 0.5
"""Every covariate's coefficient in the synthetic models; the intercept is 1 (OLS) or −1
(logistic), the mean 1 (the paper's §3 example N(μ = 1, σ² = 1))."""


def synthetic_truth(kind: ModelKind, d: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The synthetic model's parameter θ and per-row variances :math:`n\operatorname{Var}
    \hat\theta_j`.

    - mean: rows :math:`x_i \sim N(1, 1)`: θ = 1, per-row variance 1;
    - OLS: :math:`y = X\beta + \varepsilon`, :math:`X = (1, Z)`, :math:`Z \sim N(0, I_{d-1})`,
      :math:`\varepsilon \sim N(0, 1)`, β = (1, ½, …): per-row variances
      :math:`\operatorname{diag}(E[xx^\top])^{-1} = 1`;
    - logistic: :math:`P(y = 1) = \operatorname{expit}(X\beta)` with β = (−1, ½, …): per-row
      variances :math:`\operatorname{diag}(I(\beta)^{-1})` with :math:`I(\beta) =
      E[p(1-p)xx^\top]`, computed once from 400,000 draws with a fixed seed (public: no data).
    """
    positive_int("d", d)
    MODELS.check("kind", kind)
    if kind == "mean":
        if d != 1:
            raise ValueError(f"`d` must be 1 for the mean, got {d}")
        return np.ones(1), np.ones(1)
    if kind == "ols":
        return np.r_[1.0, np.full(d - 1, SYNTHETIC_SLOPE)], np.ones(d)
    beta = np.r_[-1.0, np.full(d - 1, SYNTHETIC_SLOPE)]  # logistic
    return beta, np.array(_logistic_variances(d))


def synthetic_coefficients(kind: ModelKind, d: int) -> tuple[str, ...]:
    """Names of the synthetic model's coordinates: ``("mean",)`` or intercept, x1, x2, …"""
    if kind == "mean":
        return ("mean",)
    return (INTERCEPT, *(f"x{j}" for j in range(1, d)))


def synthetic_description(kind: ModelKind, d: int) -> str:
    """The synthetic model in one line, e.g. ``"y = 1 + 0.5·x1 + N(0, 1)"``."""
    theta, _ = synthetic_truth(kind, d)
    names = synthetic_coefficients(kind, d)
    if kind == "mean":
        return "rows x ~ N(1, 1): the true mean is 1"
    linear = f"{theta[0]:g}" + "".join(f" + {b:g}·{x}" for b, x in zip(theta[1:], names[1:], strict=True))  # fmt: skip
    covariates = f"{', '.join(names[1:])} independent standard normal"
    if kind == "ols":
        return f"y = {linear} + N(0, 1) with {covariates}"
    return f"P(y = 1) = expit({linear}) with {covariates}"


@functools.lru_cache(maxsize=16)
def _logistic_variances(d: int) -> tuple[float, ...]:
    beta = np.r_[-1.0, np.full(d - 1, SYNTHETIC_SLOPE)]
    X = _synthetic_design(400_000, d, np.random.default_rng(0))
    p = expit(X @ beta)
    information = (X * (p * (1 - p))[:, None]).T @ X / X.shape[0]
    return tuple(float(v) for v in np.diag(np.linalg.inv(information)))


def _synthetic_design(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    return np.column_stack([np.ones(n), rng.standard_normal((n, d - 1))])


def _synthetic_generator(kind: ModelKind, n: int, d: int):
    theta, _ = synthetic_truth(kind, d)

    def generate(rng: np.random.Generator) -> object:
        if kind == "mean":
            return theta[0] + rng.standard_normal((n, 1))
        X = _synthetic_design(n, d, rng)
        if kind == "ols":
            return X, X @ theta + rng.standard_normal(n)
        return X, (rng.random(n) < expit(X @ theta)).astype(float)

    return generate


def coverage_synthetic(
    kind: ModelKind,
    n: int,
    d: int,
    settings: RunSettings,
    *,
    factor: float,
    replications: int,
    rng: np.random.Generator | int | None = None,
) -> GVDPCoverage:
    r"""Coverage of the true θ on fresh synthetic samples of n rows (the paper's §3 setting).

    Each replication draws a new sample from the model of :func:`synthetic_truth` and runs GVDP
    with bounds ``factor`` times looser than the tightest (:meth:`GVDPBounds.overestimated` with
    the known truth — allowed here because the synthetic truth is public, never for a release).
    """
    theta, per_row = synthetic_truth(kind, d)
    n = positive_int("n", n)
    k = recommended_subsets(n, kind, d) if settings.k is None else settings.k
    if n // k < ROWS_PER_COEFFICIENT * d:
        raise ValueError(
            f"`k` = {k:,} leaves subsets of {n // k} rows (n = {n:,}): use "
            f"k ≤ {n // (ROWS_PER_COEFFICIENT * d):,}"
        )
    bounds = GVDPBounds.overestimated(
        theta, per_row / n, factor, resamples=settings.resamples, subset_size=n // k
    )
    return gvdp_coverage(
        _synthetic_generator(kind, n, d), theta, kind, replications=replications,
        k=k, bounds=bounds, rng=rng, **settings.gvdp_kwargs(),
    )  # fmt: skip


def coverage_frame(
    coverage: GVDPCoverage, coefficients: Sequence[str], *, confidence: float = 0.95
) -> pd.DataFrame:
    r"""Per coefficient: observed coverage with its Clopper–Pearson interval
    (:func:`dpcore.foundations.metrics.clopper_pearson`), the nominal level and the binomial band of
    coverages consistent with it (:func:`dpcore.foundations.metrics.binomial_band`)."""
    R = coverage.replications
    nominal = coverage.level
    band_low, band_high = binomial_band(nominal, R, confidence=confidence)
    covered = coverage.covered.sum(axis=0)
    lows, highs = clopper_pearson(covered, R, confidence=confidence)
    rows = []
    for j, name in enumerate(coefficients):
        c = int(covered[j])
        rows.append(
            {
                "coefficient": name, "coverage": c / R, "low": float(lows[j]),
                "high": float(highs[j]), "nominal": nominal, "band_low": band_low,
                "band_high": band_high, "replications": R,
                "mean_width": float(np.mean(coverage.high[:, j] - coverage.low[:, j])),
            }
        )  # fmt: skip
    return pd.DataFrame(rows)


def k_ladder(k: int, rows: int, d: int) -> tuple[int, ...]:
    """k/4, k/2, k, 2k, 4k (rounded), keeping those that leave ≥ 5 rows per coefficient."""
    k = positive_int("k", k)
    most = rows // (ROWS_PER_COEFFICIENT * d)
    ladder = {max(1, round(k * f)) for f in (0.25, 0.5, 1, 2, 4)}
    return tuple(sorted(v for v in ladder if v <= most))


@dataclass(frozen=True, eq=False)
class BlbDiagnostic:
    """Subset estimates and standard errors at several k (**not private**; never release).

    ``frame``: one row per (k, subset, coefficient) with ``k``, ``b`` (rows per subset),
    ``coefficient``, ``estimate`` (:math:`\\hat\\theta_i^{BLB}`) and ``se``
    (:math:`\\sqrt{\\hat V_i^{BLB}}`, the subset's estimate of the full-sample standard error).
    ``failed`` maps each k whose BLB could not run to the reason.
    """

    frame: pd.DataFrame
    failed: dict[int, str]


def blb_diagnostic(
    data: GvdpData,
    bounds: GvdpBoundsSpec,
    settings: RunSettings,
    ks: Sequence[int],
    *,
    rng: np.random.Generator | int | None = None,
) -> BlbDiagnostic:
    r"""The BLB subset estimates at each k in ``ks`` (paper Fig. 3 and App. G.4).

    The paper's advice: take the largest k for which the BLB estimates, computed on subsets of
    b = n/k rows, still approximate the estimator's sampling distribution; start small and raise
    k until their distribution "starts to look substantially different". Here the subsets'
    estimates :math:`\hat\theta_i^{BLB}` should centre on the full-data estimate and their
    standard errors :math:`\sqrt{\hat V_i^{BLB}}` on the full-data standard error; a drift of
    either as k grows means b is too small (e.g. the small-sample bias of a logistic fit,
    App. G.1). Runs :func:`gvdp` with simulation noise and keeps only the subset arrays, which are
    computed from the confidential data without noise: a curator's diagnostic, never a release.
    """
    data.require_rows("The k diagnostic")
    check_model_bounds(bounds, data.model)
    gen = as_rng(rng)
    frames, failed = [], {}
    for k in ks:
        try:
            run = run_population(data, bounds, _with_k(settings, int(k)), rng=gen)
        except ValueError as exc:
            failed[int(k)] = str(exc)
            continue
        estimates, variances = run.subset_estimates, run.subset_variances
        count = estimates.shape[0]
        for j, name in enumerate(data.model.coefficients):
            frames.append(
                pd.DataFrame(
                    {
                        "k": int(k), "b": data.rows // int(k), "coefficient": name,
                        "estimate": estimates[:, j], "se": np.sqrt(variances[:, j]),
                        "subset": np.arange(count),
                    }
                )
            )  # fmt: skip
    columns = ["k", "b", "coefficient", "estimate", "se", "subset"]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    return BlbDiagnostic(frame=frame, failed=failed)


def _with_k(settings: RunSettings, k: int) -> RunSettings:
    return RunSettings(
        k=k, rho=settings.rho, resamples=settings.resamples, steps=settings.steps,
        beta=settings.beta, mean_fraction=settings.mean_fraction, level=settings.level,
    )  # fmt: skip
