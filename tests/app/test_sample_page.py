"""App tests of the private sample: every control changed twice with a preview each time, the
product sampler's warnings, bad input explained with nothing spent, and one commit that a second
session cannot spend again."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from dpcore.analyses.sample import WHOLE_POPULATION, SampleSettings
from dpcore.foundations.ledger import Ledger
from strata_ui.analyses.sample.settings import SampleView
from tests.app import helpers
from tests.app.helpers import commit, errors, go, settings_of, text, titles

TIMEOUT_S = 90


def start() -> AppTest:
    """The Estimator page with "Private sample" chosen."""
    return helpers.start_with("sample", timeout_s=TIMEOUT_S)


def settings(at: AppTest) -> SampleSettings:
    return settings_of(at, SampleSettings)


def records(at: AppTest):
    """The preview's table of records."""
    [table] = [d.value for d in at.main.dataframe]
    return table


def previewed(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.main.error, errors(at)
    assert "a preview, not a release" in text(at.info)
    assert titles(at) and len(records(at)) == settings(at).records


def widget(at: AppTest, kind: str, key: str):
    [element] = [w for w in getattr(at, kind) if (w.key or "").startswith(key)]
    return element


def test_every_control_changed_twice_redraws_the_preview():
    at = start()
    previewed(at)
    assert "treated as public" in text(at.caption)
    for group in ("Black × Female", "White × Male"):
        widget(at, "selectbox", "sample.group").set_value(group).run()
        previewed(at)
        assert settings(at).group == group
    for k in (3, 7):
        widget(at, "number_input", "sample.records").set_value(k).run()
        previewed(at)
        assert list(records(at).columns) == list(settings(at).columns)
    for columns in (["workclass"], ["workclass", "sex"]):
        widget(at, "multiselect", "sample.columns").set_value(columns).run()
        previewed(at)
        assert list(records(at).columns) == columns
    box = widget(at, "text_input", "sample.categories.demo.sex")
    box.set_value("Female, Male").run()
    previewed(at)
    assert settings(at).declared("sex") is None  # the data's own list: still "from the data"
    widget(at, "text_input", "sample.categories.demo.sex").set_value("Male, Female").run()
    previewed(at)
    assert settings(at).declared("sex") == ("Male", "Female")
    assert "declared by you" in text(at.caption)
    first = records(at)
    for seed in (1, 2):
        widget(at, "number_input", "sample_view.seed").set_value(seed).run()
        previewed(at)
    assert settings_of(at, SampleView).seed == 2
    for sampler in ("product", "kary"):
        widget(at, "radio", "sample.sampler").set_value(sampler).run()
        assert not at.exception
    assert first is not None and settings(at).sampler == "kary"


def test_the_product_sampler_says_when_the_group_is_outside_its_class():
    at = start()
    widget(at, "multiselect", "sample.columns").set_value(["income_over_50k", "sex"]).run()
    widget(at, "radio", "sample.sampler").set_value("product").run()
    previewed(at)
    assert "[1/3, 2/3]" in text(at.main.warning)
    go(at, "compare")
    assert not at.main.error, errors(at)
    assert titles(at) == ["How close one private record is to the group, by budget"]


def test_bad_input_is_explained_and_nothing_is_spent():
    at = start()
    widget(at, "radio", "sample.sampler").set_value("product").run()
    assert "exactly two categories" in errors(at)
    widget(at, "multiselect", "sample.columns").set_value(["income_over_50k", "sex"]).run()
    widget(at, "selectbox", "sample.group").set_value("Other × Female").run()
    widget(at, "number_input", "sample.records").set_value(20).run()
    assert "too small for this budget" in errors(at)
    go(at, "release")
    assert "The release is not ready" in errors(at)
    assert Ledger.open(None, "default").history() == []


def test_one_commit_spends_once_and_a_second_session_spends_nothing():
    first, second = start(), start()
    for at in (first, second):
        go(at, "release")
        assert not at.main.error, errors(at)
    review = text(first.main.markdown)
    assert "Treated as public" in review and "replace-one" in review
    second.checkbox(key="release.confirm").check().run()
    commit(first)
    assert "Released and recorded" in text(first.success)
    assert "Differentially private records" in text(first.main.markdown)
    second.button(key="release.commit").click().run()
    assert not second.exception and not second.main.error, errors(second)
    assert "committing it again would spend nothing" in text(second.info)
    ledger = Ledger.open(None, "default")
    assert len(ledger.history()) == 1
    assert ledger.remaining() == {"rho": 1.5}  # ε = 1 is ρ = 1/2, spent once of ρ = 2
    assert settings(first).group == WHOLE_POPULATION
