"""The mean on the command line: ``--value``, ``--bounds`` and ``--estimator`` (shared with
the other analyses), CoinPress's ``--sigma`` and ``--steps``, and the groups of its release."""

from __future__ import annotations

import argparse

from dpcore.analyses.command_line import (
    AnalysisCli,
    CommonChoices,
    Shares,
    positive_bound,
    recombined_groups,
    whole_number,
)
from dpcore.analyses.mean.analysis import ESTIMATOR_LABELS, MEAN, MeanSettings
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.validation import WHOLE_NUMBER_LIMITS

__all__ = ["CLI", "MeanCli"]


class MeanCli(AnalysisCli[MeanSettings]):
    analysis = MEAN
    described = "the mean of --value (default)"

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        coinpress = parser.add_argument_group("CoinPress (with --estimator coinpress)")
        coinpress.add_argument(
            "--sigma", type=positive_bound, default=15.0, metavar="S",
            help="CoinPress: a public bound on each group's standard deviation (default 15)",
        )  # fmt: skip
        coinpress.add_argument(
            "--steps", type=whole_number("coinpress_steps"), default=3,
            help=f"CoinPress steps, 1 to {WHOLE_NUMBER_LIMITS['steps'][0]} (default 3)",
        )  # fmt: skip

    def settings(self, args: argparse.Namespace, common: CommonChoices) -> MeanSettings:
        """The mean's settings, checked by the library (bounds in order, CoinPress's steps);
        CoinPress without ``--sizes-public`` is refused: it scales its noise and intervals to
        the exact group sizes."""
        value, (low, high) = common.value_and_bounds("the mean")
        if common.estimator not in ESTIMATOR_LABELS:
            raise ValueError(
                "the mean needs --estimator laplace, gaussian or coinpress: the noise it adds"
            )
        if common.estimator == "coinpress" and not common.sizes_public:
            raise ValueError(
                "CoinPress scales its noise and intervals to the exact group sizes, so it needs "
                "--sizes-public (the sizes are then treated as public); for private sizes choose "
                "--estimator laplace or gaussian"
            )
        settings = MeanSettings(
            value=value, estimator=common.estimator, clip_low=low, clip_high=high,
            n_public=common.sizes_public, strategy=common.strategy,
            global_fraction=common.global_fraction, coinpress_sigma=args.sigma,
            coinpress_steps=args.steps,
        )  # fmt: skip
        MEAN.estimator(settings)  # refuses bounds out of order and CoinPress's bad steps
        return settings

    def release_groups(
        self, spec: GroupingSpec, shares: Shares, common: CommonChoices
    ) -> GroupingSpec:
        return recombined_groups(spec, shares, common)


CLI = MeanCli()
