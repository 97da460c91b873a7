"""The static-image renderer gives up on a hung Chromium and leaves no process behind."""

import subprocess
from pathlib import Path

import plotly.graph_objects as go
import pytest

from strata_ui import static_image

HUNG_RENDERER = """#!/bin/sh
# Stands in for a kaleido child whose Chromium never answers: a browser-like grandchild, then a wait.
sleep 600 &
sleep 600
"""


def live_members(group: int) -> list[int]:
    """The processes of process group ``group`` that are not zombies (a killed orphan may wait a
    moment to be reaped by init)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended while we looked
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def test_a_renderer_that_hangs_is_killed_with_its_children_and_tried_again(tmp_path, monkeypatch):
    hung = tmp_path / "hung-renderer"
    hung.write_text(HUNG_RENDERER)
    hung.chmod(0o755)
    monkeypatch.setattr(static_image.sys, "executable", str(hung))
    monkeypatch.setattr(static_image, "static_image_available", lambda: True)
    started = []
    popen = subprocess.Popen

    def recorded(*args, **kwargs):
        started.append(popen(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(static_image.subprocess, "Popen", recorded)
    figure = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]))
    assert static_image.render_png(figure, width=300, height=200, time_limit_s=0.5) is None
    assert len(started) == static_image.ATTEMPTS
    for child in started:
        assert not live_members(child.pid), "a process of the renderer's group is still running"


def test_without_chromium_nothing_is_started(monkeypatch):
    monkeypatch.setattr(static_image, "static_image_available", lambda: False)
    monkeypatch.setattr(static_image.subprocess, "Popen", lambda *a, **k: pytest.fail("started"))
    assert static_image.render_png(go.Figure(), width=300, height=200) is None
