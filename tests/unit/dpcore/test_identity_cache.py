"""Part digests remembered across runs (dpcore.foundations.identity_cache): a file is read once
while its status is unchanged, and never remembered where a change could go unseen — a write
during the read, a file not yet settled, a file replaced, a network or FUSE filesystem."""

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
OTHER = CSV.replace(b"north", b"NORTH")  # same size, other bytes


class Reads(list):
    """The files the identity read, in order; ``during``, if set, runs inside each read."""

    during = None


@pytest.fixture
def reads(monkeypatch) -> Reads:
    seen = Reads()
    read_part = dataset_module._read_part

    def counting(handle, name):
        seen.append(os.path.basename(name))
        if seen.during is not None:
            seen.during()
        return read_part(handle, name)

    monkeypatch.setattr(dataset_module, "_read_part", counting)
    return seen


@pytest.fixture
def no_settling(monkeypatch):
    """A file written by the test is kept at once (its change time is always now)."""
    monkeypatch.setattr(identity_cache, "SETTLED_SECONDS", -1.0)


@pytest.fixture
def part(tmp_path):
    path = tmp_path / "part.csv"
    path.write_bytes(CSV)
    return path


def test_a_settled_file_is_read_once_and_its_identity_is_unchanged(tmp_path, part, reads,
                                                                  no_settling):  # fmt: skip
    first = files_identity([part])
    assert files_identity([part]) == files_identity([part]) == first
    assert reads == ["part.csv"]  # the later runs read the cache, not the file
    cache = tmp_path / "identities.sqlite"  # where the test's environment points it
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o600


def test_a_write_after_the_read_is_read_again_even_at_the_same_size_and_times(
    part, reads, no_settling
):
    first = files_identity([part])
    files_identity([part])
    assert reads == ["part.csv"]
    before = os.stat(part)
    time.sleep(0.01)  # the change time moves on: the clock ticks between the two writes
    part.write_bytes(OTHER)
    os.utime(part, ns=(before.st_atime_ns, before.st_mtime_ns))  # the old modification time back
    assert files_identity([part]) != first
    assert reads == ["part.csv", "part.csv"]


def test_a_write_during_the_read_is_not_remembered(part, reads, no_settling):
    reads.during = lambda: part.write_bytes(OTHER)  # in place, same size, mid-read
    files_identity([part])
    reads.during = None
    truth = dataset_module.bytes_identity(OTHER)
    assert files_identity([part]) == truth  # read again: the first read's digest was not kept
    assert files_identity([part]) == truth
    assert reads == ["part.csv", "part.csv"]


def test_a_file_is_kept_only_once_its_times_are_settled_before_its_read_began(
    part, reads, monkeypatch
):
    """A read that lasts longer than the settling time does not settle the file: what counts is
    how old the file's times were when the read began (a same-size write within the clock's
    resolution of that moment would leave the same status on other bytes)."""
    monkeypatch.setattr(identity_cache, "SETTLED_SECONDS", 0.5)
    reads.during = lambda: time.sleep(0.7)  # a slow read of a file just written
    files_identity([part])
    reads.during = None
    files_identity([part])  # began 0.7 s after the write: settled now, and kept
    files_identity([part])
    assert reads == ["part.csv", "part.csv"]


def test_a_file_replaced_by_another_is_read_again(tmp_path, part, reads, no_settling):
    first = files_identity([part])
    replacement = tmp_path / "new.csv"
    replacement.write_bytes(OTHER)
    os.replace(replacement, part)  # a new inode under the old name
    assert files_identity([part]) == dataset_module.bytes_identity(OTHER) != first
    assert reads == ["part.csv", "part.csv"]


def test_a_copy_elsewhere_is_read_but_is_the_same_dataset(tmp_path, reads, no_settling):
    one, other = tmp_path / "a.csv", tmp_path / "b.csv"
    one.write_bytes(CSV)
    other.write_bytes(CSV)
    assert files_identity([one]) == files_identity([other])
    assert reads == ["a.csv", "b.csv"]  # each file's status is its own key


def test_off_a_local_filesystem_every_run_reads(part, reads, no_settling, monkeypatch):
    """NFS, SMB or FUSE times may be cached or made up: nothing is remembered there."""
    monkeypatch.setattr(identity_cache, "_filesystems", lambda: {})
    assert files_identity([part]) == files_identity([part])
    assert reads == ["part.csv", "part.csv"]


def test_digests_of_another_scheme_are_not_used(part, reads, no_settling, monkeypatch):
    files_identity([part])
    monkeypatch.setattr(dataset_module, "CHUNK_BYTES", 1024)  # other chunks: another digest
    files_identity([part])
    assert reads == ["part.csv", "part.csv"]


def test_huge_device_and_inode_numbers_are_kept(part, reads, no_settling, monkeypatch):
    """Some filesystems report numbers beyond SQLite's 64-bit integers."""
    status = identity_cache.status
    monkeypatch.setattr(identity_cache, "status", lambda fd: (2**64, 2**70, *status(fd)[2:]))
    assert files_identity([part]) == files_identity([part])
    assert reads == ["part.csv"]


@pytest.mark.parametrize("setting", ["off", "OFF "])
def test_the_cache_can_be_turned_off(part, reads, no_settling, monkeypatch, setting):
    monkeypatch.setenv(CACHE_PATH_ENV, setting)
    assert files_identity([part]) == files_identity([part])
    assert reads == ["part.csv", "part.csv"]
    assert identity_cache.cache_path() is None


def test_a_cache_that_cannot_be_used_is_passed_over(tmp_path, part, reads, no_settling,
                                                    monkeypatch):  # fmt: skip
    first = files_identity([part])
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache's folder should be")
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    for unusable in (blocker / "identities.sqlite", garbage):
        monkeypatch.setenv(CACHE_PATH_ENV, str(unusable))
        assert files_identity([part]) == files_identity([part]) == first
    assert reads == ["part.csv"] * 5  # every run read: nothing to remember in


def test_a_cache_file_of_an_earlier_layout_still_remembers(tmp_path, part, reads, no_settling):
    """A cache written by an earlier version holds a table of other columns: every insert into
    it failed, silently, and nothing was remembered again (the scale benchmark caught it)."""
    import sqlite3

    with sqlite3.connect(tmp_path / "identities.sqlite") as old:
        old.execute("CREATE TABLE parts (path TEXT, device INTEGER, inode INTEGER, size INTEGER,"
                    " modified_ns INTEGER, changed_ns INTEGER, digest TEXT)")  # fmt: skip
    assert files_identity([part]) == files_identity([part])
    assert reads == ["part.csv"]


def test_the_default_place_follows_xdg_cache_home(monkeypatch, tmp_path):
    monkeypatch.delenv(CACHE_PATH_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert identity_cache.cache_path() == tmp_path / "strata-lab" / "identities.sqlite"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # ignored, as the XDG spec says
    assert identity_cache.cache_path().parts[-3:] == (".cache", "strata-lab", "identities.sqlite")
