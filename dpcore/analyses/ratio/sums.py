"""The sums behind the ratio's inference, their public bounds, and the release options.

Miao & Li, *Privacy-Preserving Inference on the Ratio of Two Gaussians Using Sums* (JDS 2022),
§2.3.1: up to seven clipped sums Σw, Σws, Σwy, Σw², Σws², Σwy², Σwys, minus the redundant ones
(Σwy² = Σwy for binary y, Σw² = Σw without weights). :func:`ratio_sums` is the only pass over
raw rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Literal

import numpy as np

from dpcore.foundations.choices import Choices
from dpcore.foundations.validation import (
    MAX_BOUND_MAGNITUDE,
    positive_int,
    positive_number,
    shown,
)

__all__ = [
    "COMPOSITIONS",
    "MECHANISMS",
    "METHODS",
    "SCALES",
    "SUM_LABELS",
    "SUM_NAMES",
    "RatioBounds",
    "RatioSums",
    "ratio_sums",
]


Mechanism = Literal["gaussian", "gaussian_analytic", "laplace"]


Method = Literal["none", "monte_carlo", "analytical"]


Scale = Literal["ratio", "log"]


Composition = Literal["basic", "zcdp"]


MECHANISMS = Choices(
    Mechanism,
    {
        "gaussian": "Gaussian, classic calibration (paper eq. 5)",
        "gaussian_analytic": "Gaussian, analytic calibration (Balle & Wang 2018)",
        "laplace": "Laplace (pure ε-DP; paper appendix A)",
    },
)


METHODS = Choices(
    Method,
    {
        "none": "No correction (§2.4.1)",
        "monte_carlo": "Monte Carlo correction (§2.4.2)",
        "analytical": "Analytical correction (§2.4.3)",
    },
)


SCALES = Choices(Scale, {"ratio": "Ratio scale (eq. 1)", "log": "Log scale (§2.3)"})


COMPOSITIONS = Choices(
    Composition,
    {
        "basic": "Basic composition: ε/m and δ/m per sum (the paper's choice)",
        "zcdp": "zCDP: ρ from (ε, δ), ρ/m per sum (Bun & Steinke 2016)",
    },
)


SUM_NAMES: tuple[str, ...] = ("w", "ws", "wy", "ww", "wss", "wyy", "wys")
"""Every sum the paper may release (§2.3.1), in release order: Σw, Σws, Σwy, Σw², Σws², Σwy²,
Σwys. ``ww`` is absent for unweighted data and ``wyy`` for binary y."""


SUM_LABELS: dict[str, str] = {
    "w": "Σw",
    "ws": "Σws",
    "wy": "Σwy",
    "ww": "Σw²",
    "wss": "Σws²",
    "wyy": "Σwy²",
    "wys": "Σwys",
}


@dataclass(frozen=True)
class RatioBounds:
    """Public upper bounds :math:`u_s, u_y, u_w` of s, y and the weight w; the lower bounds are 0.

    The paper's data are non-negative (§2): s and y lie in [0, u_s] and [0, u_y], w in [0, u_w].
    Rows are clipped to these bounds before summing; the bounds must never come from the data.
    Unweighted data have w ≡ 1, so ``w`` must then be 1. ``rows_per_person`` is c, the most rows
    one person contributes after an engine bounded each person's rows
    (:class:`~dpcore.foundations.privacy_unit.PrivacyUnit`); 1 when one row is one person.
    """

    s: float = 1.0
    y: float = 1.0
    w: float = 1.0
    rows_per_person: int = 1

    def __post_init__(self) -> None:
        for name in ("s", "y", "w"):
            bound = positive_number(f"bounds.{name}", getattr(self, name))
            if bound > MAX_BOUND_MAGNITUDE:  # the noise of the sums grows with the bound
                raise ValueError(
                    f"`bounds.{name}` must be at most {MAX_BOUND_MAGNITUDE:.0e} (the noise grows "
                    f"with it and would overflow or drown every sum), got {bound:g}. Rescale the "
                    "column (e.g. to thousands) and its bound with it."
                )
            object.__setattr__(self, name, bound)
        object.__setattr__(
            self, "rows_per_person", positive_int("bounds.rows_per_person", self.rows_per_person)
        )

    def __repr__(self) -> str:
        person = f", rows_per_person={self.rows_per_person}" if self.rows_per_person > 1 else ""
        return f"RatioBounds(s={self.s!r}, y={self.y!r}, w={self.w!r}{person})"

    def sensitivities(self, names: Sequence[str]) -> dict[str, float]:
        r"""Add/remove-one sensitivity of each named sum: its summand at the upper bounds (§2.3.1),
        times the rows one person may contribute.

        :math:`\Delta_{\sum w} = u_w`, :math:`\Delta_{\sum ws} = u_w u_s`,
        :math:`\Delta_{\sum w^2} = u_w^2`, :math:`\Delta_{\sum wys} = u_w u_y u_s`, and so on;
        with the paper's bounds s, y ∈ [0, 1] every sum has sensitivity :math:`u_w` except Σw².

        With a person bounded to c = ``rows_per_person`` rows (over all groups together), adding
        or removing that person changes each sum, summed over the groups, by at most c times its
        summand's bound, every summand lying in [0, Δ]: the vector of one sum over all groups has
        L1 (and so L2) sensitivity :math:`c\,\Delta`. Each sum is released at that sensitivity,
        so the release protects one person at its budget; for c = 1 this is the paper's
        add/remove-one-row sensitivity. (Our choice, as for the mean: the L1 bound, which holds
        however the person's rows spread over groups.)
        """
        s, y, w = self.s, self.y, self.w
        table = {
            "w": w,
            "ws": w * s,
            "wy": w * y,
            "ww": w * w,
            "wss": w * s * s,
            "wyy": w * y * y,
            "wys": w * y * s,
        }
        return {name: self.rows_per_person * table[name] for name in names}


def as_ratio_bounds(bounds: object) -> RatioBounds:
    """``bounds`` as :class:`RatioBounds`: the class itself, or a tuple (u_s, u_y[, u_w])."""
    if isinstance(bounds, RatioBounds):
        return bounds
    if isinstance(bounds, tuple | list) and len(bounds) in (2, 3):
        return RatioBounds(*bounds)
    raise TypeError(
        f"`bounds` must be RatioBounds or a tuple (u_s, u_y) or (u_s, u_y, u_w), got {bounds!r}"
    )


@dataclass(frozen=True, eq=False)
class RatioSums:
    """The sums the ratio's inference needs (§2.3.1), exact or noisy; each a float or an array.

    ``ww`` (Σw²) is None for unweighted data, where it equals Σw = n; ``wyy`` (Σwy²) is None for
    binary y, where it equals Σwy. Absent sums are not released and :meth:`value` returns their
    twin. Arrays broadcast against each other (e.g. one entry per replicate).
    """

    w: float | np.ndarray
    ws: float | np.ndarray
    wy: float | np.ndarray
    wss: float | np.ndarray
    wys: float | np.ndarray
    ww: float | np.ndarray | None = None
    wyy: float | np.ndarray | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                object.__setattr__(self, f.name, _finite_array(f"sums.{f.name}", value))
        try:
            np.broadcast_shapes(*(np.shape(self.value(name)) for name in self.released))
        except ValueError:
            shapes = {name: np.shape(self.value(name)) for name in self.released}
            raise ValueError(f"`sums` must have broadcastable shapes, got {shapes}") from None

    @property
    def weighted(self) -> bool:
        return self.ww is not None

    @property
    def binary_y(self) -> bool:
        return self.wyy is None

    @property
    def released(self) -> tuple[str, ...]:
        """Names of the sums that are released (the non-redundant ones), in release order."""
        absent = {"ww"} if self.ww is None else set()
        absent |= {"wyy"} if self.wyy is None else set()
        return tuple(name for name in SUM_NAMES if name not in absent)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(*(np.shape(self.value(name)) for name in self.released))

    @property
    def effective_n(self) -> float | np.ndarray:
        r"""Kish's effective sample size :math:`(\sum w)^2/\sum w^2` (§2.3.1; Kish 1965)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return as_float_if_scalar(self.w**2 / self.value("ww"))

    def value(self, name: str) -> np.ndarray:
        """The sum called ``name``; Σw² is Σw without weights and Σwy² is Σwy for binary y."""
        if name == "ww" and self.ww is None:
            return self.w
        if name == "wyy" and self.wyy is None:
            return self.wy
        return getattr(self, name)

    def stack(self) -> np.ndarray:
        """The released sums as one array, shape ``(*shape, len(released))``."""
        shape = self.shape
        return np.stack([np.broadcast_to(self.value(n), shape) for n in self.released], axis=-1)

    @classmethod
    def from_stack(cls, names: Sequence[str], stacked: np.ndarray) -> RatioSums:
        """Inverse of :meth:`stack`: the sums named ``names`` from the last axis of ``stacked``."""
        return cls(**{name: stacked[..., i] for i, name in enumerate(names)})


def _finite_array(name: str, value: object) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a number or numeric array, got {shown(value)}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` must be finite, got {shown(value)}")
    return arr


def as_float_if_scalar(x: np.ndarray) -> float | np.ndarray:
    """A 0-d result as a Python float, anything else unchanged."""
    return float(x) if np.ndim(x) == 0 else x


def _column(name: str, values: object, length: int | None = None) -> np.ndarray:
    """One data column as a finite 1-D float array; never echoes private values in errors."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"`{name}` must be a numeric array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional, got shape {arr.shape}")
    if length is not None and arr.size != length:
        raise ValueError(f"`{name}` must have the same length as `s` ({length}), got {arr.size}")
    arr = arr.astype(float)
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise ValueError(
            f"`{name}` must be finite, got {bad} missing or infinite values; drop or impute them"
        )
    return arr


def ratio_sums(
    s: np.ndarray,
    y: np.ndarray,
    w: np.ndarray | None = None,
    *,
    bounds: RatioBounds | tuple[float, ...],
    binary_y: bool = False,
) -> RatioSums:
    r"""Clipped sums of raw rows: the only pass over the data (§2.3.1).

    Values are clipped to the public ``bounds``: s to [0, u_s], y to [0, u_y], w to [0, u_w]. With
    ``binary_y=True`` (a public fact about the column, not read from the data) y must be 0 or 1 and
    Σwy² = Σwy is not released; with ``w=None`` every weight is 1 and Σw² = Σw = n is not released.
    """
    b = as_ratio_bounds(bounds)
    s_arr = _column("s", s)
    y_arr = _column("y", y, s_arr.size)
    if not isinstance(binary_y, bool):
        raise TypeError(f"`binary_y` must be True or False, got {binary_y!r}")
    if binary_y and not np.all((y_arr == 0) | (y_arr == 1)):
        raise ValueError("`y` must contain only 0 and 1 when `binary_y=True`; pass binary_y=False")
    if binary_y and b.y < 1:
        raise ValueError(f"`bounds.y` must be >= 1 for binary y (it would clip y = 1), got {b.y!r}")
    if w is None and b.w != 1:
        raise ValueError(f"`bounds.w` must be 1 for unweighted data (`w` is None), got {b.w!r}")
    s_arr, y_arr = np.clip(s_arr, 0.0, b.s), np.clip(y_arr, 0.0, b.y)
    w_arr = np.ones_like(s_arr) if w is None else np.clip(_column("w", w, s_arr.size), 0.0, b.w)
    ws, wy = w_arr * s_arr, w_arr * y_arr
    return RatioSums(
        w=w_arr.sum(),
        ws=ws.sum(),
        wy=wy.sum(),
        wss=ws @ s_arr,
        wys=wy @ s_arr,
        ww=None if w is None else w_arr @ w_arr,
        wyy=None if binary_y else wy @ y_arr,
    )


def check_exact_sums(sums: RatioSums, bounds: RatioBounds) -> None:
    """Refuse exact sums that rows clipped to ``bounds`` cannot produce.

    The sensitivities assume clipped rows; sums outside these limits mean the rows were not clipped
    (or the sums are already noisy), and noise calibrated to the bounds would not protect them.
    """
    if not sums.weighted and bounds.w != 1:
        raise ValueError(f"`bounds.w` must be 1 for unweighted sums (no Σw²), got {bounds.w!r}")
    v = sums.value
    limits = {
        "ws": bounds.s * v("w"),
        "wy": bounds.y * v("w"),
        "ww": bounds.w * v("w"),
        "wss": bounds.s * v("ws"),
        "wyy": bounds.y * v("wy"),
        "wys": np.minimum(bounds.y * v("ws"), bounds.s * v("wy")),
    }
    slack = 1e-9 * (1.0 + np.abs(v("w")) * bounds.w * max(bounds.s, bounds.y, 1.0) ** 2)
    for name in sums.released:
        value = v(name)
        if np.any(value < 0) or (name in limits and np.any(value > limits[name] + slack)):
            raise ValueError(
                f"`sums.{name}` is not a sum of rows clipped to {bounds}: clip s, y and w to the "
                "bounds before summing (see ratio_sums), and pass exact, not noisy, sums"
            )
