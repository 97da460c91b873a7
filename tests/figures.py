"""Reading Plotly figures in tests: their JSON, their numbers, titles and colours."""

from __future__ import annotations

import base64
import json

import numpy as np

OKABE_ITO = {"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}
"""The colour-blind-safe palette every chart draws from (Okabe & Ito 2008)."""


def as_json(fig) -> dict:
    return json.loads(fig.to_json())


def values(array, dtype=None) -> np.ndarray:
    """A JSON array, including Plotly's base64 typed arrays ({"dtype": ..., "bdata": ...})."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
    return np.asarray(array, dtype=dtype)


def titles(fig: dict) -> tuple[str, list[str], list[str]]:
    """The figure's title and the titles of its x and y axes (empty ones left out of y)."""
    layout = fig["layout"]
    xs = [v["title"]["text"] for k, v in layout.items() if k.startswith("xaxis") and "title" in v]
    ys = [v["title"]["text"] for k, v in layout.items() if k.startswith("yaxis") and "title" in v]
    return layout["title"]["text"], xs, [y for y in ys if y]


def colours(fig: dict) -> set[str]:
    """Every line and marker colour the traces name."""
    found = set()
    for trace in fig["data"]:
        for part in ("line", "marker"):
            colour = trace.get(part, {}).get("color")
            if isinstance(colour, str):
                found.add(colour)
            elif isinstance(colour, list):
                found.update(colour)
    return found


def assert_accessible(fig: dict, *, x_unit: str, y_unit: str) -> None:
    """A title, axis titles naming their units, and only Okabe–Ito colours."""
    title, xs, ys = titles(fig)
    assert title
    assert xs and all(x_unit in x for x in xs), xs
    assert ys and any(y_unit in y for y in ys), ys
    assert colours(fig) <= OKABE_ITO, colours(fig) - OKABE_ITO
