"""Architecture guards for ``dpcore``.

1. ``dpcore`` is the pure numerics layer: importing it, or any of its submodules, must never pull
   in the UI stack (``streamlit``, ``plotly``).
2. No randomness may come from numpy's hidden global state (``np.random.seed``,
   ``np.random.normal``, …): every draw goes through an explicit ``np.random.Generator`` so that
   results are reproducible from the ``rng`` argument alone.
"""

from __future__ import annotations

import ast
import json
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import dpcore
from tests import REPO

REPO_ROOT = REPO
DPCORE_DIR = Path(dpcore.__file__).resolve().parent
FORBIDDEN_MODULES = ("streamlit", "plotly")

# ---------------------------------------------------------------------------------------------
# 1. No UI imports
# ---------------------------------------------------------------------------------------------

# Runs in a fresh interpreter: imports the given modules one by one and reports, for each, which
# forbidden top-level packages are in sys.modules after importing it, or why the import failed.
_PROBE = textwrap.dedent(
    """
    import importlib, json, sys
    modules, forbidden = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    report = {}
    for name in modules:
        try:
            importlib.import_module(name)
            error = None
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        leaked = sorted(m for m in sys.modules if m.split(".")[0] in forbidden)
        report[name] = {"leaked": leaked, "error": error}
    print(json.dumps(report))
    """
)


def dpcore_modules() -> tuple[list[str], list[str]]:
    """``dpcore`` and every submodule found by ``pkgutil.walk_packages``, plus the subpackages
    that could not be imported while walking (their contents cannot be listed)."""
    unimportable: list[str] = []
    found = pkgutil.walk_packages(dpcore.__path__, prefix="dpcore.", onerror=unimportable.append)
    return ["dpcore", *sorted(info.name for info in found)], unimportable


def imports_in_fresh_interpreter(modules: list[str]) -> dict[str, dict]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(modules), json.dumps(FORBIDDEN_MODULES)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"the import probe crashed:\n{result.stderr}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_walk_finds_the_core_modules():
    modules, _ = dpcore_modules()
    assert {
        "dpcore",
        "dpcore.foundations.accounting",
        "dpcore.foundations.mechanisms",
        "dpcore.foundations.validation",
    } <= set(modules)


@pytest.mark.slow  # a fresh interpreter importing numpy, scipy, pandas, …: ~1–3 s
def test_dpcore_never_imports_streamlit_or_plotly():
    modules, unimportable = dpcore_modules()
    report = imports_in_fresh_interpreter(modules)
    assert list(report) == modules
    # Every module must be checked, so one that cannot be imported is a failure too.
    errors = {name: r["error"] for name, r in report.items() if r["error"]}
    assert unimportable == [] and errors == {}, f"cannot import {unimportable or ''} {errors}"
    offenders = {name: r["leaked"] for name, r in report.items() if r["leaked"]}
    # In import order, the first offender is the module that pulls in the UI stack.
    assert offenders == {}, f"dpcore modules import the UI stack: {offenders}"


def test_import_probe_detects_a_ui_import_and_an_import_error():
    # Negative controls: the probe sees a forbidden package when one is imported, and reports a
    # module that fails to import instead of silently skipping it.
    report = imports_in_fresh_interpreter(["json", "plotly", "dpcore.no_such_module"])
    assert report["json"] == {"leaked": [], "error": None}
    assert "plotly" in report["plotly"]["leaked"]
    assert report["plotly"]["error"] is None
    assert "ModuleNotFoundError" in report["dpcore.no_such_module"]["error"]


# ---------------------------------------------------------------------------------------------
# 2. No numpy global random state
# ---------------------------------------------------------------------------------------------

# Names under numpy.random that do not touch the global RandomState.
ALLOWED_RANDOM_NAMES = frozenset(
    {
        "default_rng",
        "Generator",
        "SeedSequence",
        "BitGenerator",
        "PCG64",
        "PCG64DXSM",
        "Philox",
        "SFC64",
        "MT19937",
    }
)


