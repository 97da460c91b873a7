"""Committing a planned release: vetted noise, one charge to the ledger, a record to keep.

A *plan* says what will be released (statistic, strata, estimator, parameters, budget) without
touching the noise. :func:`release` then, in order:

1. derives an idempotency key from the plan's content (:func:`plan_key`): the same plan against
   the same ledger is released once, so a second click, a rerun or a browser refresh returns the
   recorded release and spends nothing;
2. refuses a plan the ledger cannot afford (``BudgetExceededError``: Requested / Remaining /
   Difference) before any noise is drawn;
3. runs the estimator with the chosen noise source — OpenDP's vetted samplers for a real release;
4. records cost and DP outputs in the ledger in one transaction (:meth:`Ledger.spend`).

Only DP outputs leave this module: estimates, noise intervals computed from them and from public
parameters, and the public shares. Raw statistics of the data never enter a record.

The exports (:func:`to_csv`, :func:`to_json`, :func:`to_script`) work from a record alone, so any
past release in the ledger can be downloaded again.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import platform
import uuid
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata
from typing import Protocol

import numpy as np
import pandas as pd

from dpcore._validate import open_unit_interval
from dpcore.accounting import SYMBOLS, ZCDP, ApproxDP, Budget, PureDP, _check_budget
from dpcore.datasets import DEMO_DATASET_NAME
from dpcore.estimators.coinpress import CoinPressMean
from dpcore.estimators.mean import GaussianMean, LaplaceMean
from dpcore.estimators.stratified import STRATEGIES, Strategy, run_strategy
from dpcore.ledger import Ledger, LedgerRecord
from dpcore.mechanisms import NoiseKind, NoiseSource, noise_source
from dpcore.strata import PublicShares, Strata, StrataReport, StrataSpec

__all__ = [
    "DatasetRef",
    "MeanPlan",
    "ReleasePlan",
    "ReleaseRecord",
    "budget_in_units",
    "escape_cell",
    "fingerprint_frame",
    "plan_key",
    "release",
    "to_csv",
    "to_json",
    "to_script",
]

MeanEstimator = LaplaceMean | GaussianMean | CoinPressMean
# δ values at which a budget's (ε, δ)-DP equivalent is written into the metadata.
EQUIVALENT_DELTAS = (1e-5, 1e-6, 1e-8)
# Draws of the public noise distribution behind each noise interval (post-processing only).
INTERVAL_DRAWS = 20_000
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
STRATEGY_LABELS = {
    "stratified": "stratified: one estimate per group, recombined with public shares",
    "global_only": "whole population only",
    "global_and_groups": "whole population and every group, budget split between them",
}


def fingerprint_frame(frame: pd.DataFrame) -> str:
    """SHA-256 of a frame's column names, dtypes and cell values — identifies data, reveals none.

    The same file read the same way gives the same fingerprint, so a script can check that it is
    run on the data a release was made from.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"`frame` must be a pandas DataFrame, got {type(frame).__name__}")
    digest = hashlib.sha256()
    digest.update(json.dumps([[str(c), str(t)] for c, t in frame.dtypes.items()]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class DatasetRef:
    """What a release says about its data: a name, a fingerprint and a row count."""

    name: str
    fingerprint: str
    rows: int

    @classmethod
    def of(cls, frame: pd.DataFrame, name: str) -> DatasetRef:
        return cls(name=name, fingerprint=fingerprint_frame(frame), rows=len(frame))


@dataclass(frozen=True)
class MeanPlan:
    r"""A planned release of private means per group and for the whole population.

    Parameters
    ----------
    strata, shares
        The groups and their public recombination shares, built by ``spec`` from the data that
        ``dataset`` fingerprints. Not part of the plan's identity (the spec and fingerprint are).
    dataset, spec
        Where the strata come from; written into the metadata and the reproduction script.
    estimator
        :class:`~dpcore.estimators.LaplaceMean`, :class:`~dpcore.estimators.GaussianMean` or
        :class:`~dpcore.estimators.CoinPressMean`.
    budget
        The budget of the release; every strategy composes to exactly this cost (disjoint groups
        in parallel, AAAI 2024 eq. 4; a global and group release split it sequentially).
    strategy
        ``"stratified"`` releases each group's estimate and their share-weighted sum;
        ``"global_only"`` only the population estimate; ``"global_and_groups"`` both, with
        ``global_fraction`` of the budget on the population estimate.
    level
        Coverage of the noise intervals.
    label
        A name for the release; part of its identity, so renaming plans a new release.
    """

    strata: Strata = field(compare=False, repr=False)
    shares: PublicShares = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: StrataSpec
    estimator: MeanEstimator
    budget: Budget
    strategy: Strategy = "stratified"
    global_fraction: float = 0.5
    level: float = 0.95
    label: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.strata, Strata):
            raise TypeError(f"`strata` must be a Strata, got {type(self.strata).__name__}")
        if not isinstance(self.estimator, LaplaceMean | GaussianMean | CoinPressMean):
            raise TypeError(
                "`estimator` must be a LaplaceMean, GaussianMean or CoinPressMean, got "
                f"{type(self.estimator).__name__}"
            )
        _check_budget("budget", self.budget)
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"`strategy` must be one of {sorted(STRATEGIES)}, got {self.strategy!r}"
            )
        open_unit_interval("global_fraction", self.global_fraction)
        open_unit_interval("level", self.level)
        if not self.label.strip():
            default = f"Mean of {self.spec.value} by {' × '.join(self.spec.by)}"
            object.__setattr__(self, "label", default)

    @property
    def cost(self) -> Budget:
        return self.budget

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        return {
            "kind": "mean",
            "statistic": f"mean of {self.spec.value}",
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "estimator": {"class": type(self.estimator).__name__,
                          **_init_fields(self.estimator)},
            "budget": {"kind": self.budget.kind, **self.budget.components()},
            "strategy": self.strategy,
            # The split matters only when both a global and group estimates are released.
            "global_fraction": (
                self.global_fraction if self.strategy == "global_and_groups" else None
            ),
            "level": self.level,
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Draw the release: one row per released estimate with its noise interval."""
        result = run_strategy(
            self.strategy, self.strata, self.estimator, self.budget, self.shares,
            global_fraction=self.global_fraction, noise=noise,
        )  # fmt: skip
        if self.sizes_public:
            group_half, global_half = self._noise_quantiles(result.group_estimates)
        else:  # intervals built from the exact sizes would give those sizes away
            group_half, global_half = [None] * self.strata.k, None
        rows = []
        if self.strategy != "global_only":
            for g, label in enumerate(self.strata.labels):
                rows.append(self._row("group", label, result.group_estimates[g], group_half[g]))
                rows[-1]["public_share"] = float(self.shares.values[g])
        rows.append(self._row("population", "All", result.global_estimate, global_half))
        return rows

    def _row(self, level: str, group: str, estimate: float, half: np.ndarray | None) -> dict:
        # Basic (pivot) interval: estimate − upper error quantile, estimate − lower one
        # (Davison & Hinkley 1997, §5.2); None where no interval is released.
        estimate = float(estimate)
        return {
            "level": level,
            "group": group,
            "estimate": estimate,
            "low": None if half is None else estimate - float(half[1]),
            "high": None if half is None else estimate - float(half[0]),
        }

    @property
    def sizes_public(self) -> bool:
        """CoinPress and the clipped means with ``n_public=True`` treat group sizes as public."""
        return getattr(self.estimator, "n_public", True)

    def _noise_quantiles(self, group_estimates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        r"""Quantiles of the estimation error due to the DP noise, by parametric bootstrap.

        Reruns the same strategy on stand-in data in which every member of group g has the value
        :math:`\tilde\mu_g` (the DP estimate clipped to the public range), with the public group
        sizes, and records the error of each draw. Only DP outputs and public parameters enter,
        so this is post-processing. With public sizes, Laplace and Gaussian errors do not depend
        on the values at all and the intervals are exact up to Monte Carlo error; with private
        sizes and for CoinPress they are plug-in approximations. The intervals describe the noise
        only: they cover the clipped sample mean, not sampling error.
        """
        low, high = _public_range(self.estimator)
        centres = np.clip(np.asarray(group_estimates, dtype=float), low, high)
        stand_in = _constant_strata(self.strata.labels, self.strata.sizes, centres)
        draws = run_strategy(
            self.strategy, stand_in, self.estimator, self.budget, self.shares,
            global_fraction=self.global_fraction, replicates=INTERVAL_DRAWS,
            noise=noise_source("simulation", rng=0),
        )  # fmt: skip
        global_truth = (
            float(centres @ self.shares.values)
            if self.strategy == "stratified"
            else float(stand_in.global_mean)
        )
        tails = [(1 - self.level) / 2, (1 + self.level) / 2]
        group_q = np.quantile(draws.group_estimates - centres, tails, axis=0).T
        global_q = np.quantile(draws.global_estimate - global_truth, tails)
        return group_q, global_q

    @property
    def interval_description(self) -> str:
        """What the intervals cover, for the release's metadata."""
        if not self.sizes_public:
            return (
                "no intervals: group sizes are private in this release, and an interval computed "
                "from the exact sizes would reveal them"
            )
        return (
            f"{self.level:.0%} noise intervals by parametric bootstrap of the DP noise "
            f"({INTERVAL_DRAWS:,} draws); they cover the clipped sample mean, not sampling error"
        )

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        return [
            f"**Statistic:** mean of `{self.spec.value}`, {STRATEGY_LABELS[self.strategy]}",
            _data_line(self.dataset),
            _strata_line(self.spec, self.strata, self.shares),
            f"**Estimator:** {self.estimator.name} — `{self.estimator!r}`",
        ]

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        estimator = type(self.estimator).__name__
        arguments = ", ".join(f"{k}={v!r}" for k, v in _init_fields(self.estimator).items())
        spec_arguments = ", ".join(
            f"{f.name}={getattr(self.spec, f.name)!r}" for f in fields(self.spec)
        )
        return (
            f"from dpcore.estimators import {estimator}\n"
            "from dpcore.release import DatasetRef, MeanPlan\n"
            "from dpcore.strata import StrataSpec\n\n"
            f"spec = StrataSpec({spec_arguments})\n"
            "strata, shares = spec.build(frame)\n"
            "plan = MeanPlan(\n"
            "    strata=strata,\n"
            "    shares=shares,\n"
            f"    dataset=DatasetRef.of(frame, {self.dataset.name!r}),\n"
            "    spec=spec,\n"
            f"    estimator={estimator}({arguments}),\n"
            f"    budget={self.budget!r},\n"
            f"    strategy={self.strategy!r},\n"
            f"    global_fraction={self.global_fraction!r},\n"
            f"    level={self.level!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )


def _init_fields(obj: object) -> dict:
    """Constructor arguments of a frozen dataclass, as plain JSON-ready values."""
    return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj) if f.init}


