"""Whatever bytes a CSV holds, loading either succeeds or raises CatalogInvalid: never another
exception, never a traceback."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from catalog_files import SMALL, TODAY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from optimizer.catalog import read_tables_from_bytes, validate, write_catalog
from optimizer.catalog.model import Catalog
from optimizer.errors import CatalogInvalid

FILES = {p.name: p.read_bytes() for p in SMALL.iterdir() if p.suffix == ".csv"}
# Bytes that matter to CSV, spreadsheets, UTF-8 and the parsers, mixed into valid files.
NASTY = st.sampled_from(
    [
        b",",
        b'"',
        b"\n",
        b"\r",
        b"\r\n",
        b";",
        b"=",
        b"+",
        b"-",
        b"@",
        b" ",
        b"\t",
        b"\x00",
        b"\xff",
        b"\xc3",
        b"\xef\xbb\xbf",
        b"NaN",
        b"1e9",
        b"0",
        b"-1",
        b".",
        b"true",
        b"infiniband",
        b"\xe2\x80\xa6",
    ]
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _load(files: dict[str, bytes]) -> Catalog | None:
    report = validate(read_tables_from_bytes(files), today=TODAY)
    try:
        return report.raise_for_errors()
    except CatalogInvalid as e:
        assert e.problems and all(p.expected for p in e.problems)
        return None


@st.composite
def damaged(draw: st.DrawFn) -> dict[str, bytes]:
    """The fixture with a few nasty byte strings spliced into one file."""
    name = draw(st.sampled_from(sorted(FILES)))
    data = bytearray(FILES[name])
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        cut = draw(st.integers(0, 3))
        data[at : at + cut] = draw(NASTY)
    return {**FILES, name: bytes(data)}


@FUZZ
@given(damaged())
def test_damaged_csv_bytes_only_ever_fail_validation(files: dict[str, bytes]) -> None:
    _load(files)


@FUZZ
@given(st.sampled_from(sorted(FILES)), st.binary(max_size=2000))
def test_arbitrary_csv_bytes_only_ever_fail_validation(name: str, data: bytes) -> None:
    _load({**FILES, name: data})


@FUZZ
@given(st.sampled_from(sorted(FILES)), st.text(max_size=400))
def test_arbitrary_csv_text_only_ever_fails_validation(name: str, text: str) -> None:
    _load({**FILES, name: text.encode("utf-8", "surrogatepass")})


@functools.cache
def _exported(fmt: str) -> dict[str, bytes]:
    """The fixture written by write_catalog as ``fmt``, file name -> bytes."""
    catalog = validate(read_tables_from_bytes(FILES), today=TODAY).raise_for_errors()
    with tempfile.TemporaryDirectory() as tmp:
        out = write_catalog(catalog, Path(tmp) / "export", fmt)
        paths = [out] if out.is_file() else sorted(out.iterdir())
        return {p.name: p.read_bytes() for p in paths}


@settings(FUZZ, max_examples=60)
@given(st.sampled_from(["xlsx", "parquet"]), st.data())
def test_damaged_workbook_and_parquet_bytes_only_ever_fail_validation(
    fmt: str, data: st.DataObject
) -> None:
    files = _exported(fmt)
    name = data.draw(st.sampled_from(sorted(files)))
    damaged_bytes = bytearray(files[name])
    for _ in range(data.draw(st.integers(1, 5))):
        at = data.draw(st.integers(0, len(damaged_bytes) - 1))
        damaged_bytes[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(damaged_bytes)))
    _load({**files, name: bytes(damaged_bytes[:cut])})
