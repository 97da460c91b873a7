"""A dataset's identity (dpcore.foundations.dataset): the bytes of a file after decompression, or
of every part of a folder in a stable order; a table's snapshot; a curator's declaration."""

from __future__ import annotations

import gzip

import pytest

from dpcore.engines import EngineError, location_identity
from dpcore.engines.spark_identity import checked_declaration, find_identity, table_snapshot
from dpcore.foundations import dataset as dataset_module
from dpcore.foundations.dataset import (
    DatasetRef,
    bytes_identity,
    declared_identity,
    describe_identity,
    files_identity,
    read_dataset,
)

CSV = b"region,hours\nnorth,40\nsouth,35.5\n" * 1000


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 1 KiB, so that a few kilobytes hash as many chunks in the threads."""
    monkeypatch.setattr(dataset_module, "CHUNK_BYTES", 1024)


def test_a_file_in_memory_and_on_disk_and_gzipped_is_one_dataset(tmp_path, small_chunks):
    plain, packed = tmp_path / "survey.csv", tmp_path / "renamed.csv.gz"
    plain.write_bytes(CSV)
    packed.write_bytes(gzip.compress(CSV[:5000]) + gzip.compress(CSV[5000:]))  # two members
    identity = bytes_identity(CSV)
    assert identity.startswith("content:") and len(identity) == len("content:") + 64
    assert files_identity([plain]) == files_identity([packed]) == identity
    assert bytes_identity(packed.read_bytes()) == identity
    assert bytes_identity(CSV[:-1]) != identity  # one byte less is other data
    assert describe_identity(identity) == "the bytes of its files"


def test_the_chunking_does_not_change_the_identity_of_a_file_but_the_version_would(tmp_path):
    """Chunk boundaries sit at fixed offsets of the decompressed bytes, whatever the reads."""
    assert bytes_identity(CSV) == bytes_identity(bytearray(CSV)) == bytes_identity(memoryview(CSV))
    assert bytes_identity(b"") != bytes_identity(b"\n")


def test_a_folder_is_its_parts_in_a_stable_order(tmp_path, small_chunks):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder, names in ((one, ("a.csv", "b.csv")), (two, ("y.csv", "x.csv"))):
        folder.mkdir()
        (folder / names[0]).write_bytes(CSV[:4000])
        (folder / names[1]).write_bytes(CSV[4000:])
    assert location_identity(one) == location_identity(two) == location_identity(f"{two}/*.csv")
    assert location_identity(one) != bytes_identity(CSV)  # two parts are not one file
    (two / "x.csv").write_bytes(CSV[4000:-1])
    assert location_identity(one) != location_identity(two)


def test_unreadable_data_is_named(tmp_path):
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(gzip.compress(CSV)[:-30])
    with pytest.raises(EngineError, match="broken.csv.gz starts as a gzip file but does not "
                                          "decompress"):  # fmt: skip
        location_identity(broken)
    with pytest.raises(ValueError, match="the uploaded file starts as a gzip file"):
        bytes_identity(broken.read_bytes())
    with pytest.raises(EngineError, match="No data at"):
        location_identity(tmp_path / "missing.csv")


def test_read_dataset_reads_a_file_and_identifies_it_as_an_upload_would(tmp_path):
    file = tmp_path / "survey.csv.gz"
    file.write_bytes(gzip.compress(CSV))
    frame, ref = read_dataset(file)
    assert ref == DatasetRef.of(frame, "survey.csv.gz", data=file.read_bytes())
    assert (ref.name, ref.identity, ref.rows) == ("survey.csv.gz", bytes_identity(CSV), len(frame))
    assert ref.aliases[0].startswith("legacy:")  # the fingerprint older versions gave it


def test_a_declared_identity_is_the_curators_words():
    assert declared_identity(" survey 2024 ") == declared_identity("survey 2024")
    assert declared_identity("survey 2024") != declared_identity("survey 2025")
    with pytest.raises(ValueError, match="must name the data"):
        declared_identity("  ")
    assert checked_declaration("spark:people", " survey ") == "survey"
    assert checked_declaration("hdfs://cluster/people", "survey") == "survey"
    assert checked_declaration("spark:people", "  ") is None
    with pytest.raises(EngineError, match="its files' bytes identify it"):
        checked_declaration("/data/people.parquet", "survey")


class Catalog:
    """Answers a Spark session's catalog queries as Delta, Iceberg or a plain table would (a
    stand-in for the catalogs this machine has no jars for)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def sql(self, query: str) -> Catalog:
        self.query = query
        if query.startswith("DESCRIBE DETAIL") and self.kind != "delta":
            raise RuntimeError("DESCRIBE DETAIL is only supported for Delta tables")
        if ".snapshots" in query and self.kind != "iceberg":
            raise RuntimeError("Table or view not found")
        return self

    def first(self) -> dict:
        if self.query.startswith("DESCRIBE DETAIL"):
            return {"format": "delta", "id": "d7c0", "location": "/w/people"}
        if self.query.startswith("DESCRIBE HISTORY"):
            return {"version": 12}
        return {"snapshot_id": 4242}


def test_a_tables_snapshot_is_read_where_the_catalog_keeps_one_else_the_declaration():
    assert table_snapshot(Catalog("delta"), "db.people") == {
        "format": "delta", "id": "d7c0", "version": 12,
    }  # fmt: skip
    assert table_snapshot(Catalog("iceberg"), "people") == {"format": "iceberg", "snapshot": 4242}
    assert table_snapshot(Catalog("plain"), "people") is None
    delta = find_identity(Catalog("delta"), "spark:people", "ignored: a snapshot is exact")
    assert delta.startswith("snapshot:") and delta == find_identity(
        Catalog("delta"), "spark:people", None
    )
    assert find_identity(Catalog("plain"), "spark:people", "survey") == declared_identity("survey")
    assert find_identity(Catalog("plain"), "spark:people", None) == ""
    assert find_identity(Catalog("plain"), "s3a://bucket/people", None) == ""
