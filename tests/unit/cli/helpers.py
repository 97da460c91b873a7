"""What the command line's tests share: run a command that must succeed and read what it
printed, edit its arguments, and check that a mistake is one line on stderr and spends nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from dpcore.foundations.accounting import Budget
from dpcore.foundations.ledger import Ledger
from strata_cli.main import main


def run(capsys, argv: list[str]) -> tuple[dict | str, str]:
    """Run a command that must succeed: its output (a document under ``--format json``, the
    default, else the text) and its stderr."""
    assert main(argv) == 0
    captured = capsys.readouterr()
    fmt = argv[argv.index("--format") + 1] if "--format" in argv else "json"
    return (json.loads(captured.out) if fmt == "json" else captured.out), captured.err


def replace(argv: list[str], option: str, value: str) -> list[str]:
    argv = list(argv)
    argv[argv.index(option) + 1] = value
    return argv


def without(argv: list[str], option: str) -> list[str]:
    return [a for a in argv if a != option]


def assert_one_error_line(capsys, argv: list[str], status: int, text: str) -> None:
    assert main(argv) == status
    err = capsys.readouterr().err
    assert err.startswith("strata-lab: error: ") and err.count("\n") == 1, err
    assert text in err


def assert_refused_spending_nothing(
    capsys, ledger_path: Path, budget: Budget, argv: list[str], message: str
) -> None:
    """A release charged to a new ledger of ``budget`` at ``ledger_path`` is refused in one
    line naming ``message``, and the ledger keeps its whole budget and an empty history."""
    ledger = Ledger(ledger_path, "default", budget)
    assert_one_error_line(capsys, argv, 1, message)
    assert ledger.remaining() == budget.components() and not ledger.history()


Mistake = tuple[Callable[[list[str], Path], list[str]], str]
"""A mistake in a release's arguments: ``change(argv, data)`` makes it, ``message`` refuses it."""


def assert_mistake_spends_nothing(
    capsys, tmp_path: Path, budget: Budget, release_args, data: Path, mistake: Mistake
) -> None:
    """The release ``release_args(data, "--ledger", <a new ledger of budget>)``, changed by
    ``mistake``, is refused in one line naming its message and spends nothing (the check every
    analysis' table of CLI mistakes runs)."""
    change, message = mistake
    path = tmp_path / "ledger.sqlite"
    argv = change(release_args(data, "--ledger", str(path)), data)
    assert_refused_spending_nothing(capsys, path, budget, argv, message)


def release_twice(capsys, ledger: Ledger, argv: list[str], left: dict):
    """Run the release ``argv`` twice on ``ledger``: the first charges it down to ``left``, the
    second charges nothing more. Both outputs and the second's stderr, for the caller to compare."""
    first, _ = run(capsys, argv)
    assert ledger.remaining() == left
    second, err = run(capsys, argv)
    assert ledger.remaining() == left
    return first, second, err
