"""read_table: every bad upload gets an actionable ValueError; good CSV/Parquet round-trip."""

from __future__ import annotations

import decimal
import gzip
import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from dpcore.foundations.io import explain_not_numeric, load_table, read_table


def sample_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": [39, 50, 38, 53],
            "sex": pd.Series(["Male", "Female", None, "Male"], dtype="str"),
            "hours_per_week": [40.0, 13.5, np.nan, 40.0],
            "income_over_50k": [0, 1, 0, 1],
        }
    )


def to_parquet_bytes(df: pd.DataFrame | pa.Table) -> bytes:
    buf = io.BytesIO()
    table = df if isinstance(df, pa.Table) else pa.Table.from_pandas(df, preserve_index=False)
    pq.write_table(table, buf)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# good files
# --------------------------------------------------------------------------------------------


def test_csv_round_trip():
    df = sample_frame()
    data = df.to_csv(index=False).encode("utf-8")
    got = read_table(data, "people.csv")
    pd.testing.assert_frame_equal(got, df)


def test_csv_gz_and_txt_and_uppercase_extensions():
    df = sample_frame()
    text = df.to_csv(index=False).encode("utf-8")
    pd.testing.assert_frame_equal(read_table(gzip.compress(text, mtime=0), "people.CSV.GZ"), df)
    pd.testing.assert_frame_equal(read_table(text, "people.txt"), df)


def test_parquet_round_trip():
    df = sample_frame()
    got = read_table(to_parquet_bytes(df), "people.parquet")
    pd.testing.assert_frame_equal(got, df)
    pd.testing.assert_frame_equal(read_table(to_parquet_bytes(df), "people.pq"), df)


def test_parquet_with_a_stored_index_keeps_it_as_a_column():
    df = sample_frame().set_index("age")
    buf = io.BytesIO()
    df.to_parquet(buf)
    got = read_table(buf.getvalue(), "p.parquet")
    assert list(got.columns) == ["age", "sex", "hours_per_week", "income_over_50k"]


WHITESPACE = [chr(code) for code in range(0x110000) if chr(code).isspace()]


