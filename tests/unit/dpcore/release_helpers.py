"""What the release tests share: the public bounds and budget of the demo's mean, a plan
built from scratch as an entry point builds it, a frame whose clipping matters, and the checks
that a record holds no raw statistic and an export no hash of the data."""

from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from dpcore.analyses.mean.estimators import GaussianMean, LaplaceMean
from dpcore.analyses.mean.plan import MeanPlan
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.datasets import DEMO_DATASET_NAME, load_demo, load_demo_dataset
from dpcore.foundations.grouping import GroupingSpec
from dpcore.release.commit import ReleaseRecord
from dpcore.release.plan import DatasetRef, PlanHeader

HOURS = (0.0, 100.0)  # public bounds on hours worked per week
EPSILON_1 = PureDP(1.0)
PRIVATE_SIZES = LaplaceMean(bounds=HOURS, n_public=False)
HEX64 = re.compile(r"[0-9a-f]{64}")


_demo_frame = functools.cache(load_demo)


def make_plan(
    frame: pd.DataFrame,
    *,
    name: str = DEMO_DATASET_NAME,
    by: tuple[str, ...] = ("race", "sex"),
    value: str = "hours_per_week",
    spec_options: dict | None = None,
    estimator: LaplaceMean | GaussianMean | None = None,
    budget: PureDP | ZCDP = EPSILON_1,
    label: str = "",
    level: float = 0.95,
    data: bytes | None = None,
    **plan_options,
) -> MeanPlan:
    """A plan built from scratch: spec, groups and values, the data's identity (the demo's
    asset, or the file's ``data``, as the app identifies them; else the frame's cells),
    estimator and budget."""
    spec = GroupingSpec(by=by, **(spec_options or {}))
    dataset = DatasetRef.of(frame, name, data=data)
    if name == DEMO_DATASET_NAME and data is None and frame.equals(_demo_frame()):
        dataset = load_demo_dataset()[1]
    header = PlanHeader(dataset=dataset, spec=spec, budget=budget, label=label, level=level)
    return MeanPlan(
        values=GroupValues.from_grouping(spec.build(frame), frame, value),
        header=header,
        estimator=LaplaceMean(bounds=HOURS) if estimator is None else estimator,
        **plan_options,
    )


def regions(seed: int = 0) -> pd.DataFrame:
    """Three regions of 600, 150 and 40 people; about a quarter of the values lie outside
    [0, 100], so the clipped means differ clearly from the raw ones."""
    rng = np.random.default_rng(seed)
    sizes = {"north": 600, "south": 150, "east": 40}
    region = np.repeat(list(sizes), list(sizes.values()))
    return pd.DataFrame({"region": region, "hours": rng.normal(70.0, 40.0, region.size)})


def numbers_in(value: object) -> list[float]:
    """Every number anywhere in a JSON-like value."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in numbers_in(v)]
    if isinstance(value, list | tuple):
        return [x for v in value for x in numbers_in(v)]
    return []


def assert_no_data_hash(text: str, record: ReleaseRecord) -> None:
    """No export carries the data's identity or the key that hashes it, nor any prefix."""
    identity = record.metadata["plan"]["dataset"]["identity"].partition(":")[2]
    key = record.key.removeprefix("release-")
    for digest in (identity, key):
        assert digest[:8] not in text, digest
    assert not HEX64.search(text)
