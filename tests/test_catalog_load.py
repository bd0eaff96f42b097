"""Loading: what a valid file becomes, how each format's typed cells read, the upload path."""

from __future__ import annotations

import io
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import openpyxl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from catalog_files import SMALL, TODAY, copy_small, read_rows, write_rows
from hypothesis import given
from hypothesis import strategies as st

import optimizer.catalog.io as catalog_io
import optimizer.catalog.schema as schema
from optimizer.catalog import (
    Availability,
    load_catalog,
    load_catalog_report,
    read_tables_from_bytes,
    validate,
)
from optimizer.catalog.cells import CellError, format_cell, parse_cell
from optimizer.catalog.money import format_usd, parse_usd_cents
from optimizer.catalog.schema import (
    COLUMNS,
    FILE_TABLES,
    MAX_FILE_BYTES,
    MAX_PRICE_USD,
    Column,
    columns_of,
    markdown_table,
)
from optimizer.errors import CatalogInvalid, InvalidInput, NotFound

DOCS = Path(__file__).resolve().parents[1] / "docs" / "catalogs.md"


def _small_bytes() -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in SMALL.iterdir() if p.suffix == ".csv"}


def test_a_valid_catalog_becomes_typed_records() -> None:
    catalog = load_catalog(SMALL, today=TODAY)
    h100, a100 = catalog.servers
    assert h100.price_cents == 29_664_400
    assert h100.gpu_peak_fp8_tflops == 1979.0 and a100.gpu_peak_fp8_tflops is None
    assert h100.availability == Availability(12, 60, h100.availability.source)
    assert a100.availability.stock_units is None
    assert catalog.nics[0].protocols == frozenset({"infiniband", "roce", "ethernet"})
    assert catalog.switches[0].lossless is True
    assert catalog.links[3].price_cents == 250  # fiber, USD 2.50 per metre
    assert catalog.meta.quote_date == date(2026, 1, 15)
    assert catalog.unit_price_cents("SW-QM9790", 100, catalog.switches[0].price_cents) == 3_420_000


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    path = folder / "servers.csv"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert load_catalog(folder, today=TODAY) == load_catalog(SMALL, today=TODAY)


def test_other_files_in_the_folder_are_ignored(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    (folder / "README.md").write_text("sources", encoding="utf-8")
    assert load_catalog(folder, today=TODAY) == load_catalog(SMALL, today=TODAY)


def test_a_missing_path_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        load_catalog(tmp_path / "nothing")


def test_a_path_of_another_kind_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput):
        load_catalog(SMALL / "servers.csv")


def test_an_invalid_catalog_raises_catalog_invalid_naming_the_cell(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    rows = read_rows(folder, "nics")
    rows[2][rows[0].index("ports")] = "two"
    write_rows(folder, "nics", rows)
    with pytest.raises(CatalogInvalid, match=r"nics, row 3, column ports: got 'two'"):
        load_catalog(folder, today=TODAY)


def test_uploaded_bytes_load_like_the_folder() -> None:
    raw = read_tables_from_bytes(_small_bytes())
    assert validate(raw, today=TODAY).raise_for_errors() == load_catalog(SMALL, today=TODAY)


def test_an_unknown_uploaded_file_is_an_error() -> None:
    files = {**_small_bytes(), "notes.txt": b"hello"}
    report = validate(read_tables_from_bytes(files), today=TODAY)
    assert [(p.table, p.value) for p in report.errors] == [("catalog", "notes.txt")]


def test_an_oversize_upload_is_refused_before_parsing() -> None:
    files = {**_small_bytes(), "links.csv": b"\xff" * (MAX_FILE_BYTES + 1)}
    report = validate(read_tables_from_bytes(files), today=TODAY)
    assert [(p.table, p.value) for p in report.errors] == [("links", f"{MAX_FILE_BYTES + 1} bytes")]


def test_no_files_at_all_is_one_error() -> None:
    report = validate(read_tables_from_bytes({}), today=TODAY)
    assert [(p.table, p.row, p.column) for p in report.problems] == [("catalog", None, None)]


def _workbook(edit: dict[tuple[str, int, str], object]) -> bytes:
    """The fixture as an .xlsx workbook of text cells, with ``edit`` cells replaced."""
    book = openpyxl.Workbook()
    book.remove(book.active)
    for table in FILE_TABLES:
        if not (SMALL / f"{table}.csv").exists():
            continue
        sheet = book.create_sheet(table)
        rows = read_rows(SMALL, table)
        for r, row in enumerate(rows, start=1):
            for c, text in enumerate(row, start=1):
                value = edit.get((table, r, rows[0][c - 1]), text)
                sheet.cell(row=r, column=c, value=value)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_xlsx_numbers_booleans_and_dates_read_as_their_text() -> None:
    data = _workbook(
        {
            ("servers", 2, "price_usd"): 296644,
            ("servers", 2, "power_kw"): 10.2,
            ("switches", 2, "lossless"): True,
            ("metadata", 5, "value"): datetime(2026, 1, 15),
        }
    )
    report = validate(read_tables_from_bytes({"quote.xlsx": data}), today=TODAY)
    assert report.raise_for_errors() == load_catalog(SMALL, today=TODAY)


def test_an_xlsx_formula_is_refused_not_evaluated() -> None:
    data = _workbook({("servers", 3, "price_usd"): "=B2*2"})
    report = validate(read_tables_from_bytes({"quote.xlsx": data}), today=TODAY)
    assert [(p.table, p.row, p.column, p.value) for p in report.problems] == [
        ("servers", 3, "price_usd", "=B2*2")
    ]


def test_a_numeric_price_below_the_cent_is_refused_not_rounded() -> None:
    data = _workbook({("nics", 2, "price_usd"): 2200.005})
    report = validate(read_tables_from_bytes({"quote.xlsx": data}), today=TODAY)
    assert [(p.table, p.row, p.column, p.value) for p in report.problems] == [
        ("nics", 2, "price_usd", "2200.005")
    ]


def test_an_unknown_sheet_is_an_error() -> None:
    book = openpyxl.load_workbook(io.BytesIO(_workbook({})))
    book.create_sheet("notes")
    out = io.BytesIO()
    book.save(out)
    report = validate(read_tables_from_bytes({"quote.xlsx": out.getvalue()}), today=TODAY)
    assert [(p.table, p.value) for p in report.problems] == [("catalog", "notes")]


def test_a_workbook_that_unpacks_too_large_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog_io, "MAX_XLSX_UNCOMPRESSED_BYTES", 1000)
    report = validate(read_tables_from_bytes({"quote.xlsx": _workbook({})}), today=TODAY)
    assert [(p.table, p.row) for p in report.problems] == [("catalog", None)]