def global_random_uses(source: str) -> list[str]:
    """Uses of numpy's global random state in ``source``, as ``"line: expression"`` strings.

    Parses the code (so comments and docstrings that *mention* ``np.random.seed`` do not count)
    and follows aliases: ``import numpy as np``, ``import numpy.random as npr``,
    ``from numpy import random`` and ``from numpy.random import normal``.
    """
    tree = ast.parse(source)
    numpy_names: set[str] = set()
    random_names: set[str] = set()
    uses: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "numpy":
                    numpy_names.add(alias.asname or "numpy")
                elif alias.name == "numpy.random":
                    if alias.asname:
                        random_names.add(alias.asname)
                    else:
                        numpy_names.add("numpy")
        elif isinstance(node, ast.ImportFrom) and node.module in {"numpy", "numpy.random"}:
            for alias in node.names:
                if node.module == "numpy" and alias.name == "random":
                    random_names.add(alias.asname or "random")
                elif node.module == "numpy.random" and alias.name not in ALLOWED_RANDOM_NAMES:
                    uses.append(f"{node.lineno}: from numpy.random import {alias.name}")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.attr in ALLOWED_RANDOM_NAMES:
            continue
        base = node.value
        is_numpy_random = (
            isinstance(base, ast.Attribute)
            and base.attr == "random"
            and isinstance(base.value, ast.Name)
            and base.value.id in numpy_names
        ) or (isinstance(base, ast.Name) and base.id in random_names)
        if is_numpy_random:
            uses.append(f"{node.lineno}: {ast.unparse(node)}")
    return uses


def dpcore_sources() -> list[Path]:
    return sorted(DPCORE_DIR.rglob("*.py"))


def test_dpcore_sources_are_found():
    names = {p.name for p in dpcore_sources()}
    assert {"__init__.py", "accounting.py", "mechanisms.py", "validation.py"} <= names


def test_dpcore_never_uses_numpy_global_random_state():
    offenders = {}
    for path in dpcore_sources():
        uses = global_random_uses(path.read_text(encoding="utf-8"))
        if uses:
            offenders[str(path.relative_to(REPO_ROOT))] = uses
    assert offenders == {}, f"use np.random.default_rng / an rng argument instead: {offenders}"


@pytest.mark.parametrize(
    "snippet",
    [
        "import numpy as np\nnp.random.seed(0)",
        "import numpy as np\nx = np.random.normal(0, 1, 10)",
        "import numpy as np\nx = np.random.rand(3)",
        "import numpy\nnumpy.random.shuffle(xs)",
        "import numpy.random\nnumpy.random.laplace(0, 1)",
        "import numpy.random as npr\nnpr.uniform()",
        "from numpy import random\nrandom.choice([1, 2])",
        "from numpy import random as nr\nnr.standard_normal(4)",
        "from numpy.random import normal",
        "import numpy as np\nstate = np.random.get_state()",
        "import numpy as np\nf = np.random.permutation",
    ],
)
def test_scanner_flags_global_random_state(snippet):
    assert global_random_uses(snippet) != []


@pytest.mark.parametrize(
    "snippet",
    [
        "import numpy as np\nrng = np.random.default_rng(0)\nrng.normal(0, 1)",
        "import numpy as np\ndef f(rng: np.random.Generator): return rng.laplace(0.0, 1.0)",
        "from numpy.random import default_rng, Generator",
        "import numpy as np\nss = np.random.SeedSequence(1)",
        "# np.random.seed(0) in a comment\nimport numpy as np",
        '"""Never call np.random.normal here."""',
        "import random\nrandom.random()",  # the stdlib module is not numpy's global state
    ],
)
def test_scanner_accepts_explicit_generators(snippet):
    assert global_random_uses(snippet) == []


# ---------------------------------------------------------------------------------------------
# 3. The layers: foundations -> engines -> analyses, with the planner and release generic
# ---------------------------------------------------------------------------------------------

