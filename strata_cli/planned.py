"""Which analysis ``strata-lab plan`` plans, from its arguments: the mean of ``--value``
(the default), the calibration ratio Σ score / Σ label per group (``--analysis ratio``), or the
general estimator's mean of ``--value`` with a valid interval (``--analysis gvdp``: GVDP, whose
target is on each interval's half-width; its regressions need per-coefficient bounds that the
Estimator page asks for, and are planned there), or synthetic data (``--analysis synth
--synthesizer …``: each group's 3-way workload error, known by simulated syntheses; the
numeric columns are bucketed by the Estimator page's default public edges, and a numeric column
without edges is named in the error).

The ratio's options mirror its Estimator page: the score, label and (optional) weight columns
and their public upper bounds (lower bounds are 0). A label without ``--label-bound`` is declared
0/1, which the library checks against the data without showing a value. ``strata-lab release
--analysis ratio`` takes the same options. The ratio reads its data through an engine (a file, a
folder of Parquet parts, a Spark table; :func:`ratio_on_engine`). Nothing here computes a
number: the library does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from dpcore.analyses import GVDP, MEAN, RATIO, SYNTH
from dpcore.analyses.base import Analysis, EngineStatistics
from dpcore.analyses.gvdp import GvdpSettings
from dpcore.analyses.ratio import COMPOSITIONS, MECHANISMS, RatioSettings
from dpcore.analyses.ratio.aggregate import aggregate_ratio
from dpcore.analyses.ratio.groups import GroupRatioSums
from dpcore.analyses.ratio.sums import Composition
from dpcore.analyses.synth import (
    MBI_METHODS,
    MBI_NEEDS_ROWS,
    METHOD_NAMES,
    PreparedRows,
    SynthSettings,
)
from dpcore.analyses.synth.analysis import column_kinds
from dpcore.foundations.grouping import GroupingSpec
from dpcore.release import DatasetRef
from strata_cli.inputs import (
    CliError,
    bucket_edges,
    check_coinpress_sizes,
    column_list,
    grouping_spec,
    mean_settings,
    positive_bound,
    read_data,
)
from strata_cli.sources import open_engine, privacy_unit

__all__ = [
    "analysis_arguments", "planned_analysis", "ratio_on_engine", "ratio_settings", "synth_on_data",
]  # fmt: skip

ANALYSES = {"mean": MEAN, "ratio": RATIO, "gvdp": GVDP, "synth": SYNTH}


def analysis_arguments(
    parser: argparse.ArgumentParser, analyses: tuple[str, ...] = tuple(ANALYSES)
) -> None:
    """``--analysis`` (one of ``analyses``) and the options of each: the ratio's columns,
    bounds and accounting, the general estimator's spread and subsets, the synthesizer."""
    described = {
        "mean": "the mean of --value (default)",
        "ratio": "the calibration ratio Σ score / Σ label (Miao & Li 2022)",
        "gvdp": "the mean of --value with a valid interval by the general estimator (gvdp, "
        "Covington et al.)",
        "synth": "synthetic rows of the --by and --columns columns (synth)",
    }
    parser.add_argument(
        "--analysis", choices=analyses, default="mean",
        help=f"what a release publishes per group: {', or '.join(described[a] for a in analyses)}",
    )  # fmt: skip
    if "gvdp" in analyses:
        gvdp_arguments(parser)
    if "synth" in analyses:
        synth_arguments(parser)
    ratio_arguments(parser)


def gvdp_arguments(parser: argparse.ArgumentParser) -> None:
    gvdp = parser.add_argument_group("general estimator (with --analysis gvdp)")
    gvdp.add_argument(
        "--spread", type=positive_bound, metavar="S",
        help="a public bound on one row's standard deviation (default: half the --bounds range)",
    )  # fmt: skip
    gvdp.add_argument(
        "--subsets", type=int, default=1000, metavar="K",
        help="subsets of the bag of little bootstraps over all rows (default 1000)",
    )  # fmt: skip


def synth_arguments(parser: argparse.ArgumentParser) -> None:
    synth = parser.add_argument_group("synthetic data (with --analysis synth)")
    synth.add_argument(
        "--synthesizer", choices=tuple(METHOD_NAMES), default="mwem",
        help="how the rows are synthesized (default mwem); independent, histogram and mwem add "
        "Laplace noise (--estimator laplace), mst and aim Gaussian noise through OpenDP "
        "(--estimator gaussian, planned in ρ)",
    )  # fmt: skip
    synth.add_argument(
        "--columns", type=lambda text: tuple(text.split(",")), metavar="C1,C2,…",
        help="the columns to synthesize besides --by (default: the demo's, else the first six "
        "text columns)",
    )  # fmt: skip
    synth.add_argument(
        "--synth-rows", type=int, default=10_000, metavar="N",
        help="synthetic rows, shared among the groups by their shares (default 10000)",
    )  # fmt: skip
    synth.add_argument(
        "--synth-edges", type=bucket_edges, action="append", default=[],
        metavar="COL=E1;E2;...",
        help="public bucket edges of a numeric column to synthesize (quote it in a shell); "
        "repeat for each; default: the Estimator page's (age, hours_per_week, score)",
    )  # fmt: skip
    synth.add_argument(
        "--categorical", type=column_list, metavar="COL[,COL...]",
        help="numeric columns whose values are categories (codes such as 0/1); their list of "
        "values is read from the data and treated as public; default: income_over_50k",
    )  # fmt: skip


