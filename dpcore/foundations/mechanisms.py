"""Noise scales for the Laplace and Gaussian mechanisms, and the two sources of noise.

Two noise paths share one interface (:class:`NoiseSource`):

- :class:`SimulationNoise` draws with numpy, vectorized, for Monte Carlo previews (never a release);
- :class:`SecureNoise` draws through OpenDP's vetted samplers, for releases that spend budget.

The bare vectorized draws :func:`laplace_noise` and :func:`gaussian_noise` serve the Monte Carlo
engine, which needs arrays of shape (replicates, groups) at once.
"""

from __future__ import annotations

import math
from typing import Literal, Protocol

import numpy as np
from scipy.special import log_ndtr, ndtr

from dpcore.foundations.errors import ClassicGaussianRangeError
from dpcore.foundations.validation import as_rng, open_unit_interval, positive_number, shown

GaussianMethod = Literal["classic", "analytic"]
NoiseKind = Literal["simulation", "secure"]
SelectionMeasure = Literal["pure", "zcdp"]
"""What a private selection (:meth:`NoiseSource.report_noisy_min`) is accounted in: pure ε-DP
(exponential noise, i.e. permute-and-flip) or ρ-zCDP (Gumbel noise, i.e. the exponential
mechanism)."""


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    r"""Scale of the Laplace mechanism for ε-DP: :math:`b = \Delta_1 / \varepsilon`.

    Dwork, McSherry, Nissim & Smith (2006); Dwork & Roth (2014), Thm. 3.6. ``sensitivity`` is the
    L1 sensitivity of the released statistic.
    """
    sensitivity = positive_number("sensitivity", sensitivity)
    return sensitivity / positive_number("epsilon", epsilon)


def gaussian_sigma(
    sensitivity: float,
    epsilon: float,
    delta: float,
    method: GaussianMethod = "classic",
) -> float:
    r"""Standard deviation of the Gaussian mechanism for (ε, δ)-DP.

    ``"classic"``: :math:`\sigma = \Delta_2\sqrt{2\ln(1.25/\delta)}/\varepsilon`
    (Dwork & Roth 2014, Thm. A.1). The proof holds only for 0 < ε < 1, so larger ε is refused.

    ``"analytic"``: the smallest σ with

    .. math:: \Phi\!\left(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\right)
              - e^{\varepsilon}\,\Phi\!\left(-\frac{\Delta}{2\sigma}
              - \frac{\varepsilon\sigma}{\Delta}\right) \le \delta,

    the exact characterisation of Balle & Wang (2018, Thm. 8), solved numerically. Valid for every
    ε > 0 and always at least as tight as the classic σ.
    """
    sensitivity = positive_number("sensitivity", sensitivity)
    epsilon = positive_number("epsilon", epsilon)
    delta = open_unit_interval("delta", delta)
    if method == "classic":
        if epsilon >= 1:
            raise ClassicGaussianRangeError(
                f"`epsilon` must be < 1 for the classic Gaussian mechanism (Dwork & Roth Thm. A.1 "
                f"holds only there), got {epsilon!r}; use method='analytic' instead",
                epsilon=epsilon,
            )
        return sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    if method == "analytic":
        return sensitivity * _analytic_unit_sigma(epsilon, delta)
    raise ValueError(f"`method` must be 'classic' or 'analytic', got {method!r}")


def _analytic_unit_sigma(epsilon: float, delta: float) -> float:
    """Balle & Wang's σ for sensitivity 1; δ(σ) decreases in σ, so a bracketed root is unique."""
    from scipy.optimize import brentq  # deferred: slow to import, rarely needed

    def excess_delta(log_sigma: float) -> float:
        sigma = math.exp(log_sigma)
        a = 1 / (2 * sigma) - epsilon * sigma
        b = -1 / (2 * sigma) - epsilon * sigma
        return float(ndtr(a) - math.exp(epsilon + log_ndtr(b))) - delta

    low, high = -20.0, 20.0
    return math.exp(brentq(excess_delta, low, high, xtol=1e-13, rtol=1e-13))


