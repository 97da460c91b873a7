r"""Bounds found privately: a column's low and high quantiles chosen by a private selection over
a public grid of candidates, paid from the release's own budget.

Every analysis clips its values to a range before it adds noise; a range guessed too wide drowns
the estimates in noise, one too narrow biases them. Instead of typing the range, a user types a
*search range* they are sure of (e.g. 0 to 1,000,000 for an income) and the release spends a
share of its budget finding, privately, a range that keeps all but a few of the values.

The mechanism (Smith 2011, §3; the quantile of OpenDP's ``make_private_quantile``):

1. **A public grid** of candidate bounds (:func:`candidate_grid`): log-spaced on both sides of
   zero within the search range, 100 candidates per decade over 6 decades below its largest
   magnitude, plus 0 and the range's ends. It depends on the search range only, never on the
   data.
2. **Counts per candidate**: :math:`b_j = \#\{x < c_j\}` in each group, from the sorted values in
   memory or from an engine's one pass counting rows per bucket of the grid (a histogram,
   :class:`GridCounts`); nothing else of the rows is read.
3. **Scores** (Smith 2011): :math:`s_j = |b_j - \tau|`, the distance in ranks between candidate
   :math:`c_j` and the target rank :math:`\tau` (:math:`\tau = r` for the low bound,
   :math:`n - r` for the high one; or :math:`\tau = \alpha n` for a quantile α). This is OpenDP's
   score :math:`|(1-\alpha)\#\{x<c\} - \alpha\#\{x>c\}|` with every value equal to a candidate
   counted above it, which is what lets an engine compute it from bucket counts.
4. **A preference for narrow ranges** (a base measure, McSherry & Talwar 2007, §2): each step
   of the grid outwards (up for the high bound, down for the low one) lowers a candidate's
   weight by the factor :math:`e^{-\lambda}`, added to its score as :math:`\lambda s j` (s the
   noise scale, j the steps). Without it every candidate beyond the data (all with the same
   score) keeps its full weight, and on a grid of hundreds the selection lands out there often;
   with it those candidates weigh as :math:`N = 1/(1-e^{-\lambda})` of them at most. The
   preference must never outweigh the data: over the whole grid it adds
   :math:`\lambda(|C|-1)` to a log-weight, which stays within an eighth of the scores' own range
   :math:`n\varepsilon_q/2` with :math:`\lambda = \min(0.35, n\varepsilon_q/(8|C|))`
   (:meth:`PrivateBounds.penalty`). It reads n, so it applies with public group sizes only (λ = 0
   with private ones, and N = |C|); it depends on no value of the data, so the scores'
   sensitivity is unchanged.
5. **Selection** by report-noisy-min (:meth:`~dpcore.foundations.mechanisms.NoiseSource.report_noisy_min`):
   OpenDP's ``make_noisy_max`` on a release (the measurement ``make_private_quantile`` ends
   with), its numpy twin in simulations. Pure ε-DP draws exponential noise (permute-and-flip,
   McKenna & Sheldon 2020), ρ-zCDP Gumbel noise (the exponential mechanism).

Sensitivity Δ of the scores. With group sizes public (neighbours replace one person's value, the
size n fixed), one value moves :math:`b_j` by at most 1: Δ = 1. With private sizes (neighbours
add or remove a person), :math:`|b_j - \alpha n|` moves by at most :math:`\max(\alpha, 1-\alpha)`.

Target rank (``tail=None``, group sizes public). The exponential mechanism's utility theorem
(McSherry & Talwar 2007, Thm. 8 with a base measure; Dwork & Roth 2014, Thm. 3.11 without;
permute-and-flip does at least as well) bounds the chance of an outcome whose score is t above
the best by its prior weight times :math:`e^{-\varepsilon t/2\Delta}`. Candidates beyond every value
all score exactly r, the target rank, and weigh at most :math:`N = 1/(1-e^{-\lambda})` times the
first of them. Aiming at :math:`r = \lceil\frac{2\Delta}{\varepsilon_q}(\ln N + \ln\frac1\beta)\rceil`
from each end then keeps the chosen bound inside the data with probability about
:math:`1 - \beta` (exactly when a candidate sits at the target rank; the grid's steps leave the
best a few ranks off) while it clips about r values: as narrow as the budget can find reliably
(Amin et al. 2019 show that clipping about :math:`1/\varepsilon` values balances bias and noise;
the selection cannot resolve ranks that fine, so r is its floor). In a group too small for r
(:data:`MAX_TAIL`) the target is a share of it, and a bound errs outwards instead.

Composition. The low and the high bound each take half of the bounds' budget (sequential
composition). Bounds found on the whole population touch everyone once; bounds found in each
group touch each person once too (parallel composition over disjoint groups): either way the
bounds cost their share, and the estimates then run at the rest.

Pure numpy; never imports streamlit or plotly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpcore.foundations.accounting import ZCDP, ApproxDP, Budget, PureDP, scale
from dpcore.foundations.choices import Choices
from dpcore.foundations.mechanisms import NoiseSource, selection_scale
from dpcore.foundations.validation import finite_number, open_unit_interval, read_only, shown

__all__ = [
    "BOUNDS_FRACTION",
    "BOUNDS_SCOPES",
    "FAILURE_PROBABILITY",
    "UNKNOWN_RANGE",
    "UNKNOWN_RANGE_DECADES",
    "FoundBounds",
    "GridCounts",
    "PrivateBounds",
    "candidate_grid",
    "private_quantile",
]

BoundsScope = Literal["pooled", "per_group"]
BOUNDS_SCOPES = Choices(
    BoundsScope,
    {
        "pooled": "one range for everyone, found on the whole population",
        "per_group": "each group's own range, found on its own values",
    },
)
BOUNDS_FRACTION = 0.2
"""The share of a release's budget that finds its bounds, unless the user or the planner chooses
another."""
FAILURE_PROBABILITY = 0.01
"""β of the automatic target rank: the chance that a bound lands beyond the data."""
OUTWARD_PENALTY = 0.35
"""The largest λ: each grid step outwards multiplies a candidate's weight by e^(−λ) ≈ 0.7
(module doc); smaller for a group of few values (:meth:`PrivateBounds.penalty`)."""
MAX_TAIL = 0.05
"""The automatic target never leaves more than this share of a group's values beyond a bound:
in a group too small for the target rank the selection errs outwards (a wider range, more
noise, as a typed wide range would give) rather than clip a quarter of the values."""
GRID_PER_DECADE = 100
GRID_DECADES = 6
"""Decades of the grid below the search range's largest magnitude, when the user typed the
range (values smaller than a millionth of it are rounded to 0 or to the smallest candidate)."""
UNKNOWN_RANGE = (-1e9, 1e9)
UNKNOWN_RANGE_DECADES = 15
"""The search range of a command line given none (``--bounds auto`` alone), and its grid's
decades (down to 10⁻⁶): a range every column of a survey fits, at the price of more candidates
(the target rank grows by a fifth) and a wild bound, when one lands beyond the data, up to 10⁹."""


def candidate_grid(low: float, high: float, decades: int = GRID_DECADES) -> np.ndarray:
    r"""The public candidates for a bound in the search range [low, high] (sorted, unique).

    Magnitudes :math:`m_j = M\cdot 10^{-j/100}`, j = 0 … 100·``decades``, with
    M = max(|low|, |high|): 100 per decade (each candidate 2.3% from the next), taken with both
    signs, plus 0 and the two ends, all within [low, high]. A function of the search range
    only: no value of the data enters.
    """
    low, high = finite_number("low", low), finite_number("high", high)
    if not low < high:
        raise ValueError(
            f"the search range must satisfy low < high, got [{shown(low)}, {shown(high)}]"
        )
    top = max(abs(low), abs(high))
    magnitudes = top * 10.0 ** (-np.arange(decades * GRID_PER_DECADE + 1) / GRID_PER_DECADE)
    grid = np.unique(np.concatenate([magnitudes, -magnitudes, [0.0, low, high]]))
    return read_only(grid[(grid >= low) & (grid <= high)])


@dataclass(frozen=True, eq=False)
class GridCounts:
    """How many values of each group lie below each candidate: ``below[g, j]`` =
    #{x in group g : x < candidates[j]} (shape (k, C)), and each group's size (k,)."""

    candidates: np.ndarray
    below: np.ndarray
    sizes: np.ndarray

    def __post_init__(self) -> None:
        candidates = np.asarray(self.candidates, dtype=float)
        below = np.atleast_2d(np.asarray(self.below, dtype=np.int64))
        sizes = np.asarray(self.sizes, dtype=np.int64).reshape(-1)
        if below.shape != (sizes.size, candidates.size):
            raise ValueError(
                f"`below` must have shape (groups, candidates) = ({sizes.size}, "
                f"{candidates.size}), got {below.shape}"
            )
        if np.any(np.diff(below, axis=1) < 0) or np.any(below > sizes[:, None]):
            raise ValueError("`below` must be non-decreasing along the grid and at most the size")
        object.__setattr__(self, "candidates", read_only(candidates))
        object.__setattr__(self, "below", read_only(below))
        object.__setattr__(self, "sizes", read_only(sizes))

    @classmethod
    def from_sorted(
        cls, sorted_values: np.ndarray, offsets: np.ndarray, candidates: np.ndarray
    ) -> GridCounts:
        """From each group's sorted values (group g is ``sorted_values[offsets[g]:offsets[g+1]]``)."""
        offsets = np.asarray(offsets, dtype=np.int64)
        below = np.stack([
            np.searchsorted(sorted_values[a:b], candidates, side="left")
            for a, b in zip(offsets[:-1], offsets[1:], strict=True)
        ])  # fmt: skip
        return cls(candidates, below, np.diff(offsets))

    @classmethod
    def from_buckets(cls, buckets: np.ndarray, candidates: np.ndarray) -> GridCounts:
        """From counts per group and bucket of the grid, shape (k, C + 1): bucket 0 holds the
        values below the first candidate, bucket j the values in [c_{j-1}, c_j) and the last
        those at or above the last candidate (an engine's buckets at these edges)."""
        buckets = np.atleast_2d(np.asarray(buckets, dtype=np.int64))
        below = np.cumsum(buckets, axis=1)[:, :-1]
        return cls(candidates, below, buckets.sum(axis=1))

    @property
    def k(self) -> int:
        return int(self.sizes.size)

    def pooled(self) -> GridCounts:
        """Every group's values as one group."""
        return GridCounts(self.candidates, self.below.sum(axis=0, keepdims=True),
                          self.sizes.sum(keepdims=True))  # fmt: skip


