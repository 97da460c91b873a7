"""A committed release as CSV, JSON and a Python script that redoes it.

The exports work from a record alone, so any past release in the ledger can be downloaded again.
They carry DP outputs, their post-processing, what the user declared on screen and what the
people in the data have lost in all (budgets only), never a function of the confidential rows:
the ledger keeps the dataset's identity, its row count and the release's key (a hash of the
plan, identity included) for the curator, and :func:`public_metadata` leaves them out. An
identity is a deterministic function of the data: whoever knows every row but one recovers the
last by hashing the candidates. The script computes the identity from the file it reads, as
the app did; it never carries it.
"""

from __future__ import annotations

import csv
import io
import json
import re

from dpcore.foundations.accounting import SYMBOLS
from dpcore.foundations.cells import escape_cell
from dpcore.foundations.datasets import DEMO_DATASET_NAME
from dpcore.release.commit import ReleaseRecord

__all__ = [
    "SHARE_COLUMNS",
    "declared_public_statement",
    "escape_cell",
    "groups_statement",
    "public_metadata",
    "publishes_shares",
    "shares_statement",
    "small_groups_statement",
    "to_csv",
    "to_json",
    "to_script",
]


# Kept in the ledger for the curator (exactly-once key, reproduction check), never exported.
CURATOR_ONLY = ("key", "run_id", "script")


def public_metadata(metadata: dict) -> dict:
    """A release's metadata as it may leave the curator: without the key, the run id, the
    script body and the dataset's identity and row count; the dataset keeps only its name
    (the file name the user chose, shown on screen)."""
    public = {k: v for k, v in metadata.items() if k not in CURATOR_ONLY}
    plan = metadata["plan"]
    return public | {"plan": plan | {"dataset": {"name": plan["dataset"]["name"]}}}


def declared_public_statement(metadata: dict) -> str:
    """The sentence that opens every export: exactly what the release declared public (the
    plan's :meth:`~dpcore.release.ReleasePlan.declared_public`, recorded at the commit), and
    that every other number is a DP output or computed from DP outputs."""
    facts = metadata.get("declared_public")
    if facts is None:  # a release committed before this was recorded
        return (
            "What this release declared public was not recorded; its plan below lists its "
            "settings, and its numbers are DP outputs or computed from DP outputs."
        )
    if not facts:
        return (
            "Nothing was declared public for this release: every number below is a DP output "
            "or computed from DP outputs."
        )
    return (
        f"Declared public for this release, not protected by differential privacy: "
        f"{'; '.join(facts)}. Every other number below is a DP output or computed from DP "
        "outputs."
    )


def _metadata_lines(metadata: dict) -> list[tuple[str, str]]:
    plan = metadata["plan"]
    budget = metadata["budget"]
    own = ", ".join(f"{SYMBOLS[k]} = {budget[k]:g}" for k in ("epsilon", "delta", "rho")
                    if k in budget)  # fmt: skip
    equivalents = "; ".join(f"(ε = {e['epsilon']:.4g}, δ = {e['delta']:g})"
                            for e in budget["approx_dp"])  # fmt: skip
    return [
        ("release", metadata["title"]),
        ("declared_public", declared_public_statement(metadata)),
        ("released_at", metadata["released_at"]),
        ("dataset", plan["dataset"]["name"]),
        ("estimator", json.dumps(_cells_escaped(plan["estimator"]))),
        ("strata", json.dumps(_cells_escaped(plan["strata"]))),
        ("groups", groups_statement(plan["strata"])),
        ("statistic", plan["statistic"]),
        ("strategy", plan.get("strategy", "")),
        ("mechanism", metadata["noise"]),
        ("budget", own),
        ("privacy_unit", _privacy_unit_line(plan.get("privacy_unit"))),
        *(
            [("group_selection", json.dumps(plan["group_selection"]))]
            if "group_selection" in plan
            else []
        ),
        # Bounds found privately: how, and what they cost (the bounds are on every row).
        *([("bounds", json.dumps(plan["bounds"]))] if "bounds" in plan else []),
        ("budget_equivalents", equivalents),
        *([("rows_per_group", plan["rows_per_group"])] if "rows_per_group" in plan else []),
        ("ledger", f"{metadata['ledger']['name']} (total {metadata['ledger']['total']})"),
        *(
            [("cumulative_loss", metadata["cumulative_loss"]["statement"])]
            if "cumulative_loss" in metadata
            else []
        ),
        ("intervals", metadata["intervals"]),
        *([("coverage", metadata["coverage"]["note"])] if "coverage" in metadata else []),
        ("software", json.dumps(metadata["software"])),
    ]


def _cells_escaped(value: object) -> object:
    """``value`` with every text in it escaped as a cell (:func:`escape_cell`): a metadata line
    lists categories, and a spreadsheet splits the line at its commas into cells."""
    if isinstance(value, dict):
        return {k: _cells_escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cells_escaped(v) for v in value]
    return escape_cell(value)


