"""Every command of the README's command-line examples runs as written (issue 35, item 4).

Each ``$ strata-lab ...`` line of a fenced console block in README.md (with its ``\\``
continuation lines) runs in-process through :func:`strata_cli.main.main`, in a folder that
holds the demo data at ``assets/adult.csv.gz`` and a small generated ``data/people/`` folder of
Parquet parts. It must exit with status 0, and print what the README shows under it: the same
first line for text, the keys shown for JSON.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore.foundations.datasets import DEMO_DATA_PATH
from strata_cli.main import main
from tests import REPO

README = REPO / "README.md"


@dataclass(frozen=True)
class Example:
    """One command of a console block, and the output lines the README shows under it."""

    argv: tuple[str, ...]
    shown: tuple[str, ...]

    @property
    def id(self) -> str:
        """The subcommand, the analysis and the data, e.g. ``release sample adult.csv.gz``."""
        analysis = self.argv[self.argv.index("--analysis") + 1] if "--analysis" in self.argv else ""
        return " ".join(filter(None, (self.argv[0], analysis, Path(self.argv[1]).name)))


def console_examples(text: str) -> list[Example]:
    """The ``strata-lab`` commands of ``text``'s ```console blocks with their shown output."""
    examples = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.DOTALL):
        command, shown = None, []
        lines = iter(block.splitlines())
        for line in lines:
            if line.startswith("$ "):
                if command is not None:
                    examples.append(Example(tuple(shlex.split(command)[1:]), tuple(shown)))
                command, shown = line[2:], []
                while command.endswith("\\"):
                    command = command[:-1] + next(lines)
            else:
                shown.append(line)
        if command is not None:
            examples.append(Example(tuple(shlex.split(command)[1:]), tuple(shown)))
    return examples


EXAMPLES = console_examples(README.read_text(encoding="utf-8"))


@pytest.fixture
def examples_folder(tmp_path, monkeypatch) -> Path:
    """A working folder with the demo data where the README puts it, and ``data/people/``: two
    Parquet parts of race, sex, hours and a household id shared by up to a few rows."""
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "adult.csv.gz").symlink_to(DEMO_DATA_PATH)
    rng = np.random.default_rng(0)
    n = 3000
    people = pd.DataFrame({
        "race": rng.choice(["White", "Black", "Asian"], n), "sex": rng.choice(["F", "M"], n),
        "hours": rng.normal(40, 10, n).clip(0, 100), "household": rng.integers(0, 1800, n),
    })  # fmt: skip
    folder = tmp_path / "data" / "people"
    folder.mkdir(parents=True)
    people.iloc[: n // 2].to_parquet(folder / "part-0.parquet")
    people.iloc[n // 2 :].to_parquet(folder / "part-1.parquet")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_has_examples_of_every_subcommand():
    assert {e.argv[0] for e in EXAMPLES} == {"plan", "frontier", "release"}
    assert any("sample" in e.argv for e in EXAMPLES)


def test_the_parser_joins_continued_lines_and_keeps_the_output():
    text = '```console\n$ strata-lab plan x.csv --by a \\\n    --value v\n{\n  "k": 1\n}\n```\n'
    [example] = console_examples(text)
    assert example.argv == ("plan", "x.csv", "--by", "a", "--value", "v")
    assert example.shown == ("{", '  "k": 1', "}")


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_each_readme_example_runs_and_prints_what_the_readme_shows(
    capsys, examples_folder, example
):
    assert main(list(example.argv)) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.strip(), "the command printed nothing"
    if out.startswith("{"):
        document = json.loads(out)
        shown_keys = re.findall(r'^  "(\w+)":', "\n".join(example.shown), flags=re.MULTILINE)
        assert set(shown_keys) <= set(document), set(shown_keys) - set(document)
        assert document.get("outputs") or document.get("groups")
    elif example.shown:
        assert out.splitlines()[0] == example.shown[0]
