"""Figure 3 of Rosenblatt, Stoyanovich & Musco (AAAI 2024): global error vs n, synthetic mixture.

On the appendix-B generator (k = 10 groups, Dirichlet(α = 1) shares, μ_i ~ N(0, 1),
σ_i ~ U(0.1, 2)) with CoinPress (prior (−10, 10), σ = 2, t = 2, ρ = 0.5), plots the normalized
absolute error of the global mean, averaged over dataset seeds and replicates, for

- stratified CoinPress (StratCoinpress, Alg. 3: group estimates recombined with public shares),
- CoinPress on the whole population (vanilla (i)),
- vanilla (ii): CoinPress global estimate with half of ρ (the other half buys group estimates).

Prints the table and saves ``tests/artifacts/figure3.png`` (plotly + kaleido; kaleido needs a
Chromium on PATH). If the export fails, the reason is printed and the table still is.

Run: ``.venv/bin/python benchmarks/figure3_convergence.py``
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.analyses.mean.coinpress import CoinPressMean
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.analyses.mean.strategies import run_strategy
from dpcore.foundations.accounting import ZCDP
from dpcore.foundations.datasets import synthetic_gaussian_mixture
from dpcore.foundations.shares import shares_from_counts

SIZES = (1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000)
DATA_SEEDS = range(10)
REPLICATES = 50  # the paper's "50 runs"
K, ALPHA = 10, 1.0
BUDGET = ZCDP(0.5)
ESTIMATOR = CoinPressMean(prior=(-10.0, 10.0), sigma=2.0, steps=2)
STRATEGIES = {
    "stratified": "StratCoinpress (stratified)",
    "global_only": "CoinPress (vanilla i)",
    "global_and_groups": "CoinPress, ρ/2 (vanilla ii)",
}
OUTPUT = Path(__file__).resolve().parents[1] / "tests" / "artifacts" / "figure3.png"


def run() -> pd.DataFrame:
    rows = []
    for n in SIZES:
        for seed in DATA_SEEDS:
            df = synthetic_gaussian_mixture(n, k=K, alpha=ALPHA, rng=seed)
            strata = GroupValues.from_frame(df, "group", "value")
            shares = shares_from_counts(strata)
            truth = strata.global_mean
            for j, strategy in enumerate(STRATEGIES):
                result = run_strategy(
                    strategy, strata, ESTIMATOR, BUDGET, shares,
                    replicates=REPLICATES, rng=1000 * seed + j,
                )  # fmt: skip
                abs_err = np.abs(result.global_estimate - truth)
                rows.append((n, seed, strategy, abs_err.mean() / abs(truth), abs_err.mean()))
    frame = pd.DataFrame(rows, columns=["n", "seed", "strategy", "error", "abs_error"])
    summary = frame.groupby(["n", "strategy"]).agg(
        error=("error", "mean"),
        se=("error", lambda e: e.std(ddof=1) / np.sqrt(e.size)),  # over dataset seeds
        abs_error=("abs_error", "mean"),
    )
    return summary.reset_index()


def table(summary: pd.DataFrame) -> pd.DataFrame:
    wide = summary.pivot(index="n", columns="strategy", values="error")[list(STRATEGIES)]
    wide.columns = [f"err {s}" for s in STRATEGIES]
    wide["gap strat − (i)"] = wide["err stratified"] - wide["err global_only"]
    wide["abs err stratified"] = summary[summary["strategy"] == "stratified"].set_index("n")[
        "abs_error"
    ]
    return wide


def save_figure(summary: pd.DataFrame) -> None:
    import plotly.graph_objects as go

    fig = go.Figure()
    for strategy, label in STRATEGIES.items():
        part = summary[summary["strategy"] == strategy]
        fig.add_trace(
            go.Scatter(
                x=part["n"],
                y=part["error"],
                name=label,
                mode="lines+markers",
                error_y={"type": "data", "array": 2 * part["se"], "visible": True},
            )  # fmt: skip
        )
    fig.add_hline(y=0.01, line_dash="dot", annotation_text="1% error", line_color="grey")
    fig.update_layout(
        title=(
            f"Figure 3 — global mean error vs n (synthetic mixture, k = {K}, α = {ALPHA}, "
            f"ρ = {BUDGET.rho}; {len(DATA_SEEDS)} datasets × {REPLICATES} runs; bars ±2 SE)"
        ),
        xaxis={"title": "n (rows)", "type": "log"},
        yaxis={"title": "normalized absolute error of the global mean", "type": "log"},
        template="plotly_white",
        width=1000,
        height=600,
        legend={"x": 0.62, "y": 0.98},
    )
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    fig.write_image(OUTPUT)
    print(f"saved {OUTPUT}")


def main() -> None:
    start = time.perf_counter()
    summary = run()
    print(f"simulated in {time.perf_counter() - start:.1f} s\n")
    with pd.option_context(
        "display.float_format", "{:.4f}".format, "display.width", 160, "display.max_columns", None
    ):
        print(table(summary))
    try:
        save_figure(summary)
    except Exception as err:  # noqa: BLE001 - report any export failure and keep the table
        print(f"could not save the PNG ({type(err).__name__}: {err})")


if __name__ == "__main__":
    main()
