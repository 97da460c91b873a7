"""The bundled demo dataset: UCI Adult with a classifier score column.

The asset ``assets/adult.csv.gz`` is built by ``scripts/build_demo_data.py`` from the UCI Adult
training split (32,561 people, 1994 US Census extract). Missing ``workclass`` / ``occupation``
values (``?`` in the raw file) are the explicit category ``"Unknown"``, and ``score`` is the
in-sample probability of ``income_over_50k`` from a logistic regression fitted by that script.
See ``assets/README.md`` for details.

Licence: CC BY 4.0. Becker, B. & Kohavi, R. (1996). Adult [Dataset]. UCI Machine Learning
Repository. https://doi.org/10.24432/C5XW20

Pure pandas; never imports streamlit or plotly.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.foundations.dataset import DatasetRef, files_identity
from dpcore.foundations.validation import as_rng, positive_int, positive_number

__all__ = [
    "DEMO_COLUMNS",
    "DEMO_DATASET_NAME",
    "DEMO_DATA_PATH",
    "demo_identity",
    "load_demo",
    "load_demo_dataset",
    "synthetic_gaussian_mixture",
]

DEMO_DATA_PATH: Path = Path(__file__).resolve().parents[2] / "assets" / "adult.csv.gz"
"""Location of the gzip CSV asset, relative to this package's repository."""

DEMO_DATASET_NAME = "UCI Adult (demo)"
"""Display name of the demo dataset."""

DEMO_COLUMNS: dict[str, str] = {
    "age": "Age in years.",
    "workclass": "Type of employer (e.g. Private, State-gov); 'Unknown' where not recorded.",
    "education": "Highest level of education completed (e.g. HS-grad, Bachelors).",
    "marital_status": "Marital status (e.g. Never-married, Married-civ-spouse, Divorced).",
    "occupation": "Occupation group (e.g. Sales, Tech-support); 'Unknown' where not recorded.",
    "race": "Race as recorded by the 1994 US Census (5 categories).",
    "sex": "Sex as recorded by the 1994 US Census (Female or Male).",
    "hours_per_week": "Usual hours worked per week.",
    "income_over_50k": "Outcome: 1 if yearly income is over $50,000, else 0.",
    "score": "A demo classifier's predicted probability that income is over $50,000 (0 to 1).",
}
"""Column name -> one-line plain-language description, in the frame's column order."""

_INT_COLUMNS = ("age", "hours_per_week", "income_over_50k")
_FLOAT_COLUMNS = ("score",)
_DTYPES: dict[str, str] = {
    name: "int64" if name in _INT_COLUMNS else "float64" if name in _FLOAT_COLUMNS else "string"
    for name in DEMO_COLUMNS
}


def load_demo() -> pd.DataFrame:
    """Load the UCI Adult demo dataset.

    Reads :data:`DEMO_DATA_PATH` afresh on every call (the caller owns the returned frame; cache
    it at the app layer if needed).

    Returns
    -------
    pandas.DataFrame
        32,561 rows and the columns of :data:`DEMO_COLUMNS`, in that order, with no missing
        values. Categorical columns (``workclass``, ``education``, ``marital_status``,
        ``occupation``, ``race``, ``sex``) have pandas' nullable ``"string"`` dtype
        (:class:`pandas.StringDtype`, the same on pandas 2.x and 3.x); ``age``,
        ``hours_per_week`` and ``income_over_50k`` (0/1) are ``int64``; ``score`` is ``float64``
        in [0, 1].

    Raises
    ------
    FileNotFoundError
        If the asset is missing; rebuild it with ``scripts/build_demo_data.py``.
    ValueError
        If the asset's columns are not those of :data:`DEMO_COLUMNS`.

    Examples
    --------
    >>> df = load_demo()
    >>> df.shape
    (32561, 10)
    """
    # keep_default_na=False: no category string is ever read as missing; a blank numeric field
    # would then fail the int64 conversion instead of silently becoming NaN.
    df = pd.read_csv(DEMO_DATA_PATH, dtype=_DTYPES, keep_default_na=False)
    if list(df.columns) != list(DEMO_COLUMNS):
        raise ValueError(
            f"`{DEMO_DATA_PATH.name}` must have columns {list(DEMO_COLUMNS)}, "
            f"got {list(df.columns)}"
        )
    return df


@functools.cache
def demo_identity() -> str:
    """The demo data's identity: its asset's bytes (:func:`~dpcore.foundations.dataset.files_identity`),
    as the file of any other dataset is identified. Hashed once per process."""
    return files_identity([DEMO_DATA_PATH])


def load_demo_dataset() -> tuple[pd.DataFrame, DatasetRef]:
    """The demo data (:func:`load_demo`) and its reference, as a release's script reads it."""
    frame = load_demo()
    return frame, DatasetRef(DEMO_DATASET_NAME, demo_identity(), len(frame))


def synthetic_gaussian_mixture(
    n: int, k: int, alpha: float, *, rng: np.random.Generator | int | None
) -> pd.DataFrame:
    r"""The stratification paper's synthetic data (AAAI 2024, appendix B).

    Shares :math:`v \sim \mathrm{Dirichlet}(\alpha, \dots, \alpha)` over k groups; per group
    :math:`\mu_i \sim N(0, 1)` and :math:`\sigma_i \sim U(0.1, 2.0)`; group sizes are a
    multinomial draw of n rows with probabilities v (so a group may be empty when α is small), and
    each row's value is :math:`N(\mu_i, \sigma_i^2)`.

    Returns a frame with columns ``group`` (labels ``"g00"``, ``"g01"``, …) and ``value``.
    """
    n = positive_int("n", n)
    k = positive_int("k", k)
    alpha = positive_number("alpha", alpha)
    generator = as_rng(rng)
    shares = generator.dirichlet(np.full(k, alpha))
    means = generator.normal(0.0, 1.0, k)
    sds = generator.uniform(0.1, 2.0, k)
    sizes = generator.multinomial(n, shares)
    group = np.repeat(np.arange(k), sizes)
    width = len(str(k - 1))
    labels = np.array([f"g{i:0{width}d}" for i in range(k)], dtype=object)
    return pd.DataFrame(
        {"group": labels[group], "value": generator.normal(means[group], sds[group])}
    )
