"""The Budget page's price of one release: the same words, in ε and in the ledger's unit, for
every kind of cost, and how many such releases the ledger affords."""

import pytest

from dpcore.foundations.accounting import ZCDP, ApproxDP, PureDP
from dpcore.foundations.ledger import Ledger
from strata_ui import constants
from strata_ui.ledger_ui import cost_sentence, releases_affordable


@pytest.mark.parametrize(
    ("charge", "left", "count"),
    [
        ({"rho": 0.5}, {"rho": 2.0}, 4),
        ({"rho": 0.245}, {"rho": 0.98}, 4),  # 0.98 / 0.245 is 3.9999999999999996 in floats
        ({"rho": 0.5}, {"rho": 0.49}, 0),
        ({"epsilon": 1.0, "delta": 0.0}, {"epsilon": 3.5, "delta": 1e-6}, 3),
        ({"epsilon": 0.1, "delta": 1e-6}, {"epsilon": 3.0, "delta": 2.5e-6}, 2),
        ({"rho": 0.0}, {"rho": 1.0}, 0),  # nothing charged: no count to give
    ],
)
def test_releases_affordable_counts_the_scarcest_component(charge, left, count):
    assert releases_affordable(charge, left) == count


def test_the_sentence_gives_the_cost_in_its_unit_in_rho_and_an_epsilon(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "project", ZCDP(2.0))
    ledger.spend("earlier", ZCDP(0.75), {})
    pure = cost_sentence(PureDP(1.0), ledger)
    assert pure == (
        "**One release costs** ε = 1 (pure DP); the ledger counts ε-DP as ρ = ε²/2, so the "
        "ledger is charged **ρ = 0.5**. “project” has room for **2 more releases** like this one "
        "(4 on its whole budget of ρ = 2)."
    )
    gaussian = cost_sentence(ZCDP(0.5), ledger)
    epsilon = ZCDP(0.5).to_approx_dp(constants.DISPLAY_DELTA).epsilon
    assert f"ρ = 0.5 (zCDP), that is (ε = {epsilon:.3g}, δ = 1e-06)-DP" in gaussian
    assert "charged **ρ = 0.5**" in gaussian and "**2 more releases**" in gaussian
    assert "**1 more release** " in cost_sentence(ZCDP(1.0), ledger)


def test_an_epsilon_delta_ledger_is_charged_in_its_own_unit(tmp_path):
    ledger = Ledger(tmp_path / "l.sqlite", "approx", ApproxDP(2.0, 1e-6))
    sentence = cost_sentence(PureDP(0.5), ledger)
    assert "ε = 0.5 (pure DP); the ledger is charged **ε = 0.5, δ = 0**" in sentence
    assert "**4 more releases**" in sentence