@dataclass(frozen=True, eq=False)
class FoundBounds:
    """The bounds a release found: ``low`` and ``high`` of shape (k,) per group or (1,) pooled,
    with a leading replicate axis in simulations. DP outputs, published with the release."""

    low: np.ndarray
    high: np.ndarray
    scope: BoundsScope

    def pair(self, g: int = 0) -> tuple[float, float]:
        """The bounds of group ``g`` (pooled: the only pair) of a single release."""
        column = 0 if self.low.shape[-1] == 1 else g
        return float(self.low[..., column]), float(self.high[..., column])

    def envelope(self) -> tuple[np.ndarray, np.ndarray]:
        """One range holding every group's (shape (..., 1)): the population estimate's, when
        each group found its own (post-processing)."""
        return self.low.min(axis=-1, keepdims=True), self.high.max(axis=-1, keepdims=True)


@dataclass(frozen=True)
class PrivateBounds:
    r"""How a release finds its clipping bounds privately (module doc).

    Parameters
    ----------
    search
        The public search range (low, high): the grid spans it, and no bound can leave it.
    fraction
        The share of the release's budget spent on the bounds (half on each); the estimates
        run at the rest.
    scope
        ``"pooled"``: one range found on every group's values together; ``"per_group"``: each
        group's own range (parallel composition: no extra cost).
    tail
        The share of the values to leave below the low bound and above the high one (quantiles
        α = tail and 1 − tail); None: the automatic target rank (needs public group sizes).
    sizes_public
        Whether the group sizes are public (neighbours replace a value: Δ = 1) or private
        (neighbours add or remove one: Δ = max(α, 1 − α)).
    decades
        How far below the search range's largest magnitude the grid goes
        (:func:`candidate_grid`).
    """

    search: tuple[float, float]
    fraction: float = BOUNDS_FRACTION
    scope: BoundsScope = "pooled"
    tail: float | None = None
    sizes_public: bool = True
    decades: int = GRID_DECADES

    def __post_init__(self) -> None:
        low, high = (finite_number(f"search[{i}]", v) for i, v in enumerate(self.search))
        if not low < high:
            raise ValueError(
                f"`search` must be a range low < high, got [{low:g}, {high:g}]; type a public "
                "range that surely holds every value"
            )
        object.__setattr__(self, "search", (low, high))
        open_unit_interval("fraction", self.fraction)
        if not (isinstance(self.decades, int) and 1 <= self.decades <= 20):
            raise ValueError(f"`decades` must be a whole number from 1 to 20, got {self.decades!r}")
        BOUNDS_SCOPES.check("scope", self.scope)
        if self.tail is not None:
            tail = finite_number("tail", self.tail)
            if not 0 < tail < 0.5:
                raise ValueError(f"`tail` must be a share strictly between 0 and 0.5, got {tail!r}")
            object.__setattr__(self, "tail", tail)
        elif not self.sizes_public:
            raise ValueError(
                "the automatic target rank reads the group sizes, which are private here; "
                "choose the share of values to leave beyond each bound (e.g. 1%)"
            )

    @property
    def grid(self) -> np.ndarray:
        """The public candidates (:func:`candidate_grid`)."""
        return candidate_grid(*self.search, self.decades)

    # ---- budget ---------------------------------------------------------------------------

    def cost(self, budget: Budget) -> Budget:
        """What the bounds take of a release at ``budget``: its ``fraction``."""
        return scale(budget, self.fraction)

    def rest(self, budget: Budget) -> Budget:
        """What the estimates run at: the rest of ``budget``."""
        return scale(budget, 1 - self.fraction)

    def _each(self, budget: Budget) -> tuple[float, Literal["pure", "zcdp"]]:
        """Each bound's budget value and accounting: half of :meth:`cost`. An (ε, δ) budget
        pays for the bounds with its ε alone (pure DP; its δ is left unused)."""
        half = scale(self.cost(budget), 0.5)
        if isinstance(half, ZCDP):
            return half.rho, "zcdp"
        if isinstance(half, PureDP | ApproxDP):
            return half.epsilon, "pure"
        raise TypeError(f"`budget` must be a PureDP, ApproxDP or ZCDP budget, got {budget!r}")

    def epsilon_each(self, budget: Budget) -> float:
        """Each bound's ε, or the ε of the exponential mechanism a ρ buys (√(8ρ)): what the
        target rank is computed with."""
        value, measure = self._each(budget)
        return value if measure == "pure" else math.sqrt(8 * value)

    # ---- target ---------------------------------------------------------------------------

    def penalty(self, sizes: np.ndarray, budget: Budget) -> np.ndarray:
        r"""λ per group (or pool) of ``sizes`` values: :math:`\min(0.35, n\varepsilon_q/(8|C|))`
        with public sizes, 0 with private ones (module doc)."""
        sizes = np.asarray(sizes, dtype=float)
        if not self.sizes_public:
            return np.zeros_like(sizes)
        steps = len(self.grid) - 1
        return np.minimum(OUTWARD_PENALTY, sizes * self.epsilon_each(budget) / (8 * steps))

    def target_rank(
        self, budget: Budget, size: float | np.ndarray | None = None
    ) -> int | np.ndarray:
        r"""The automatic target rank r from each end: :math:`\lceil\frac{2}{\varepsilon_q}
        (\ln N + \ln\frac1\beta)\rceil`, :math:`N = \min(|C|, 1/(1 - e^{-\lambda}))` (module
        doc), with Δ = 1; for groups of ``size`` values (None: large ones, λ = 0.35)."""
        penalty = OUTWARD_PENALTY if size is None else self.penalty(size, budget)
        with np.errstate(divide="ignore"):
            beyond = np.minimum(np.log(len(self.grid)), -np.log1p(-np.exp(-penalty)))  # ln N
        rank = np.ceil(2 / self.epsilon_each(budget) * (beyond + math.log(1 / FAILURE_PROBABILITY)))
        return int(rank) if np.ndim(rank) == 0 else rank

    def targets(self, sizes: np.ndarray, budget: Budget) -> tuple[np.ndarray, np.ndarray]:
        """Per group (shape (k,)): the target count of values below the low bound and below the
        high one. Automatic: r and n − r (at most :data:`MAX_TAIL` of n each); else tail·n and
        (1 − tail)·n."""
        sizes = np.asarray(sizes, dtype=float)
        if self.tail is None:
            rank = np.minimum(self.target_rank(budget, sizes), np.floor(MAX_TAIL * sizes))
            return rank, sizes - rank
        return self.tail * sizes, (1 - self.tail) * sizes

    def sensitivity(self) -> float:
        """Δ of the scores (module doc)."""
        if self.sizes_public:
            return 1.0
        return max(self.tail, 1 - self.tail)

    def reliable_below(self, budget: Budget) -> int:
        """The fewest values a group (or the population, pooled) needs for the automatic target
        rank r to be at most :data:`MAX_TAIL` of them: r / MAX_TAIL (0 with a fixed tail)."""
        if self.tail is not None:
            return 0
        size = self.target_rank(budget) / MAX_TAIL
        for _ in range(8):  # r(n) falls as n grows: n = r(n) / MAX_TAIL from below, a few steps
            size = float(self.target_rank(budget, size)) / MAX_TAIL
        return math.ceil(size)

    # ---- the mechanism ----------------------------------------------------------------------

    def draw(
        self,
        counts: GridCounts,
        budget: Budget,
        *,
        noise: NoiseSource,
        replicates: int | None = None,
        pooled: bool = False,
    ) -> FoundBounds:
        """The bounds of a release at ``budget`` (the release's whole budget: they take
        :meth:`cost` of it) from ``counts``: pooled over the groups (``scope="pooled"``, or
        ``pooled=True``), else per group. Low then high, each one selection at half the cost.

        Per group with the automatic target, the groups too small to find their own range
        reliably (fewer than r / 5% values, :meth:`reliable_below`; their sizes are public) find one
        together, on all their values: the groups that find their own and the pool of the small
        ones are disjoint, so the cost stays the same (parallel composition).

        Post-processing: a low bound drawn above the high one swaps with it; equal ones step
        the high bound to the next candidate up (or the low one down at the top), so that every
        range has room.
        """
        if pooled or self.scope == "pooled":
            return self._select(counts.pooled(), budget, replicates, "pooled", noise)
        small = counts.sizes < self.reliable_below(budget)
        if not small.any() or small.all():
            found = self._select(counts if not small.all() else counts.pooled(), budget,
                                 replicates, "per_group", noise)  # fmt: skip
            if small.all():  # one range for every group, found on all of them
                shape = (*found.low.shape[:-1], counts.k)
                found = FoundBounds(np.broadcast_to(found.low, shape),
                                    np.broadcast_to(found.high, shape), "per_group")  # fmt: skip
            return found
        own = np.flatnonzero(~small)
        rows = GridCounts(
            counts.candidates,
            np.vstack([counts.below[own], counts.below[small].sum(axis=0)]),
            np.append(counts.sizes[own], counts.sizes[small].sum()),
        )
        drawn = self._select(rows, budget, replicates, "per_group", noise)
        where = np.full(counts.k, own.size)  # the small groups read the pool's row
        where[own] = np.arange(own.size)
        return FoundBounds(drawn.low[..., where], drawn.high[..., where], "per_group")

    def _select(
        self, counts: GridCounts, budget: Budget, replicates: int | None, scope: BoundsScope,
        noise: NoiseSource,
    ) -> FoundBounds:  # fmt: skip
        """Low then high bound for each row of ``counts``."""
        value, measure = self._each(budget)
        spread = selection_scale(self.sensitivity(), value, measure)
        low_target, high_target = self.targets(counts.sizes, budget)
        steps = np.arange(counts.candidates.size)
        # per group and step, in score units: e^(−λ) in weight
        outward = self.penalty(counts.sizes, budget)[:, None] * spread
        picks = [
            noise.report_noisy_min(
                np.abs(counts.below - target[:, None]) + outward * away,
                spread,
                measure,
                size=replicates,
            )
            for target, away in ((low_target, steps[::-1]), (high_target, steps))
        ]
        first, second = np.minimum(*picks), np.maximum(*picks)
        last = counts.candidates.size - 1
        tied = first == second
        second = np.where(tied & (second < last), second + 1, second)
        first = np.where(tied & (first == last), first - 1, first)
        return FoundBounds(counts.candidates[first], counts.candidates[second], scope)

    # ---- words -------------------------------------------------------------------------------

    def describe(self, budget: Budget) -> str:
        """One sentence: how the bounds are found and what they cost at ``budget``."""
        low, high = self.search
        where = "on the whole population" if self.scope == "pooled" else "in each group"
        if self.scope == "per_group" and self.tail is None:
            where += (
                f" (groups of fewer than {self.reliable_below(budget):,} values find one range "
                "together)"
            )
        if self.tail is None:
            target = (
                f"each bound aims to leave about {self.target_rank(budget):,} values beyond it "
                "(the fewest the budget can find reliably)"
            )
        else:
            target = f"each bound aims to leave {self.tail:.1%} of the values beyond it"
        return (
            f"found privately {where}: the {self.fraction:.0%} of the budget ({self.cost(budget)}) "
            f"selects the low and the high bound among {len(self.grid):,} public candidates, "
            f"log-spaced within [{low:g}, {high:g}] (exponential mechanism on rank scores, "
            f"Smith 2011); {target}"
        )

    def to_dict(self, budget: Budget) -> dict:
        """JSON-ready facts for a release's metadata."""
        return {
            "source": "private",
            "method": "quantiles by private selection over a public grid (Smith 2011; OpenDP "
            f"make_noisy_max), each grid step outwards weighing e^-{OUTWARD_PENALTY:g} less",
            "search_range": list(self.search),
            "candidates": len(self.grid),
            "grid": f"0, the ends and ±max(|low|, |high|)·10^(-j/{GRID_PER_DECADE}), "
            f"j = 0…{self.decades * GRID_PER_DECADE}, within the search range",
            "fraction": self.fraction,
            "scope": self.scope,
            "target": "automatic rank" if self.tail is None else {"tail": self.tail},
            **({"target_rank": self.target_rank(budget)} if self.tail is None else {}),
            "cost": {"kind": budget.kind, **self.cost(budget).components()},
        }


