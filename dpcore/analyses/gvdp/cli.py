"""The general estimator on the command line: the mean of ``--value`` with a valid interval
(GVDP, Covington et al.), its row spread ``--spread`` and ``--subsets``. Its regressions need
per-coefficient bounds, which the app asks for and plans."""

from __future__ import annotations

import argparse

from dpcore.analyses.command_line import (
    AnalysisCli,
    CommonChoices,
    Shares,
    positive_bound,
)
from dpcore.analyses.gvdp.analysis import GVDP, GvdpSettings
from dpcore.foundations.grouping import GroupingSpec

__all__ = ["CLI", "GvdpCli"]


class GvdpCli(AnalysisCli[GvdpSettings]):
    analysis = GVDP
    described = (
        "the mean of --value with a valid interval by the general estimator (gvdp, Covington "
        "et al.)"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        gvdp = parser.add_argument_group("general estimator (with --analysis gvdp)")
        gvdp.add_argument(
            "--spread", type=positive_bound, metavar="S",
            help="a public bound on one row's standard deviation (default: half the --bounds "
            "range)",
        )  # fmt: skip
        gvdp.add_argument(
            "--subsets", type=int, default=None, metavar="K",
            help="subsets of the bag of little bootstraps over all rows (default: chosen from "
            "the rows, k ≈ 3√n; each group's from its own rows)",
        )  # fmt: skip

    def settings(self, args: argparse.Namespace, common: CommonChoices) -> GvdpSettings:
        """The general estimator's settings for the mean of ``--value``: the public range and
        row spread of ``--bounds`` and ``--spread``, ``--subsets`` subsets, ``--strategy``."""
        value, (low, high) = common.value_and_bounds("the general estimator")
        common.require_noise(
            "gaussian", "the general estimator", "--analysis gvdp",
            because=", so its budget is in ρ-zCDP",
        )  # fmt: skip
        common.refuse_split_strategy("the general estimator publishes")
        if not low < high:
            raise ValueError(f"--bounds: L must be below U, got {low:g},{high:g}")
        spread = args.spread if args.spread is not None else (high - low) / 2
        settings = GvdpSettings(
            model="mean", outcomes=(("mean", value),),
            ks=() if args.subsets is None else (("mean", args.subsets),),
            box=((("mean", value, value), (low, high, spread)),), strategy=common.strategy,
        )  # fmt: skip
        GVDP.model(settings)  # refuses what the library cannot estimate
        return settings

    def release_groups(
        self, spec: GroupingSpec, shares: Shares, common: CommonChoices
    ) -> GroupingSpec:
        """The groups' row counts are public (``--sizes-public``), since they set each group's
        subsets; one estimate for everyone needs none."""
        if not common.sizes_public and common.strategy != "global_only":
            raise ValueError(
                "the general estimator treats each group's row count as public (it sets the "
                "group's subsets, Covington et al. §2.2): pass --sizes-public, or --strategy "
                "global_only"
            )
        return super().release_groups(spec, shares, common)


CLI = GvdpCli()
