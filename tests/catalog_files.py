"""Helpers that copy the small fixture catalog and damage it one defect at a time."""

from __future__ import annotations

import csv
import io
import shutil
from datetime import date
from pathlib import Path

from optimizer.catalog import load_catalog_report
from optimizer.catalog.validation import Finding

SMALL = Path(__file__).parent / "data" / "catalog_small"
TODAY = date(2026, 6, 1)
"""Inside the fixture quote's validity (2026-01-15 .. 2026-12-31)."""


def copy_small(dest: Path) -> Path:
    """A fresh copy of tests/data/catalog_small under ``dest``."""
    folder = dest / "catalog"
    shutil.copytree(SMALL, folder)
    return folder


def read_rows(folder: Path, table: str) -> list[list[str]]:
    with open(folder / f"{table}.csv", encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def write_rows(folder: Path, table: str, rows: list[list[str]]) -> None:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    (folder / f"{table}.csv").write_text(out.getvalue(), encoding="utf-8")


def set_cell(folder: Path, table: str, row: int, column: str, value: str) -> None:
    """Set the cell on file line ``row`` (header = 1) under ``column``."""
    rows = read_rows(folder, table)
    rows[row - 1][rows[0].index(column)] = value
    write_rows(folder, table, rows)


def drop_column(folder: Path, table: str, column: str) -> None:
    rows = read_rows(folder, table)
    at = rows[0].index(column)
    write_rows(folder, table, [r[:at] + r[at + 1 :] for r in rows])


def add_column(folder: Path, table: str, column: str, value: str) -> None:
    rows = read_rows(folder, table)
    write_rows(folder, table, [rows[0] + [column]] + [[*r, value] for r in rows[1:]])


def append_row(folder: Path, table: str, cells: list[str]) -> None:
    write_rows(folder, table, [*read_rows(folder, table), cells])


def with_new_column(dest: Path, table: str, column: str, fill: str, row: int, value: str) -> Path:
    """The small catalog with an optional ``column`` added to ``table`` (every cell ``fill``)
    and ``value`` on file line ``row``: how a new column's bad cell is tried."""
    folder = copy_small(dest)
    add_column(folder, table, column, fill)
    set_cell(folder, table, row, column, value)
    return folder


def the_one_error(dest: Path, table: str, column: str, fill: str, row: int, value: str) -> Finding:
    """The only error of ``with_new_column``'s catalog, checked to name its table, row, column
    and value."""
    report = load_catalog_report(
        with_new_column(dest, table, column, fill, row, value), today=TODAY
    )
    assert [(p.table, p.row, p.column, p.value) for p in report.errors] == [
        (table, row, column, value)
    ]
    return report.errors[0]