def groups_statement(strata: dict) -> str:
    """Where the list of groups comes from: a declared public list, a private selection, or
    the data."""
    if "selection_fraction" in strata:
        return (
            f"found privately with {strata['selection_fraction']:.0%} of the release's ε: "
            "Laplace noise on the count of each combination present in the data, and only the "
            "combinations whose noisy count reached the threshold (see `group_selection`) are "
            "released; rows of the others are left out"
        )
    if "categories" in strata:
        origin = (
            "prefilled from the categories found in the data and accepted on screen as public"
            if strata.get("categories_source") == "data"
            else "a declared public list"
        )
        return (
            f"{origin}: every combination of the categories in `strata`, one with no rows "
            "included; rows with another category are left out"
        )
    return (
        "the combinations present in the data, treated as public (a new category appears "
        "with its first person)"
    )


def small_groups_statement(strata: dict) -> str | None:
    """How the release's own noisy counts decided its small groups (the rows' ``flag`` says
    which), or None when no such rule applied (groups kept, or decided before the release)."""
    if strata["share_source"] != "noisy_counts" or strata["small_groups"] == "keep":
        return None
    what = {
        "merge": "merged into one group “Other (merged)”, whose estimate is their pooled noisy "
        "sum over their pooled noisy count (and not released if that pooled count is also below "
        "it)",
        "drop": "not released",
    }[strata["small_groups"]]
    return (
        f"groups whose noisy count (drawn and paid for with this release, differentially "
        f"private) was below {strata['min_group_size']:,} were {what}; `flag` says which. The "
        "decision reads only the noisy counts, never the exact ones"
    )


SHARE_COLUMNS = ("public_share", "noisy_share")
"""The columns in which group rows publish the share they are recombined with."""

_SHARE_STATEMENTS = {
    "data": "public_share: each group's count in the data over all the rows used, treated as "
    "public by the user (not protected by differential privacy)",
    "table": "public_share: from a table of public shares the user supplied",
    "holdout": "public_share: group counts of a public holdout split of the rows, treated as "
    "public and not used for the estimates",
    "noisy_counts": "noisy_share: each group's noisy count (drawn and paid for with this "
    "release, differentially private) over the sum of the noisy counts, negative counts taken "
    "as 0 (equal shares if none is positive); no exact count, share or row total is published",
}


def shares_statement(strata: dict) -> str:
    """Where the shares a release publishes beside its group estimates come from."""
    return _SHARE_STATEMENTS[strata["share_source"]]


def publishes_shares(record: ReleaseRecord) -> bool:
    return any(column in row for row in record.outputs for column in SHARE_COLUMNS)


def _privacy_unit_line(unit: dict | None) -> str:
    if unit is None:
        return "one row: neighbouring datasets differ by one row"
    return (
        f"one person (column {unit['column']}), at most {unit['max_groups']} group(s) and "
        f"{unit['max_rows']} row(s) per group each: neighbouring datasets differ by one person"
    )


