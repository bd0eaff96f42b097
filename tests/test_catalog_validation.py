"""The malformed-catalog corpus: each defect yields exactly the expected findings, located by
table, row (as the user sees it in the file), column and value."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from catalog_files import (
    TODAY,
    add_column,
    append_row,
    copy_small,
    drop_column,
    read_rows,
    set_cell,
    write_rows,
)

from optimizer.catalog import load_catalog_report
from optimizer.catalog.schema import MAX_FILE_BYTES, MAX_ROWS_PER_TABLE, MAX_TEXT_CHARS
from optimizer.errors import CatalogInvalid

Finding = tuple[str, str, int | None, str | None, str | None]
"""(severity, table, row, column, value) of one Finding."""
Mutation = Callable[[Path], None]


def _replace_in(table: str, old: bytes, new: bytes) -> Mutation:
    def mutate(folder: Path) -> None:
        path = folder / f"{table}.csv"
        data = path.read_bytes()
        assert old in data
        path.write_bytes(data.replace(old, new, 1))

    return mutate


def _cell(table: str, row: int, column: str, value: str) -> Mutation:
    return lambda folder: set_cell(folder, table, row, column, value)


def _many_servers(folder: Path) -> None:
    rows = read_rows(folder, "servers")
    template = rows[1]
    extra = [[f"SRV-{i:05d}", *template[1:]] for i in range(MAX_ROWS_PER_TABLE - 1)]
    write_rows(folder, "servers", rows + extra)


def _duplicate_header(folder: Path) -> None:
    add_column(folder, "switches", "ports", "64")


def _too_big(folder: Path) -> None:
    (folder / "links.csv").write_bytes(b"x" * (MAX_FILE_BYTES + 1))


E = "error"
CORPUS: list[tuple[str, Mutation, list[Finding]]] = [
    (
        "missing required column",
        lambda f: drop_column(f, "servers", "power_kw"),
        [(E, "servers", 1, "power_kw", None)],
    ),
    (
        "unknown column",
        lambda f: add_column(f, "nics", "colour", "green"),
        [(E, "nics", 1, "colour", "colour")],
    ),
    ("duplicate column", _duplicate_header, [(E, "switches", 1, "ports", "ports")]),
    (
        "text in an integer column",
        _cell("servers", 2, "gpus_per_node", "eight"),
        [(E, "servers", 2, "gpus_per_node", "eight")],
    ),
    (
        "fraction in an integer column",
        _cell("servers", 3, "max_nics", "8.5"),
        [(E, "servers", 3, "max_nics", "8.5")],
    ),
    (
        "negative price",
        _cell("nics", 3, "price_usd", "-800.00"),
        [(E, "nics", 3, "price_usd", "-800.00")],
    ),
    ("zero price", _cell("links", 2, "price_usd", "0"), [(E, "links", 2, "price_usd", "0")]),
    (
        "price with a third decimal place",
        _cell("links", 5, "price_usd", "2.505"),
        [(E, "links", 5, "price_usd", "2.505")],
    ),
    (
        "price above the maximum",
        _cell("servers", 2, "price_usd", "100000000.01"),
        [(E, "servers", 2, "price_usd", "100000000.01")],
    ),
    (
        "price with a thousands separator",
        _cell("switches", 2, "price_usd", "36,000.00"),
        [(E, "switches", 2, "price_usd", "36,000.00")],
    ),
    (
        "NaN",
        _cell("servers", 2, "gpu_memory_gb", "NaN"),
        [(E, "servers", 2, "gpu_memory_gb", "NaN")],
    ),
    ("empty required cell", _cell("switches", 3, "vendor", ""), [(E, "switches", 3, "vendor", "")]),
    (
        "duplicate SKU in one table",
        _cell("servers", 3, "sku", "SRV-H100"),
        [(E, "servers", 3, "sku", "SRV-H100")],
    ),
    (
        "duplicate SKU across tables",
        _cell("switches", 3, "sku", "NIC-CX7-400"),
        [(E, "switches", 3, "sku", "NIC-CX7-400")],
    ),
    (
        "unknown fabric family",
        _cell("switches", 2, "fabric_family", "omnipath"),
        [(E, "switches", 2, "fabric_family", "omnipath")],
    ),
    (
        "unknown protocol",
        _cell("nics", 2, "protocols", "infiniband;nvlink"),
        [(E, "nics", 2, "protocols", "infiniband;nvlink")],
    ),
    (
        "boolean other than true/false",
        _cell("switches", 3, "lossless", "yes"),
        [(E, "switches", 3, "lossless", "yes")],
    ),
    ("unknown link kind", _cell("links", 3, "kind", "copper"), [(E, "links", 3, "kind", "copper")]),
    ("zero breakout", _cell("switches", 2, "breakout", "0"), [(E, "switches", 2, "breakout", "0")]),
    (
        "negative stock",
        _cell("nics", 3, "stock_units", "-1"),
        [(E, "nics", 3, "stock_units", "-1")],
    ),
    (
        "price break raising the price",
        _cell("price_breaks", 3, "unit_price_usd", "35000.00"),
        [(E, "price_breaks", 3, "unit_price_usd", "35000.00")],
    ),
    (
        "price break above the list price",
        _cell("price_breaks", 2, "unit_price_usd", "40000"),
        [(E, "price_breaks", 2, "unit_price_usd", "40000.00")],
    ),
    (
        "price break for an unknown SKU",
        _cell("price_breaks", 2, "sku", "NOPE"),
        [(E, "price_breaks", 2, "sku", "NOPE")],
    ),
    (
        "two price breaks at one quantity",
        _cell("price_breaks", 3, "min_quantity", "64"),
        [(E, "price_breaks", 3, "min_quantity", "64")],
    ),
    (
        "formula in a text cell",
        _cell("servers", 2, "source", '=HYPERLINK("x")'),
        [(E, "servers", 2, "source", '=HYPERLINK("x")')],
    ),
    (
        "formula-like text starting with -",
        _cell("servers", 3, "gpu_model", "-2+3"),
        [(E, "servers", 3, "gpu_model", "-2+3")],
    ),
    (
        "formula in a numeric cell",
        _cell("links", 4, "price_usd", "=1+1"),
        [(E, "links", 4, "price_usd", "=1+1")],
    ),
    (
        "surrounding spaces",
        _cell("servers", 2, "gpus_per_node", " 8"),
        [(E, "servers", 2, "gpus_per_node", " 8")],
    ),
    (
        "control character",
        _cell("nics", 2, "vendor", "NVIDIA\x07"),
        [(E, "nics", 2, "vendor", "NVIDIA\\x07")],
    ),
    (
        "over-long text",
        _cell("links", 2, "source", "s" * (MAX_TEXT_CHARS + 1)),
        [(E, "links", 2, "source", "s" * 79 + "…")],
    ),
    (
        "file not UTF-8",
        _replace_in("nics", b"Intel E810", b"Intel\xe9E810"),
        [(E, "nics", 3, None, "b'\\xe9'")],
    ),
    (
        "row with an extra field",
        lambda f: append_row(f, "nics", ["X"] * 11),
        [(E, "nics", 4, None, "11 fields")],
    ),
    ("unbalanced quote", _replace_in("links", b'"OM4', b'"OM4"x'), [(E, "links", 5, None, None)]),
    (
        "empty table file",
        lambda f: (f / "servers.csv").write_bytes(b""),
        [(E, "servers", 1, None, None)],
    ),
    (
        "missing table file",
        lambda f: (f / "switches.csv").unlink(),
        [(E, "switches", None, None, None)],
    ),
    (
        "missing metadata",
        lambda f: (f / "metadata.csv").unlink(),
        [(E, "metadata", None, None, None)],
    ),
    (
        "file over the size limit",
        _too_big,
        [(E, "links", None, None, f"{MAX_FILE_BYTES + 1} bytes")],
    ),
    ("rows beyond the limit", _many_servers, [(E, "servers", MAX_ROWS_PER_TABLE + 2, None, None)]),
    (
        "currency other than USD",
        _cell("metadata", 4, "value", "EUR"),
        [(E, "metadata", 4, "currency", "EUR")],
    ),
    (
        "impossible date",
        _cell("metadata", 5, "value", "2026-13-01"),
        [(E, "metadata", 5, "quote_date", "2026-13-01")],
    ),
    (
        "quote valid until before its date",
        _cell("metadata", 6, "value", "2025-12-31"),
        [(E, "metadata", 6, "valid_until", "2025-12-31")],
    ),
    (
        "unknown metadata key",
        lambda f: append_row(f, "metadata", ["colour", "green"]),
        [(E, "metadata", 7, "key", "colour")],
    ),
    (
        "missing metadata key",
        _cell("metadata", 2, "key", "vendor"),
        [(E, "metadata", 3, "vendor", "vendor"), (E, "metadata", None, "name", None)],
    ),
    (
        "mixed formats",
        lambda f: (f / "servers.parquet").write_bytes(b"PAR1"),
        [(E, "catalog", None, None, "csv, parquet")],
    ),
]


def _findings(folder: Path) -> tuple[list[Finding], list[str]]:
    report = load_catalog_report(folder, today=TODAY)
    assert (report.catalog is None) == bool(report.errors)
    found = [(p.severity, p.table, p.row, p.column, p.value) for p in report.problems]
    return found, [p.expected for p in report.problems]


def _key(f: Finding) -> str:
    return repr(f)


def test_the_fixture_is_valid(tmp_path: Path) -> None:
    assert _findings(copy_small(tmp_path)) == ([], [])


@pytest.mark.parametrize(
    ("mutate", "expected"), [(m, e) for _, m, e in CORPUS], ids=[name for name, _, _ in CORPUS]
)
def test_each_defect_yields_exactly_its_findings(
    tmp_path: Path, mutate: Mutation, expected: list[Finding]
) -> None:
    folder = copy_small(tmp_path)
    mutate(folder)
    found, explanations = _findings(folder)
    assert sorted(found, key=_key) == sorted(expected, key=_key)
    assert all(explanations)


def test_many_defects_are_all_reported_in_one_error(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    picked = [
        c
        for c in CORPUS
        if c[0]
        in (
            "negative price",
            "unknown fabric family",
            "duplicate SKU across tables",
            "price break raising the price",
            "formula in a text cell",
            "currency other than USD",
            "unknown column",
            "NaN",
        )
    ]
    for _, mutate, _ in picked:
        mutate(folder)
    expected = [f for _, _, findings in picked for f in findings]
    found, _ = _findings(folder)
    assert sorted(found, key=_key) == sorted(expected, key=_key)
    with pytest.raises(CatalogInvalid) as caught:
        load_catalog_report(folder, today=TODAY).raise_for_errors()
    assert len(caught.value.problems) == len(expected)
    assert str(caught.value).count("\n") == len(expected)


def test_the_corpus_has_at_least_25_single_defects() -> None:
    assert len(CORPUS) >= 25
    assert len({name for name, _, _ in CORPUS}) == len(CORPUS)


def test_an_expired_quote_is_only_a_warning(tmp_path: Path) -> None:
    report = load_catalog_report(copy_small(tmp_path), today=TODAY.replace(year=2027))
    assert report.catalog is not None
    assert [(p.severity, p.table, p.column, p.value) for p in report.problems] == [
        ("warning", "metadata", "valid_until", "2026-12-31")
    ]


def test_a_nic_nothing_can_connect_is_only_a_warning(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    set_cell(folder, "nics", 3, "speed_gbps", "800")
    report = load_catalog_report(folder, today=TODAY)
    assert report.catalog is not None
    assert [(p.severity, p.table, p.row, p.column, p.value) for p in report.problems] == [
        ("warning", "nics", 3, "speed_gbps", "800")
    ]


@pytest.mark.parametrize(("protocols", "warned"), [("roce", True), ("roce;ethernet", False)])
def test_a_roce_nic_needs_a_lossless_switch(tmp_path: Path, protocols: str, warned: bool) -> None:
    folder = copy_small(tmp_path)
    set_cell(folder, "nics", 3, "protocols", protocols)
    set_cell(folder, "switches", 3, "lossless", "false")
    report = load_catalog_report(folder, today=TODAY)
    expected = [("nics", 3, "100")] if warned else []
    assert [(p.table, p.row, p.value) for p in report.warnings] == expected


def test_a_nic_reachable_through_breakout_is_connected(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    set_cell(folder, "switches", 3, "port_speed_gbps", "400")
    report = load_catalog_report(folder, today=TODAY)
    assert report.warnings == []


@pytest.mark.parametrize(
    ("gpu_model", "peak_tflops", "timed"),
    [("A800", "312", "timed as A100, whose dense BF16 peak and memory this row states"),
     ("RTX 6000", "91", "no calibrated generation has this row's peak and memory")],
)  # fmt: skip
def test_a_gpu_no_generation_is_calibrated_for_is_a_warning_naming_how_it_is_timed(
    tmp_path: Path, gpu_model: str, peak_tflops: str, timed: str
) -> None:
    folder = copy_small(tmp_path)
    set_cell(folder, "servers", 3, "gpu_model", gpu_model)  # SRV-A100, 80 GB
    set_cell(folder, "servers", 3, "gpu_peak_bf16_tflops", peak_tflops)
    report = load_catalog_report(folder, today=TODAY)
    assert report.catalog is not None
    [found] = report.warnings
    assert (found.table, found.row, found.column, found.value) == (
        "servers", 3, "gpu_model", gpu_model
    )  # fmt: skip
    assert timed in found.expected


def test_an_empty_table_is_a_warning(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    write_rows(folder, "servers", read_rows(folder, "servers")[:1])
    report = load_catalog_report(folder, today=TODAY)
    assert report.catalog is not None and report.catalog.servers == ()
    assert [(p.severity, p.table, p.row) for p in report.problems] == [("warning", "servers", None)]


def test_blank_lines_are_skipped_and_keep_their_numbers(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    path = folder / "nics.csv"
    lines = path.read_text(encoding="utf-8").split("\n")
    path.write_text("\n".join([lines[0], "", ",,,,,,,,,", *lines[1:]]), encoding="utf-8")
    set_cell(folder, "nics", 5, "ports", "two")
    found, _ = _findings(folder)
    assert found == [("error", "nics", 5, "ports", "two")]


def test_a_quoted_line_break_counts_as_a_line(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    set_cell(folder, "links", 2, "source", "line one\nline two")
    set_cell(folder, "links", 3, "kind", "copper")
    found, _ = _findings(folder)
    assert sorted(found, key=_key) == [
        ("error", "links", 2, "source", "line one\\nline two"),
        ("error", "links", 4, "kind", "copper"),
    ]