def test_a_file_that_is_not_a_workbook_is_an_error() -> None:
    report = validate(read_tables_from_bytes({"quote.xlsx": b"not a zip"}), today=TODAY)
    assert [(p.table, p.value) for p in report.problems] == [("catalog", "quote.xlsx")]


def _parquet_files(servers: pa.Table) -> dict[str, bytes]:
    files = {name.replace(".csv", ".parquet"): b"" for name in _small_bytes()}
    for name in files:
        table = name.removesuffix(".parquet")
        rows = read_rows(SMALL, table)
        text = pa.table({h: [r[i] for r in rows[1:]] for i, h in enumerate(rows[0])})
        out = io.BytesIO()
        pq.write_table(servers if table == "servers" else text, out)
        files[name] = out.getvalue()
    return files


def _typed_servers(memory_gb: list[float | None]) -> pa.Table:
    rows = read_rows(SMALL, "servers")
    columns: dict[str, object] = {h: [r[i] for r in rows[1:]] for i, h in enumerate(rows[0])}
    columns["gpus_per_node"] = pa.array([8, 8], pa.int64())
    columns["gpu_memory_gb"] = pa.array(memory_gb, pa.float64())
    columns["price_usd"] = pa.array(
        [Decimal("296644.00"), Decimal("148390.00")], pa.decimal128(12, 2)
    )
    return pa.table(columns)


def test_typed_parquet_columns_read_as_their_text() -> None:
    report = validate(
        read_tables_from_bytes(_parquet_files(_typed_servers([80.0, 80.0]))), today=TODAY
    )
    assert report.raise_for_errors() == load_catalog(SMALL, today=TODAY)


@pytest.mark.parametrize(("memory", "value"), [(float("nan"), "NaN"), (None, "")])
def test_parquet_nan_and_null_are_refused(memory: float | None, value: str) -> None:
    files = _parquet_files(_typed_servers([80.0, memory]))
    report = validate(read_tables_from_bytes(files), today=TODAY)
    assert [(p.table, p.row, p.column, p.value) for p in report.problems] == [
        ("servers", 3, "gpu_memory_gb", value)
    ]


@given(st.integers(min_value=0, max_value=MAX_PRICE_USD * 100))
def test_money_text_round_trips_to_the_cent(cents: int) -> None:
    assert parse_usd_cents(format_usd(cents)) == cents


@pytest.mark.parametrize(
    "text", ["1e3", "+5", "-5", "1,000", "$5", "5.", ".5", "5.001", " 5", "NaN", "inf", "٣"]
)
def test_money_accepts_only_plain_decimals(text: str) -> None:
    assert parse_usd_cents(text) is None


_DECIMAL_COLUMNS = [c for c in COLUMNS if c.kind == "decimal"]


@given(st.sampled_from(_DECIMAL_COLUMNS), st.data())
def test_decimal_cells_round_trip_exactly(column: Column, data: st.DataObject) -> None:
    value = data.draw(
        st.floats(
            min_value=0.0,
            max_value=float(column.maximum or 0),
            exclude_min=True,
            allow_nan=False,
            allow_subnormal=False,
        )
    )
    text = format_cell(column, value)
    try:
        assert parse_cell(column, text) == value
    except CellError:  # beyond 12 fractional digits the format refuses rather than rounds
        assert len(text.partition(".")[2]) > 12


def test_booleans_accept_true_and_false_in_any_case() -> None:
    lossless = next(c for c in columns_of("switches") if c.name == "lossless")
    assert [parse_cell(lossless, t) for t in ("true", "TRUE", "False")] == [True, True, False]
    with pytest.raises(CellError):
        parse_cell(lossless, "1")


def test_the_documentation_shows_every_table_of_the_schema() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    for table in FILE_TABLES:
        assert markdown_table(table) in docs, f"regenerate docs for {table}"


def test_the_documented_limits_are_the_enforced_ones() -> None:
    docs = DOCS.read_text(encoding="utf-8")
    for name in (
        "MAX_FILE_BYTES",
        "MAX_XLSX_UNCOMPRESSED_BYTES",
        "MAX_ROWS_PER_TABLE",
        "MAX_PRICE_USD",
        "MAX_QUANTITY",
        "MAX_TEXT_CHARS",
    ):
        assert f"| `{name}` | {getattr(schema, name):,} |" in docs, name


def test_reports_keep_problems_of_a_valid_catalog_as_warnings(tmp_path: Path) -> None:
    report = load_catalog_report(SMALL, today=date(2027, 1, 1))
    assert report.catalog is not None and report.errors == [] and len(report.warnings) == 1
