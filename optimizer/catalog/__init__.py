"""Vendor price catalogs: read (CSV, XLSX, Parquet), validate completely, then use.

``load_catalog`` is the one way a file becomes a ``Catalog``; see docs/catalogs.md.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from optimizer.catalog.io import read_tables, read_tables_from_bytes, write_catalog
from optimizer.catalog.model import (
    Availability,
    Catalog,
    CatalogMeta,
    Link,
    Nic,
    PriceBreak,
    Server,
    Switch,
)
from optimizer.catalog.validation import ValidationReport, validate


def load_catalog_report(path: str | Path, *, today: date | None = None) -> ValidationReport:
    """Read and validate the catalog at ``path``; the report lists every problem."""
    return validate(read_tables(path), today=today)


def load_catalog(path: str | Path, *, today: date | None = None) -> Catalog:
    """The validated catalog at ``path``; raises CatalogInvalid listing every error."""
    return load_catalog_report(path, today=today).raise_for_errors()


__all__ = [
    "Availability",
    "Catalog",
    "CatalogMeta",
    "Link",
    "Nic",
    "PriceBreak",
    "Server",
    "Switch",
    "ValidationReport",
    "load_catalog",
    "load_catalog_report",
    "read_tables",
    "read_tables_from_bytes",
    "validate",
    "write_catalog",
]