def test_the_whitespace_lookup_is_the_set_arrow_strips():
    """The edge-byte look-up skips the strip only if Python's whitespace is Arrow's."""
    codes = [code for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    trimmed = pc.utf8_trim_whitespace(pa.array(["a" + chr(code) + "a" for code in codes]))
    assert trimmed.to_pylist() == ["a" + chr(code) + "a" for code in codes]  # only the edges
    trimmed = pc.utf8_trim_whitespace(pa.array([chr(code) + "a" + chr(code) for code in codes]))
    arrow_space = [
        chr(c) for c, cell in zip(codes, trimmed.to_pylist(), strict=True) if cell == "a"
    ]
    assert arrow_space == WHITESPACE
    assert len(WHITESPACE) == 29


@pytest.mark.parametrize("space", WHITESPACE, ids=lambda c: f"U+{ord(c):04X}")
def test_every_whitespace_character_is_stripped_at_either_edge(space):
    if space in "\n\r":  # a line break in a cell needs quotes
        cells = f'"{space}x","x{space}","{space}y{space}"'
    else:
        cells = f"{space}x,x{space},{space}y{space}"
    got = read_table(f"a,b,c\n{cells}\nz,z,z\n".encode(), "w.csv")
    assert got.iloc[0].tolist() == ["x", "x", "y"]


@pytest.mark.parametrize("cells", ["\u2013x", "x\u00e9", "\u3001x", "x\u2030"])
def test_text_that_only_shares_bytes_with_whitespace_is_kept(cells):
    """En dash, é, "、" and "‰" begin or end with bytes of whitespace characters."""
    got = read_table(f"a\n{cells}\nplain\n".encode(), "w.csv")
    assert got["a"].tolist() == [cells, "plain"]


def test_surrounding_space_is_found_in_any_chunk_and_past_a_slice():
    from dpcore.foundations.io.cleaning import _may_have_surrounding_space

    def series(*chunks):
        array = pa.chunked_array([pa.array(c, pa.large_string()) for c in chunks])
        return pd.Series(pd.arrays.ArrowStringArray(array))

    clean = ["a", "", None, "b c"] * 100_000  # more cells than one step of the look
    assert not _may_have_surrounding_space(series(clean, clean))
    assert _may_have_surrounding_space(series(clean, clean + ["d "]))
    assert _may_have_surrounding_space(series([" e"] + clean))
    sliced = pa.array([" e", "f", "g "], pa.string()).slice(1, 1)
    assert not _may_have_surrounding_space(pd.Series(pd.arrays.ArrowStringArray(sliced)))
    assert _may_have_surrounding_space(pd.Series(["x "], dtype=object))


def test_whitespace_is_stripped_and_missing_tokens_become_missing():
    data = (
        b"\xef\xbb\xbf age , sex ,hours , note\n"  # UTF-8 BOM, padded names
        b" 39, Male , 40 , ok\n"
        b"50 ,?, NA , ?\n"
        b" 12,Female,NaN , NA\n"
        b"\n"  # blank lines are not rows
        b"7,, 1 ,\n"
        b"   \n\n"
    )
    got = read_table(data, "adult.csv")
    assert list(got.columns) == ["age", "sex", "hours", "note"]
    assert got["age"].tolist() == [39, 50, 12, 7]
    assert got["age"].dtype == np.int64
    assert got["hours"].dtype == np.float64  # " 40 " and " NA " handled
    assert got["hours"].isna().tolist() == [False, True, True, False]
    assert got["sex"].tolist()[0] == "Male" and got["sex"].tolist()[2] == "Female"
    assert got["sex"].isna().tolist() == [False, True, False, True]
    assert got["note"].isna().tolist() == [False, True, True, True]


def test_missing_tokens_in_parquet_strings():
    df = pd.DataFrame({" g ": pd.Series([" a ", "?", "NA", ""], dtype="str"), "x": [1, 2, 3, 4]})
    got = read_table(to_parquet_bytes(df), "p.parquet")
    assert list(got.columns) == ["g", "x"]
    assert got["g"].iloc[0] == "a" and got["g"].isna().tolist() == [False, True, True, True]


def test_other_delimiters_are_detected():
    got = read_table(b"a;b;c\n1;x;2.5\n3;y;4\n", "semi.csv")
    assert list(got.columns) == ["a", "b", "c"] and got["c"].tolist() == [2.5, 4.0]
    got = read_table(b"a\tb\n1\tx\n", "tabs.txt")
    assert list(got.columns) == ["a", "b"]


def test_quoted_fields_with_separators_and_newlines():
    got = read_table(b'name,x\n"Doe, Jane",1\n"two\nlines",2\n', "q.csv")
    assert got["name"].tolist() == ["Doe, Jane", "two\nlines"]


def test_text_column_stays_text():
    got = read_table(b"zip,x\n1,a\n2,b\nx3,c\n", "t.csv")
    assert not pd.api.types.is_numeric_dtype(got["zip"])


# --------------------------------------------------------------------------------------------
# bad files
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "filename", "match"),
    [
        (b"", "a.csv", r"'a.csv' is empty \(0 bytes\).*header row"),
        (b"  \n\t\n", "a.csv", r"empty \(only whitespace\)"),
        (b"", "a.parquet", r"empty"),
        (b"", "a.csv.gz", r"empty"),
        (b"a,b\n", "a.csv", r"header row \(a, b\) but no data rows"),
        (b"a,b\n\n\n", "a.csv", r"no data rows"),
    ],
)
def test_empty_and_header_only(data, filename, match):
    with pytest.raises(ValueError, match=match):
        read_table(data, filename)


def test_non_utf8_text_names_the_byte_offset():
    data = "name,city\nJosé,Zürich\n".encode("latin-1")
    with pytest.raises(ValueError) as err:
        read_table(data, "latin.csv")
    msg = str(err.value)
    assert "not valid UTF-8" in msg
    assert "byte 0xe9 at byte offset 13 (line 2)" in msg
    assert "Re-save the file with UTF-8 encoding" in msg


