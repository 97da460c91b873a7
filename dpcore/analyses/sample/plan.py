"""The release plan of a private sample (follows :class:`dpcore.release.ReleasePlan`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore.analyses.sample.draw import (
    PRODUCT_BIASES,
    PRODUCT_CLIP,
    Sampler,
    distance,
    draw_records,
    empirical_distribution,
    kary_guarantee,
    output_distribution,
    part_sizes,
    product_epsilon,
    product_guarantee,
    product_rho,
    records_frame,
)
from dpcore.analyses.sample.rows import (
    MAX_DOMAIN,
    WHOLE_POPULATION,
    SampleRows,
    domain_size,
    prepare_sample_rows,
)
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.column_choices import choice_of, with_choice
from dpcore.foundations.mechanisms import NoiseSource
from dpcore.foundations.validation import instance_of
from dpcore.release.plan import PlanHeader, Progress, SyntheticRow
from dpcore.release.preview import preview_frame
from dpcore.release.whole_budget import ChargesWholeBudget

__all__ = [
    "MAX_RECORDS",
    "SAMPLERS",
    "SampleDraw",
    "SamplePlan",
    "SampleSettings",
]

MAX_RECORDS = 20
"""Most records per release: a private sample is a handful of plausible records, and each costs
accuracy (every record comes from its own part of the group's rows)."""

SAMPLERS: dict[str, str] = {
    "kary": "k-ary sampler (Laplace noise on the group's distribution, NeurIPS 2021 Alg. 3)",
    "product": "product-Bernoulli sampler (clipped proportions, no added noise, NeurIPS 2021 "
    "Thm. 6.4)",
}

NEIGHBOURS = (
    "one row replaced by another (replace-one; the group's number of rows is public, and so "
    "are the other groups' sizes where the Strata page merges or drops small groups), as in "
    "Raskhodnikova et al. (NeurIPS 2021)"
)


@dataclass(frozen=True)
class SampleSettings:
    """The private sample's choices (defaults fit the demo data).

    ``columns`` are sampled together: the k-ary sampler ranges over every combination of their
    categories; the product sampler needs columns of exactly two categories (yes/no, 0/1), the
    second one counting as a 1. ``categories`` declares a column's public list of categories;
    a column without one uses the categories found in the data, *treated as public* (said on
    screen and in the export). An empty list declares nothing, so it counts as no list: the
    column's categories are read from the data and labelled so (the screen does the same when
    a list is cleared).
    """

    sampler: Sampler = "kary"
    columns: tuple[str, ...] = ("marital_status",)
    group: str = WHOLE_POPULATION
    records: int = 5
    categories: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __post_init__(self) -> None:
        declared = tuple((c, tuple(v)) for c, v in self.categories if len(v))
        object.__setattr__(self, "categories", declared)

    def declared(self, column: str) -> tuple[str, ...] | None:
        return choice_of(self.categories, column)

    def with_categories(self, column: str, values: tuple[str, ...] | None) -> SampleSettings:
        """These settings with ``column``'s declared categories set (None: read from the data)."""
        return dataclasses.replace(self, categories=with_choice(self.categories, column, values))


def records_problem(records: object) -> str | None:
    if isinstance(records, bool) or not isinstance(records, int | np.integer):
        return f"The number of records must be a whole number, got {records!r}."
    if not 1 <= records <= MAX_RECORDS:
        return f"The number of records must be between 1 and {MAX_RECORDS}, got {records}."
    return None


@dataclass(frozen=True)
class SampleDraw:
    """A private sample: its records, and the curator's figures about it (none is released)."""

    frame: pd.DataFrame
    guarantee: float
    part_rows: int


@dataclass(frozen=True)
class SamplePlan(ChargesWholeBudget):
    r"""A planned release of ``records`` private records of one group.

    Each record comes from its own disjoint part of the group's rows (:mod:`.draw`), so the
    release costs the header's budget once. The k-ary sampler runs at ε (a ρ budget runs it at
    ε = √(2ρ)); the product sampler adds no noise, is ε = 4d/n-DP (ρ = 8d/n²-zCDP) on parts of n
    rows, and is charged the whole budget (so the charge says nothing about the group's size):
    the plan is refused when the smallest part is too small to stay within it.
    """

    rows: SampleRows = field(compare=False, repr=False)
    header: PlanHeader
    settings: SampleSettings

    def __post_init__(self) -> None:
        instance_of("header", self.header, PlanHeader)
        instance_of("settings", self.settings, SampleSettings)
        if not isinstance(self.header.budget, PureDP | ZCDP):
            raise TypeError(f"`budget` must be PureDP or ZCDP, got {self.header.budget!r}")
        if self.settings.sampler == "kary" and not isinstance(self.header.budget, PureDP):
            raise TypeError("`budget` of the k-ary sampler must be PureDP(ε)")
        if (problem := records_problem(self.settings.records)) is not None:
            raise ValueError(problem)
        label = f"Private sample of {', '.join(self.settings.columns)} ({self.settings.group})"
        object.__setattr__(self, "header", self.header.named(label))
        self.codes()  # refuses what cannot be sampled

    @classmethod
    def build(cls, frame: pd.DataFrame, *, header: PlanHeader, settings: SampleSettings):
        """The plan for ``frame``, in the groups of ``header.spec``."""
        rows = prepare_sample_rows(frame, header.spec.build(frame), settings.columns)
        return cls(rows=rows, header=header, settings=settings)

    # ---- the domain ----------------------------------------------------------------------

    @property
    def from_data(self) -> tuple[str, ...]:
        """Columns whose categories are read from the data (treated as public)."""
        return tuple(c for c in self.settings.columns if self.settings.declared(c) is None)

    def _from_data_categories(self) -> str:
        """ "the categories of `a`, `b`": the columns of :attr:`from_data`, for the review and
        the facts declared public."""
        return "the categories of " + ", ".join(f"`{c}`" for c in self.from_data)

    def categories(self) -> dict[str, tuple[str, ...]]:
        """Every column's public categories: declared, or read from all the rows of the Strata
        page's groups (not the chosen group's)."""
        return {
            c: self.settings.declared(c) or self.rows.observed_categories(c)
            for c in self.settings.columns
        }

    @property
    def domain(self) -> int:
        return domain_size(self.categories())

    def codes(self) -> np.ndarray:
        """The group's rows as sampler input: joint codes (k-ary) or bits (product);
        ``ValueError`` saying what to change for anything that cannot be sampled."""
        values = self.rows.group_values(self.settings.group)
        categories = self.categories()
        if self.settings.sampler == "product":
            two = [c for c, cats in categories.items() if len(cats) != 2]
            if two:
                raise ValueError(
                    "The product-Bernoulli sampler draws yes/no attributes: every column needs "
                    f"exactly two categories, but {', '.join(f'`{c}`' for c in two)} has "
                    f"{', '.join(str(len(categories[c])) for c in two)}. Choose yes/no or 0/1 "
                    "columns, or the k-ary sampler."
                )
        elif domain_size(categories) > MAX_DOMAIN:
            raise ValueError(
                f"These columns have {domain_size(categories):,} combinations of categories, "
                f"above the limit of {MAX_DOMAIN:,}: choose fewer columns or columns with fewer "
                "categories."
            )
        indices = []
        for column, cats in categories.items():
            index = pd.Index(cats).get_indexer(values[column])
            if (outside := int(np.count_nonzero(index < 0))) > 0:
                raise ValueError(
                    f"{outside:,} rows of the group have a `{column}` value outside its declared "
                    "categories. Add the missing categories to its list (or clear the list to "
                    "use the data's)."
                )
            indices.append(index)
        n, k = len(values), self.settings.records
        if n < k:
            raise ValueError(
                f"The group “{self.settings.group}” has fewer rows than records asked for; each "
                "record needs its own part of the rows. Ask for fewer records or choose a "
                "larger group."
            )
        if self.settings.sampler == "product":
            self._check_product_cost(len(categories), int(part_sizes(n, k).min()))
            return np.column_stack(indices)
        shape = tuple(len(c) for c in categories.values())
        return np.ravel_multi_index(tuple(indices), shape)

    def _check_product_cost(self, d: int, part: int) -> None:
        budget = self.header.budget
        cost = product_epsilon(d, part) if isinstance(budget, PureDP) else product_rho(d, part)
        allowed = budget.epsilon if isinstance(budget, PureDP) else budget.rho
        if cost > allowed:
            raise ValueError(
                "The product-Bernoulli sampler adds no noise: its privacy comes from the size "
                f"of each part of the group's rows, which is too small for this budget here "
                f"({'ε' if isinstance(budget, PureDP) else 'ρ'} = {cost:.3g} needed, "
                f"{allowed:g} allowed). Raise the budget, ask for fewer records, choose fewer "
                "columns or a larger group."
            )

    # ---- the release -----------------------------------------------------------------------

    @property
    def interval_description(self) -> str:
        return "none: sampled records carry no intervals"

    def parameters(self) -> dict:
        identity = self.header.identity(
            kind="sample", statistic=f"private sample ({SAMPLERS[self.settings.sampler]})"
        )
        del identity["level"]  # sampled records have no intervals
        estimator = {
            "class": "sample",
            "sampler": self.settings.sampler,
            "columns": list(self.settings.columns),
            "group": self.settings.group,
            "records": self.settings.records,
            "categories": {c: list(v) for c, v in self.categories().items()},
            "categories_treated_as_public": list(self.from_data),
            "neighbours": NEIGHBOURS,
            "records_from": "disjoint random parts of the group's rows, one record each",
        }
        if self.settings.sampler == "product":
            estimator |= {"clip": list(PRODUCT_CLIP), "bias_class": list(PRODUCT_BIASES)}
        return {**identity, "estimator": estimator, "columns": list(self.settings.columns)}

    def guarantee(self) -> float:
        """The paper's total-variation accuracy of each record (a curator's figure: it follows
        from the group's size)."""
        codes = self.codes()
        part = int(part_sizes(len(codes), self.settings.records).min())
        if self.settings.sampler == "kary":
            return kary_guarantee(self.domain, part, self._epsilon())
        return product_guarantee(len(self.settings.columns), part)

    def _epsilon(self) -> float:
        budget = self.header.budget
        return budget.epsilon if isinstance(budget, PureDP) else float("nan")

    def estimate(self, noise: NoiseSource, rng: np.random.Generator) -> SampleDraw:
        codes = self.codes()
        drawn = draw_records(
            codes, sampler=self.settings.sampler, domain=self.domain,
            records=self.settings.records, epsilon=self._epsilon(), noise=noise, rng=rng,
        )  # fmt: skip
        frame = records_frame(drawn, sampler=self.settings.sampler, categories=self.categories())
        part = int(part_sizes(len(codes), self.settings.records).min())
        return SampleDraw(frame=frame, guarantee=self.guarantee(), part_rows=part)

    def run(
        self, noise: NoiseSource, rng: np.random.Generator, progress: Progress | None = None
    ) -> list[SyntheticRow]:
        """The drawn records, numbered within the group (``progress`` is not called: a draw takes
        a moment)."""
        frame = self.estimate(noise, rng).frame
        return [
            SyntheticRow.of({"group": self.settings.group, "record": str(i + 1), **record})
            for i, record in enumerate(frame.astype(str).to_dict("records"))
        ]

    def simulate(self, *, runs: int, rng: np.random.Generator | int | None = None) -> dict:
        """The curator's comparison: one record's output distribution (simulated with numpy
        noise) against the group's own, their distance and the paper's guarantee."""
        codes = self.codes()
        sampler = self.settings.sampler
        part = int(part_sizes(len(codes), self.settings.records).min())
        output, floor = output_distribution(
            codes, sampler=sampler, domain=self.domain, part=part,
            epsilon=self._epsilon(), runs=runs, rng=rng,
        )  # fmt: skip
        group = empirical_distribution(codes, sampler=sampler, domain=self.domain)
        outside = [
            c for c, share in zip(self.settings.columns, group, strict=True)
            if not PRODUCT_BIASES[0] <= share <= PRODUCT_BIASES[1]
        ] if sampler == "product" else []  # fmt: skip
        return {
            "output": output,
            "group": group,
            "labels": self._outcome_labels(),
            "distance": distance(output, group, sampler=sampler),
            "floor": floor,
            "outside_class": outside,
            "guarantee": self.guarantee(),
            "part_rows": part,
            "rows": len(codes),
        }

    def _outcome_labels(self) -> list[str]:
        """What each entry of a distribution stands for: a combination of categories (k-ary),
        or a column's second category (product)."""
        categories = self.categories()
        if self.settings.sampler == "product":
            return [f"{c} = {cats[1]}" for c, cats in categories.items()]
        grid = pd.MultiIndex.from_product(list(categories.values()))
        return [" × ".join(combination) for combination in grid]

    def declared_public(self) -> list[str]:
        """The group sampled and the columns' categories
        (:meth:`~dpcore.release.ReleasePlan.declared_public`)."""
        facts = [*self.header.declared_groups(), f"the group sampled, “{self.settings.group}”"]
        if self.from_data:
            facts.append(f"{self._from_data_categories()} (read from the data)")
        return facts

    def review_lines(self) -> list[str]:
        settings = self.settings
        cats = "; ".join(f"{c}: {', '.join(v)}" for c, v in self.categories().items())
        lines = [
            f"**Statistic:** {settings.records} private record(s) of "
            f"{', '.join(f'`{c}`' for c in settings.columns)} from the group “{settings.group}”",
            self.header.data_line(),
            f"**Sampler:** {SAMPLERS[settings.sampler]}; each record from its own disjoint part "
            "of the group's rows, so the records together cost the budget once",
            f"**Neighbouring datasets:** {NEIGHBOURS}",
            f"**Categories (public):** {cats}",
        ]
        if self.from_data:
            lines.append(
                f"**Treated as public:** {self._from_data_categories()} are read from the data "
                "and published as they are"
            )
        return lines

    def preview(self) -> pd.DataFrame:
        """The sampled group's one row: the paper's total-variation accuracy of each record
        (:meth:`guarantee`, a curator's figure from the group's size). Records have no
        intervals and the group is never withheld (a plan that cannot sample is refused)."""
        return preview_frame(
            [{
                "group": self.settings.group,
                "quantity": "distance of each record's distribution from the group's "
                "(total variation, 0 to 1)",
                "expected_error": self.guarantee(), "half_width": np.nan, "withheld": "",
            }]
        )  # fmt: skip

    def script_body(self) -> str:
        return (
            f"{self.header.script()}"
            "from dpcore.analyses.sample import SamplePlan, SampleSettings\n\n"
            "plan = SamplePlan.build(\n"
            "    frame,\n"
            "    header=header,\n"
            f"    settings={self.settings!r},\n"
            ")\n"
        )
