"""The bundled UCI Adult demo dataset: shape, dtypes, score quality and import purity."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from dpcore.foundations.datasets import (
    DEMO_COLUMNS,
    DEMO_DATA_PATH,
    DEMO_DATASET_NAME,
    load_demo,
)

EXPECTED_DTYPES = {
    "age": "int64",
    "workclass": "string",
    "education": "string",
    "marital_status": "string",
    "occupation": "string",
    "race": "string",
    "sex": "string",
    "hours_per_week": "int64",
    "income_over_50k": "int64",
    "score": "float64",
}


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


def test_constants() -> None:
    assert DEMO_DATASET_NAME == "UCI Adult (demo)"
    assert DEMO_DATA_PATH.name == "adult.csv.gz"
    assert DEMO_DATA_PATH.parent.name == "assets"
    assert list(DEMO_COLUMNS) == list(EXPECTED_DTYPES)
    for text in DEMO_COLUMNS.values():
        assert isinstance(text, str) and text and "\n" not in text


def test_shape_columns_and_dtypes(demo: pd.DataFrame) -> None:
    assert len(demo) == 32_561
    assert list(demo.columns) == list(EXPECTED_DTYPES)
    for column, dtype in EXPECTED_DTYPES.items():
        assert demo[column].dtype == dtype, column
        if dtype == "string":
            assert isinstance(demo[column].dtype, pd.StringDtype), column
            assert demo[column].dtype.na_value is pd.NA, column


def test_no_missing_values(demo: pd.DataFrame) -> None:
    assert not demo.isna().any().any()
    assert not (demo.select_dtypes("string") == "?").any().any()
    assert not (demo.select_dtypes("string") == "").any().any()


def test_missing_marker_became_unknown(demo: pd.DataFrame) -> None:
    # Adult has 1,836 `?` workclass and 1,843 `?` occupation values in the training split.
    assert (demo["workclass"] == "Unknown").sum() == 1_836
    assert (demo["occupation"] == "Unknown").sum() == 1_843


def test_label_is_binary(demo: pd.DataFrame) -> None:
    assert set(demo["income_over_50k"].unique()) == {0, 1}
    assert demo["income_over_50k"].sum() == 7_841


def test_score_in_unit_interval(demo: pd.DataFrame) -> None:
    assert demo["score"].between(0.0, 1.0).all()


def test_score_is_informative_and_calibrated_in_the_large(demo: pd.DataFrame) -> None:
    y = demo["income_over_50k"].to_numpy()
    score = demo["score"].to_numpy()
    assert roc_auc_score(y, score) > 0.85
    assert abs(score.mean() - y.mean()) < 0.01


def test_group_categories(demo: pd.DataFrame) -> None:
    assert set(demo["sex"].unique()) == {"Female", "Male"}
    assert set(demo["race"].unique()) == {
        "Amer-Indian-Eskimo",
        "Asian-Pac-Islander",
        "Black",
        "Other",
        "White",
    }


def test_asset_is_small() -> None:
    assert DEMO_DATA_PATH.stat().st_size < 1_000_000


def test_import_does_not_load_ui_libraries() -> None:
    code = (
        "import sys\n"
        "import dpcore.foundations.datasets\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in {'streamlit', 'plotly'})\n"
        "print(','.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""