def test_utf16_text_is_recognised():
    with pytest.raises(ValueError, match=r"UTF-16, not UTF-8.*CSV UTF-8"):
        read_table(b"\xff\xfe\x00\x01a\x00,\x00b\x00", "u16.csv")
    with pytest.raises(ValueError, match="UTF-16"):
        read_table("a,b\n1,2\n".encode("utf-16"), "u16.csv")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", r"looks like a PNG image, not a CSV"),
        (b"PK\x03\x04\x14\x00\x06\x00", r"Excel workbook \(.xlsx\).*Export the sheet as CSV"),
        (b"%PDF-1.7\n", r"PDF"),
        (b"PAR1\x00\x00", r"Parquet file, not a CSV.*\.parquet"),
        (gzip.compress(b"a,b\n1,2\n", mtime=0), r"gzip.*\.csv\.gz"),
        (bytes(range(256)) * 4, r"looks like a binary file, not CSV"),
        (b"a,b\n1,2\n3,\x004\n", r"binary file"),
    ],
)
def test_binary_uploads_are_refused_as_csv(data, match):
    with pytest.raises(ValueError, match=match):
        read_table(data, "upload.csv")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"a,b\n1,2\n3,4,5\n", r"line 3 has 3 fields, but the header has 2 columns"),
        (b"a,b\n1,2\n3\n", r"line 3 has 1 field, but the header has 2 columns"),
        (b"a,b,c\n1,2,3\n4,5,6\n7,8\n9,10,11\n", r"line 4 has 2 fields, but the header has 3"),
        (b'a,b\n\n1,2\n"x\ny",3\n3,4,5\n', r"line 6 has 3 fields"),  # counts physical lines
        (b"a;b\n1;2\n3;4;5\n", r"line 3 has 3 fields.*';'"),
    ],
)
def test_ragged_rows_name_the_first_offending_line(data, match):
    with pytest.raises(ValueError, match=match):
        read_table(data, "ragged.csv")


def test_unclosed_quote():
    with pytest.raises(ValueError, match=r"lines 3 to 4 .* unclosed double quote"):
        read_table(b'a,b\n1,2\n"oops,3\n4,5\n', "q.csv")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"a,b,a\n1,2,3\n", r"duplicate column names.*'a' in columns 1, 3"),
        (b"a, a\n1,2\n", r"duplicate column names \(after trimming spaces\).*'a'"),
    ],
)
def test_duplicate_csv_columns(data, match):
    with pytest.raises(ValueError, match=match):
        read_table(data, "dups.csv")


def test_duplicate_parquet_columns():
    table = pa.table([pa.array([1, 2]), pa.array([3, 4])], names=["x", "x"])
    with pytest.raises(ValueError, match=r"duplicate column names.*'x' in columns 1, 2"):
        read_table(to_parquet_bytes(table), "dups.parquet")


def test_row_limit():
    data = b"a\n" + b"1\n" * 11
    assert len(read_table(data, "rows.csv", max_rows=11)) == 11
    with pytest.raises(ValueError, match=r"more than 10 rows, the limit"):
        read_table(data, "rows.csv", max_rows=10)
    pq_data = to_parquet_bytes(pd.DataFrame({"a": range(11)}))
    with pytest.raises(ValueError, match=r"more than 10 rows"):
        read_table(pq_data, "rows.parquet", max_rows=10)


