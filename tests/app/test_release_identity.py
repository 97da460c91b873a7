"""One plan on one file is one release whichever way it is committed: a mean released in the app
on an uploaded CSV and repeated with ``strata-lab release`` on that very file and ledger prints
the recorded release and spends nothing, and the reverse; the release states the people's loss
in all, and the identity of the file shows nowhere a release leaves."""

from __future__ import annotations

import functools
import json

import pytest

from dpcore.analyses.mean import MeanSettings
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.dataset import bytes_identity
from dpcore.foundations.datasets import load_demo
from dpcore.foundations.ledger import Ledger
from dpcore.release import ReleaseRecord, to_csv, to_json, to_script
from strata_cli.main import main
from strata_ui.report import html_report
from tests.app.helpers import change_settings, commit, go, start, state_of, text, upload


@functools.cache
def survey_csv() -> bytes:
    return load_demo().sample(2000, random_state=3).to_csv(index=False).encode()


@pytest.fixture
def survey(tmp_path):
    path = tmp_path / "survey.csv"
    path.write_bytes(survey_csv())
    return path


def planned_in_app():
    """The mean of hours by sex on the uploaded survey, as the command line below plans it:
    sizes declared public (``--sizes-public``), shares and the list of groups from the data."""
    at = upload(start("data"), survey_csv(), "survey.csv")
    change_settings(
        at, MeanSettings, value="hours_per_week", clip_low=0.0, clip_high=100.0, n_public=True
    )
    state = state_of(at)
    state.strata_columns, state.share_source, state.group_list = ["sex"], "data", "data"
    return go(at, "release")


def cli_release(path, engine: str) -> list[str]:
    return [
        "release", str(path), "--by", "sex", "--value", "hours_per_week", "--bounds", "0,100",
        "--estimator", "laplace", "--epsilon", "1", "--sizes-public", "--engine", engine,
    ]  # fmt: skip


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_an_app_release_repeated_from_the_command_line_spends_nothing(capsys, survey, engine):
    at = commit(planned_in_app())
    assert "Released and recorded" in text(at.success)
    ledger = Ledger.open(None, "default")
    [recorded] = ledger.history()
    left = ledger.remaining()

    assert main(cli_release(survey, engine)) == 0
    captured = capsys.readouterr()
    assert "this plan was released before; the recorded release is printed" in captured.err
    assert json.loads(captured.out)["outputs"] == recorded.payload["outputs"]
    assert ledger.history() == [recorded] and ledger.remaining() == left


def test_a_command_line_release_repeated_in_the_app_spends_nothing(capsys, survey):
    Ledger(None, "default", ZCDP(2.0))  # the command line charges existing ledgers only
    assert main(cli_release(survey, "duckdb")) == 0
    printed = json.loads(capsys.readouterr().out)
    at = planned_in_app()
    assert "This plan was released on" in text(at.main.info)
    assert not [b for b in at.button if b.label == "Commit release"]
    [recorded] = Ledger.open(None, "default").history()
    assert recorded.payload["outputs"] == printed["outputs"]
    # The command line named the data by its path; the people are the same.
    assert "survey.csv”: **ε = 1 (pure DP)** (ρ = 0.5 in zCDP), over 1 release" in text(
        at.sidebar.caption
    )


def test_no_export_of_a_release_carries_the_files_identity(survey):
    commit(planned_in_app())
    record = ReleaseRecord.from_ledger(Ledger.open(None, "default").history()[0])
    identity = bytes_identity(survey_csv())
    assert record.metadata["plan"]["dataset"]["identity"] == identity
    digest = identity.removeprefix("content:")
    exports = (to_csv(record), to_json(record), to_script(record), html_report(record, None))
    for exported in exports:
        assert digest[:12] not in exported and "content:" not in exported
    assert "ε = 1 (pure DP)" in json.loads(exports[1])["metadata"]["cumulative_loss"]["statement"]
    assert "frame, dataset = read_dataset(PATH)" in exports[2]  # it computes the identity
