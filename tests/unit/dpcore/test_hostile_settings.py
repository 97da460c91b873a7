"""Hostile numeric settings (issue 38, item 4): each public entry point refuses them before any
work, with a sentence that names the setting, what it must be and what it got, never an array's
repr; the command line refuses the same values while reading its arguments."""

from __future__ import annotations

import time

import pytest

import dpcore
from dpcore.analyses.mean.analysis import MeanAnalysis, MeanSettings
from dpcore.analyses.mean.simulate import simulate_releases
from dpcore.foundations.errors import SettingsError
from dpcore.foundations.validation import MAX_BOUND_MAGNITUDE
from strata_cli.main import main

HUGE = 1e308

REQUESTS = {
    "bounds whose width overflows": (
        lambda: dpcore.LaplaceMean(bounds=(-HUGE, HUGE)), ("`bounds`", "within ±1e+15", "Rescale")),
    "bounds beyond the limit on one side": (
        lambda: dpcore.GaussianMean(bounds=(0, 2 * MAX_BOUND_MAGNITUDE)), ("U = 2e+15",)),
    "a CoinPress prior whose width overflows": (
        lambda: dpcore.CoinPressMean(prior=(-HUGE, HUGE), sigma=1.0), ("`bounds`", "±1e+15")),
    "a million CoinPress steps": (
        lambda: dpcore.CoinPressMean(prior=(0, 100), sigma=1.0, steps=10**6),
        ("`steps`", "from 1 to 50", "got 1,000,000")),
    "zero CoinPress steps": (
        lambda: dpcore.CoinPressMean(prior=(0, 100), sigma=1.0, steps=0), ("`steps`", "got 0")),
    "a million steps in the mean's settings": (
        lambda: MeanSettings(estimator="coinpress", coinpress_steps=10**6),
        ("`coinpress_steps`", "from 1 to 50")),
    "a negative CoinPress spread": (
        lambda: MeanSettings(coinpress_sigma=-1.0), ("`coinpress_sigma`", "> 0")),
    "a global fraction of 2": (
        lambda: MeanSettings(global_fraction=2.0), ("`global_fraction`", "0 < global_fraction < 1")),
    "an infinite clipping bound": (
        lambda: MeanAnalysis().estimator(MeanSettings(clip_low=0.0, clip_high=float("inf"))),
        ("finite",)),
    "a negative minimum group size": (
        lambda: dpcore.GroupingSpec(by=("race",), min_group_size=-5),
        ("`min_group_size`", "an integer >= 1", "got -5")),
    "a fractional minimum group size": (
        lambda: dpcore.GroupingSpec(by=("race",), min_group_size=2.5), ("`min_group_size`",)),
    "bucket edges beyond the limit": (
        lambda: dpcore.GroupingSpec(by=("age",), edges=(("age", (0, 1e300)),)),
        ("edges of 'age'", "within ±1e+15", "1e+300")),
    "an infinite bucket edge": (
        lambda: dpcore.GroupingSpec(by=("age",), edges=(("age", (0, float("inf"))),)),
        ("edges of 'age'", "finite")),
    "a holdout of the whole data": (
        lambda: dpcore.GroupingSpec(by=("race",), share_source="holdout", holdout_fraction=1.0),
        ("`holdout_fraction`",)),
    "a billion simulated releases": (
        lambda: simulate_releases(
            None, dpcore.LaplaceMean(bounds=(0, 100)), dpcore.PureDP(1.0), replicates=10**9
        ),
        ("`replicates`", "from 1 to 1,000,000", "got 1,000,000,000")),
}  # fmt: skip


@pytest.mark.parametrize("request_", REQUESTS.values(), ids=list(REQUESTS))
def test_a_hostile_setting_is_refused_at_once_with_a_sentence(request_):
    build, words = request_
    start = time.process_time()
    with pytest.raises((ValueError, TypeError, SettingsError)) as refused:
        build()
    message = str(refused.value)
    assert "array(" not in message and "\n" not in message.strip(), message
    missing = [w for w in words if w not in message]
    assert not missing, f"{missing} not in: {message}"
    assert time.process_time() - start < 1.0  # refused before any work, not after it


CLI = {
    "bounds ±1e308": (
        ["--bounds=-1e308,1e308"],
        "argument --bounds: The bounds L and U must lie within",
    ),
    "a million steps": (
        ["--estimator", "coinpress", "--sizes-public", "--steps", "1000000"],
        "argument --steps: must be an integer from 1 to 50",
    ),
    "a negative minimum group size": (["--min-group-size", "-5"], "argument --min-group-size"),
    "a billion check replicates": (["--check-replicates", "1000000000"], "--check-replicates"),
    "edges out of order": (["--edges", "age=0;30;20"], "must increase"),
    "a negative seed": (["--seed=-3"], "argument --seed: expected a whole number >= 0"),
    "a negative budget": (["--epsilon=-1"], "argument --epsilon: expected a finite number"),
    "zero rows per person": (["--max-rows", "0"], "argument --max-rows"),
}


@pytest.mark.parametrize("request_", CLI.values(), ids=list(CLI))
def test_the_command_line_refuses_them_before_reading_the_data(capsys, request_):
    extra, words = request_
    argv = ["plan", "/nonexistent/never-read.csv", "--by", "race", "--value", "hours",
            "--bounds", "0,100", "--estimator", "laplace", "--target-abs", "1", *extra]  # fmt: skip
    if "--epsilon=-1" in extra:
        argv.remove("--target-abs")
        argv.remove("1")
        argv[0] = "frontier"
    assert main(argv) == 2  # a usage error: the missing file was never opened
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1, err
