"""Each analysis' sliders and number boxes offer the range, and its select sliders the options,
that the address bar holds their parameter to: one Limit in strata_ui.constants serves both,
given to the widget by strata_ui.widgets.bind."""

from __future__ import annotations

import pytest

from strata_ui.constants import ADDRESS_LIMITS
from tests.app.helpers import declare_exact_counts, go, start_with

LIMITED_WIDGETS = {
    ("mean", "estimator"): {"mean.coinpress_sigma", "mean.coinpress_steps", "mean.coinpress_beta"},
    ("ratio", "estimator"): {"ratio.delta"},
    ("ratio", "compare"): {"ratio_view.replicates"},
    ("gvdp", "estimator"): {"gvdp.resamples", "gvdp.steps", "gvdp.beta", "gvdp.mean_fraction"},
    ("synth", "estimator"): {"synth.rounds", "synth.n_rows", "synth_view.seed"},
    ("synth", "compare"): {"synth_view.runs"},
    ("sample", "estimator"): {"sample.records", "sample_view.seed", "sample_view.runs"},
}
"""The limited widgets each page draws with the analysis' defaults (the mean with CoinPress,
GVDP with the data's group counts declared public)."""


def limited_widgets(at) -> dict[str, object]:
    """The page's widgets whose key is a parameter with a limit, by key."""
    drawn = (*at.slider, *at.number_input, *at.select_slider)
    return {widget.key: widget for widget in drawn if widget.key in ADDRESS_LIMITS}


# Not `page`: pytest-playwright parametrizes any test with an argument of that name by browser.
@pytest.mark.parametrize(
    ("analysis", "page_name"),
    list(LIMITED_WIDGETS),
    ids=["-".join(case) for case in LIMITED_WIDGETS],
)
def test_each_limited_widget_offers_its_address_limit(analysis, page_name):
    at = declare_exact_counts(start_with(analysis))
    if analysis == "mean":
        at.radio(key="mean.estimator").set_value("coinpress").run()
    at = go(at, page_name)
    widgets = limited_widgets(at)
    assert LIMITED_WIDGETS[analysis, page_name] <= set(widgets), sorted(widgets)
    for key, widget in widgets.items():
        limit = ADDRESS_LIMITS[key]
        if limit.options:
            assert len(widget.options) == len(limit.options), key
            assert widget.value in limit.options, key
        else:
            assert (widget.min, widget.max) == (limit.low, limit.high), key
