"""Checks on neighbouring datasets: what one added person may move in a release's statistics."""

from __future__ import annotations

import numpy as np

from dpcore.foundations.privacy_unit import PrivacyUnit


def assert_each_sum_moves_within_its_sensitivity(
    before, after, sensitivity: dict[str, float], unit: PrivacyUnit
) -> None:
    """``after`` is ``before`` (ratio statistics) with one person added who reaches every bound:
    each released sum, over all groups, moves by at most its ``sensitivity`` and by nearly all of
    it (the bound is reached), and the row counts by the person's ``rows_per_person``."""
    for name in after.sums.released:
        change = np.abs(after.sums.value(name) - before.sums.value(name)).sum()
        assert 0.99 * sensitivity[name] <= change <= sensitivity[name] + 1e-9, name
    assert np.abs(after.rows - before.rows).sum() == unit.rows_per_person
