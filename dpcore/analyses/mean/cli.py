"""The mean on the command line: ``--value``, ``--bounds`` and ``--estimator`` (shared with
the other analyses), CoinPress's ``--sigma`` and ``--steps``, and the groups of its release.

``--bounds auto`` (or ``auto:F``) finds the bounds privately, paying the share F of the budget
(:mod:`dpcore.foundations.private_bounds`), within ``--search-range`` (default: a range every
survey column fits, with a deeper grid); ``--bounds-per-group`` finds each group's own, and
``--bounds-tail T`` aims at the share T of the values beyond each bound (what private group
sizes need) instead of the automatic rank."""

from __future__ import annotations

import argparse

from dpcore.analyses.command_line import (
    AnalysisCli,
    AutoBounds,
    CommonChoices,
    positive_bound,
    tail_share,
    whole_number,
)
from dpcore.analyses.mean.analysis import ESTIMATOR_LABELS, MEAN, MeanSettings
from dpcore.foundations.private_bounds import UNKNOWN_RANGE, UNKNOWN_RANGE_DECADES
from dpcore.foundations.validation import WHOLE_NUMBER_LIMITS

__all__ = ["CLI", "MeanCli"]


class MeanCli(AnalysisCli[MeanSettings]):
    analysis = MEAN
    described = "the mean of --value (default)"
    plans_beyond_one_file = True  # a folder was read as one file: "Is a directory" (issue 37)

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
        found = parser.add_argument_group("bounds found privately (with --bounds auto)")
        found.add_argument(
            "--bounds-per-group", action="store_true",
            help="find each group's own bounds (parallel composition: no extra cost) instead "
            "of one range for everyone",
        )  # fmt: skip
        found.add_argument(
            "--bounds-tail", type=tail_share, metavar="T",
            help="aim at the share T of the values beyond each bound (e.g. 0.01), instead of "
            "the fewest values the budget can find reliably; needed with private group sizes",
        )  # fmt: skip

    def settings(self, args: argparse.Namespace, common: CommonChoices) -> MeanSettings:
        """The mean's settings, checked by the library (bounds in order, CoinPress's steps);
        CoinPress without ``--sizes-public`` is refused: it scales its noise and intervals to
        the exact group sizes."""
        value, bounds = common.value_and_bounds("the mean", auto=True)
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
        found = isinstance(bounds, AutoBounds)
        if not found and (args.bounds_per_group or args.bounds_tail is not None):
            raise ValueError(
                "--bounds-per-group and --bounds-tail apply to bounds found privately: pass "
                "--bounds auto (or auto:F), or leave them out"
            )
        low, high = (common.search_range or UNKNOWN_RANGE) if found else bounds
        if isinstance(low, AutoBounds) or isinstance(common.search_range, AutoBounds):
            raise ValueError("--search-range takes two numbers L,U, not auto")
        settings = MeanSettings(
            value=value, estimator=common.estimator, clip_low=low, clip_high=high,
            n_public=common.sizes_public, strategy=common.strategy,
            global_fraction=common.global_fraction, coinpress_sigma=args.sigma,
            coinpress_steps=args.steps,
            **(self._found(bounds, common, args) if found else {}),
        )  # fmt: skip
        MEAN.estimator(settings)  # refuses bounds out of order and CoinPress's bad steps
        if found:
            self._check_found(settings)
        return settings

    @staticmethod
    def _found(bounds: AutoBounds, common: CommonChoices, args: argparse.Namespace) -> dict:
        """The settings of bounds found privately."""
        return {
            "bounds_source": "private", "bounds_fraction": bounds.fraction,
            "bounds_scope": "per_group" if args.bounds_per_group else "pooled",
            "bounds_tail": args.bounds_tail or 0.0,
            "bounds_decades": UNKNOWN_RANGE_DECADES if common.search_range is None else None,
        }  # fmt: skip

    @staticmethod
    def _check_found(settings: MeanSettings) -> None:
        """Refuse what bounds found privately cannot be combined with, naming the options."""
        problems = [p for p in MEAN.problems(settings, None) if p.severity == "error"]
        words = {
            "bounds_source": "--bounds auto needs --estimator laplace or gaussian (CoinPress "
            "finds its own range)",
            "bounds_tail": "with private group sizes (no --sizes-public) --bounds auto needs "
            "--bounds-tail T, the share of values to leave beyond each bound (e.g. 0.01)",
        }
        for problem in problems:
            if problem.field in words:
                raise ValueError(words[problem.field])
        try:
            MEAN.private_bounds(settings)
        except ValueError as exc:
            message = str(exc).replace("`tail`", "--bounds-tail")
            raise ValueError(f"--bounds auto: {message}") from None


CLI = MeanCli()
