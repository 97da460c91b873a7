"""The calibration ratio Σ score / Σ label per group on the command line (Miao & Li 2022).

Its options mirror the app's: the score, label and (optional) weight columns and their public
upper bounds (lower bounds are 0). A label without ``--label-bound`` is declared 0/1, which the
library checks against the data without showing a value. The ratio reads its data through an
engine (a file, a folder of Parquet parts, a Spark table), for its plan and its release.
"""

from __future__ import annotations

import argparse

from dpcore.analyses.command_line import (
    AnalysisCli,
    CommonChoices,
    Shares,
    positive_bound,
    refuse_recombining,
)
from dpcore.analyses.ratio.analysis import RATIO, RatioSettings
from dpcore.analyses.ratio.sums import COMPOSITIONS, MECHANISMS
from dpcore.foundations.grouping import GroupingSpec

__all__ = ["CLI", "RatioCli"]


class RatioCli(AnalysisCli[RatioSettings]):
    analysis = RATIO
    described = "the calibration ratio Σ score / Σ label (Miao & Li 2022)"
    takes_strategy = False  # every group and the all-groups ratio, from the noisy group sums
    plans_on_engines = True

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        ratio = parser.add_argument_group("ratio (with --analysis ratio)")
        ratio.add_argument("--score", metavar="COL", help="the score column (numerator)")
        ratio.add_argument("--label", metavar="COL", help="the label column (denominator)")
        ratio.add_argument("--weight", metavar="COL", help="a survey-weight column (optional)")
        ratio.add_argument(
            "--score-bound", type=positive_bound, metavar="U",
            help="the largest score anyone could have, known without the data (1 for a "
            "probability)",
        )  # fmt: skip
        ratio.add_argument(
            "--label-bound", type=positive_bound, metavar="U",
            help="the largest label anyone could have; without it the label is declared 0/1",
        )  # fmt: skip
        ratio.add_argument(
            "--weight-bound", type=positive_bound, metavar="U",
            help="the largest weight in the survey design (at least 1), with --weight",
        )  # fmt: skip
        ratio.add_argument(
            "--composition", choices=tuple(COMPOSITIONS), default="basic",
            help="Gaussian accounting: basic (the paper's; the classic calibration at an ε "
            "budget, below ε = 5 sums' worth) or zcdp (σ from ρ; the answer is then in ρ). "
            "Default basic",
        )  # fmt: skip
        ratio.add_argument(
            "--delta", type=float, default=1e-6, help="δ of the classic Gaussian (default 1e-6)"
        )

    def settings(self, args: argparse.Namespace, common: CommonChoices) -> RatioSettings:
        """The ratio's settings; a missing column or bound names its option, a mechanism it does
        not have names those it has. The columns are checked against the data before the
        engine's pass (:meth:`RatioAnalysis.engine_statistics`)."""
        common.refuse_value(
            "the mean", "the ratio takes --score, --label and --score-bound (and --label-bound, "
            "--weight, --weight-bound)",
        )  # fmt: skip
        needed = {"--score": args.score, "--label": args.label, "--score-bound": args.score_bound}
        if args.weight is not None:
            needed["--weight-bound"] = args.weight_bound
        missing = [option for option, value in needed.items() if value is None]
        if missing:
            raise ValueError(
                f"the ratio needs {', '.join(missing)}: the score and label columns and the "
                "largest score anyone could have, known without looking at the data (1 for a "
                "probability); a weight column needs the largest weight of the survey design"
            )
        if args.weight is not None and args.weight_bound < 1:
            raise ValueError(
                f"--weight-bound must be at least 1, got {args.weight_bound:g}: weights are "
                "clipped to [0, bound], and a bound below 1 would shrink even a weight of 1"
            )
        if common.estimator not in MECHANISMS:
            got = f", not {common.estimator}" if common.estimator else ""
            raise ValueError(
                f"the ratio adds Laplace or Gaussian noise to its sums{got}: pass "
                "--estimator laplace or --estimator gaussian"
            )
        return RatioSettings(
            s_column=args.score, y_column=args.label, w_column=args.weight,
            s_bound=args.score_bound, y_bound=args.label_bound or 1.0,
            w_bound=args.weight_bound or 1.0, binary_y=args.label_bound is None,
            mechanism=common.estimator, composition=args.composition, delta=args.delta,
        )  # fmt: skip

    def release_groups(
        self, spec: GroupingSpec, shares: Shares, common: CommonChoices
    ) -> GroupingSpec:
        """Every group the spec lists: the ratio publishes noisy sums only, so either the sizes
        are declared public or the groups are a declared list kept whatever their sizes."""
        refuse_recombining(
            shares, common, "the mean", "the ratio publishes every group and the all-groups "
            "ratio, added up from the noisy group sums",
        )  # fmt: skip
        gaps = set() if common.sizes_public else set(spec.private_sizes_gaps()) - {"shares"}
        if "list" in gaps:
            raise ValueError(
                "the group sizes are private (no --sizes-public), but the list of groups would "
                "come from the data; declare each grouping column's categories with --codebook, "
                "or pass --sizes-public"
            )
        if gaps:
            raise ValueError(
                f"the group sizes are private (no --sizes-public), but --small-groups "
                f"{spec.small_groups} would decide from their exact sizes which groups to "
                f"{spec.small_groups}; pass --small-groups keep, or pass --sizes-public"
            )
        return spec


CLI = RatioCli()