def zcdp_gaussian_sigma(sensitivity: float, rho: float) -> float:
    r"""Standard deviation of the Gaussian mechanism for ρ-zCDP: :math:`\sigma = \Delta_2/\sqrt{2\rho}`.

    Bun & Steinke (2016), Prop. 1.6: adding :math:`N(0, \sigma^2)` to a statistic of L2 sensitivity
    Δ satisfies :math:`\Delta^2/(2\sigma^2)`-zCDP.
    """
    sensitivity = positive_number("sensitivity", sensitivity)
    return sensitivity / math.sqrt(2 * positive_number("rho", rho))


def selection_scale(sensitivity: float, budget_value: float, measure: SelectionMeasure) -> float:
    r"""The noise scale of a private selection by report-noisy-min over scores of sensitivity
    Δ (each score moves by at most Δ between neighbours), as OpenDP's ``make_noisy_max``
    accounts for it.

    Pure ε-DP, exponential noise (report noisy max with exponential noise, which is
    permute-and-flip: McKenna & Sheldon 2020, Thm. 3; Ding et al. 2021): :math:`s = 2\Delta/\varepsilon`.
    ρ-zCDP, Gumbel noise (the exponential mechanism of McSherry & Talwar 2007, which is
    :math:`\varepsilon^2/8`-zCDP: Cesar & Rogers 2021, Lemma 3.2): :math:`s = 2\Delta/\sqrt{8\rho}`.
    """
    sensitivity = positive_number("sensitivity", sensitivity)
    value = positive_number("budget_value", budget_value)
    if measure == "pure":
        return 2 * sensitivity / value
    if measure == "zcdp":
        return 2 * sensitivity / math.sqrt(8 * value)
    raise ValueError(f"`measure` must be 'pure' or 'zcdp', got {measure!r}")


def _scales_seen(arr: np.ndarray) -> str:
    """What a refused scale held, in words rather than an array's repr: the count of bad
    entries and the first one."""
    if arr.size == 0:
        return "no values"
    bad = arr[~((arr > 0) & np.isfinite(arr))]
    if arr.size == 1:
        return f"{float(arr.reshape(-1)[0])!r}"
    return f"{bad.size:,} of {arr.size:,} entries that are not (the first is {float(bad[0])!r})"


def _positive_scales(name: str, scale: float | np.ndarray) -> np.ndarray:
    arr = np.asarray(scale, dtype=float)
    # Smallest and largest only: no temporary arrays (8x faster on a Monte Carlo's (R, k)
    # scales); a NaN makes both NaN, which fails the comparisons and is refused too.
    if arr.size == 0 or not (0 < arr.min() and arr.max() < np.inf):
        raise ValueError(f"`{name}` must be finite and > 0 everywhere, got {_scales_seen(arr)}")
    return arr


def _probabilities(probabilities: np.ndarray) -> np.ndarray:
    p = np.asarray(probabilities, dtype=float)
    if p.size == 0 or not (0 <= p.min() and p.max() <= 1):
        raise ValueError(f"`probabilities` must lie in [0, 1] everywhere, got {probabilities!r}")
    return p


def laplace_noise(
    scale: float | np.ndarray,
    size: int | tuple[int, ...] | None = None,
    *,
    rng: np.random.Generator | int | None,
) -> np.ndarray:
    """Vectorized Laplace(0, scale) draws; ``scale`` broadcasts against ``size``."""
    return as_rng(rng).laplace(0.0, _positive_scales("scale", scale), size)


def gaussian_noise(
    sigma: float | np.ndarray,
    size: int | tuple[int, ...] | None = None,
    *,
    rng: np.random.Generator | int | None,
) -> np.ndarray:
    """Vectorized N(0, sigma²) draws; ``sigma`` broadcasts against ``size``."""
    return as_rng(rng).normal(0.0, _positive_scales("sigma", sigma), size)


class NoiseSource(Protocol):
    """Adds mechanism noise to an array of statistics; element ``i`` gets ``scale[i]``."""

    kind: NoiseKind

    def add_laplace(self, values: np.ndarray, scale: float | np.ndarray) -> np.ndarray: ...

    def add_gaussian(self, values: np.ndarray, sigma: float | np.ndarray) -> np.ndarray: ...

    def draw_bernoulli(self, probabilities: np.ndarray) -> np.ndarray:
        """One bit per entry, 1 with the entry's probability (a sampler whose draw is its
        mechanism, e.g. the bounded-bias samplers of Raskhodnikova et al., NeurIPS 2021 §6)."""
        ...

    def report_noisy_min(
        self, scores: np.ndarray, scale: float | np.ndarray, measure: SelectionMeasure,
        size: int | None = None,
    ) -> np.ndarray:  # fmt: skip
        """Private selection: for each row of ``scores`` (shape (k, C)), the index of the
        smallest score after noise of ``scale`` (one per row, or one for all): exponential
        noise under pure ε-DP, Gumbel noise under ρ-zCDP (:func:`selection_scale`). Shape (k,),
        or (size, k) for ``size`` independent draws."""
        ...


