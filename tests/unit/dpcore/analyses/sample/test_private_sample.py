"""The private sample analysis: records drawn through the noise source (OpenDP for a release,
seeded numpy for a preview), the paper's accuracy guarantees checked by seeded simulation, the
ledger's charge, and bad input refused before anything is spent."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, spearmanr

from dpcore import ZCDP, DatasetRef, GroupingSpec, Ledger, PlanHeader, PureDP, load_demo, release
from dpcore.analyses.sample import (
    PRODUCT_CLIP,
    SAMPLE,
    WHOLE_POPULATION,
    SamplePlan,
    SampleRows,
    SampleSettings,
    draw_records,
    kary_guarantee,
    part_sizes,
    product_guarantee,
)
from dpcore.analyses.sample.teaching import records_needed, sampling_versus_learning
from dpcore.foundations.mechanisms import SecureNoise, SimulationNoise
from dpcore.release import to_json, to_script

SPEC = GroupingSpec(by=("race", "sex"))
PRODUCT = SampleSettings(sampler="product", columns=("income_over_50k", "sex"))


@pytest.fixture(scope="module")
def demo() -> pd.DataFrame:
    return load_demo()


KARY = SampleSettings()
EPSILON_1 = PureDP(1.0)


def plan_for(frame, settings=KARY, budget=EPSILON_1) -> SamplePlan:
    header = PlanHeader(DatasetRef.of(frame, "demo"), SPEC, budget)
    return SAMPLE.plan(SAMPLE.statistics(frame, SPEC.build(frame), settings), settings, header)


def ledger(tmp_path) -> Ledger:
    return Ledger(tmp_path / "l.sqlite", "t", ZCDP(1.0))


@pytest.mark.parametrize("settings", [SampleSettings(), PRODUCT], ids=["kary", "product"])
def test_a_release_draws_through_opendp_and_a_seeded_dry_run_repeats(
    demo, settings, tmp_path, monkeypatch
):
    calls = []
    for name in ("_apply", "draw_bernoulli"):
        original = getattr(SecureNoise, name)

        def counted(*args, _original=original, _name=name):
            calls.append(_name)
            return _original(*args)

        monkeypatch.setattr(
            SecureNoise, name, staticmethod(counted) if name == "_apply" else counted
        )
    plan = plan_for(demo, settings)
    record = release(plan, ledger(tmp_path), noise="secure")
    expected = "_apply" if settings.sampler == "kary" else "draw_bernoulli"
    assert record.spent and calls.count(expected) == settings.records  # one run per record
    assert [r["record"] for r in record.outputs] == ["1", "2", "3", "4", "5"]
    dry = [
        release(plan, Ledger(tmp_path / f"{i}.sqlite", "t", ZCDP(1.0)), noise="simulation", rng=7)
        for i in range(2)
    ]
    assert dry[0].outputs == dry[1].outputs


def test_the_release_costs_the_budget_once_and_a_second_commit_nothing(demo, tmp_path):
    book = ledger(tmp_path)
    plan = plan_for(demo, SampleSettings(records=20), ZCDP(0.125))
    assert plan.cost == PureDP(0.5)  # ε = √(2ρ): the k-ary sampler is pure DP
    first = release(plan, book, noise="simulation", rng=1)
    again = release(plan, book, noise="simulation", rng=2)
    assert first.spent and not again.spent and again.outputs == first.outputs
    assert book.remaining()["rho"] == pytest.approx(1.0 - 0.125)
    product = plan_for(demo, PRODUCT, ZCDP(0.125))
    assert product.cost == ZCDP(0.125)  # charged the whole budget, whatever the group's size


def test_records_come_from_disjoint_random_parts_of_the_rows():
    """Rows sorted by value: unshuffled parts would each hold one value and the records would
    follow the row order (rank correlation 1). Shuffled parts mix the values, so the records
    show no order (|ρ| under 3 standard errors of 1/√k)."""
    assert list(part_sizes(10, 3)) == [4, 3, 3]
    records = 100
    codes = np.repeat(np.arange(4), 250)  # parts of 10 rows
    drawn = draw_records(codes, sampler="kary", domain=4, records=records, epsilon=50.0,
                         noise=SimulationNoise(rng=0), rng=np.random.default_rng(0))  # fmt: skip
    assert drawn.shape == (records,)
    order = spearmanr(np.arange(records), drawn).statistic
    assert abs(order) < 3 / math.sqrt(records), order
    assert set(drawn[:25]) == set(range(4))  # the first quarter of the parts is not all zeros


def test_the_kary_guarantee_holds_and_sampling_beats_learning():
    """Thm. 1.4: data drawn from P, the record's distribution E[p̂] is within 2K/(εn) of P."""
    frame = sampling_versus_learning(10, 1.0, np.array([50, 200, 1000]), runs=20_000, rng=3)
    assert np.all(frame["sampling"] <= frame["guarantee"] + 5 * frame["floor"])
    assert np.all(frame["learning"] > 3 * frame["sampling"])
    assert kary_guarantee(10, 1000, 1.0) == pytest.approx(0.02)