def ratio_arguments(parser: argparse.ArgumentParser) -> None:
    ratio = parser.add_argument_group("ratio (with --analysis ratio)")
    ratio.add_argument("--score", metavar="COL", help="the score column (numerator)")
    ratio.add_argument("--label", metavar="COL", help="the label column (denominator)")
    ratio.add_argument("--weight", metavar="COL", help="a survey-weight column (optional)")
    ratio.add_argument(
        "--score-bound", type=positive_bound, metavar="U",
        help="the largest score anyone could have, known without the data (1 for a probability)",
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
        help="Gaussian accounting: basic (the paper's; the classic calibration at an ε budget, "
        "below ε = 5 sums' worth) or zcdp (σ from ρ; the answer is then in ρ). Default basic",
    )  # fmt: skip
    ratio.add_argument(
        "--delta", type=float, default=1e-6, help="δ of the classic Gaussian (default 1e-6)"
    )


def planned_analysis(args: argparse.Namespace, frame: pd.DataFrame) -> tuple[Analysis, object]:
    """The analysis ``args`` name, the mean or the general estimator, and its settings checked
    by the library against ``frame`` (the ratio and synthetic data read their data through an
    engine instead, :func:`ratio_on_engine`, :func:`synth_on_data`)."""
    missing = [option for option, value in (("--value", args.value), ("--bounds", args.bounds))
               if value is None]  # fmt: skip
    if missing:
        raise CliError(
            f"the mean needs {' and '.join(missing)}: the column to average and its public "
            "range L,U (e.g. --value hours --bounds 0,100)"
        )
    if args.analysis == "gvdp":
        return GVDP, gvdp_settings(args, frame)
    check_coinpress_sizes(args)
    return MEAN, mean_settings(args, frame, args.strategy, args.global_fraction)


def ratio_on_engine(
    args: argparse.Namespace, settings: RatioSettings
) -> EngineStatistics[GroupRatioSums]:
    """The ratio's sums of the data, read by the engine ``args`` ask for, each person's rows
    bounded as ``--person`` says; a wrong column is named, with the data's columns, before the
    pass (:func:`~dpcore.engines.base.check_query`)."""
    unit = privacy_unit(args)
    return aggregate_ratio(
        open_engine(args),
        grouping_spec(args), s_column=settings.s_column, y_column=settings.y_column,
        w_column=settings.w_column, bounds=settings.bounds, binary_y=settings.binary_y,
        unit=unit,
    )  # fmt: skip


def gvdp_settings(args: argparse.Namespace, frame: pd.DataFrame) -> GvdpSettings:
    """The general estimator's settings for the mean of ``--value``: the public range and row
    spread of ``--bounds`` and ``--spread``, ``--subsets`` subsets, ``--strategy``."""
    if args.estimator != "gaussian":
        raise CliError(
            "the general estimator adds Gaussian noise, so its budget is in ρ-zCDP: pass "
            "--estimator gaussian with --analysis gvdp"
        )
    if args.strategy == "global_and_groups":
        raise CliError(
            "the general estimator publishes per group (stratified) or for everyone "
            "(global_only), not both with a split budget: choose one --strategy"
        )
    low, high = args.bounds
    if not low < high:
        raise CliError(f"--bounds: L must be below U, got {low:g},{high:g}")
    spread = args.spread if args.spread is not None else (high - low) / 2
    key = ("mean", args.value, args.value)
    settings = GvdpSettings(
        model="mean", outcomes=(("mean", args.value),), ks=(("mean", args.subsets),),
        box=((key, (low, high, spread)),), strategy=args.strategy,
    )  # fmt: skip
    GVDP.check(settings, frame)
    return settings


