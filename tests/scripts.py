"""Running a release's exported reproduction script as its recipient would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dpcore.foundations.ledger import LEDGER_PATH_ENV, Ledger, LedgerRecord
from dpcore.release import release, to_csv, to_script
from tests import REPO


def run_script(
    script: str, tmp_path: Path, ledger_file: Path, cwd: Path = REPO
) -> subprocess.CompletedProcess:
    """Save ``script`` under ``tmp_path`` and run it in a fresh Python from ``cwd``, with the
    ledger at ``ledger_file``; the finished process holds its exit code and output."""
    path = tmp_path / "reproduce_release.py"
    path.write_text(script, encoding="utf-8")
    # A script's own folder, not the working folder, starts sys.path: PYTHONPATH makes it
    # import this checkout's dpcore, not whichever copy is installed.
    path_entries = [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {
        **os.environ, LEDGER_PATH_ENV: str(ledger_file), "PYTHONIOENCODING": "utf-8",
        "PYTHONPATH": os.pathsep.join(path_entries),
    }  # fmt: skip
    return subprocess.run(
        [sys.executable, str(path)], cwd=cwd, env=env, capture_output=True, encoding="utf-8",
        timeout=120,
    )  # fmt: skip


def released_script_reruns(plan, ledger_budget, tmp_path: Path, rng: int = 7) -> str:
    """Release ``plan`` on a new ledger of ``ledger_budget`` (simulated noise, seed ``rng``),
    check its exported script reruns to the same record, and return the script."""
    ledger = Ledger(tmp_path / "ledger.sqlite", "default", ledger_budget)
    record = release(plan, ledger, noise="simulation", rng=rng)
    script = to_script(record)
    assert_reruns_as_recorded(script, record, tmp_path, ledger)
    return script


def assert_reruns_as_recorded(
    script: str, record: LedgerRecord, tmp_path: Path, ledger: Ledger, cwd: Path = REPO
) -> None:
    """Run a release's ``script`` as its recipient would: it finds the same plan (the same key)
    in the ledger, prints the recorded release and spends nothing more."""
    releases = len(ledger.history())
    done = run_script(script, tmp_path, ledger.path, cwd)
    assert done.returncode == 0, done.stderr
    assert done.stdout == to_csv(record) + "\n"
    assert len(ledger.history()) == releases
