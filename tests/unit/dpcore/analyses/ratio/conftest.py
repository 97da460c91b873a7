"""Fixtures of the ratio's tests: 5,000 rows of the paper's design, unweighted and weighted."""

from __future__ import annotations

import pytest

from tests.unit.dpcore.analyses.ratio.helpers import paper_rows


@pytest.fixture(scope="module")
def rows_unweighted():
    return paper_rows(5000, False, 1)


@pytest.fixture(scope="module")
def rows_weighted():
    return paper_rows(5000, True, 2)