def ratio_settings(args: argparse.Namespace) -> RatioSettings:
    """The ratio's settings; a missing column or bound names its option, a mechanism it does
    not have names those it has. The columns are checked against the data by the caller."""
    used = [option for option, value in (("--value", args.value), ("--bounds", args.bounds))
            if value is not None]  # fmt: skip
    if used:
        raise CliError(
            f"{' and '.join(used)} {'is' if len(used) == 1 else 'are'} for the mean; the ratio "
            "takes --score, --label and --score-bound (and --label-bound, --weight, "
            "--weight-bound)"
        )
    needed = {"--score": args.score, "--label": args.label, "--score-bound": args.score_bound}
    if args.weight is not None:
        needed["--weight-bound"] = args.weight_bound
    missing = [option for option, value in needed.items() if value is None]
    if missing:
        raise CliError(
            f"the ratio needs {', '.join(missing)}: the score and label columns and the "
            "largest score anyone could have, known without looking at the data (1 for a "
            "probability); a weight column needs the largest weight of the survey design"
        )
    if args.weight is not None and args.weight_bound < 1:
        raise CliError(
            f"--weight-bound must be at least 1, got {args.weight_bound:g}: weights are clipped "
            "to [0, bound], and a bound below 1 would shrink even a weight of 1"
        )
    if args.estimator not in MECHANISMS:
        raise CliError(
            f"the ratio adds Laplace or Gaussian noise to its sums, not {args.estimator}: pass "
            "--estimator laplace or --estimator gaussian"
        )
    composition: Composition = args.composition
    return RatioSettings(
        s_column=args.score, y_column=args.label, w_column=args.weight,
        s_bound=args.score_bound, y_bound=args.label_bound or 1.0,
        w_bound=args.weight_bound or 1.0, binary_y=args.label_bound is None,
        mechanism=args.estimator, composition=composition, delta=args.delta,
    )  # fmt: skip


def synth_on_data(
    args: argparse.Namespace, spec: GroupingSpec | None = None
) -> tuple[SynthSettings, PreparedRows, DatasetRef]:
    """Synthetic data's settings, the rows it is fitted on and the data reference a release
    records. Independent marginals, the histogram and MWEM count each combination of values in
    one pass of the engine ``args`` ask for (a file, a folder of Parquet parts, a Spark table;
    :func:`~dpcore.analyses.synth.aggregate.aggregate_synth`); MST and AIM, which OpenDP fits on rows, read one
    file into memory, in the groups of ``spec`` (default: the grouping options'). Each row is
    one person: ``--person`` is refused."""
    if args.person is not None:
        raise CliError(
            "synthetic data counts each row as one person and cannot bound a person's rows "
            "yet; leave out --person (and --max-groups, --max-rows) if each row is one person"
        )
    spec = grouping_spec(args) if spec is None else spec
    if args.synthesizer not in MBI_METHODS:
        engine = open_engine(args)
        settings = synth_settings(args, engine.column_kinds())
        aggregated = SYNTH.engine_statistics(engine, spec, settings)
        return settings, aggregated.stats, aggregated.dataset
    if args.engine not in (None, "pandas") or not Path(args.data).is_file():
        raise CliError(MBI_NEEDS_ROWS.replace("upload the data", "give one file"))
    frame = read_data(args.data, getattr(args, "decimal_comma", False))
    settings = synth_settings(args, column_kinds(frame))
    stats = SYNTH.statistics(frame, spec.build(frame), settings)
    return settings, stats, DatasetRef.of(frame, Path(args.data).name)


def synth_settings(args: argparse.Namespace, kinds: dict[str, str]) -> SynthSettings:
    """The synthesizer's settings for data whose columns and their kinds are ``kinds``; an
    option that does not apply, a noise that does not match the synthesizer, or columns that
    cannot be synthesized name what to change."""
    used = [option for option, value in (("--value", args.value), ("--bounds", args.bounds))
            if value is not None]  # fmt: skip
    if used:
        raise CliError(
            f"{' and '.join(used)} {'is' if len(used) == 1 else 'are'} for the mean; synthetic "
            "data takes --synthesizer, --columns and --synth-rows"
        )
    if getattr(args, "target_rel", None) is not None:  # a plan's, refused before any synthesis
        raise CliError(
            "synthetic data has no true value to take a percentage of: its error is already a "
            "share of the rows; give --target-abs H with H a workload error from 0 to 2"
        )
    noise = "gaussian" if args.synthesizer in MBI_METHODS else "laplace"
    if args.estimator != noise:
        raise CliError(
            f"{METHOD_NAMES[args.synthesizer]} adds {noise.capitalize()} noise: pass "
            f"--estimator {noise} with --synthesizer {args.synthesizer}"
        )
    if args.strategy == "global_and_groups":
        raise CliError(
            "synthetic data is made with one model per group (stratified) or one model for "
            "everyone (global_only), not both: choose one --strategy"
        )
    defaults = SynthSettings()
    settings = SynthSettings(
        method=args.synthesizer, columns=args.columns, n_rows=args.synth_rows,
        strategy="stratified" if args.strategy == "stratified" else "vanilla",
        edges=tuple(args.synth_edges) or defaults.edges,
        categorical=defaults.categorical if args.categorical is None else args.categorical,
    )  # fmt: skip
    missing = [c for c in args.columns or () if c not in kinds]
    if missing:
        raise CliError(f"--columns: no column {', '.join(map(repr, missing))} in the data")
    return settings


def budget_kind(args: argparse.Namespace) -> str:
    """The kind of budget the answer is counted in: ρ for Gaussian synthesizers (MST, AIM)."""
    return "zcdp" if args.analysis == "synth" and args.estimator == "gaussian" else "pure"