class SimulationNoise:
    """numpy noise for Monte Carlo previews: fast, seeded, not for releases."""

    kind: NoiseKind = "simulation"

    def __init__(self, *, rng: np.random.Generator | int | None = None) -> None:
        self._rng = as_rng(rng)

    def add_laplace(self, values: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return values + laplace_noise(scale, values.shape, rng=self._rng)

    def add_gaussian(self, values: np.ndarray, sigma: float | np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        return values + gaussian_noise(sigma, values.shape, rng=self._rng)

    def draw_bernoulli(self, probabilities: np.ndarray) -> np.ndarray:
        p = _probabilities(probabilities)
        return (self._rng.random(p.shape) < p).astype(np.int8)

    def report_noisy_min(
        self, scores: np.ndarray, scale: float | np.ndarray, measure: SelectionMeasure,
        size: int | None = None,
    ) -> np.ndarray:  # fmt: skip
        """numpy report-noisy-min, vectorised: argmin of score − scale·E with E exponential
        (pure) or argmax of −score + scale·G with G Gumbel (zCDP), what OpenDP's
        ``make_noisy_max`` draws. Replicates run in chunks of at most ~4 million noise draws."""
        scores, scales = _selection_inputs(scores, scale, measure)
        k, c = scores.shape
        draws = 1 if size is None else int(size)
        out = np.empty((draws, k), dtype=np.int64)
        chunk = max(1, 4_000_000 // max(k * c, 1))
        for start in range(0, draws, chunk):
            n = min(chunk, draws - start)
            if measure == "pure":
                noise = self._rng.standard_exponential((n, k, c))
            else:
                noise = self._rng.gumbel(size=(n, k, c))
            out[start : start + n] = np.argmax(noise - scores / scales[:, None], axis=-1)
        return out[0] if size is None else out


class SecureNoise:
    """Release-grade noise from OpenDP's samplers (``make_laplace`` / ``make_gaussian``).

    OpenDP samples from a cryptographically secure source and guards against the floating-point
    attacks on naive samplers (Mironov 2012). It is ~1000× slower than numpy, which is why the
    Monte Carlo engine uses :class:`SimulationNoise`. It cannot be seeded, by design.
    """

    kind: NoiseKind = "secure"

    def add_laplace(self, values: np.ndarray, scale: float | np.ndarray) -> np.ndarray:
        return self._apply("laplace", values, _positive_scales("scale", scale))

    def add_gaussian(self, values: np.ndarray, sigma: float | np.ndarray) -> np.ndarray:
        return self._apply("gaussian", values, _positive_scales("sigma", sigma))

    def draw_bernoulli(self, probabilities: np.ndarray) -> np.ndarray:
        """Each bit from OpenDP's randomized response on a boolean (``make_randomized_response_bool``,
        Warner 1965): answering ``p >= 1/2`` truthfully with probability ``max(p, 1 - p)``
        outputs 1 with probability exactly p. (Randomized response is the vetted Bernoulli
        sampler OpenDP exposes; its privacy accounting is not used here, only its draw.)"""
        import opendp.prelude as dp

        dp.enable_features("contrib")
        p = _probabilities(probabilities)
        out = np.empty(p.shape, dtype=np.int8)
        for value in np.unique(p):
            mask = p == value
            truthful = dp.m.make_randomized_response_bool(prob=float(max(value, 1 - value)))
            out[mask] = [truthful(bool(value >= 0.5)) for _ in range(int(mask.sum()))]
        return out

    def report_noisy_min(
        self, scores: np.ndarray, scale: float | np.ndarray, measure: SelectionMeasure,
        size: int | None = None,
    ) -> np.ndarray:  # fmt: skip
        """OpenDP's ``make_noisy_max`` (``negate=True``) on each row of ``scores``: exponential
        noise under ``max_divergence`` (pure ε), Gumbel noise under
        ``zero_concentrated_divergence`` (ρ) — the selection inside OpenDP's
        ``make_private_quantile``. One measurement per row and draw."""
        import opendp.prelude as dp

        dp.enable_features("contrib")
        scores, scales = _selection_inputs(scores, scale, measure)
        output = dp.max_divergence() if measure == "pure" else dp.zero_concentrated_divergence()
        space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
        draws = 1 if size is None else int(size)
        out = np.empty((draws, scores.shape[0]), dtype=np.int64)
        for g, (row, row_scale) in enumerate(zip(scores, scales, strict=True)):
            select = dp.m.make_noisy_max(*space, output, scale=float(row_scale), negate=True)
            values = row.tolist()
            out[:, g] = [select(values) for _ in range(draws)]
        return out[0] if size is None else out

    @staticmethod
    def _apply(
        family: Literal["laplace", "gaussian"], values: np.ndarray, scales: np.ndarray
    ) -> np.ndarray:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        values = np.asarray(values, dtype=float)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"`values` must be finite before noise is added, got {shown(values)}")
        scales = np.broadcast_to(scales, values.shape)
        out = np.empty_like(values)
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False))
        maker, metric = (
            (dp.m.make_laplace, dp.l1_distance(T=float))
            if family == "laplace"
            else (dp.m.make_gaussian, dp.l2_distance(T=float))
        )
        # One OpenDP measurement per distinct scale; entries sharing a scale go through together.
        for scale in np.unique(scales):
            mask = scales == scale
            measurement = maker(domain, metric, scale=float(scale))
            out[mask] = measurement(values[mask].tolist())
        return out


