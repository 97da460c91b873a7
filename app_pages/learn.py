"""Learn: the ideas behind the app, in plain language, with the papers they come from."""

import streamlit as st

st.title("Learn")
st.markdown(
    "Differential privacy (DP) adds random noise to published statistics so that no one can tell "
    "whether any one person's data was used. Noise hurts small groups most. This app shows how "
    "much, and what stratifying by group does about it."
)

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
    "Distributions.* NeurIPS 2021."
)

st.caption(
    ":material/upcoming: Coming next: guided presets that reproduce the papers' results, with an "
    "explanation beside every control."
)
