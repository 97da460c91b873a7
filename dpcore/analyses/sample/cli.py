"""The private sample on the command line: a handful of records of one group drawn by a DP
sampler (Raskhodnikova, Sivakumar, Smith & Swanberg, NeurIPS 2021), with ``--sampler``,
``--sample-columns``, ``--sample-group``, ``--records`` and ``--sample-categories``.

The samplers draw from the rows themselves, so the sample reads one file into memory. Their
neighbours differ by one row replaced, so the group's number of rows is public: the command
asks for ``--sizes-public`` to say so. The planner does not cover the sample; ``strata-lab
plan`` says so through :class:`~dpcore.analyses.base.PlannerUnavailable`.
"""

from __future__ import annotations

import argparse

from dpcore.analyses.command_line import (
    AnalysisCli,
    CommonChoices,
    Shares,
    column_list,
    refuse_recombining,
)
from dpcore.analyses.sample.analysis import SAMPLE
from dpcore.analyses.sample.plan import MAX_RECORDS, SAMPLERS, SampleSettings
from dpcore.foundations.grouping import GroupingSpec

__all__ = ["CLI", "SampleCli", "category_list"]


def category_list(text: str) -> tuple[str, tuple[str, ...]]:
    """``COL=A;B;...``: a column's public list of categories."""
    column, _, values = text.partition("=")
    categories = tuple(value.strip() for value in values.split(";") if value.strip())
    if not column.strip() or not categories:
        raise argparse.ArgumentTypeError(
            f"expected COL=A;B;... (the public categories of a column), got {text!r}"
        )
    return column.strip(), categories


class SampleCli(AnalysisCli[SampleSettings]):
    analysis = SAMPLE
    described = "a few private records of one group (sample, Raskhodnikova et al. 2021)"
    takes_strategy = False  # records of one group, chosen by --sample-group

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        defaults = SampleSettings()
        sample = parser.add_argument_group("private sample (with --analysis sample)")
        sample.add_argument(
            "--sampler", choices=tuple(SAMPLERS), default=defaults.sampler,
            help="kary: Laplace noise on the group's distribution of every combination of the "
            "columns' categories; product: yes/no columns, no added noise (default kary)",
        )  # fmt: skip
        sample.add_argument(
            "--sample-columns", type=column_list, default=defaults.columns,
            metavar="COL[,COL...]",
            help=f"the columns each record has (default {','.join(defaults.columns)})",
        )  # fmt: skip
        sample.add_argument(
            "--sample-group", default=defaults.group, metavar="LABEL",
            help=f"the group the records come from, as a release labels it, e.g. 'White × "
            f"Female' (default {defaults.group!r})",
        )  # fmt: skip
        sample.add_argument(
            "--records", type=int, default=defaults.records, metavar="N",
            help=f"how many records, 1 to {MAX_RECORDS} (default {defaults.records})",
        )  # fmt: skip
        sample.add_argument(
            "--sample-categories", type=category_list, action="append", default=[],
            metavar="COL=A;B;...",
            help="the public list of a column's categories (quote it in a shell); repeat for "
            "each; default: the categories in the data, treated as public",
        )  # fmt: skip

    def settings(self, args: argparse.Namespace, common: CommonChoices) -> SampleSettings:
        """The sample's settings; the mean's options are refused, since the sampler chooses
        the noise. The columns and categories are checked against the data when it is read
        (:meth:`SampleAnalysis.problems`)."""
        common.refuse_value(
            "the other analyses", "the private sample's noise follows --sampler (kary: Laplace on "
            "the group's distribution; product: none), on the columns of --sample-columns",
            estimator=True,
        )  # fmt: skip
        return SampleSettings(
            sampler=args.sampler, columns=args.sample_columns, group=args.sample_group,
            records=args.records, categories=tuple(args.sample_categories),
        )  # fmt: skip

    def release_groups(
        self, spec: GroupingSpec, shares: Shares, common: CommonChoices
    ) -> GroupingSpec:
        """The groups the records may come from; the group's number of rows is public in the
        sampler's model (replace-one neighbours), which ``--sizes-public`` declares."""
        refuse_recombining(
            shares, common, "the other analyses",
            "the private sample draws records of one group (--sample-group)",
        )  # fmt: skip
        if not common.sizes_public:
            raise ValueError(
                "the private sample treats its group's number of rows as public (neighbouring "
                "data differ by one row replaced, Raskhodnikova et al. 2021): pass "
                "--sizes-public to declare it"
            )
        return spec


CLI = SampleCli()