def _selection_inputs(
    scores: np.ndarray, scale: float | np.ndarray, measure: SelectionMeasure
) -> tuple[np.ndarray, np.ndarray]:
    """Scores as a finite (k, C) float array and one positive scale per row."""
    if measure not in ("pure", "zcdp"):
        raise ValueError(f"`measure` must be 'pure' or 'zcdp', got {measure!r}")
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    if scores.ndim != 2 or scores.shape[1] == 0 or not np.isfinite(scores).all():
        raise ValueError(f"`scores` must be a finite (k, C) array with C >= 1, got {scores!r}")
    scales = np.broadcast_to(_positive_scales("scale", scale), (scores.shape[0],))
    return scores, scales


def noise_source(kind: NoiseKind, *, rng: np.random.Generator | int | None = None) -> NoiseSource:
    """The noise source for a preview (``"simulation"``) or a real release (``"secure"``), as a
    user names it: secure noise refuses any ``rng`` (OpenDP's samplers cannot be seeded, and a
    release must not look reproducible). Otherwise :func:`as_noise_source`."""
    if kind not in ("simulation", "secure"):
        raise ValueError(f"`kind` must be 'simulation' or 'secure', got {kind!r}")
    if kind == "secure" and rng is not None:
        raise ValueError("`rng` must be None for secure noise: OpenDP's sampler cannot be seeded")
    return as_noise_source(kind, rng=rng)


def as_noise_source(
    noise: NoiseKind | NoiseSource | None, *, rng: np.random.Generator | int | None = None
) -> NoiseSource:
    """The one normaliser of every estimator's ``noise`` argument.

    ``None`` or ``"simulation"``: numpy noise seeded by ``rng`` (previews and dry runs);
    ``"secure"``: OpenDP's samplers, which cannot be seeded — an integer seed is refused (its
    caller expects reproducible noise), a generator is left to the caller's post-processing;
    a :class:`NoiseSource`: used as it is (a caller sharing one source between several draws).
    """
    if noise is None or noise == "simulation":
        return SimulationNoise(rng=rng)
    if noise == "secure":
        if isinstance(rng, int | np.integer):
            raise ValueError(
                "`rng` must not be a seed for secure noise: OpenDP's sampler cannot be seeded"
            )
        return SecureNoise()
    if isinstance(noise, str):
        raise ValueError(f"`noise` must be 'simulation', 'secure' or a NoiseSource, got {noise!r}")
    if not (
        callable(getattr(noise, "add_laplace", None))
        and callable(getattr(noise, "add_gaussian", None))
    ):
        raise TypeError(f"`noise` must be a NoiseSource, 'simulation' or 'secure', got {noise!r}")
    return noise
