"""A committed release as CSV, JSON and a Python script that redoes it.

The exports work from a record alone, so any past release in the ledger can be downloaded again.
"""

from __future__ import annotations

import csv
import io
import json

from dpcore.accounting import SYMBOLS
from dpcore.datasets import DEMO_DATASET_NAME
from dpcore.release.commit import ReleaseRecord

__all__ = [
    "escape_cell",
    "to_csv",
    "to_json",
    "to_script",
]


_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(value: object) -> object:
    """Neutralise spreadsheet formulas: text starting with = + - @ tab or CR gets a leading '.

    Numbers are left as numbers (a negative number is data, not a formula); only text cells,
    which a spreadsheet could evaluate (e.g. a group called ``=HYPERLINK(...)``), are escaped.
    """
    if isinstance(value, str) and value.startswith(_FORMULA_PREFIXES):
        return "'" + value
    return value


def _metadata_lines(metadata: dict) -> list[tuple[str, str]]:
    plan = metadata["plan"]
    budget = metadata["budget"]
    own = ", ".join(f"{SYMBOLS[k]} = {budget[k]:g}" for k in ("epsilon", "delta", "rho")
                    if k in budget)  # fmt: skip
    equivalents = "; ".join(f"(ε = {e['epsilon']:.4g}, δ = {e['delta']:g})"
                            for e in budget["approx_dp"])  # fmt: skip
    return [
        ("release", metadata["title"]),
        ("released_at", metadata["released_at"]),
        ("dataset", plan["dataset"]["name"]),
        ("dataset_sha256", plan["dataset"]["fingerprint"]),
        ("estimator", json.dumps(plan["estimator"])),
        ("strata", json.dumps(plan["strata"])),
        ("statistic", plan["statistic"]),
        ("strategy", plan.get("strategy", "")),
        ("mechanism", metadata["noise"]),
        ("budget", own),
        ("budget_equivalents", equivalents),
        ("ledger", f"{metadata['ledger']['name']} (total {metadata['ledger']['total']})"),
        ("intervals", metadata["intervals"]),
        ("software", json.dumps(metadata["software"])),
        ("key", metadata["key"]),
    ]


def to_csv(record: ReleaseRecord) -> str:
    """The release as CSV: ``#`` metadata lines, then one row per estimate, formulas escaped.

    Read it back with ``pandas.read_csv(path, comment="#")``.
    """
    buffer = io.StringIO()
    for name, value in _metadata_lines(record.metadata):
        buffer.write(f"# {name}: {str(escape_cell(value)).replace(chr(10), ' ')}\n")
    frame = record.frame.map(escape_cell).rename(columns=escape_cell)
    # Every text cell quoted: read_csv(comment="#") would cut an unquoted label such as "Apt #4"
    # at the "#" and lose the rest of its row; numbers stay unquoted, so they read as numbers.
    frame.to_csv(buffer, index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    return buffer.getvalue()


def to_json(record: ReleaseRecord) -> str:
    """The release as JSON: ``{"metadata": ..., "outputs": [...]}``."""
    metadata = {k: v for k, v in record.metadata.items() if k != "script"}
    return json.dumps({"metadata": metadata, "outputs": record.outputs}, indent=2)


def to_script(record: ReleaseRecord) -> str:
    """A Python script that redoes the release with dpcore's public API.

    Running it against the same ledger returns the recorded release (same plan, same key);
    against another ledger it spends the budget again and draws fresh noise.
    """
    plan = record.metadata["plan"]
    dataset = plan["dataset"]
    if dataset["name"] == DEMO_DATASET_NAME:
        loader = "from dpcore import load_demo\n\nframe = load_demo()\n"
    else:
        loader = (
            "from dpcore import read_table\n\n"
            f"PATH = {dataset['name']!r}  # the file the release was made from\n"
            "with open(PATH, 'rb') as handle:\n"
            "    frame = read_table(handle.read(), PATH)\n"
        )
    # The docstring shows the title's repr. Escape its backslashes and quotes so that the
    # docstring reads exactly that and no title can end it early (\"\"\" was a syntax error).
    title = repr(record.metadata["title"]).replace("\\", "\\\\").replace('"', '\\"')
    return (
        f'"""Reproduce the release {title} '
        f"({record.metadata['released_at']}).\n\n"
        "Running this spends privacy budget from the ledger below, unless this exact release is\n"
        'already recorded there. A numpy dry run (NOISE = "simulation") is charged like a\n'
        'release: point STRATA_LAB_LEDGER at a scratch file first.\n"""\n\n'
        f"{loader}"
        "from dpcore import ZCDP, ApproxDP, Ledger, PureDP, fingerprint_frame, release, to_csv\n\n"
        f"EXPECTED_SHA256 = {dataset['fingerprint']!r}\n"
        "if fingerprint_frame(frame) != EXPECTED_SHA256:\n"
        "    raise SystemExit('This is not the data the release was made from (fingerprint "
        "differs).')\n\n"
        f"{record.metadata['script']}\n"
        f"NOISE = {record.metadata.get('noise_kind', 'secure')!r}  # as recorded; another kind "
        "is another release\n"
        f"ledger = Ledger(None, {record.metadata['ledger']['name']!r}, "
        f"{record.metadata['ledger']['total_code']})\n"
        "result = release(plan, ledger, noise=NOISE)\n"
        "print(to_csv(result))\n"
    )
