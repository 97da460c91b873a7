"""The server keeps full garbage collections short (strata_ui.heap, .streamlit/config.toml)."""

import tomllib
from pathlib import Path

from strata_ui import heap

REPO = Path(__file__).resolve().parents[3]


def test_objects_loaded_at_start_are_frozen_once_after_a_last_collection(monkeypatch):
    calls = []
    monkeypatch.setattr(heap, "_frozen", False)
    monkeypatch.setattr(heap.gc, "collect", lambda *args: calls.append("collect"))
    monkeypatch.setattr(heap.gc, "freeze", lambda: calls.append("freeze"))
    heap.freeze_objects_loaded_so_far()
    heap.freeze_objects_loaded_so_far()  # every later run: nothing more
    assert calls == ["collect", "freeze"]


def test_streamlit_runs_no_full_collection_after_every_script_run():
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