def _plain(value: object) -> object:
    if isinstance(value, tuple | list):
        return tuple(_plain(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _public_range(estimator: MeanEstimator) -> tuple[float, float]:
    if isinstance(estimator, CoinPressMean):
        return estimator.prior
    if estimator.bounds is None:
        return -np.inf, np.inf
    return estimator.bounds


def _constant_strata(labels: tuple[str, ...], sizes: np.ndarray, centres: np.ndarray) -> Strata:
    """Groups of the given sizes in which every value equals the group's centre."""
    values = np.repeat(centres, sizes)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    return Strata(
        by=("group",), value="value", labels=labels, sizes=sizes, sums=centres * sizes,
        sumsq=centres**2 * sizes, sorted_values=values, offsets=offsets,
        prefix=np.concatenate([[0.0], np.cumsum(values)]),
        report=StrataReport(n_input_rows=int(sizes.sum()), value_column="value"),
    )  # fmt: skip


def _data_line(dataset: DatasetRef) -> str:
    return (
        f"**Data:** {dataset.name}, {dataset.rows:,} rows (SHA-256 `{dataset.fingerprint[:12]}…`)"
    )


def _strata_line(spec: StrataSpec, strata: Strata, shares: PublicShares | None) -> str:
    line = f"**Strata:** {' × '.join(spec.by)} — {strata.k} groups"
    return line if shares is None else f"{line}; shares: {shares.description.lower()}"


class ReleasePlan(Protocol):
    """What :func:`release` needs from a plan (:class:`MeanPlan` and the other analyses' plans).

    ``run`` returns one dict per released estimate with at least ``level`` ("group" or
    "population"), ``group``, ``estimate``, ``low`` and ``high``; ``parameters`` is the plan's
    JSON-ready identity and includes ``statistic``, ``dataset``, ``strata`` and ``estimator``;
    ``script_body`` is Python that rebuilds the plan from a frame named ``frame``.
    """

    label: str
    level: float

    @property
    def cost(self) -> Budget: ...

    @property
    def interval_description(self) -> str: ...

    def parameters(self) -> dict: ...

    def review_lines(self) -> list[str]: ...

    def run(self, noise: NoiseSource) -> list[dict]: ...

    def script_body(self) -> str: ...


def plan_key(plan: ReleasePlan, noise: NoiseKind = "secure") -> str:
    """Idempotency key: the SHA-256 of the plan's parameters (dataset fingerprint included) and
    the noise kind, so a numpy dry run never stands in for the OpenDP release of the same plan."""
    identity = {**plan.parameters(), "noise": noise}
    text = json.dumps(identity, sort_keys=True, default=list)
    return "release-" + hashlib.sha256(text.encode()).hexdigest()[:32]


def budget_in_units(budget: Budget) -> dict:
    r"""A budget in every unit: its own, ρ-zCDP where it converts, and (ε, δ)-DP equivalents.

    Pure ε-DP is :math:`\rho = \varepsilon^2/2` zCDP (Bun & Steinke 2016, Prop. 1.4); ρ-zCDP is
    (ε, δ)-DP for every δ > 0 (Canonne, Kamath & Steinke 2020, the tight conversion).
    """
    units: dict = {"kind": budget.kind, **budget.components()}
    if isinstance(budget, PureDP):
        units["rho"] = budget.to_zcdp().rho
        units["approx_dp"] = [{"epsilon": budget.epsilon, "delta": 0.0}]
    elif isinstance(budget, ZCDP):
        units["approx_dp"] = [
            {"epsilon": budget.to_approx_dp(d).epsilon, "delta": d} for d in EQUIVALENT_DELTAS
        ]
    elif isinstance(budget, ApproxDP):
        units["approx_dp"] = [{"epsilon": budget.epsilon, "delta": budget.delta}]
    return units


def _versions() -> dict:
    versions = {"python": platform.python_version()}
    for package in ("strata-lab", "numpy", "scipy", "pandas", "opendp"):
        try:
            versions[package] = importlib_metadata.version(package)
        except importlib_metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


NOISE_DESCRIPTIONS = {
    "secure": "OpenDP vetted samplers (make_laplace / make_gaussian) — release grade",
    "simulation": "numpy simulation noise — a dry run, not for publication",
}


@dataclass(frozen=True)
class ReleaseRecord:
    """A committed release as stored in the ledger.

    Attributes
    ----------
    outputs
        One dict per released estimate (DP outputs only).
    metadata
        Dataset fingerprint, estimator, parameters, mechanism, budget in every unit, timestamp,
        software versions and the ledger charge.
    key
        The idempotency key the release was recorded under.
    spent
        ``True`` if this call spent the budget; ``False`` if the plan had been released before
        and this is the recorded release.
    """

    outputs: list[dict]
    metadata: dict
    key: str
    spent: bool
    ledger_record: LedgerRecord = field(repr=False)

    @classmethod
    def from_ledger(cls, record: LedgerRecord, *, spent: bool = False) -> ReleaseRecord:
        """Read a release back from a ledger record (for history and downloads)."""
        payload = record.payload
        if "outputs" not in payload or "metadata" not in payload:
            raise ValueError(
                f"ledger record {record.id} ({record.label!r}) is not a Strata Lab release"
            )
        return cls(payload["outputs"], payload["metadata"], record.key or "", spent, record)

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.outputs)


def release(
    plan: ReleasePlan,
    ledger: Ledger,
    *,
    noise: NoiseKind = "secure",
    rng: np.random.Generator | int | None = None,
) -> ReleaseRecord:
    """Run ``plan`` with ``noise`` and charge its cost to ``ledger`` exactly once.

    Parameters
    ----------
    plan
        A :class:`ReleasePlan`: :class:`MeanPlan`, or the ``RatioPlan``, ``GvdpPlan`` and
        ``SynthPlan`` of :mod:`dpcore.plans`.
    ledger
        The budget ledger to charge.
    noise
        ``"secure"`` (OpenDP; the default, for anything published) or ``"simulation"`` (numpy,
        seeded by ``rng``; a dry run that is recorded like a release and says so).
    rng
        Seed for ``noise="simulation"``; the secure source cannot be seeded.

    Returns
    -------
    ReleaseRecord
        ``spent=False`` when the plan was already released against this ledger.

    Raises
    ------
    BudgetExceededError
        If the ledger cannot afford the plan; nothing is drawn or recorded.
    """
    if not isinstance(ledger, Ledger):
        raise TypeError(f"`ledger` must be a Ledger, got {type(ledger).__name__}")
    if noise not in NOISE_DESCRIPTIONS:
        raise ValueError(f"`noise` must be 'secure' or 'simulation', got {noise!r}")
    key = plan_key(plan, noise)
    if (existing := ledger.get(key)) is not None:
        return ReleaseRecord.from_ledger(existing)
    ledger.check_affordable(plan.cost)
    outputs = plan.run(noise_source(noise, rng=rng))
    run_id = uuid.uuid4().hex
    metadata = {
        "title": plan.label,
        "released_at": datetime.now(UTC).isoformat(),
        "run_id": run_id,
        "key": key,
        "plan": plan.parameters(),
        "noise": NOISE_DESCRIPTIONS[noise],
        "noise_kind": noise,
        "budget": budget_in_units(plan.cost),
        "ledger": {
            "name": ledger.name,
            "total": str(ledger.total),
            "total_code": repr(ledger.total),
        },
        "software": _versions(),
        "script": plan.script_body(),
        "intervals": plan.interval_description,
    }
    payload = {"outputs": outputs, "metadata": metadata}
    record = ledger.spend(plan.label, plan.cost, payload, key=key)
    # A concurrent commit of the same plan may have won the race; its record is the release.
    return ReleaseRecord.from_ledger(record, spent=record.payload["metadata"]["run_id"] == run_id)


# ---- exports ---------------------------------------------------------------------------------


def escape_cell(value: object) -> object:
    """Neutralise spreadsheet formulas: text starting with = + - @ tab or CR gets a leading '.

    Numbers are left as numbers (a negative number is data, not a formula); only text cells,
    which a spreadsheet could evaluate (e.g. a group called ``=HYPERLINK(...)``), are escaped.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


def _metadata_lines(metadata: dict) -> list[tuple[str, str]]:
    plan = metadata["plan"]
    budget = metadata["budget"]
    own = ", ".join(f"{SYMBOLS[k]} = {budget[k]:g}" for k in ("epsilon", "delta", "rho")
                    if k in budget)  # fmt: skip
    equivalents = "; ".join(f"(ε = {e['epsilon']:.4g}, δ = {e['delta']:g})"
                            for e in budget["approx_dp"])  # fmt: skip
    return [
        ("release", metadata["title"]),
        ("released_at", metadata["released_at"]),
        ("dataset", plan["dataset"]["name"]),
        ("dataset_sha256", plan["dataset"]["fingerprint"]),
        ("estimator", json.dumps(plan["estimator"])),
        ("strata", json.dumps(plan["strata"])),
        ("statistic", plan["statistic"]),
        ("strategy", plan.get("strategy", "")),
        ("mechanism", metadata["noise"]),
        ("budget", own),
        ("budget_equivalents", equivalents),
        ("ledger", f"{metadata['ledger']['name']} (total {metadata['ledger']['total']})"),
        ("intervals", metadata["intervals"]),
        ("software", json.dumps(metadata["software"])),
        ("key", metadata["key"]),
    ]


def to_csv(record: ReleaseRecord) -> str:
    """The release as CSV: ``#`` metadata lines, then one row per estimate, formulas escaped.

    Read it back with ``pandas.read_csv(path, comment="#")``.
    """
    buffer = io.StringIO()
    for name, value in _metadata_lines(record.metadata):
        buffer.write(f"# {name}: {str(escape_cell(value)).replace(chr(10), ' ')}\n")
    frame = record.frame.map(escape_cell).rename(columns=escape_cell)
    # Every text cell quoted: read_csv(comment="#") would cut an unquoted label such as "Apt #4"
    # at the "#" and lose the rest of its row; numbers stay unquoted, so they read as numbers.
    frame.to_csv(buffer, index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    return buffer.getvalue()


def to_json(record: ReleaseRecord) -> str:
    """The release as JSON: ``{"metadata": ..., "outputs": [...]}``."""
    metadata = {k: v for k, v in record.metadata.items() if k != "script"}
    return json.dumps({"metadata": metadata, "outputs": record.outputs}, indent=2)


def to_script(record: ReleaseRecord) -> str:
    """A Python script that redoes the release with dpcore's public API.

    Running it against the same ledger returns the recorded release (same plan, same key);
    against another ledger it spends the budget again and draws fresh noise.
    """
    plan = record.metadata["plan"]
    dataset = plan["dataset"]
    if dataset["name"] == DEMO_DATASET_NAME:
        loader = "from dpcore.datasets import load_demo\n\nframe = load_demo()\n"
    else:
        loader = (
            "from dpcore.io import read_table\n\n"
            f"PATH = {dataset['name']!r}  # the file the release was made from\n"
            "with open(PATH, 'rb') as handle:\n"
            "    frame = read_table(handle.read(), PATH)\n"
        )
    # The docstring shows the title's repr. Escape its backslashes and quotes so that the
    # docstring reads exactly that and no title can end it early (\"\"\" was a syntax error).
    title = repr(record.metadata["title"]).replace("\\", "\\\\").replace('"', '\\"')
    return (
        f'"""Reproduce the release {title} '
        f"({record.metadata['released_at']}).\n\n"
        "Running this spends privacy budget from the ledger below, unless this exact release is\n"
        'already recorded there. A numpy dry run (NOISE = "simulation") is charged like a\n'
        'release: point STRATA_LAB_LEDGER at a scratch file first.\n"""\n\n'
        f"{loader}"
        "from dpcore.accounting import ZCDP, ApproxDP, PureDP  # noqa: F401\n"
        "from dpcore.ledger import Ledger\n"
        "from dpcore.release import fingerprint_frame, release, to_csv\n\n"
        f"EXPECTED_SHA256 = {dataset['fingerprint']!r}\n"
        "if fingerprint_frame(frame) != EXPECTED_SHA256:\n"
        "    raise SystemExit('This is not the data the release was made from (fingerprint "
        "differs).')\n\n"
        f"{record.metadata['script']}\n"
        f"NOISE = {record.metadata.get('noise_kind', 'secure')!r}  # as recorded; another kind "
        "is another release\n"
        f"ledger = Ledger(None, {record.metadata['ledger']['name']!r}, "
        f"{record.metadata['ledger']['total_code']})\n"
        "result = release(plan, ledger, noise=NOISE)\n"
        "print(to_csv(result))\n"
    )
