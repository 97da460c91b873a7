"""Static PNGs of Plotly figures, drawn by kaleido in a child process with a time limit.

Kaleido drives a headless Chromium. Now and then, mostly on a busy machine, that browser never
answers kaleido's first command, and ``figure.to_image`` then waits forever: the report download
(or the test) hangs and the Chromium processes stay behind. Kaleido's own time limit covers the
drawing only, not the browser's start, and cancelling it from asyncio leaves the browser running.
So the drawing runs in its own process group, which is killed whole when the limit passes; a
second attempt almost always succeeds, and after that the caller gets ``None`` and says so.

Run as ``python -m strata_ui.static_image WIDTH HEIGHT`` with the figure's JSON on stdin, it
writes the PNG to stdout.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import plotly.graph_objects as go
import plotly.io as pio

TIME_LIMIT_S = 45.0  # per attempt: Chromium's start and one chart take about 3 s when all is well
ATTEMPTS = 2


def static_image_available() -> bool:
    """Kaleido draws static images with a Chromium browser (Debian's ``chromium`` here)."""
    return shutil.which("chromium") is not None or shutil.which("chromium-browser") is not None


def render_png(
    figure: go.Figure,
    *,
    width: int,
    height: int,
    time_limit_s: float = TIME_LIMIT_S,
    attempts: int = ATTEMPTS,
) -> bytes | None:
    """The figure as a PNG of ``width`` × ``height`` pixels, or ``None`` when Chromium is not
    installed or no attempt finished within ``time_limit_s``."""
    if not static_image_available():
        return None
    spec = figure.to_json().encode()
    for _ in range(attempts):
        png = _draw_in_child(spec, width, height, time_limit_s)
        if png is not None:
            return png
    return None


def _draw_in_child(spec: bytes, width: int, height: int, time_limit_s: float) -> bytes | None:
    command = [sys.executable, "-m", __name__, str(width), str(height)]
    child = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: Chromium's processes die with it
    )  # fmt: skip
    try:
        png, _ = child.communicate(spec, timeout=time_limit_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        return None
    return png if child.returncode == 0 and png.startswith(b"\x89PNG") else None


def _main() -> None:
    width, height = (int(arg) for arg in sys.argv[1:3])
    figure = pio.from_json(sys.stdin.read())
    sys.stdout.buffer.write(figure.to_image(format="png", width=width, height=height, scale=1))


if __name__ == "__main__":
    _main()
