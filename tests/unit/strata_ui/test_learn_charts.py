"""The shared Learn figures: the ε explainer's numbers (dpcore.foundations.teaching) and figures, and sizing
for a projector.

No streamlit: every plotted number, title and axis label is checked on the figure's JSON.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.foundations import teaching
from strata_ui import constants, learn_charts
from tests.figures import as_json, assert_accessible, values

# ---- What ε means -------------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 3.0, 10.0])
def test_laplace_ratio_is_bounded_by_and_reaches_e_to_the_epsilon(epsilon):
    noise = teaching.neighbour_noise(epsilon, 1e-6)
    laplace = noise.frame[noise.frame["mechanism"] == "Laplace"]
    assert noise.laplace_b == pytest.approx(1 / epsilon)
    assert laplace["ratio"].max() == pytest.approx(math.exp(epsilon), rel=1e-12)
    assert laplace["ratio"].min() == pytest.approx(math.exp(-epsilon), rel=1e-12)
    # The ratio is the ratio of the two plotted densities, wherever they do not underflow.
    ok = (laplace["p_d"] > 1e-250) & (laplace["p_d_prime"] > 1e-250)
    np.testing.assert_allclose(
        laplace.loc[ok, "ratio"], laplace.loc[ok, "p_d"] / laplace.loc[ok, "p_d_prime"], rtol=1e-9
    )
    # Densities integrate to 1 over the plotted range (trapezoid rule).
    for column in ("p_d", "p_d_prime"):
        assert np.trapezoid(laplace[column], laplace["x"]) == pytest.approx(1, abs=0.02)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 5.0])
def test_gaussian_ratio_leaves_the_band_where_and_as_often_as_stated(epsilon):
    delta = 1e-5
    noise = teaching.neighbour_noise(epsilon, delta)
    gaussian = noise.frame[noise.frame["mechanism"] == "Gaussian"]
    assert gaussian["ratio"].max() > math.exp(epsilon)  # no hard cap: why δ is needed
    outside = gaussian.loc[gaussian["ratio"] > math.exp(epsilon), "x"]
    assert outside.max() <= noise.low_cut + 1e-9
    assert noise.low_cut < noise.centre < noise.high_cut
    # P[x < low_cut | D] for x ~ N(centre, σ²) and δ from Balle & Wang's formula.
    sigma = noise.gaussian_sigma
    assert noise.tail_probability == pytest.approx(
        stats.norm.cdf(noise.low_cut, noise.centre, sigma), rel=1e-9
    )
    delta_exact = noise.tail_probability - math.exp(epsilon) * stats.norm.cdf(
        noise.low_cut, noise.centre + 1, sigma
    )
    assert delta_exact == pytest.approx(delta, rel=1e-6)


def test_epsilon_figures_are_labelled_and_show_the_band():
    noise = teaching.neighbour_noise(1.0, 1e-6)
    density = as_json(learn_charts.epsilon_density_figure(noise))
    assert_accessible(density, x_unit="people", y_unit="per person")
    ratio = as_json(learn_charts.epsilon_ratio_figure(noise))
    assert_accessible(ratio, x_unit="people", y_unit="log scale")
    band = [t for t in ratio["data"] if t["name"].startswith("allowed by ε")]
    assert {round(v, 12) for t in band for v in values(t["y"])} == {
        round(math.exp(-1), 12),
        round(math.e, 12),
    }
    laplace_ratio = next(
        t for t in ratio["data"] if t["name"].startswith("ratio p") and t["xaxis"] == "x"
    )
    assert values(laplace_ratio["y"]).max() == pytest.approx(math.e)
    assert values(laplace_ratio["customdata"]).max() == pytest.approx(math.e)
    annotations = [a["text"] for a in ratio["layout"]["annotations"]]
    assert "max ratio = e^ε = 2.72" in annotations
    assert ratio["layout"]["yaxis"]["type"] == "log"
    # Only the Gaussian leaves the band.
    assert [t["xaxis"] for t in ratio["data"] if t["name"].startswith("ratio beyond")] == ["x2"]


def test_epsilon_summaries_state_the_numbers():
    noise = teaching.neighbour_noise(1.0, 1e-6)
    text = learn_charts.epsilon_ratio_summary(noise)
    assert "e^ε = 2.72" in text and "δ = 1e-6" in text
    assert f"{noise.tail_probability:.2g}" in text
    assert "b = 1" in learn_charts.epsilon_density_summary(noise)


def test_sized_fits_a_projector_in_workshop_mode():
    fig = learn_charts.epsilon_density_figure(teaching.neighbour_noise(1.0, 1e-6))
    fig.update_layout(height=900)
    small = learn_charts.sized(fig, workshop=True)
    assert small.layout.height == constants.WORKSHOP_CHART_HEIGHT
    assert small.layout.font.size == constants.WORKSHOP_FONT_SIZE
    normal = learn_charts.sized(
        learn_charts.epsilon_density_figure(teaching.neighbour_noise(1.0, 1e-6)), workshop=False
    )
    assert normal.layout.font.size == constants.LEARN_FONT_SIZE
