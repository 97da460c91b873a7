"""The Plan page's check by simulation says what its numbers mean: the band a calibrated answer
falls in by chance, and what a fraction above or below it says about the budget."""

import pandas as pd
import pytest

from strata_ui.planner import check_sentence


@pytest.mark.parametrize(
    ("met", "verdict"),
    [
        (0.980, "Above that range: the planner's model overstates this error"),
        (0.950, "Within that range: the answer is as calibrated as the check can tell"),
        (0.900, "Below that range: the answer promised more than it delivers"),
    ],
)
def test_the_check_says_what_the_band_is_and_where_the_binding_group_falls(met, verdict):
    row = pd.Series({"met": met, "band_low": 0.936, "band_high": 0.963})
    said = check_sentence(row, 1000, "Other × Female", 0.95)
    assert f"**Other × Female** met the target {met:.1%} of the time" in said
    assert "the budget at which it meets the target 95% of the time" in said
    assert (
        "by chance alone, 1,000 releases of an exact answer meet it between 93.6% and 96.3%" in said
    )
    assert verdict in said
