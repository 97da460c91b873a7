"""The command line finds every analysis through the registry (issue 35, item 4).

``strata_cli`` never compares anything with an analysis' name, keys a table by one, or imports
an analysis' own package (its settings class, its singleton, its aggregate): each analysis'
options, settings and statistics come through :mod:`dpcore.analyses` and its command-line
adapter (:mod:`dpcore.analyses.command_line`). The scanner reads the code (AST), so a name in a
docstring, a help text or an error message does not count; planted branches prove it sees them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import strata_cli
from dpcore.analyses import ANALYSES, REGISTRY

CLI_DIR = Path(strata_cli.__file__).resolve().parent
NAMES = frozenset(REGISTRY)
SETTINGS_CLASSES = frozenset(analysis.settings_type.__name__ for analysis in ANALYSES)
OWN_PACKAGES = tuple(f"dpcore.analyses.{name}" for name in NAMES)


def names_in(node: ast.AST) -> list[str]:
    """The registry names written as string literals anywhere under ``node``."""
    return [
        sub.value
        for sub in ast.walk(node)
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in NAMES
    ]


def name_branches(source: str) -> list[str]:
    """Where ``source`` branches on an analysis' name or reaches into an analysis' own
    package, as ``"line: what"`` strings."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            hits, what = names_in(node), "compares with"
        elif isinstance(node, ast.match_case):
            hits, what = names_in(node.pattern), "matches"
        elif isinstance(node, ast.Dict):
            hits, what = [n for key in node.keys if key for n in names_in(key)], "keys a table by"
        elif isinstance(node, ast.Subscript):
            hits, what = names_in(node.slice), "looks up"
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            hits = [m for m in modules if m.startswith(OWN_PACKAGES)]
            hits += [a.name for a in node.names if a.name in SETTINGS_CLASSES]
            what = "imports"
        elif isinstance(node, ast.Import):
            hits = [a.name for a in node.names if a.name.startswith(OWN_PACKAGES)]
            what = "imports"
        else:
            continue
        line = (node.pattern if isinstance(node, ast.match_case) else node).lineno
        found += [f"{line}: {what} {hit!r}" for hit in hits]
    return found


def cli_sources() -> list[Path]:
    return sorted(CLI_DIR.rglob("*.py"))


def test_the_scan_reads_the_command_line_and_the_registry():
    assert {"main.py", "plan.py", "release.py", "request.py"} <= {p.name for p in cli_sources()}
    assert {"mean", "ratio", "gvdp", "synth", "sample"} <= NAMES
    assert {"MeanSettings", "SampleSettings"} <= SETTINGS_CLASSES


def test_the_command_line_never_branches_on_an_analysis_name():
    offenders = {
        path.name: hits
        for path in cli_sources()
        if (hits := name_branches(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, f"find the analysis through the registry and its adapter: {offenders}"


@pytest.mark.parametrize(
    "snippet",
    [
        'if args.analysis == "ratio":\n    pass',
        'if "synth" != request.analysis.name:\n    pass',
        'if name in ("ratio", "synth"):\n    pass',
        'ratio = args.analysis == "ratio"',
        'match args.analysis:\n    case "gvdp":\n        pass',
        'CHOICES = {"mean": mean_choices, "ratio": ratio_choices}',
        'analysis = REGISTRY["sample"]',
        "from dpcore.analyses.mean import MeanSettings",
        "from dpcore.analyses.ratio.analysis import RatioSettings",
        "from dpcore.analyses.mean.aggregate import aggregate_mean",
        "from dpcore.analyses import synth",
        "import dpcore.analyses.gvdp.cli",
        "def f():\n    from dpcore.analyses.sample.plan import SampleSettings",
    ],
)
def test_the_scanner_finds_a_planted_branch(snippet):
    assert name_branches(snippet) != []


@pytest.mark.parametrize(
    "snippet",
    [
        'parser.add_argument("--analysis", choices=tuple(REGISTRY), default=ANALYSES[0].name)',
        "from dpcore.analyses import ANALYSES, REGISTRY, get",
        "from dpcore.analyses.command_line import adapter_of",
        "from dpcore.analyses.base import unit_keyword",
        'raise CliError("the mean needs --value")',
        '"""Plans the ratio and synth on engines."""',
        "if adapter.plans_on_engines:\n    pass",
        'if kind == "zcdp":\n    pass',
    ],
)
def test_the_scanner_accepts_the_registry_s_way(snippet):
    assert name_branches(snippet) == []
