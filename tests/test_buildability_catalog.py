"""Buildability as catalog data: forwarding and built-in NICs (issue 13, defects 1 and 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_files import TODAY, add_column, copy_small, set_cell

from optimizer.catalog import load_catalog_report
from optimizer.catalog.canonical import content_hash
from optimizer.catalog.io import read_tables, write_catalog
from optimizer.catalog.validation import validate

BUNDLED = Path(__file__).resolve().parents[1] / "catalogs"


def _errors(folder: Path) -> list[tuple[str, int | None, str | None, str]]:
    report = load_catalog_report(folder, today=TODAY)
    return [(p.table, p.row, p.column, p.expected) for p in report.errors]


def test_a_catalog_without_the_new_columns_loads_with_their_defaults(tmp_path: Path) -> None:
    report = load_catalog_report(copy_small(tmp_path), today=TODAY)
    catalog = report.raise_for_errors()
    assert all(not s.forwarding and s.builtin_nics == 0 for s in catalog.servers)
    assert all(s.builtin_nic_sku == "" for s in catalog.servers)
    assert all(not n.forwarding for n in catalog.nics)


def test_new_columns_at_their_defaults_keep_the_catalog_id(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    before = content_hash(load_catalog_report(folder, today=TODAY).raise_for_errors())
    add_column(folder, "nics", "forwarding", "false")
    add_column(folder, "servers", "builtin_nics", "0")
    after = content_hash(load_catalog_report(folder, today=TODAY).raise_for_errors())
    assert after == before


def test_a_forwarding_nic_is_read_as_true(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    add_column(folder, "nics", "forwarding", "")
    set_cell(folder, "nics", 2, "forwarding", "true")
    catalog = load_catalog_report(folder, today=TODAY).raise_for_errors()
    assert [n.forwarding for n in catalog.nics][:2] == [True, False]


def test_built_in_nics_survive_a_write_and_reload(tmp_path: Path) -> None:
    folder = copy_small(tmp_path)
    add_column(folder, "servers", "builtin_nic_sku", "")
    add_column(folder, "servers", "builtin_nics", "")
    set_cell(folder, "servers", 2, "builtin_nic_sku", "NIC-CX7-400")
    set_cell(folder, "servers", 2, "builtin_nics", "8")
    catalog = load_catalog_report(folder, today=TODAY).raise_for_errors()
    assert (catalog.servers[0].builtin_nic_sku, catalog.servers[0].builtin_nics) == (
        "NIC-CX7-400",
        8,
    )
    again = validate(read_tables(write_catalog(catalog, tmp_path / "out")), today=TODAY)
    assert again.raise_for_errors() == catalog


@pytest.mark.parametrize(
    ("sku", "count", "expected"),
    [
        ("NO-SUCH-NIC", "8", [("servers", 2, "builtin_nic_sku", "the SKU of a nics row")]),
        ("NIC-CX7-400", "", [("servers", 2, "builtin_nics", "both or neither")]),
        ("", "8", [("servers", 2, "builtin_nic_sku", "both or neither")]),
        ("NIC-CX7-400", "9", [("servers", 2, "builtin_nics", "at most max_nics (8)")]),
    ],
    ids=["unknown-sku", "sku-without-count", "count-without-sku", "more-than-slots"],
)
def test_a_bad_built_in_nic_is_an_error_naming_table_row_and_column(
    tmp_path: Path, sku: str, count: str, expected: list[tuple[str, int, str, str]]
) -> None:
    folder = copy_small(tmp_path)
    add_column(folder, "servers", "builtin_nic_sku", "")
    add_column(folder, "servers", "builtin_nics", "")
    set_cell(folder, "servers", 2, "builtin_nic_sku", sku)
    set_cell(folder, "servers", 2, "builtin_nics", count)
    found = _errors(folder)
    assert [(t, r, c) for t, r, c, _ in found] == [(t, r, c) for t, r, c, _ in expected]
    assert all(want in got for (*_, got), (*_, want) in zip(found, expected, strict=True))


def test_bundled_dgx_servers_are_priced_whole_with_eight_connectx7() -> None:
    catalog = validate(read_tables(BUNDLED / "infiniband-ndr")).raise_for_errors()
    dgx = {s.sku: s for s in catalog.servers if s.sku.startswith("DGX")}
    assert {sku: s.price_cents for sku, s in dgx.items()} == {
        "DGX-H100": 375_000_00,
        "DGX-B200": 379_273_00,
    }
    for server in dgx.values():
        assert (server.builtin_nic_sku, server.builtin_nics) == ("MCX75310AAS-NEAT", 8)
        assert "includes its 8 built-in ConnectX-7" in server.availability.source


@pytest.mark.parametrize("name", ["infiniband-ndr", "roce-spectrum", "ethernet-budget"])
def test_no_bundled_nic_or_server_forwards(name: str) -> None:
    catalog = validate(read_tables(BUNDLED / name)).raise_for_errors()
    assert not any(n.forwarding for n in catalog.nics)
    assert not any(s.forwarding for s in catalog.servers)
    assert all("do not forward between ports" in n.availability.source for n in catalog.nics)
