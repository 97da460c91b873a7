"""Committing a plan: an idempotency key, one charge to the ledger, a record to keep."""

from __future__ import annotations

import hashlib
import json
import platform
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata as importlib_metadata

import numpy as np
import pandas as pd

from dpcore.foundations.accounting import ZCDP, ApproxDP, Budget, PureDP, budget_from_components
from dpcore.foundations.ledger import LOCAL_USER, Ledger, LedgerDataset, LedgerRecord
from dpcore.foundations.mechanisms import NoiseKind, noise_source
from dpcore.foundations.validation import as_rng, instance_of
from dpcore.release.plan import Progress, ReleasePlan

__all__ = [
    "ReleaseRecord",
    "UnidentifiedDataError",
    "budget_in_units",
    "loss_statement",
    "plan_key",
    "release",
]


# δ values at which a budget's (ε, δ)-DP equivalent is written into the metadata.
EQUIVALENT_DELTAS = (1e-5, 1e-6, 1e-8)


def plan_key(plan: ReleasePlan, noise: NoiseKind = "secure") -> str:
    """Idempotency key: the SHA-256 of the plan's parameters and the noise kind (so a numpy dry
    run never stands in for the OpenDP release of the same plan). The data enters by its
    identity alone, not by the name or row count an entry point gave it: the same plan on the
    same data is one release whether the app, the command line or a script commits it."""
    parameters = plan.parameters()
    identity = {**parameters, "dataset": {"identity": plan.header.dataset.identity}}
    text = json.dumps({**identity, "noise": noise}, sort_keys=True, default=list)
    return "release-" + hashlib.sha256(text.encode()).hexdigest()[:32]


class UnidentifiedDataError(ValueError):
    """A release on data that has no identity yet (a Spark view no curator has declared);
    nothing was drawn or spent."""


def loss_statement(figure: dict) -> dict:
    """What a release states about its people's loss in all (the ledger's ``cumulative``
    figure): the budget in every unit, the number of releases and the ledgers, and a sentence.
    Public: it is made of budgets, never of the data."""
    components = {k: figure[k] for k in ("epsilon", "delta", "rho") if k in figure}
    budget = budget_from_components(figure["kind"], components)
    units = budget_in_units(budget)
    as_zcdp = ""
    if "as_zcdp" in figure:  # Σ ε²/2 over the releases: tighter than (Σε)²/2
        rho = ZCDP(figure["as_zcdp"])
        units["rho"] = rho.rho
        units["approx_dp"] += [
            {"epsilon": rho.to_approx_dp(d).epsilon, "delta": d} for d in EQUIVALENT_DELTAS
        ]
        as_zcdp = f" (or {rho}, counting each release's ρ = ε²/2)"
    releases, ledgers = figure["releases"], figure["ledgers"]
    names = ", ".join(f"“{name}”" for name in ledgers)
    statement = (
        f"{budget}{as_zcdp} lost in all by the people in this data: {releases} "
        f"release{'' if releases == 1 else 's'}, this one included, under "
        f"{'ledger' if len(ledgers) == 1 else 'ledgers'} {names}"
    )
    return {**units, "releases": releases, "ledgers": ledgers, "statement": statement}


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
        Dataset identity, estimator, parameters, mechanism, budget in every unit, timestamp,
        software versions, the ledger charge and (``cumulative_loss``) what the people in the
        data have lost in all with this release.
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
        metadata = payload["metadata"]
        if record.cumulative is not None:  # stated by the ledger as it recorded the release
            metadata = {**metadata, "cumulative_loss": loss_statement(record.cumulative)}
        return cls(payload["outputs"], metadata, record.key or "", spent, record)

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.outputs)


