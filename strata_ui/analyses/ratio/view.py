"""What the ratio's pages show, apart from what a release depends on (:class:`RatioView`)."""

from __future__ import annotations

from dataclasses import dataclass

from dpcore.analyses.ratio import ALL_GROUPS

__all__ = ["RatioView"]


@dataclass(frozen=True)
class RatioView:
    """The ratio's display choices: the Estimator page's preview and the Compare page's
    simulations (neither spends budget; a release depends only on
    :class:`~dpcore.analyses.ratio.RatioSettings`)."""

    preview_seed: int = 0
    """Noise draw of the preview; "Draw new noise" adds 1."""
    show_exact: bool = False  # confidential: hidden until asked for
    """Whether the preview shows the confidential exact ratios."""
    compare_a: str | None = None
    """Group A of the preview's two-group comparison (None: the first group)."""
    compare_b: str | None = None
    """Group B (None: the first group other than A)."""
    replicates: int = 1000
    """Simulated releases per view on the Compare page."""
    bootstrap: bool = False
    """Whether the simulations also resample each group's rows."""
    sweep_group: str = ALL_GROUPS
    """Whose interval width the width chart follows as the budget grows."""
    show_table1: bool = False
    """Whether the paper's Table 1 has been asked for (it then stays on the page)."""
    table1_zcdp: bool = False
    """Whether Table 1 also runs the zCDP accounting."""
