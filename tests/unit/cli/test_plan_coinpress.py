"""``strata-lab plan --estimator coinpress``: the answer known by simulation, labelled a curator
preview, checked by simulated releases; and the options CoinPress cannot take."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from strata_cli.main import main
from tests.unit.cli.helpers import assert_one_error_line
from tests.unit.cli.test_cli import table  # noqa: F401 (fixture)


def coinpress_args(data: Path, *extra: str) -> list[str]:
    return [
        "plan", str(data), "--by", "g", "--value", "v", "--bounds", "0,10",
        "--estimator", "coinpress", "--sigma", "3", "--sizes-public", "--target-abs=1",
        "--check-replicates", "2000", "--seed", "7", *extra,
    ]  # fmt: skip


def test_the_answer_is_in_rho_a_curator_preview_and_checked(capsys, table):  # noqa: F811
    assert main(coinpress_args(table)) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["estimator"] == "coinpress" and document["rho"] > 0
    assert document["binding_group"] == "b"  # 10 rows against 40
    assert document["curator_preview"] is True
    assert any("σ = 3" in line for line in document["assumptions"])
    groups = {row["label"]: row for row in document["groups"]}
    assert groups["b"]["expected_error"] == pytest.approx(1.0, rel=0.01)
    check = {row["label"]: row for row in document["check"]}
    assert check["b"]["met"] >= check["b"]["band_low"]


def test_the_text_output_says_it_is_a_curator_preview(capsys, table):  # noqa: F811
    assert main(coinpress_args(table, "--format", "text")) == 0
    out = capsys.readouterr().out
    assert out.startswith("ρ = ") and "Binding: b." in out
    assert "Curator preview" in out


def test_an_empty_ledger_gets_errors_but_no_row_count(capsys, table, tmp_path):  # noqa: F811
    from dpcore.foundations.accounting import ZCDP
    from dpcore.foundations.ledger import Ledger

    path = tmp_path / "ledger.sqlite"
    Ledger(path, "small", ZCDP(1e-4))
    argv = coinpress_args(table, "--ledger", str(path), "--ledger-name", "small")
    assert main(argv) == 0
    shortfall = json.loads(capsys.readouterr().out)["shortfall"]
    assert "rows_needed is unknown" in shortfall["message"]
    assert all(row["rows_needed"] is None for row in shortfall["groups"])


@pytest.mark.parametrize(
    ("change", "status", "message"),
    [
        (lambda argv: [a for a in argv if a != "--sizes-public"], 1, "needs --sizes-public"),
        (lambda argv: [*argv, "--include-bias"], 1, "already include its clipping"),
        (lambda argv: [*argv, "--steps", "0"], 2, "--steps: must be an integer from 1 to 50"),
    ],
)
def test_what_coinpress_cannot_take_is_one_line(capsys, table, change, status, message):  # noqa: F811
    assert_one_error_line(capsys, change(coinpress_args(table)), status, message)