def test_broken_parquet_files():
    with pytest.raises(ValueError, match=r"not a valid Parquet file.*'PAR1'"):
        read_table(b"a,b\n1,2\n", "renamed.parquet")
    good = to_parquet_bytes(sample_frame())
    damaged = good[:4] + b"\x00" * (len(good) - 8) + good[-4:]
    with pytest.raises(ValueError, match=r"could not be read as Parquet"):
        read_table(damaged, "damaged.parquet")
    with pytest.raises(ValueError, match=r"not a valid Parquet file"):
        read_table(good[: len(good) // 2], "truncated.parquet")


def test_parquet_without_rows():
    with pytest.raises(ValueError, match=r"columns \(a\) but no data rows"):
        read_table(to_parquet_bytes(pd.DataFrame({"a": pd.Series([], dtype=float)})), "e.pq")


def test_bad_gzip():
    with pytest.raises(ValueError, match=r"not a valid gzip file"):
        read_table(b"a,b\n1,2\n", "plain.csv.gz")


@pytest.mark.parametrize("filename", ["data.xlsx", "data.json", "data", "data.csv.zip"])
def test_unsupported_extension_lists_supported_ones(filename):
    with pytest.raises(ValueError, match=r"unsupported file type.*\.csv, \.txt.*\.parquet, \.pq"):
        read_table(b"a,b\n1,2\n", filename)


def test_argument_types():
    with pytest.raises(TypeError, match="`data` must be bytes"):
        read_table("a,b\n1,2\n", "a.csv")
    with pytest.raises(TypeError, match="`filename`"):
        read_table(b"a,b\n1,2\n", None)
    with pytest.raises(ValueError, match="`max_rows`"):
        read_table(b"a,b\n1,2\n", "a.csv", max_rows=0)


# --- decompression bombs ----------------------------------------------------------------------

# Bombs (gzip, Parquet dictionaries and run-length numbers) are in tests/io_corpus/bombs.py, read
# under an address-space cap by tests/unit/dpcore/test_io_corpus.py.


def test_a_table_within_the_byte_limit_reads_whole_from_gzip_members_and_parquet():
    text = b"a,b\n1,x\n2,y\n"
    twice = gzip.compress(text, mtime=0) + gzip.compress(b"3,z\n", mtime=0)
    assert read_table(twice, "t.csv.gz", max_bytes=len(text) + 4)["a"].tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="decompresses to more than"):
        read_table(twice, "t.csv.gz", max_bytes=len(text))
    sink = io.BytesIO()
    pq.write_table(pa.table({"label": ["x" * 100] * 10, "n": list(range(10))}), sink)
    frame = read_table(sink.getvalue(), "t.parquet", max_bytes=4096)
    assert frame["label"].tolist() == ["x" * 100] * 10
    with pytest.raises(ValueError, match="once decoded"):
        read_table(sink.getvalue(), "t.parquet", max_bytes=900)


# --- parsing --------------------------------------------------------------------------------


def test_the_delimiter_is_found_outside_quotes():
    quoted_header = b'"notes; a; b",x\n"p; q",1\n"r",3\n'
    frame = read_table(quoted_header, "notes.csv")
    assert list(frame.columns) == ["notes; a; b", "x"]
    assert frame["notes; a; b"].tolist() == ["p; q", "r"]
    semicolons = b'name;score\n"Smith, J.";1,5\n"Lee, K.";2\n'
    assert list(read_table(semicolons, "scores.csv").columns) == ["name", "score"]


def test_a_header_over_a_megabyte_keeps_every_column():
    # Long names rather than many columns: the bug was the header's bytes, and pandas spends
    # ~0.1 ms per column building a frame.
    names = [f"{'a_long_column_name_' * 5}{i:06d}" for i in range(11_000)]
    text = (",".join(names) + "\n" + ",".join("1" for _ in names) + "\n").encode()
    assert len(text) > 1024**2
    assert list(read_table(text, "wide.csv").columns) == names


# --------------------------------------------------------------------------------------------
# odd files read right, with notes (issue 15, item 2)
# --------------------------------------------------------------------------------------------


def test_cr_only_line_endings_read_like_lf():
    lf = b"age,sex\n39,Male\n50,Female\n"
    for ending in (b"\r", b"\r\n"):
        assert read_table(lf.replace(b"\n", ending), "old-mac.csv").equals(read_table(lf, "a.csv"))


def test_a_column_that_changes_type_deep_in_the_file_keeps_its_text():
    """pandas parses in chunks; a code column that looks numeric for 300,000 rows and then has
    a letter must stay the text it is ("007", not 7)."""
    data = b"code,n\n" + b"007,1\n" * 300_000 + b"A12,2\n"
    got = read_table(data, "codes.csv")
    assert got["code"].dtype == "str"
    assert got["code"].iloc[0] == "007" and got["code"].iloc[-1] == "A12"
    assert got["n"].dtype == np.int64


def test_integers_beyond_64_bits_stay_text_with_a_note():
    """As decimals, distinct 20-digit codes would round to one number and merge groups."""
    loaded = load_table(b"id,x\n99999999999999999999,1\n99999999999999999998,3\n", "ids.csv")
    assert loaded.frame["id"].dtype == "str"
    assert loaded.frame["id"].tolist() == ["99999999999999999999", "99999999999999999998"]
    [note] = loaded.notes
    assert "`id`" in note and "64-bit" in note and "kept as text" in note
    assert load_table(b"id,x\n9223372036854775807,1\n", "max.csv").notes == ()


def test_parquet_decimals_are_numbers_and_nested_columns_are_left_out_with_a_note():
    table = pa.table({
        "amount": pa.array([decimal.Decimal("1643.83"), None], pa.decimal128(10, 2)),
        "address": pa.array([{"city": "Oslo"}, {"city": "Lima"}]),
        "visits": pa.array([[1], [2, 3]]),
        "tags": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int64())),
        "age": [39, 50],
    })  # fmt: skip
    loaded = load_table(to_parquet_bytes(table), "nested.parquet")
    assert list(loaded.frame.columns) == ["amount", "age"]
    assert loaded.frame["amount"].dtype == np.float64
    assert loaded.frame["amount"].iloc[0] == 1643.83 and np.isnan(loaded.frame["amount"].iloc[1])
    [note] = loaded.notes
    assert "`address`, `visits`, `tags`" in note


