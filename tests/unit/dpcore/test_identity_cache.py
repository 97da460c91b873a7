"""Part digests remembered across runs (dpcore.foundations.identity_cache): a file is read once
while its status is unchanged, and any write makes it read again."""

from __future__ import annotations

import os
import stat
import time

import pytest

from dpcore.foundations import dataset as dataset_module
from dpcore.foundations import identity_cache
from dpcore.foundations.dataset import files_identity
from dpcore.foundations.identity_cache import CACHE_PATH_ENV

CSV = b"region,hours\nnorth,40\nsouth,35.5\n" * 100


@pytest.fixture
def reads(monkeypatch):
    """The files the identity reads, in order."""
    seen: list[str] = []
    read_part = dataset_module._read_part

    def counting(path):
        seen.append(path.name)
        return read_part(path)

    monkeypatch.setattr(dataset_module, "_read_part", counting)
    return seen


def settled(path, seconds_ago: float = 60.0) -> None:
    """Date the file's modification time back, as if written a minute ago (its change time is
    the clock's: the test also moves the settling window, below)."""
    then = time.time() - seconds_ago
    os.utime(path, (then, then))


@pytest.fixture
def no_settling(monkeypatch):
    """A file written by the test is kept at once (its change time is always now)."""
    monkeypatch.setattr(identity_cache, "SETTLED_SECONDS", -1.0)


def test_a_settled_file_is_read_once_and_its_identity_is_unchanged(tmp_path, reads, no_settling):
    part = tmp_path / "part.csv"
    part.write_bytes(CSV)
    first = files_identity([part])
    assert files_identity([part]) == files_identity([part]) == first
    assert reads == ["part.csv"]  # the later runs read the cache, not the file
    assert (tmp_path / "identities.sqlite").exists()  # where the test's environment points it
    assert stat.S_IMODE(os.stat(tmp_path / "identities.sqlite").st_mode) == 0o600


def test_any_write_is_read_again_even_with_the_same_size_and_modification_time(
    tmp_path, reads, no_settling
):
    part = tmp_path / "part.csv"
    part.write_bytes(CSV)
    settled(part)
    before = os.stat(part)
    first = files_identity([part])
    time.sleep(0.01)  # the change time moves on: the clock ticks between the two writes
    part.write_bytes(CSV.replace(b"north", b"NORTH"))  # same size, other bytes
    os.utime(part, ns=(before.st_atime_ns, before.st_mtime_ns))  # the old modification time back
    assert os.stat(part).st_size == before.st_size
    assert files_identity([part]) != first
    assert reads == ["part.csv", "part.csv"]


def test_a_file_just_written_is_not_kept_until_it_settles(tmp_path, reads):
    part = tmp_path / "part.csv"
    part.write_bytes(CSV)  # its change time is now: within SETTLED_SECONDS
    files_identity([part])
    files_identity([part])
    assert reads == ["part.csv", "part.csv"]


def test_a_copy_elsewhere_is_read_but_is_the_same_dataset(tmp_path, reads, no_settling):
    one, other = tmp_path / "a.csv", tmp_path / "b.csv"
    one.write_bytes(CSV)
    other.write_bytes(CSV)
    assert files_identity([one]) == files_identity([other])
    assert reads == ["a.csv", "b.csv"]  # each file's status is its own key


@pytest.mark.parametrize("setting", ["off", "OFF "])
def test_the_cache_can_be_turned_off(tmp_path, reads, no_settling, monkeypatch, setting):
    monkeypatch.setenv(CACHE_PATH_ENV, setting)
    part = tmp_path / "part.csv"
    part.write_bytes(CSV)
    assert files_identity([part]) == files_identity([part])
    assert reads == ["part.csv", "part.csv"]
    assert identity_cache.cache_path() is None


def test_a_cache_that_cannot_be_written_or_read_is_passed_over(
    tmp_path, reads, no_settling, monkeypatch
):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache's folder should be")
    monkeypatch.setenv(CACHE_PATH_ENV, str(blocker / "identities.sqlite"))
    part = tmp_path / "part.csv"
    part.write_bytes(CSV)
    first = files_identity([part])
    assert files_identity([part]) == first
    assert reads == ["part.csv", "part.csv"]
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    monkeypatch.setenv(CACHE_PATH_ENV, str(garbage))
    assert files_identity([part]) == first


def test_the_default_place_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_PATH_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert identity_cache.cache_path() == tmp_path / "strata-lab" / "identities.sqlite"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as the XDG spec says
    assert identity_cache.cache_path().parts[-3:] == (".cache", "strata-lab", "identities.sqlite")
