"""What the ratio's interval tests share: rows of the paper's design (Miao & Li, JDS 2022, §3),
its bounds and Gaussian mechanism, a release of its interval, and the slack of seeded checks."""

from __future__ import annotations

import numpy as np

from dpcore.analyses.ratio.intervals import ratio_ci

Z = 4.5  # standard errors of slack in seeded checks of a noise law
ALPHA_TEST = 1e-3  # level of the seeded binomial / KS tests
PAPER_BOUNDS = {False: (1.0, 1.0, 1.0), True: (1.0, 1.0, 3.0)}
GAUSSIAN = {"delta": 1e-6, "mechanism": "gaussian"}  # the paper's mechanism and δ


def paper_rows(
    n: int, weighted: bool, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Rows of the paper's design (§3), drawn with numpy's own beta / binomial / exponential."""
    rng = np.random.default_rng(seed)
    s = rng.beta(2, 2, n)
    y = rng.binomial(1, s / 1.1).astype(float)
    w = np.clip(rng.exponential(1.0, n), 1 / 3, 3) if weighted else None
    return s, y, w


def paper_ci(rows, weighted: bool, **kwargs):
    s, y, w = rows
    options = dict(
        epsilon=1.0,
        **GAUSSIAN,
        method="analytical",
        bounds=PAPER_BOUNDS[weighted],
        binary_y=True,
        rng=0,
    )
    return ratio_ci(s, y, w, **{**options, **kwargs})