def private_quantile(
    counts: GridCounts,
    alpha: float,
    budget: Budget,
    *,
    noise: NoiseSource,
    sizes_public: bool = False,
    replicates: int | None = None,
) -> np.ndarray:
    r"""The α-quantile of each row of ``counts``, chosen privately among its candidates at
    ``budget`` (all of it): Smith's scores :math:`|\#\{x < c\} - \alpha n|` (module doc) with
    sensitivity 1 when the size n is public (neighbours replace a value), max(α, 1 − α) when it
    is not (neighbours add or remove one), then report-noisy-min. Shape (k,), or
    (replicates, k)."""
    alpha = finite_number("alpha", alpha)
    if not 0 < alpha < 1:
        raise ValueError(f"`alpha` must be strictly between 0 and 1, got {alpha!r}")
    if isinstance(budget, ZCDP):
        value, measure = budget.rho, "zcdp"
    elif isinstance(budget, PureDP | ApproxDP):
        value, measure = budget.epsilon, "pure"
    else:
        raise TypeError(f"`budget` must be a PureDP, ApproxDP or ZCDP budget, got {budget!r}")
    sensitivity = 1.0 if sizes_public else max(alpha, 1 - alpha)
    scores = np.abs(counts.below - alpha * counts.sizes[:, None])
    spread = selection_scale(sensitivity, value, measure)
    return counts.candidates[noise.report_noisy_min(scores, spread, measure, size=replicates)]
