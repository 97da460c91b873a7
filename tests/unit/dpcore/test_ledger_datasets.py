"""The budget belongs to the people in the data: a ledger is bound to the data it released on; a
release on other data asks first; data another ledger (live or archived) released on is refused
to a new ledger or a reset one unless a curator raises the people's total, with a recorded
reason; the people's loss in all is stated with every release; files of older versions are
migrated, their archives counting toward that loss."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.analyses.mean.estimators import LaplaceMean
from dpcore.analyses.mean.plan import MeanPlan
from dpcore.analyses.mean.statistics import GroupValues
from dpcore.foundations.accounting import ZCDP, PureDP
from dpcore.foundations.dataset import frame_identity
from dpcore.foundations.grouping import GroupingSpec
from dpcore.foundations.ledger import (
    LOCAL_USER,
    MIGRATED,
    BudgetExceededError,
    Ledger,
    LedgerDataset,
    OtherDatasetError,
    ReleasedElsewhereError,
    audit_trail,
    list_ledgers,
    verify_ledger_file,
)
from dpcore.release import (
    DatasetRef,
    PlanHeader,
    ReleaseRecord,
    plan_key,
    public_metadata,
    release,
    to_csv,
    to_json,
    to_script,
)
from tests.ledger_files import OlderLedgerFile, release_payload

SURVEY = LedgerDataset("content:" + "a" * 64, "survey.csv")
FOLLOW_UP = LedgerDataset("content:" + "b" * 64, "follow-up.csv")
COST = ZCDP(0.25)


@pytest.fixture
def ledger(db) -> Ledger:
    return Ledger(db, "project", ZCDP(1.0))


def people(extra: int = 0) -> pd.DataFrame:
    """Forty people in two regions; ``extra`` more people make a neighbouring dataset."""
    rows = 40 + extra
    return pd.DataFrame(
        {"region": ["north", "south"] * (rows // 2) + ["north"] * (rows % 2),
         "hours": [float(10 + i % 50) for i in range(rows)]}
    )  # fmt: skip


def plan_on(frame: pd.DataFrame, name: str, epsilon: float = 0.5, label: str = "") -> MeanPlan:
    spec = GroupingSpec(by=("region",))
    header = PlanHeader(
        dataset=DatasetRef.of(frame, name), spec=spec, budget=PureDP(epsilon), label=label
    )
    values = GroupValues.from_grouping(spec.build(frame), frame, "hours")
    return MeanPlan(values=values, header=header, estimator=LaplaceMean(bounds=(0.0, 100.0)))


# --- one ledger, its data ---------------------------------------------------------------------


def test_the_first_spend_on_data_binds_the_ledger_and_later_ones_on_it_pass(ledger) -> None:
    assert ledger.datasets() == [] and ledger.covers(FOLLOW_UP)  # unbound: any data may come
    first = ledger.spend("mean", COST, {}, dataset=SURVEY)
    ledger.spend("median", COST, {}, dataset=SURVEY)
    [bound] = ledger.datasets()
    assert (bound.identity, bound.name, bound.added_at) == (
        SURVEY.identity, "survey.csv", first.created_at,
    )  # fmt: skip
    assert ledger.covers(SURVEY) and not ledger.covers(FOLLOW_UP)
    assert ledger.remaining() == {"rho": 0.5}


def test_a_spend_on_other_data_is_refused_naming_the_ledger_and_records_nothing(ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    with pytest.raises(OtherDatasetError) as refused:
        ledger.check_dataset(FOLLOW_UP)
    with pytest.raises(OtherDatasetError) as refused_in_spend:
        ledger.spend("mean", COST, {}, key="k", dataset=FOLLOW_UP)
    message = str(refused_in_spend.value)
    assert message == str(refused.value)
    assert "ledger “project” is the budget of “survey.csv”" in message
    assert "this release is on “follow-up.csv”" in message
    assert "Nothing was spent" in message and "start a new ledger" in message
    assert message.endswith("pass `allow_other_dataset=True`.")
    assert len(ledger.records()) == 2 and ledger.get("k") is None  # the start and the release
    assert ledger.remaining() == {"rho": 0.75}


def test_the_same_name_with_other_contents_is_called_so(ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    changed = LedgerDataset("content:" + "c" * 64, SURVEY.name)
    with pytest.raises(OtherDatasetError, match="on “survey.csv” with other contents"):
        ledger.spend("mean", COST, {}, dataset=changed)


def test_a_confirmed_spend_on_other_data_records_who_approved_it(ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    ledger.spend("mean", COST, {}, dataset=FOLLOW_UP, allow_other_dataset=True, actor="ana")
    ledger.spend("median", COST, {}, dataset=FOLLOW_UP)  # covered now: no confirmation needed
    assert [d.name for d in ledger.datasets()] == ["survey.csv", "follow-up.csv"]
    assert ledger.remaining() == {"rho": 0.25}  # both data share the one budget
    approval = next(r for r in ledger.records() if r.entry == "cover")
    assert (approval.actor, approval.dataset_name, approval.cost) == ("ana", "follow-up.csv", None)
    assert "the same people as “survey.csv”" in approval.label
    with pytest.raises(OtherDatasetError, match="budget of “survey.csv” and “follow-up.csv”"):
        ledger.spend("mean", COST, {}, dataset=LedgerDataset("content:d", "third.csv"))


def test_a_retry_of_a_recorded_key_returns_it_before_any_dataset_check(ledger) -> None:
    first = ledger.spend("mean", COST, {}, key="k", dataset=SURVEY)
    assert ledger.spend("mean", COST, {}, key="k", dataset=FOLLOW_UP) == first
    assert len(ledger.history()) == 1


def test_spends_on_no_data_neither_bind_nor_are_refused(ledger) -> None:
    ledger.spend("by hand", COST, {})
    assert ledger.datasets() == []
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    ledger.spend("by hand", COST, {})
    assert [d.name for d in ledger.datasets()] == ["survey.csv"]


@pytest.mark.parametrize(
    ("dataset", "error"),
    [("survey.csv", TypeError), (LedgerDataset("", "x.csv"), ValueError)],
)
def test_a_malformed_dataset_is_refused_and_records_nothing(ledger, dataset, error) -> None:
    with pytest.raises(error, match="`dataset"):
        ledger.spend("mean", COST, {}, dataset=dataset)
    assert ledger.history() == []


# --- the people's budget, across ledgers ------------------------------------------------------


def test_a_new_ledger_on_released_data_is_refused_without_a_raise(db, ledger) -> None:
    ledger.spend("mean", COST, {}, dataset=SURVEY)
    fresh = Ledger(db, "fresh start", ZCDP(5.0))
    assert not fresh.covers(SURVEY)
    with pytest.raises(ReleasedElsewhereError) as refused:
        fresh.spend("mean", COST, {}, key="k", dataset=SURVEY)
    message = str(refused.value)
    assert "“survey.csv” was released on under ledger “project”" in message
    assert "a new ledger, or a reset, is no new budget for the same people" in message
    assert "ρ = 0.25 (zCDP) has been spent on them in all" in message
    assert "Nothing was spent" in message
    assert fresh.history() == [] and fresh.get("k") is None
    assert fresh.remaining() == {"rho": 5.0}


def test_the_raise_that_lets_a_ledger_take_released_data_on_is_recorded(db, ledger) -> None:
    ledger.spend("mean", ZCDP(1.0), {}, dataset=SURVEY)
    fresh = Ledger(db, "second study", ZCDP(2.0), actor="ana")
    with pytest.raises(ValueError, match="`reason` must be a non-empty str"):
        fresh.take_on(SURVEY, reason="  ", actor="ana")
    raised = fresh.take_on(SURVEY, reason="the owner agreed to a second study", actor="ana")
    assert (raised.entry, raised.actor, raised.reason) == (
        "join", "ana", "the owner agreed to a second study",
    )  # fmt: skip
    assert raised.cost == ZCDP(2.0) and "released under “project”" in raised.label
    fresh.spend("mean", ZCDP(0.5), {}, dataset=SURVEY)
    people = fresh.population()
    assert people.ledgers == ("project", "second study")
    assert (people.loss, people.total) == (ZCDP(1.5), ZCDP(3.0))
    with pytest.raises(ValueError, match="already covers"):
        fresh.take_on(SURVEY, reason="again", actor="ana")
    with pytest.raises(ValueError, match="no ledger has released on “follow-up.csv”"):
        fresh.take_on(FOLLOW_UP, reason="nothing to raise", actor="ana")


def test_a_reset_is_a_raise_recorded_with_its_reason_and_nothing_is_forgotten(ledger) -> None:
    for _ in range(4):
        ledger.spend("mean", COST, {}, dataset=SURVEY)
    with pytest.raises(BudgetExceededError):
        ledger.spend("one more", COST, {}, dataset=SURVEY)
    assert not hasattr(ledger, "archive")
    raised = ledger.raise_total(PureDP(1.0), reason="new agreement", actor="ana")
    assert raised.cost == ZCDP(0.5)  # in the ledger's kind: ε = 1 counts as ρ = 1/2
    ledger.spend("one more", COST, {}, dataset=SURVEY)
    assert ledger.remaining() == {"rho": 0.25} and ledger.granted() == ZCDP(1.5)
    assert [r.entry for r in ledger.records()] == ["start", *["release"] * 4, "raise", "release"]
    assert ledger.population().loss == ZCDP(1.25)
    with pytest.raises(ValueError, match="`reason`"):
        ledger.raise_total(COST, reason="", actor="ana")
    twice = [ledger.raise_total(COST, reason="once", actor="ana", key="form-1") for _ in "ab"]
    assert twice[0] == twice[1] and ledger.granted() == ZCDP(1.75)  # a double click raises once
    with pytest.raises(ValueError, match="without choosing δ"):
        ledger.raise_total(PureDP(1.0).to_zcdp().to_approx_dp(1e-6), reason="x", actor="ana")


def test_twenty_eight_releases_where_four_were_afforded_need_two_recorded_raises(db) -> None:
    """The issue's attack: four releases at ε = 1, a reset, four more, then twenty in a new
    ledger. Each step beyond the first four is refused until a curator raises the total, and
    the last release states the whole loss."""
    frame = people()
    default = Ledger(db, "default", ZCDP(2.0))  # ε = 1 costs ρ = 1/2: four releases
    made = [release(plan_on(frame, "survey.csv", 1.0, f"r{i}"), default, noise="simulation",
                    rng=i) for i in range(4)]  # fmt: skip
    with pytest.raises(BudgetExceededError):
        release(plan_on(frame, "survey.csv", 1.0, "r4"), default, noise="simulation", rng=4)
    default.raise_total(ZCDP(2.0), reason="board approval 12", actor="curator ana")
    made += [release(plan_on(frame, "survey.csv", 1.0, f"r{i}"), default, noise="simulation",
                     rng=i) for i in range(4, 8)]  # fmt: skip
    fresh = Ledger(db, "fresh", ZCDP(10.0))
    with pytest.raises(ReleasedElsewhereError, match="ε = 8 .pure DP. has been spent"):
        release(plan_on(frame, "survey.csv", 1.0, "r8"), fresh, noise="simulation", rng=8)
    fresh.take_on(DatasetRef_of(frame), reason="second project", actor="curator bo")
    made += [release(plan_on(frame, "survey.csv", 1.0, f"r{i}"), fresh, noise="simulation",
                     rng=i) for i in range(8, 28)]  # fmt: skip
    last = made[-1].metadata["cumulative_loss"]
    assert (last["kind"], last["epsilon"], last["releases"]) == ("pure", 28.0, 28)
    assert last["ledgers"] == ["default", "fresh"] and last["rho"] == 14.0
    assert "ε = 28 (pure DP) (or ρ = 14 (zCDP)" in last["statement"]
    assert made[0].metadata["cumulative_loss"]["epsilon"] == 1.0
    raises = [e for e in audit_trail(db, ledger="fresh").rows if e["what"].startswith("raise")]
    assert [(e["who"], e["reason"]) for e in raises] == [
        ("curator ana", "board approval 12"), ("curator bo", "second project"),
    ]  # fmt: skip
    assert verify_ledger_file(db).ok


def DatasetRef_of(frame: pd.DataFrame) -> LedgerDataset:  # noqa: N802 - reads as the type
    ref = DatasetRef.of(frame, "survey.csv")
    return LedgerDataset(ref.identity, ref.name, aliases=ref.aliases)


def test_a_recorded_release_is_found_from_another_ledger_of_its_people(db) -> None:
    """The same plan on the same data is one release, whichever ledger of its people commits
    it again: the key names the data."""
    frame = people()
    first = release(plan_on(frame, "survey.csv"), Ledger(db, "a", ZCDP(1.0)), noise="simulation")
    other = Ledger(db, "b", ZCDP(1.0))
    again = release(plan_on(frame, "copy of survey.csv"), other, noise="simulation")
    assert not again.spent and again.key == first.key and other.history() == []


# --- releases ---------------------------------------------------------------------------------


def test_a_release_on_a_second_dataset_is_refused_before_any_noise_then_allowed(ledger) -> None:
    survey, larger = plan_on(people(), "survey.csv"), plan_on(people(extra=1), "survey.csv")
    first = release(survey, ledger, noise="simulation", rng=1)
    with pytest.raises(OtherDatasetError, match="ledger “project”"):
        release(larger, ledger, noise="simulation", rng=2)
    assert ledger.history() == [first.ledger_record] and ledger.remaining() == {"rho": 0.875}

    confirmed = release(larger, ledger, noise="simulation", rng=2, allow_other_dataset=True)
    assert confirmed.spent and ledger.remaining() == {"rho": 0.75}
    assert len(ledger.datasets()) == 2
    assert ledger.get(plan_key(survey, "simulation")) == first.ledger_record
    assert ReleaseRecord.from_ledger(ledger.get(plan_key(larger, "simulation"))).outputs == (
        confirmed.outputs
    )
    assert confirmed.metadata["cumulative_loss"]["releases"] == 2


def test_a_repeat_of_a_recorded_release_on_its_data_spends_nothing(ledger) -> None:
    plan = plan_on(people(), "survey.csv")
    release(plan, ledger, noise="simulation", rng=1)
    again = release(plan, ledger, noise="simulation", rng=1)
    assert not again.spent and len(ledger.history()) == 1


# --- files of older versions ------------------------------------------------------------------


def test_a_schema_1_file_is_migrated_with_its_past_data(db) -> None:
    old_file = OlderLedgerFile(db, version=1)
    for name in ("old", "empty"):
        old_file.start(name, 1.0)
    old_file.spend("old", {"rho": 0.1}, release_payload("f1", "survey.csv"), kind="zcdp")
    old_file.spend("old", {"rho": 0.1}, '{"note": "by hand", "metadata": "x"}', kind="zcdp")
    old_file.spend("old", {"rho": 0.1}, release_payload("f2", "follow-up.csv"), kind="zcdp")
    assert [(s.name, s.releases, s.dataset) for s in list_ledgers(db)] == [
        ("old", 3, "survey.csv"), ("empty", 0, None),
    ]  # fmt: skip
    old = Ledger.open(db, "old")
    assert [(d.identity, d.name) for d in old.datasets()] == [
        ("legacy:f1", "survey.csv"), ("legacy:f2", "follow-up.csv"),
    ]  # fmt: skip
    assert old.remaining() == {"rho": 0.7} and len(old.history()) == 3
    assert {r.actor for r in old.records()} == {MIGRATED}
    old.spend("mean", COST, {}, dataset=LedgerDataset("legacy:f2", "follow-up.csv"))
    with pytest.raises(OtherDatasetError, match="budget of “survey.csv” and “follow-up.csv”"):
        old.spend("mean", COST, {}, dataset=LedgerDataset("content:d", "third.csv"))
    assert verify_ledger_file(db).ok


def test_a_schema_2_file_with_a_reset_counts_its_archive_toward_the_loss(db) -> None:
    """The issue's history as the version before it wrote it: four releases, a reset (the
    history archived), four more, then twenty in a new ledger; all on one frame."""
    frame = people()
    old_fingerprint = frame_identity(frame).removeprefix("frame:")  # what that version computed
    old_file = OlderLedgerFile(db, version=2)
    old_file.start("default", 2.0)
    for _ in range(4):
        old_file.release("default", old_fingerprint, "survey.csv")
    archived = old_file.archive("default")
    for _ in range(4):
        old_file.release("default", old_fingerprint, "survey.csv")
    old_file.start("fresh", 10.0)
    for _ in range(20):
        old_file.release("fresh", old_fingerprint, "survey.csv")

    summaries = {s.name: s.releases for s in list_ledgers(db)}  # migrates the file
    assert summaries == {archived: 4, "default": 4, "fresh": 20}
    default = Ledger.open(db, "default")
    people_of = default.population()
    assert set(people_of.ledgers) == {archived, "default", "fresh"}
    assert people_of.loss == PureDP(28.0) and people_of.total == ZCDP(14.0)
    joins = [r for r in Ledger.open(db, "fresh").records() if r.entry == "join"]
    assert [(r.actor, r.dataset) for r in joins] == [(MIGRATED, f"legacy:{old_fingerprint}")]
    assert verify_ledger_file(db).ok

    # The same frame, identified by its bytes now, is still the same people's data.
    upload = plan_on(frame, "survey.csv", 1.0, "after the upgrade")
    with pytest.raises(ReleasedElsewhereError, match="ε = 28 .pure DP. has been spent"):
        release(upload, Ledger(db, "third", ZCDP(5.0)), noise="simulation")
    with pytest.raises(BudgetExceededError):  # the live ledger's own total is spent
        release(upload, default, noise="simulation")
    default.raise_total(ZCDP(1.0), reason="after the upgrade", actor=LOCAL_USER)
    made = release(upload, default, noise="simulation")
    assert made.metadata["cumulative_loss"]["epsilon"] == 29.0
    cover = [r for r in default.records() if r.entry == "cover"][-1]
    assert "older version" in cover.reason


# --- what leaves the curator ------------------------------------------------------------------


def test_the_exports_of_neighbouring_datasets_differ_in_their_dp_outputs_only(tmp_path) -> None:
    """One person added changes the data's identity (so the ledger tells the data apart) but
    nothing an export says besides the noisy outputs: no identity, key or count slips out."""
    exported = []
    for extra in (0, 1):
        ledger = Ledger(tmp_path / f"ledger-{extra}.sqlite", "project", ZCDP(1.0))
        made = release(plan_on(people(extra), "survey.csv"), ledger, noise="simulation", rng=5)
        identity = made.metadata["plan"]["dataset"]["identity"]
        texts = (to_csv(made), to_json(made), to_script(made))
        for text in texts:
            assert identity.partition(":")[2][:12] not in text
            assert made.key.removeprefix("release-")[:12] not in text
        public = public_metadata(made.metadata)
        exported.append((identity, {k: v for k, v in public.items() if k != "released_at"}))
    (first, first_public), (second, second_public) = exported
    assert first != second
    assert first_public == second_public
