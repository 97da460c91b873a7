"""The MST preset's budget split (issue 37, item 5): OpenDP's MST refused its last selection
query by one ulp ("insufficient budget for query: 0.0007486528836794505 >
0.0007486528836794504") after minutes of fitting; the ρ handed to it now leaves no rounding
excess."""

from __future__ import annotations

import math

import pytest

from dpcore.analyses.synth.mbi_models import _measurement, _mst_split_fits, mst_rho
from dpcore.analyses.synth.teaching import FIGURE9_EPSILONS, paper_rho


def preset_rho(epsilon: float) -> float:
    """The ρ the Learn page's Figure 9 preset runs MST at (ρ = ε²/2 of its run ε)."""
    return math.sqrt(2 * paper_rho(epsilon)) ** 2 / 2


def test_the_preset_s_vanilla_model_split_overshot_by_an_ulp():
    """Eight columns (six and race and sex) at the paper's ε = 1: the reproduction."""
    assert not _mst_split_fits(preset_rho(1.0), 8)


@pytest.mark.parametrize("epsilon", FIGURE9_EPSILONS)
@pytest.mark.parametrize("columns", [3, 6, 8, 11])
def test_the_rho_handed_to_mst_fits_and_is_at_most_a_hair_below(epsilon, columns):
    rho = preset_rho(epsilon)
    handed = mst_rho(rho, columns)
    assert handed <= rho and _mst_split_fits(handed, columns)
    assert rho - handed <= 1e-12 * rho  # a few dozen ulps at most


def test_opendp_accounts_the_handed_rho_within_the_charged_one():
    """OpenDP's own accounting of the measurement built at the handed ρ never exceeds the ρ the
    ledger is charged (a construction, no data)."""
    rho = preset_rho(1.0)
    measurement, _ = _measurement("mst", (2,) * 8, mst_rho(rho, 8))
    from opendp.extras.polars import Bound

    assert measurement.map([Bound(per_group=1)]) <= rho