def release(
    plan: ReleasePlan,
    ledger: Ledger,
    *,
    noise: NoiseKind = "secure",
    rng: np.random.Generator | int | None = None,
    allow_other_dataset: bool = False,
    progress: Progress | None = None,
    actor: str = LOCAL_USER,
) -> ReleaseRecord:
    """Run ``plan`` with ``noise`` and charge its cost to ``ledger`` exactly once.

    Parameters
    ----------
    plan
        A :class:`ReleasePlan` of an analysis (``MeanPlan``, ``RatioPlan``, ``GvdpPlan``,
        ``SynthPlan``).
    ledger
        The budget ledger to charge.
    noise
        ``"secure"`` (OpenDP; the default, for anything published) or ``"simulation"`` (numpy,
        seeded by ``rng``; a dry run that is recorded like a release and says so).
    rng
        Seed for ``noise="simulation"``: it drives the numpy noise and every random step of the
        plan's post-processing (bootstrap partitions, synthetic rows), so the same seed gives the
        same release. The secure source cannot be seeded; its post-processing draws fresh
        randomness.
    allow_other_dataset
        Confirms that the plan's data is about the same people as the data ``ledger`` covers
        (its first release's), so the releases share its budget. Without it, a release on
        other data is refused: one ledger is the budget of one dataset's people.
    progress
        ``progress(done, total)`` is called as a slow plan fits its models (MST and AIM
        synthesis, one model per group), for a progress bar; a fast plan never calls it.
    actor
        Who commits (the signed-in user; ``"local user"`` when nobody signs in): the ledger
        record names them, beside the release; the release's outputs and metadata, which
        exports publish, do not.

    Returns
    -------
    ReleaseRecord
        ``spent=False`` when the plan was already released on this data (in this ledger or
        another of its file).

    Raises
    ------
    BudgetExceededError
        If the ledger cannot afford the plan; nothing is drawn or recorded.
    OtherDatasetError, ReleasedElsewhereError
        If the plan's data is not data the ledger covers and ``allow_other_dataset`` is false,
        or data another ledger released on; the message names the ledgers and the ways on.
        Nothing is drawn or recorded.
    UnidentifiedDataError
        If the plan's data has no identity (a Spark table without a snapshot, undeclared).
    """
    instance_of("ledger", ledger, Ledger)
    if not isinstance(actor, str) or not actor.strip():
        raise ValueError(f"`actor` must be a non-empty str, got {actor!r}")
    if noise not in NOISE_DESCRIPTIONS:
        raise ValueError(f"`noise` must be 'secure' or 'simulation', got {noise!r}")
    if not plan.header.dataset.identity:
        raise UnidentifiedDataError(
            f"“{plan.header.dataset.name}” has no identity, so the ledger could not tell a "
            "release on it from one on other data. Nothing was spent. Its catalog keeps no "
            "snapshot of it: declare what the data is (e.g. “survey 2024, extract of 1 March”) "
            "where you chose it (the Data page, or --dataset-identity on the command line)."
        )
    key = plan_key(plan, noise)
    if (existing := ledger.get(key)) is not None:
        return ReleaseRecord.from_ledger(existing)
    data = plan.header.dataset
    dataset = LedgerDataset(data.identity, data.name, aliases=data.aliases)
    ledger.check_dataset(dataset, allow_other_dataset=allow_other_dataset)
    ledger.check_affordable(plan.cost)
    generator = as_rng(rng)
    # One stream for the numpy noise and the post-processing; a seed for OpenDP is refused.
    source = noise_source(noise, rng=generator if noise == "simulation" else rng)
    outputs = [row.to_dict() for row in plan.run(source, generator, progress)]
    run_id = uuid.uuid4().hex
    metadata = {
        "title": plan.header.label,
        "released_at": datetime.now(UTC).isoformat(),
        "run_id": run_id,
        "key": key,
        "plan": plan.parameters(),
        "noise": NOISE_DESCRIPTIONS[noise],
        "noise_kind": noise,
        "budget": budget_in_units(plan.cost),
        "ledger": {
            "name": ledger.name,
            "total": str(ledger.granted()),
            "total_code": repr(ledger.total),
        },
        "software": _versions(),
        "script": plan.script_body(),
        "intervals": plan.interval_description,
        "declared_public": plan.declared_public(),
        **({"method": plan.method_sentence()} if hasattr(plan, "method_sentence") else {}),
    }
    note = getattr(plan, "coverage_note", None)
    if note is not None:  # where the intervals cover less than their level (issue 42)
        metadata["coverage"] = note.to_dict()
    payload = {"outputs": outputs, "metadata": metadata}
    record = ledger.spend(
        plan.header.label, plan.cost, payload, key=key, dataset=dataset,
        allow_other_dataset=allow_other_dataset, actor=actor,
    )  # fmt: skip
    # A concurrent commit of the same plan may have won the race; its record is the release.
    return ReleaseRecord.from_ledger(record, spent=record.payload["metadata"]["run_id"] == run_id)
