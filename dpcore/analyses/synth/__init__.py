r"""DP synthetic data for categorical tables, vanilla or stratified, per group of the Strata page.

Three synthesizers (:func:`synthesize`), each of the select–measure–project family discussed in
Rosenblatt, Stoyanovich & Musco (AAAI 2024, appendix C):

- ``"independent"`` — noisy 1-way marginals, rows drawn from their product;
- ``"mwem"`` — MWEM (Hardt, Ligett & McSherry 2012) over a workload of marginals: the exponential
  mechanism selects a marginal, the Laplace mechanism measures it, multiplicative updates project
  the dense joint distribution onto the measurements;
- ``"histogram"`` — the noisy full-joint histogram, i.e. the k-ary sampler of Raskhodnikova et al.
  (NeurIPS 2021, Alg. 3) on the joint domain;
- ``"mst"`` and ``"aim"`` — MST (McKenna, Miklau & Sheldon 2021) and AIM (McKenna et al. 2022),
  the synthesizers of the paper's appendix C, run by OpenDP's ``mbi`` module (Private-PGM) at
  ρ = ε²/2-zCDP (:mod:`.mbi_models`).

**Vanilla** fits one model on all rows. **Stratified** (``strata=...``) fits one model per group,
each with the *full* ε — the groups are disjoint, so the release costs ε by parallel composition
(McSherry 2009, Thm. 4) — and draws ``n_rows × share`` rows from each group's model, where the
shares are public and supplied by the caller (AAAI 2024, "Stratified Data Synthesis").

Privacy model: pure ε-DP (ρ-zCDP for MST and AIM), neighbouring tables differ by adding or removing one row (one person).
Every Laplace draw goes through a :class:`~dpcore.foundations.mechanisms.NoiseSource` (numpy for previews,
OpenDP for releases); drawing rows from a fitted model is post-processing and uses the numpy
``rng``. Numeric columns are bucketed with public ``edges`` only, never edges derived from data.

Builds on :func:`synthesize` and the stratified synthesis of Rosenblatt, Stoyanovich &
Musco (AAAI 2024 arXiv, "Stratified Data Synthesis" and appendix C): one private model per group
of the Strata page, each with the full ε (disjoint groups compose in parallel), rows drawn from
each group's model in proportion to its public share. "Vanilla" fits one model to every row, with
the strata columns modelled like any other column. The pieces:

- :class:`SynthConfig` — what to synthesize (columns, public bucket edges, synthesizer, rows);
- :func:`prepare_rows` — the rows a synthesis uses: the Strata page's groups (holdout removed,
  dropped groups left out), numeric columns chosen as categories turned into text;
- :func:`check_config` — refuses what cannot work, with a message saying how to fix it (numeric
  column without edges, too few columns, a joint domain too large for the synthesizer, groups
  that would get no synthetic rows);
- :func:`run_synthesis` — one vanilla or stratified synthesis (a preview with ``"simulation"``
  noise, or a release with ``"secure"`` noise);
- :func:`build_workload` — the prepared rows' 3-way marginals per group as a
  :class:`dpcore.foundations.metrics.GroupWorkload` (the one workload error), so many synthetic tables are
  scored quickly;
- :func:`sweep_errors` and :func:`sweep_metrics` — per-group errors of vanilla and stratified
  synthesis over several ε and seeds, and their overall, worst-group and parity errors
  (Def. 11, Fig. 9);
- :class:`SynthPlan` — the release plan committed on the Release page (follows
  :class:`dpcore.release.ReleasePlan`); its outputs are the synthetic rows.

Privacy accounting: every synthesizer here is ε-DP under add/remove-one neighbours. Stratified,
each group's model is fitted on that group's rows alone with ε, so the release costs ε by
parallel composition (McSherry 2009, Thm. 4); the group list and shares are public inputs.
Drawing rows from the fitted models is post-processing. A zCDP ledger is charged ρ = ε²/2
(Bun & Steinke 2016, Prop. 1.4).

What is *not* protected, and must be said on screen: the category lists of columns whose
categories are read from the data (:attr:`SyntheticData.domain_from_data`), and the
group shares when they are the data's own group counts treated as public.
"""

# Each module names its public API in `__all__`; the package re-exports exactly those names.
from dpcore.analyses.synth import (
    analysis,
    config,
    encoding,
    mbi_models,
    plan,
    synthesizers,
    teaching,
    workload,
)
from dpcore.analyses.synth.analysis import *
from dpcore.analyses.synth.config import *
from dpcore.analyses.synth.encoding import *
from dpcore.analyses.synth.mbi_models import *
from dpcore.analyses.synth.plan import *
from dpcore.analyses.synth.synthesizers import *
from dpcore.analyses.synth.teaching import *
from dpcore.analyses.synth.workload import *

__all__ = [
    *analysis.__all__,
    *synthesizers.__all__,
    *encoding.__all__,
    *mbi_models.__all__,
    *config.__all__,
    *workload.__all__,
    *plan.__all__,
    *teaching.__all__,
]
