"""The release plan of synthetic rows (follows :class:`dpcore.release.ReleasePlan`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from dpcore._validate import as_rng, positive_number
from dpcore.accounting import Budget, PureDP
from dpcore.analyses.synth.config import (
    METHOD_NAMES,
    STRATEGIES,
    PreparedRows,
    Strategy,
    SynthConfig,
    _all_edges,
    _output_columns,
    check_config,
    prepare_rows,
    run_synthesis,
)
from dpcore.analyses.synth.encoding import METHODS
from dpcore.grouping import Grouping, GroupingSpec
from dpcore.mechanisms import NoiseSource
from dpcore.release import DatasetRef
from dpcore.release.plan import _data_line
from dpcore.shares import PublicShares

__all__ = [
    "INTERVALS_NOTE",
    "SynthPlan",
]


"""Largest joint domain (cells) that ``method="histogram"`` accepts."""


"""Largest joint domain that ``method="mwem"`` keeps in memory (64 MB as float64)."""


"""Group label of a vanilla (unstratified) synthesis in :attr:`SyntheticData.group_rows`."""


"""Fewest synthesized columns besides the strata columns: the workload error uses 3-way marginals."""


"""Most synthetic rows per release: every row is stored in the ledger and the downloads."""


"""The ε values of a sweep (the current ε is added). The paper ran ε ∈ {0.01, 0.05, 0.1, 0.5, 1, 5}
(AAAI 2024 arXiv, "Synthesizers and Privacy Settings"); below 0.1 our small groups are pure noise."""


"""Group label of the error on all rows in :func:`sweep_errors`."""


INTERVALS_NOTE = (
    "none: synthetic rows carry no intervals; their error against the data is simulated on the "
    "Compare page"
)


@dataclass(frozen=True)
class SynthPlan:
    r"""A planned release of ε-DP synthetic rows, vanilla or stratified (AAAI 2024, app. C).

    Follows :class:`dpcore.release.ReleasePlan`. :meth:`run` returns the synthetic rows, one dict
    per row with the output columns (text values); they are DP outputs, so the record may be
    published and downloaded. The cost is ``PureDP(epsilon)`` for both strategies (stratified:
    parallel composition over the disjoint groups).

    Parameters
    ----------
    frame
        The confidential rows (not part of the plan's identity; ``dataset`` fingerprints them).
    grouping
        ``spec.build(frame)``: the Strata page's groups and their public shares.
    dataset, spec
        Where the data and the groups come from; written into the metadata and the script.
    config
        What to synthesize (:class:`SynthConfig`).
    epsilon
        ε of the release.
    strategy
        ``"stratified"`` or ``"vanilla"``.
    label
        A name for the release; part of its identity.
    level
        Unused (synthetic rows have no intervals); kept for the ReleasePlan protocol.
    prepared
        ``prepare_rows(frame, spec, grouping, config)`` when the caller already has it (e.g.
        cached), so it is not computed again; computed here when left out. Not part of the
        plan's identity (``frame``, ``spec`` and ``config`` determine it).
    """

    frame: pd.DataFrame = field(compare=False, repr=False)
    grouping: Grouping = field(compare=False, repr=False)
    dataset: DatasetRef
    spec: GroupingSpec
    config: SynthConfig
    epsilon: float
    strategy: Strategy = "stratified"
    label: str = ""
    level: float = field(default=0.95, compare=False)
    prepared: PreparedRows | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.frame, pd.DataFrame):
            raise TypeError(f"`frame` must be a pandas DataFrame, got {type(self.frame).__name__}")
        if not isinstance(self.grouping, Grouping):
            raise TypeError(f"`grouping` must be a Grouping, got {type(self.grouping).__name__}")
        if not isinstance(self.config, SynthConfig):
            raise TypeError(f"`config` must be a SynthConfig, got {type(self.config).__name__}")
        object.__setattr__(self, "epsilon", positive_number("epsilon", self.epsilon))
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"`strategy` must be one of {sorted(STRATEGIES)}, got {self.strategy!r}"
            )
        if not self.label.strip():
            label = (
                f"Synthetic data ({METHOD_NAMES[self.config.method]}), {self.strategy} by "
                f"{' × '.join(self.spec.by)}"
            )
            object.__setattr__(self, "label", label)
        # The rows run() models, computed once (unless the caller passed them).
        if self.prepared is None:
            prepared = prepare_rows(self.frame, self.spec, self.grouping, self.config)
            object.__setattr__(self, "prepared", prepared)
        elif not isinstance(self.prepared, PreparedRows):
            raise TypeError(
                f"`prepared` must be a PreparedRows, got {type(self.prepared).__name__}"
            )
        elif tuple(self.prepared.rows.columns) != self.columns:
            raise ValueError(
                f"`prepared` holds the columns {list(self.prepared.rows.columns)}, but the plan "
                f"synthesizes {list(self.columns)}; pass prepare_rows(frame, spec, grouping, config)"
            )
        check_config(self.prepared, self.config, self.spec, self.shares, (self.strategy,))

    @property
    def shares(self) -> PublicShares:
        """The public shares rows are drawn in (stratified)."""
        return self.grouping.shares

    @property
    def cost(self) -> Budget:
        return PureDP(self.epsilon)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns of the released rows, in order."""
        return _output_columns(self.config, self.spec.by)

    @property
    def interval_description(self) -> str:
        """What the release's metadata should say about intervals: there are none."""
        return INTERVALS_NOTE

    def parameters(self) -> dict:
        """Everything that defines the release, JSON-ready (the plan's identity)."""
        return {
            "kind": "synth",
            "statistic": f"synthetic data ({METHOD_NAMES[self.config.method]})",
            "label": self.label,
            "dataset": {"name": self.dataset.name, "fingerprint": self.dataset.fingerprint,
                        "rows": self.dataset.rows},
            "strata": self.spec.to_dict(),
            "estimator": {"class": "synthesize", **self.config.to_dict()},
            "budget": {"kind": "pure", "epsilon": self.epsilon},
            "strategy": self.strategy,
            "columns": list(self.columns),
        }  # fmt: skip

    def run(self, noise: NoiseSource) -> list[dict]:
        """Fit the models with ``noise`` and draw the rows; one dict per synthetic row.

        Drawing rows from the fitted models, and shuffling them (they come grouped by stratum),
        is post-processing and uses fresh numpy randomness.
        """
        generator = as_rng(None)
        data = run_synthesis(
            self.prepared, self.config, self.spec, self.shares, epsilon=self.epsilon,
            strategy=self.strategy, noise=noise, rng=generator,
        )  # fmt: skip
        order = generator.permutation(len(data.frame))
        return data.frame.iloc[order].astype(str).to_dict("records")

    def review_lines(self) -> list[str]:
        """Markdown lines that describe the plan for a person about to commit it."""
        by = " × ".join(self.spec.by)
        if self.strategy == "stratified":
            groups = (
                f"**Strata:** {by} — {len(self.shares.labels)} groups, one model each with the "
                f"full ε (parallel composition); rows drawn by public share "
                f"({self.shares.description.lower()})"
            )
        else:
            groups = f"**Strata:** none — one model for all rows; {by} modelled as columns"
        edges = "; ".join(
            f"{c}: {', '.join(f'{v:g}' for v in e)}"
            for c, e in _all_edges(self.config, self.spec).items()
        )
        lines = [
            f"**Statistic:** synthetic data, {self.config.n_rows:,} rows of "
            f"{', '.join(f'`{c}`' for c in self.columns)}",
            _data_line(self.dataset),
            groups,
            f"**Synthesizer:** {METHODS[self.config.method]}"
            + (
                f" ({self.config.rounds} rounds, marginals up to {self.config.way}-way)"
                if self.config.method == "mwem"
                else ""
            ),
        ]
        if edges:
            lines.append(f"**Public bucket edges:** {edges}")
        from_data = [c for c in self.columns if c not in _all_edges(self.config, self.spec)]
        if from_data:
            lines.append(
                "**Not protected:** the category lists of "
                + ", ".join(f"`{c}`" for c in from_data)
                + " are read from the data and published as they are"
            )
        return lines

    def script_body(self) -> str:
        """The Python lines that rebuild this plan from a frame named ``frame``."""
        spec = ", ".join(f"{k}={getattr(self.spec, k)!r}" for k in self.spec.__dataclass_fields__)
        return (
            "from dpcore.analyses.synth import SynthConfig, SynthPlan\n"
            "from dpcore.release import DatasetRef\n"
            "from dpcore.grouping import GroupingSpec\n\n"
            f"spec = GroupingSpec({spec})\n"
            "plan = SynthPlan(\n"
            "    frame=frame,\n"
            "    grouping=spec.build(frame),\n"
            f"    dataset=DatasetRef.of(frame, {self.dataset.name!r}),\n"
            "    spec=spec,\n"
            f"    config={self.config!r},\n"
            f"    epsilon={self.epsilon!r},\n"
            f"    strategy={self.strategy!r},\n"
            f"    label={self.label!r},\n"
            ")\n"
        )