# What each layer of dpcore may import from dpcore (any import, at any depth: an import inside a
# function or under TYPE_CHECKING still ties the layers). Engines run generic queries and know no
# analysis; the planner and the release layer work on the Analysis interface's plans and error
# models, which the analyses build from them, so they know no analysis either.
ALLOWED = {
    "dpcore.foundations": ("dpcore.foundations",),
    "dpcore.engines": ("dpcore.foundations", "dpcore.engines"),
    "dpcore.planner": ("dpcore.foundations", "dpcore.planner"),
    "dpcore.release": ("dpcore.foundations", "dpcore.release"),
    "dpcore.analyses": ("dpcore",),
}


def imported_modules(source: str, package: str) -> list[tuple[int, str]]:
    """Every module ``source`` (a module of ``package``) imports, with its line: absolute names,
    and relative ones resolved against ``package``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                found.append((node.lineno, f"{base}.{node.module}" if node.module else base))
            else:
                found.append((node.lineno, node.module))
    return found


def layer_violations(source: str, module: str) -> list[str]:
    """The imports of ``module`` (dotted name, its ``source``) that its layer may not make."""
    layer = next((name for name in ALLOWED if module == name or module.startswith(name + ".")),
                 None)  # fmt: skip
    package = module if module.endswith("__init__") else module.rsplit(".", 1)[0]
    out = []
    for line, imported in imported_modules(source, package.removesuffix(".__init__")):
        if imported.split(".")[0] in ("strata_ui", "strata_cli"):
            out.append(f"{module}:{line} imports {imported}")
        elif (
            layer
            and imported.startswith("dpcore")
            and not any(
                imported == allowed or imported.startswith(allowed + ".")
                for allowed in ALLOWED[layer]
            )
        ):
            out.append(f"{module}:{line} imports {imported}")
    return out


def test_each_layer_of_dpcore_imports_only_what_lies_below_it():
    offenders = []
    for path in dpcore_sources():
        module = ".".join(path.relative_to(REPO_ROOT).with_suffix("").parts)
        offenders += layer_violations(path.read_text(encoding="utf-8"), module)
    assert offenders == [], "imports across the layers:\n" + "\n".join(offenders)


@pytest.mark.parametrize(
    ("module", "snippet"),
    [
        ("dpcore.engines.base", "from dpcore.analyses.mean.sums import GroupSums"),
        ("dpcore.engines.base", "def f():\n    from dpcore.release.plan import DatasetRef"),
        ("dpcore.engines.base", "if TYPE_CHECKING:\n    from dpcore.planner import ErrorModel"),
        ("dpcore.engines.blb", "import dpcore.analyses.gvdp.blb"),
        ("dpcore.foundations.ledger", "from dpcore.engines import Engine"),
        ("dpcore.release.commit", "from dpcore.analyses import REGISTRY"),
        ("dpcore.planner.accuracy", "from ..analyses.mean import MeanPlan"),
        ("dpcore.analyses.mean.plan", "from strata_ui import state"),
    ],
)
def test_the_layer_scanner_flags_an_import_across_the_layers(module, snippet):
    assert layer_violations(snippet, module) != []


@pytest.mark.parametrize(
    ("module", "snippet"),
    [
        ("dpcore.engines.base", "from dpcore.foundations.grouping import GroupingSpec"),
        ("dpcore.engines.duckdb_engine", "from dpcore.engines.base import Engine"),
        ("dpcore.engines.duckdb_engine", "from .base import Engine"),
        ("dpcore.analyses.mean.aggregate", "from dpcore.engines.base import SumsQuery"),
        ("dpcore.analyses.base", "from dpcore.release.plan import PlanHeader"),
        ("dpcore.release.plan", "import numpy as np"),
    ],
)
def test_the_layer_scanner_accepts_imports_from_below(module, snippet):
    assert layer_violations(snippet, module) == []
