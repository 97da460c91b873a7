"""Synthetic data on the command line (``--synthesizer``, ``--columns``, ``--synth-rows``,
``--synth-edges``, ``--categorical``): each group's 3-way workload error planned by simulated
syntheses, and synthetic rows released. Independent marginals, the histogram and MWEM are
fitted on an engine's counts (a file, a folder of Parquet parts, a Spark table); MST and AIM,
which OpenDP fits on rows, read one file into memory. Numeric columns are bucketed by the app's
default public edges unless ``--synth-edges`` gives others."""

from __future__ import annotations

import argparse

from dpcore.analyses.command_line import (
    AnalysisCli,
    CommonChoices,
    Shares,
    bucket_edges,
    column_list,
    refuse_misplaced,
)
from dpcore.analyses.synth.analysis import SYNTH, SynthSettings
from dpcore.analyses.synth.config import METHOD_NAMES
from dpcore.analyses.synth.mbi_models import MBI_METHODS, MBI_NEEDS_ROWS
from dpcore.foundations.accounting import Kind
from dpcore.foundations.grouping import GroupingSpec

__all__ = ["CLI", "SynthCli"]


class SynthCli(AnalysisCli[SynthSettings]):
    analysis = SYNTH
    described = "synthetic rows of the --by and --columns columns (synth)"
    plans_on_engines = True

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        synth = parser.add_argument_group("synthetic data (with --analysis synth)")
        synth.add_argument(
            "--synthesizer", choices=tuple(METHOD_NAMES), default="mwem",
            help="how the rows are synthesized (default mwem); independent, histogram and mwem "
            "add Laplace noise (--estimator laplace), mst and aim Gaussian noise through OpenDP "
            "(--estimator gaussian, planned in ρ)",
        )  # fmt: skip
        synth.add_argument(
            "--columns", type=lambda text: tuple(text.split(",")), metavar="C1,C2,…",
            help="the columns to synthesize besides --by (default: the demo's, else the first "
            "six text columns)",
        )  # fmt: skip
        synth.add_argument(
            "--synth-rows", type=int, default=10_000, metavar="N",
            help="synthetic rows, shared among the groups by their shares (default 10000)",
        )  # fmt: skip
        synth.add_argument(
            "--synth-edges", type=bucket_edges, action="append", default=[],
            metavar="COL=E1;E2;...",
            help="public bucket edges of a numeric column to synthesize (quote it in a shell); "
            "repeat for each; default: the app's (age, hours_per_week, score)",
        )  # fmt: skip
        synth.add_argument(
            "--categorical", type=column_list, metavar="COL[,COL...]",
            help="numeric columns whose values are categories (codes such as 0/1); their list "
            "of values is read from the data and treated as public; default: income_over_50k",
        )  # fmt: skip

    def settings(self, args: argparse.Namespace, common: CommonChoices) -> SynthSettings:
        """The synthesizer's settings; an option that does not apply, or a noise that does not
        match the synthesizer, names what to change."""
        common.refuse_value(
            "the mean", "synthetic data takes --synthesizer, --columns and --synth-rows"
        )
        common.require_noise(
            "gaussian" if args.synthesizer in MBI_METHODS else "laplace",
            METHOD_NAMES[args.synthesizer], f"--synthesizer {args.synthesizer}",
        )  # fmt: skip
        common.refuse_split_strategy("synthetic data is made with one model")
        defaults = SynthSettings()
        return SynthSettings(
            method=args.synthesizer, columns=args.columns, n_rows=args.synth_rows,
            strategy="stratified" if common.strategy == "stratified" else "vanilla",
            edges=tuple(args.synth_edges) or defaults.edges,
            categorical=defaults.categorical if args.categorical is None else args.categorical,
        )  # fmt: skip

    def budget_kind(self, settings: SynthSettings) -> Kind:
        """ρ for the Gaussian synthesizers (MST, AIM), which OpenDP accounts in ρ-zCDP."""
        return "zcdp" if settings.method in MBI_METHODS else "pure"

    def check_target(self, relative: bool) -> None:
        if relative:
            raise ValueError(
                "synthetic data has no true value to take a percentage of: its error is already "
                "a share of the rows; give --target-abs H with H a workload error from 0 to 2"
            )

    def rows_needed(self, settings: SynthSettings) -> str | None:
        if settings.method in MBI_METHODS:
            return MBI_NEEDS_ROWS.replace("upload the data", "give one file")
        return None

    def check_columns(self, settings: SynthSettings, kinds: dict[str, str]) -> None:
        missing = [column for column in settings.columns or () if column not in kinds]
        if missing:
            raise ValueError(f"--columns: no column {', '.join(map(repr, missing))} in the data")

    def release_groups(
        self, spec: GroupingSpec, shares: Shares, common: CommonChoices
    ) -> GroupingSpec:
        """The groups of synthetic rows, drawn in proportion to public shares: ``--shares`` or,
        declared public by ``--sizes-public``, the data's own group counts; one model for
        everyone (``--strategy global_only``) needs none."""
        refuse_misplaced(
            {"--global-fraction": common.global_fraction != 0.5,
             "--shares": shares.source == "noisy_counts"},
            "the mean", "synthetic rows are drawn from one model per group in proportion to "
            "fixed public shares, or from one model for everyone (--strategy global_only)",
        )  # fmt: skip
        if shares.source == "table":
            return shares.apply(spec)
        if not common.sizes_public and common.strategy == "stratified":
            raise ValueError(
                "stratified synthetic rows are drawn in proportion to each group's share, and "
                "without --shares those are the data's own group counts, which would give each "
                "group's size away; pass public shares with --shares, or --sizes-public, or "
                "--strategy global_only (one model for everyone)"
            )
        return spec


CLI = SynthCli()
