"""Learn: interactive explainers and one-click presets that rebuild the papers' results."""

import streamlit as st

from strata_ui.learn import all_explainers, all_presets, render_items
from strata_ui.page_end import stop_page
from strata_ui.state import get_state
from strata_ui.workshop import render_one_item

if get_state().workshop_mode:  # a projector: one item at a time, its chart in the first screen
    render_one_item("Learn", all_explainers() + all_presets(), "learn.workshop.item")
    stop_page()
st.title("Learn")
st.markdown(
    "Differential privacy (DP) adds random noise to published statistics so that no one can tell "
    "whether any one person's data was used. Noise hurts small groups most. This app shows how "
    "much, and what stratifying by group does about it."
)

st.subheader("Explainers")
st.caption(
    "Open one at a time: each has a chart that moves with its sliders, a few sentences, and the "
    "formula with its source. Explainers simulate; they never spend privacy budget."
)
render_items(all_explainers(), "learn.open")

st.subheader("Presets: the papers' results, rebuilt")
st.caption(
    "Open a preset to load its data and settings and see our result beside the paper's, with "
    "every difference from the paper stated."
)
render_items(all_presets(), "learn.preset.open")

st.subheader("The privacy promise in this app")
st.markdown(
    "- **One row is one person.** Releases are private with respect to adding or removing one row, "
    "unless a method says otherwise.\n"
    "- **Group shares are public.** Recombining group estimates uses each group's share of the "
    "population, taken from a source you choose and label.\n"
    "- **Disjoint groups share the cost.** Estimating every group separately costs the budget of "
    "one group; a separate whole-population estimate costs extra.\n"
    "- **Simulation is free, releases are not.** The Compare page never spends budget; the Release "
    "page spends it once, through the ledger."
)

st.subheader("Further reading")
st.markdown(
    "- Rosenblatt, Stoyanovich & Musco. *A Simple and Practical Method for Reducing the Disparate "
    "Impact of Differential Privacy.* AAAI 2024.\n"
    "- Miao & Li. *Privacy-Preserving Inference on the Ratio of Two Gaussians Using Sums.* "
    "Journal of Data Science, 2022.\n"
    "- Covington, He, Honaker & Kamath. *Unbiased Statistical Estimation and Valid Confidence "
    "Intervals Under Differential Privacy.*\n"
    "- Raskhodnikova, Sivakumar, Smith & Swanberg. *Differentially Private Sampling from "
    "Distributions.* NeurIPS 2021.\n"
    "- Dwork & Roth. *The Algorithmic Foundations of Differential Privacy.* 2014.\n"
    "- Balle & Wang. *Improving the Gaussian Mechanism for Differential Privacy.* ICML 2018.\n"
    "- Biswas, Dong, Kamath & Ullman. *CoinPress: Practical Private Mean and Covariance "
    "Estimation.* NeurIPS 2020."
)