def to_csv(record: ReleaseRecord) -> str:
    """The release as CSV: ``#`` metadata lines, then one row per estimate; control characters
    and formulas escaped (:func:`escape_cell`), so every physical line is one line of the table.

    Read it back with ``pandas.read_csv(path, comment="#")``.
    """
    buffer = io.StringIO()
    lines = _metadata_lines(public_metadata(record.metadata))
    strata = record.metadata["plan"]["strata"]
    if publishes_shares(record):
        lines.append(("shares", shares_statement(strata)))
    if (small_groups := small_groups_statement(strata)) is not None:
        lines.append(("small_groups", small_groups))
    for name, value in lines:
        buffer.write(f"# {name}: {escape_cell(str(value))}\n")
    frame = record.frame.map(escape_cell).rename(columns=escape_cell)
    # Every text cell quoted: read_csv(comment="#") would cut an unquoted label such as "Apt #4"
    # at the "#" and lose the rest of its row; numbers stay unquoted, so they read as numbers.
    frame.to_csv(buffer, index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    return buffer.getvalue()


def to_json(record: ReleaseRecord) -> str:
    """The release as JSON: ``{"metadata": ..., "outputs": [...]}`` (:func:`public_metadata`)."""
    metadata = public_metadata(record.metadata)
    metadata["declared_public_statement"] = declared_public_statement(record.metadata)
    if publishes_shares(record):
        metadata["shares"] = shares_statement(metadata["plan"]["strata"])
    if (small_groups := small_groups_statement(metadata["plan"]["strata"])) is not None:
        metadata["small_groups"] = small_groups
    return json.dumps({"metadata": metadata, "outputs": record.outputs}, indent=2)


ENGINE_RECIPE = "from dpcore.engines import"
"""How a plan's script starts the pass of an engine (its statistics' ``recipe``), which reads
the data itself: no frame is loaded then."""


def _decimal_argument(dataset: dict) -> str:
    """``read_dataset``'s decimal argument for a file read with decimal commas, else nothing."""
    decimal = dataset.get("decimal", ".")
    return "" if decimal == "." else f", decimal={decimal!r}"


def to_script(record: ReleaseRecord) -> str:
    """A Python script that redoes the release with dpcore's public API.

    The script embeds nothing computed from the data. It rebuilds the plan from the data it
    reads and asks the ledger for a release under that plan's key: the same data and plan give
    the recorded release, and nothing is spent. Other data (or another ledger) has no release
    under its key, and the script stops without spending unless ``NEW_RELEASE`` is set to True.
    """
    plan = record.metadata["plan"]
    dataset = plan["dataset"]
    script = record.metadata["script"]
    if dataset["name"] == DEMO_DATASET_NAME:
        loader = "from dpcore import load_demo_dataset\n\nframe, dataset = load_demo_dataset()\n"
    elif ENGINE_RECIPE in script and "PandasEngine(" not in script:
        loader = ""  # an engine's pass reads the data where it lies (a folder, a Spark table)
    else:
        # The file's rows and its identity, computed from its bytes as the app computed it.
        loader = (
            "from dpcore import read_dataset\n\n"
            f"PATH = {dataset['name']!r}  # the file the release was made from\n"
            f"frame, dataset = read_dataset(PATH{_decimal_argument(dataset)})\n"
        )
    # The docstring shows the title's repr. Escape its backslashes and quotes so that the
    # docstring reads exactly that and no title can end it early (\"\"\" was a syntax error).
    title = repr(record.metadata["title"]).replace("\\", "\\\\").replace('"', '\\"')
    docstring = (
        f'"""Reproduce the release {title} '
        f"({record.metadata['released_at']}).\n\n"
        "Prints the release recorded in the ledger below when this data and plan made it;\n"
        "otherwise stops without spending. NEW_RELEASE = True releases again instead: it spends\n"
        'budget and draws fresh noise. A numpy dry run (NOISE = "simulation") is charged like a\n'
        'release: point STRATA_LAB_LEDGER at a scratch file first.\n"""\n\n'
    )
    body = (
        f"{loader}"
        "from dpcore import ZCDP, ApproxDP, Ledger, PureDP, plan_key, release, to_csv\n\n"
        f"{record.metadata['script']}\n"
        f"NOISE = {record.metadata.get('noise_kind', 'secure')!r}  # as recorded; another kind "
        "is another release\n"
        "NEW_RELEASE = False  # True: release this plan again (spends budget, fresh noise)\n"
        f"ledger = Ledger(None, {record.metadata['ledger']['name']!r}, "
        f"{record.metadata['ledger']['total_code']})\n"
        "# The ledger, not this file, knows the data of the release: a plan built from other data\n"
        "# has another key, and no release is recorded under it.\n"
        "if not NEW_RELEASE and ledger.get(plan_key(plan, NOISE)) is None:\n"
        "    raise SystemExit(\n"
        "        'The ledger holds no release of this plan on this data: the data differ from the '\n"
        "        'release\\'s, or the ledger is another one. Nothing was spent. Set NEW_RELEASE = '\n"
        "        'True to release again.'\n"
        "    )\n"
        "result = release(plan, ledger, noise=NOISE)\n"
        "print(to_csv(result))\n"
    )
    return docstring + _imports_first(body)


_IMPORT_LINE = re.compile(r"^from (\S+) import (.+)$")
_RELOCATED_MODULES = {"dpcore.privacy_unit": "dpcore.foundations.privacy_unit"}
"""Modules that scripts recorded before the foundations moved (issue 35) import from their old
homes; a script exported again from such a record imports them from the new ones."""
_RELOCATED_NAMES = {
    ("dpcore.engines", f"aggregate_{name}"): f"dpcore.analyses.{name}.aggregate"
    for name in ("mean", "ratio", "gvdp", "synth")
}
"""Engine passes that recorded scripts import from :mod:`dpcore.engines`, which since knows no
analysis: each lives in its analysis' ``aggregate`` module."""


def _home(module: str, name: str) -> str:
    """Where ``name``, imported from ``module`` in a script, lives now."""
    module = _RELOCATED_MODULES.get(module, module)
    return _RELOCATED_NAMES.get((module, name), module)


def _imports_first(body: str) -> str:
    """``body`` with its ``from … import …`` lines gathered at the top, one per module: each
    part of a script (the data's loader, the plan header, the analysis, an engine's pass)
    brings its own, and they stood repeated through the file."""
    names: dict[str, set[str]] = {}
    code = []
    for line in body.splitlines():
        if (found := _IMPORT_LINE.match(line)) is None:
            code.append(line)
        else:
            for name in (n.strip() for n in found[2].split(",")):
                names.setdefault(_home(found[1], name), set()).add(name)
    imports = [_import_line(module, sorted(imported)) for module, imported in names.items()]
    rest = re.sub(r"\n{3,}", "\n\n", "\n".join(code)).strip("\n")
    return "\n".join(imports) + "\n\n" + rest + "\n"


def _import_line(module: str, names: list[str]) -> str:
    line = f"from {module} import {', '.join(names)}"
    if len(line) <= 88:
        return line
    return f"from {module} import (\n" + "".join(f"    {name},\n" for name in names) + ")"