@pytest.mark.parametrize("n", [60, 200, 800])
def test_the_product_guarantee_holds_exactly_for_biases_in_the_class(n):
    """Thm. 6.1/6.4: each output bit is Bernoulli(E[c_j]), c_j the clipped proportion of
    Binomial(n, p_j)/n; the summed |E[c_j] − p_j| stays under the derived bound."""
    biases = np.array([1 / 3, 0.4, 0.5, 2 / 3])
    hits = np.arange(n + 1)
    pmf = binom.pmf(hits[:, None], n, biases[None, :])
    mean_c = (pmf * np.clip(hits / n, *PRODUCT_CLIP)[:, None]).sum(axis=0)
    assert np.abs(mean_c - biases).sum() <= product_guarantee(len(biases), n)
    assert records_needed(100, 1.0, 0.1)["our product sampler"] < 100 / 0.1**2


def test_exports_say_which_categories_are_treated_as_public(demo, tmp_path):
    declared = SampleSettings(columns=("marital_status", "sex")).with_categories(
        "sex", ("Female", "Male")
    )
    record = release(plan_for(demo, declared), ledger(tmp_path), noise="simulation", rng=1)
    estimator = record.metadata["plan"]["estimator"]
    assert estimator["categories_treated_as_public"] == ["marital_status"]
    assert estimator["categories"]["sex"] == ["Female", "Male"]
    assert '"categories_treated_as_public"' in to_json(record)
    assert "SamplePlan.build(" in to_script(record)


def test_an_empty_list_of_categories_reads_the_data_and_says_so(demo):
    cleared = SampleSettings(columns=("marital_status", "sex"), categories=(("sex", ()),))
    assert cleared == SampleSettings(columns=("marital_status", "sex"))
    estimator = plan_for(demo, cleared).parameters()["estimator"]
    assert estimator["categories_treated_as_public"] == ["marital_status", "sex"]
    assert estimator["categories"]["sex"] == ["Female", "Male"]


@pytest.mark.parametrize(
    ("settings", "match"),
    [
        (SampleSettings(columns=("age",)), "holds numbers, not categories"),
        (SampleSettings(group="Martian × Female"), "not a group of the Strata page"),
        (SampleSettings(records=0), "between 1 and 20"),
        (SampleSettings(records=21), "between 1 and 20"),
        (SampleSettings(columns=()), "at least one column"),
        (SampleSettings(sampler="product"), "exactly two categories"),
        (SampleSettings(columns=("occupation", "education", "workclass")), "above the limit"),
        (SampleSettings().with_categories("marital_status", ("Divorced",)), "outside its declared"),
        (
            SampleSettings(
                sampler="product", columns=("income_over_50k",), group="Other × Female", records=20
            ),
            "too small for this budget",
        ),  # fmt: skip
    ],
)
def test_bad_input_is_refused_with_a_message_and_nothing_spent(demo, settings, match, tmp_path):
    book = ledger(tmp_path)
    with pytest.raises(ValueError, match=match):
        SAMPLE.check(settings, demo)
        release(plan_for(demo, settings, PureDP(0.5)), book, noise="simulation", rng=1)
    assert book.history() == []


def test_a_group_with_no_rows_is_refused(demo):
    """Every row of a group may sit in the public holdout or be left out: nothing to sample."""
    rows = SAMPLE.statistics(demo, SPEC.build(demo), SampleSettings())
    emptied = SampleRows(rows.values, np.where(rows.codes == 1, 0, rows.codes), rows.labels)
    with pytest.raises(ValueError, match="has no rows to sample from; choose another group"):
        emptied.group_values(rows.labels[1])
    assert len(rows.group_values(WHOLE_POPULATION)) == len(rows.values)


def test_the_product_cost_follows_the_part_size():
    from dpcore.analyses.sample import product_epsilon, product_rho

    assert product_epsilon(2, 100) == pytest.approx(2 * 4 / 100)
    assert product_rho(2, 100) == pytest.approx(8 * 2 / 100**2)
    assert math.isclose(product_guarantee(1, 72), math.sqrt(math.pi / 144) * math.erfc(1))