def test_only_nested_parquet_columns_are_refused():
    table = pa.table({"address": pa.array([{"city": "Oslo"}])})
    with pytest.raises(ValueError, match="only nested columns"):
        read_table(to_parquet_bytes(table), "nested.parquet")


def test_a_stored_index_named_like_a_column_is_kept_under_another_name():
    frame = pd.DataFrame({"hours": [40, 13]}, index=pd.Index([7, 9], name="hours"))
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    loaded = load_table(buffer.getvalue(), "indexed.parquet")
    assert loaded.frame.to_dict("list") == {"hours (index)": [7, 9], "hours": [40, 13]}
    [note] = loaded.notes
    assert "`hours (index)`" in note


def test_a_nul_byte_anywhere_is_refused_with_its_line():
    data = b"a,b\n" + b"1,2\n" * 5_000 + b"3,\x004\n"
    with pytest.raises(ValueError, match=r"NUL byte \(line 5,002\)"):
        read_table(data, "late-nul.csv")


# --------------------------------------------------------------------------------------------
# numbers written as text (issue 15, item 3)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cells", "expected"),
    [
        (["$1,643.83", "$2,000", "12"], ["2 of 3 cells", "row 1 “$1,643.83”", "currency sign"]),
        (["354,94", "12,5", "7"], ["2 of 3 cells", "row 2 “12,5”", "decimal comma"]),
        (["1,234,567", "12", "7"], ["1 of 3 cells", "thousands separator"]),
        (["12%", "7", "3 %"], ["row 3 “3 %”", "percent sign"]),
        (["1", "n/a", None, "4", "5", "unknown"], ["2 of 5 cells", "row 2 “n/a”",
                                                   "row 6 “unknown”", "words or symbols"]),
    ],
)  # fmt: skip
def test_a_column_of_numbers_written_as_text_is_explained(cells, expected):
    message = explain_not_numeric(pd.Series(cells, dtype="str"), "income")
    assert message is not None and message.startswith("`income` was read as text")
    for part in expected:
        assert part in message


@pytest.mark.parametrize(
    "series",
    [
        pd.Series(["Alice", "Bob", "7"], dtype="str"),  # text with a stray number
        pd.Series(["Alice", "Bob", "7", "$5"], dtype="str"),  # half numbers is not most
        pd.Series([1.5, 2.0]),
        pd.Series([None, None], dtype="str"),
    ],
)
def test_ordinary_text_and_numbers_need_no_explanation(series):
    assert explain_not_numeric(series, "x") is None


def test_the_first_rows_shown_are_counted_from_the_first_data_row():
    cells = ["1"] * 10 + ["1,5"] + ["2"] * 5 + ["3,25"]
    data = ("weight;id\n" + "".join(f"{c};{i}\n" for i, c in enumerate(cells))).encode()
    message = explain_not_numeric(read_table(data, "semicolons.csv")["weight"], "weight")
    assert "2 of 17 cells" in message and "row 11 “1,5”, row 17 “3,25”" in message


def test_rows_with_no_value_in_any_column_are_left_out_with_a_note():
    """Spreadsheets export their blank rows as ``,,,``: they are nobody, and must not count as
    people nor turn a 0/1 column into decimals."""
    table = load_table(b"employed,region\n1,North\n,\n0,South\n,\n", "survey.csv")
    assert table.frame.to_dict("list") == {"employed": [1, 0], "region": ["North", "South"]}
    assert table.frame["employed"].dtype == np.int64
    assert table.notes == (
        "2 rows with no value in any column (every cell empty or marked missing, as in “,,,”) "
        "were left out.",
    )
    partly = load_table(b"employed,region\n1,North\n,West\n", "survey.csv")
    assert len(partly.frame) == 2 and not partly.notes  # a row with one value stays
    with pytest.raises(ValueError, match="no value in any of its rows"):
        load_table(b"employed,region\n,\n,\n", "survey.csv")
