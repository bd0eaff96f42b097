"""Typed values of one row <-> one model record, driven by the schema's column attributes."""

from __future__ import annotations

from collections.abc import Mapping

from optimizer.catalog.cells import Value
from optimizer.catalog.model import (
    Availability,
    CatalogMeta,
    Link,
    Nic,
    PriceBreak,
    Server,
    Switch,
)
from optimizer.catalog.schema import METADATA, columns_of

Record = Server | Nic | Switch | Link | PriceBreak | CatalogMeta
RECORD_TYPES: Mapping[str, type[Record]] = {
    "servers": Server,
    "nics": Nic,
    "switches": Switch,
    "links": Link,
    "price_breaks": PriceBreak,
    METADATA: CatalogMeta,
}
AVAILABILITY_FIELDS = ("stock_units", "lead_time_days", "source")
"""Columns that fill a record's ``availability`` rather than the record itself."""


def _has_availability(table: str) -> bool:
    return "availability" in RECORD_TYPES[table].__dataclass_fields__


def build_record(table: str, values: Mapping[str, Value]) -> Record:
    """The record of ``table`` whose fields are ``values`` (keyed by column attribute)."""
    kwargs = dict(values)
    if _has_availability(table):
        kwargs["availability"] = Availability(
            **{name: kwargs.pop(name) for name in AVAILABILITY_FIELDS}
        )  # type: ignore[arg-type]
    return RECORD_TYPES[table](**kwargs)  # type: ignore[arg-type]


def record_values(table: str, record: Record) -> dict[str, Value]:
    """The typed value of every column of ``table`` in ``record``; inverse of build_record."""
    nested = _has_availability(table)
    return {
        c.field: getattr(
            record.availability if nested and c.field in AVAILABILITY_FIELDS else record, c.field
        )  # type: ignore[union-attr]
        for c in columns_of(table)
    }
