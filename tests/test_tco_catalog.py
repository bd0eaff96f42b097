"""Issue 17 (tco): the optional ``support_rate`` column of servers, NICs and switches."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_files import TODAY, add_column, copy_small, set_cell, the_one_error, with_new_column

from optimizer.catalog import load_catalog
from optimizer.catalog.canonical import content_hash


@pytest.mark.parametrize("table", ["servers", "nics", "switches"])
def test_a_rows_support_rate_is_read(tmp_path: Path, table: str) -> None:
    folder = with_new_column(tmp_path, table, "support_rate", "", 2, "0.12")
    cat = load_catalog(folder, today=TODAY)
    rows = getattr(cat, table)
    assert [r.support_rate for r in rows] == [0.12] + [None] * (len(rows) - 1)


def test_a_support_rate_above_one_names_table_row_and_column(tmp_path: Path) -> None:
    error = the_one_error(tmp_path, "switches", "support_rate", "", 3, "8")
    assert "<= 1" in error.expected


def test_an_empty_support_rate_column_keeps_the_catalogs_id(tmp_path: Path) -> None:
    before = content_hash(load_catalog(copy_small(tmp_path / "a"), today=TODAY))
    folder = copy_small(tmp_path / "b")
    add_column(folder, "servers", "support_rate", "")
    assert content_hash(load_catalog(folder, today=TODAY)) == before
    set_cell(folder, "servers", 2, "support_rate", "0.1")
    assert content_hash(load_catalog(folder, today=TODAY)) != before
