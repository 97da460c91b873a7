"""A release's exported script: it compiles whatever the title, imports once from the modules'
current homes, and redoes the release once per ledger on the same data only."""

from __future__ import annotations

import ast
import dataclasses
import importlib

import pytest

from dpcore.foundations.accounting import PureDP
from dpcore.foundations.io import read_table
from dpcore.foundations.ledger import Ledger
from dpcore.release.commit import release
from dpcore.release.exports import to_csv, to_script
from tests import REPO
from tests.scripts import assert_reruns_as_recorded, run_script
from tests.unit.dpcore.release_helpers import assert_no_data_hash, make_plan, regions


@pytest.mark.parametrize(
    "title", ['Hours """ by sex', 'ends with a quote"', "back\\slash", "it's\nmultiline"]
)
def test_script_compiles_whatever_the_title(demo, ledger, title):
    record = release(make_plan(demo, by=("sex",), label=title), ledger, noise="simulation", rng=7)
    script = to_script(record)
    tree = ast.parse(script)  # a title must not be able to end the docstring early
    assert ast.get_docstring(tree).startswith(f"Reproduce the release {title!r} (")
    assert f"label={title!r}," in script


def test_the_script_of_intervals_with_sampling_error_finds_its_release(demo, ledger, tmp_path):
    plan = make_plan(demo, by=("sex",), sampling_error=True, variance_fraction=0.3)
    record = release(plan, ledger, noise="simulation", rng=3)
    assert "variance_fraction=0.3," in to_script(record)
    done = run_script(to_script(record), tmp_path, ledger.path, REPO)
    assert done.returncode == 0, done.stderr  # the same plan, so the same key
    assert done.stdout == to_csv(record) + "\n"


@pytest.mark.slow
def test_script_redoes_the_demo_release_once_per_ledger(demo, ledger, tmp_path):
    plan = make_plan(demo)
    record = release(plan, ledger)  # OpenDP noise, so the script (NOISE as recorded) matches
    script = to_script(record)
    assert "frame, dataset = load_demo_dataset()" in script

    # Same ledger: the script rebuilds an identical plan (same key) and prints the record.
    assert_reruns_as_recorded(script, record, tmp_path, ledger)
    assert ledger.remaining() == {"rho": 0.5}

    # A fresh ledger holds no release of the plan: the script stops and spends nothing...
    fresh = tmp_path / "fresh.sqlite"
    done = run_script(script, tmp_path, fresh, REPO)
    assert done.returncode == 1 and done.stdout == ""
    assert "The ledger holds no release of this plan on this data" in done.stderr
    assert Ledger.open(fresh, "default").history() == []

    # ...unless asked to release again: fresh OpenDP noise, charged exactly once.
    again = script.replace("NEW_RELEASE = False", "NEW_RELEASE = True")
    done = run_script(again, tmp_path, fresh, REPO)
    assert done.returncode == 0, done.stderr
    redone = Ledger.open(fresh, "default")
    [entry] = redone.history()
    assert entry.key == record.key
    assert entry.cost == PureDP(1.0)
    assert redone.remaining() == {"rho": 0.5}
    assert "OpenDP" in entry.payload["metadata"]["noise"]
    assert entry.payload["outputs"] != record.outputs  # fresh noise
    assert len(ledger.history()) == 1


@pytest.mark.slow
def test_script_for_an_uploaded_file_reads_it_and_asks_the_ledger_if_it_is_the_data(
    ledger, tmp_path
):
    folder = tmp_path / "data"
    folder.mkdir()
    file = folder / "survey 2026.csv"
    regions(seed=9).to_csv(file, index=False)
    frame = read_table(file.read_bytes(), file.name)
    plan = make_plan(frame, name=file.name, by=("region",), value="hours", data=file.read_bytes())
    record = release(plan, ledger, noise="simulation", rng=10)
    script = to_script(record)
    assert f"PATH = {file.name!r}" in script
    assert "frame, dataset = read_dataset(PATH)" in script
    assert_no_data_hash(script, record)

    assert_reruns_as_recorded(script, record, tmp_path, ledger, folder)

    lines = file.read_text().splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",12.5"  # someone edited one value
    file.write_text("\n".join(lines) + "\n")
    done = run_script(script, tmp_path, ledger.path, folder)
    assert done.returncode == 1
    assert "the data differ from the release's, or the ledger is another one" in done.stderr
    assert done.stdout == ""
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 0.5}


def test_the_script_imports_each_module_once_at_its_top(demo_record):
    """Each part of the script brought its own imports, repeated through the file."""
    statements = ast.parse(to_script(demo_record)).body[1:]  # after the docstring
    imports = [s for s in statements if isinstance(s, ast.ImportFrom | ast.Import)]
    assert statements[: len(imports)] == imports  # all before any code
    modules = [s.module for s in imports]
    assert len(modules) == len(set(modules))
    names = {alias.name for s in imports for alias in s.names}
    assert {"load_demo_dataset", "Ledger", "PlanHeader", "MeanPlan"} <= names


def test_a_script_recorded_before_the_layout_moved_imports_from_the_new_homes(demo_record):
    """Records keep their plan's script: one recorded when engines held the analyses' passes
    and the privacy unit stood at dpcore's top imports from there; exported again, it runs."""
    old = (
        "from dpcore.engines import DuckDBEngine, aggregate_mean\n"
        "from dpcore.foundations.privacy_unit import PrivacyUnit\n"
        "aggregated = aggregate_mean(DuckDBEngine('x'), spec, 'v', (0, 1), PrivacyUnit('p'))\n"
    )
    record = dataclasses.replace(demo_record, metadata={**demo_record.metadata, "script": old})
    statements = ast.parse(to_script(record)).body
    found = {(s.module, a.name) for s in statements if isinstance(s, ast.ImportFrom)
             for a in s.names}  # fmt: skip
    assert {("dpcore.engines", "DuckDBEngine"),
            ("dpcore.analyses.mean.aggregate", "aggregate_mean"),
            ("dpcore.foundations.privacy_unit", "PrivacyUnit")} <= found  # fmt: skip
    for module, name in found:
        assert hasattr(importlib.import_module(module), name), (module, name)
