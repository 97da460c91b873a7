"""The private sample's Learn explainer: how many records a private sampler needs against how
many learning the distribution privately needs (Raskhodnikova, Sivakumar, Smith & Swanberg,
NeurIPS 2021, Table 1), with a seeded simulation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.analyses.sample.teaching import BOUNDS, records_needed, sampling_versus_learning
from strata_ui import constants
from strata_ui.analyses.base import LearnItem
from strata_ui.analyses.sample import charts
from strata_ui.learn import formula, show_chart, text_table
from strata_ui.state import get_settings
from strata_ui.widgets import attribute_widget, log_slider

SIZES = np.unique(np.geomspace(10, 100_000, 13).astype(int))
ATTRIBUTES = (1, 3, 10, 30, 100, 300, 1000)
ALPHA = 0.1


@dataclass
class SampleLearn:
    """The explainer's choices; they never change a release."""

    categories: int = 20
    epsilon: float = 1.0


@st.cache_data(max_entries=32, show_spinner="Simulating 2,000 private runs per n (cached)…")
def _simulate(k: int, epsilon: float) -> pd.DataFrame:
    return sampling_versus_learning(k, epsilon, SIZES, runs=2000, rng=0)


def render_sampling() -> None:
    settings = get_settings(SampleLearn)
    st.markdown(
        "A **private sampler** outputs one record whose distribution is close to the "
        "population's; **private learning** outputs the whole distribution. Below, the paper's "
        "k-ary sampler (Alg. 3: Laplace noise on the shares, projected back to shares) runs on "
        "data from a long-tailed distribution over K categories."
    )
    left, right = st.columns(2)
    with left:
        attribute_widget(
            st.select_slider, "K, the number of categories", settings, "categories",
            options=(2, 5, 10, 20, 50, 100), key="learn.sample.categories",
            help="How many categories the distribution has (shares fall off like 1/i). More "
            "categories need more records, for sampling and learning alike.",
        )  # fmt: skip
    with right:
        log_slider(
            "ε, the privacy budget (log scale)", settings, "epsilon",
            options=constants.EPSILON_OPTIONS, key="learn.sample.epsilon",
            help="Smaller ε: more noise on the shares, so both curves need more records.",
        )  # fmt: skip
    frame = _simulate(settings.categories, settings.epsilon)
    show_chart(
        charts.learning_figure(frame, settings.categories, settings.epsilon),
        key="learn.chart.sample.kary",
        summary=charts.learning_summary(frame),
    )
    st.markdown(
        "Used to *learn*, its noisy shares are off by the data's own sampling error, about "
        "√(K/n). Used to *sample* one record, only the average of the noisy shares matters, and "
        "noise that averages out costs nothing: the error falls like K/(εn). Raskhodnikova, "
        "Sivakumar, Smith & Swanberg (NeurIPS 2021) show that sampling can need far fewer "
        "records — and that, where it cannot, sampling one record already costs everything "
        "that privacy adds to learning. Their bounds (Table 1; orders of growth, α = accuracy in "
        "total variation, ε = budget):"
    )
    text_table(
        pd.DataFrame(
            BOUNDS,
            columns=[
                "distributions",
                "learning, not private",
                "private sampling",
                "private learning",
            ],
        )  # fmt: skip
    )
    formula(
        r"d_{TV}\big(E[\hat p],\, P\big) \le \tfrac12 E\lVert \hat p - p_D\rVert_1"
        r"\le E\lVert Z\rVert_1 = \frac{2K}{\varepsilon n}",
        "Raskhodnikova et al. (NeurIPS 2021), proof of Thm. 1.4 (Alg. 3); the constant 2 is what "
        "the proof's steps give (Laplace scale 2/(εn) per share).",
    )
    st.markdown(
        f"**Yes/no attributes with shares in [1/3, 2/3].** Here sampling needs only about √d/ε "
        f"records, against d/α² for learning (Thm. 1.8, 1.9): the product sampler adds no noise "
        f"at all — drawing each attribute from the data's own share is already private when the "
        f"share is kept away from 0 and 1. Records needed at α = {ALPHA:g} and ε = "
        f"{settings.epsilon:g}:"
    )
    needed = pd.DataFrame(
        [{"d": d, **records_needed(d, settings.epsilon, ALPHA)} for d in ATTRIBUTES]
    )
    show_chart(
        charts.needed_figure(needed),
        key="learn.chart.sample.product",
        summary=(
            "Private and non-private learning nearly coincide here: at this α the d/α² term "
            "dominates. The orders of growth are drawn with constants 1; “our product sampler” is the exact "
            "fewest records at which the app's sampler is ρ = ε²/2-zCDP (8d/n², Thm. 6.4) and "
            "within α (Hoeffding's bound on its clipping)."
        ),
    )
    st.caption(
        "Left out: the sampler for products with **any** biases (Thm. 1.6, about d/(αε) records) "
        "uses the paper's recursive preconditioning (Algorithm 4). Its constants cannot be "
        "recovered from our copy of the paper, so the app does not implement it; its bound is "
        "shown in the table only."
    )


EXPLAINERS: tuple[LearnItem, ...] = (
    LearnItem(
        "sampling",
        "Private sampling: fewer records than learning",
        ":material/casino:",
        render_sampling,
    ),
)
