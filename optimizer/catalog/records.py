"""Typed values of one row <-> one model record, driven by the schema's column attributes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optimizer.catalog.cells import Value
from optimizer.catalog.model import (
    Availability,
    CatalogMeta,
    CloudOffer,
    Link,
    Nic,
    PriceBreak,
    Server,
    Switch,
)
from optimizer.catalog.schema import METADATA, columns_of

Record = Server | Nic | Switch | Link | PriceBreak | CloudOffer | CatalogMeta
RECORD_TYPES: Mapping[str, type[Record]] = {
    "servers": Server,
    "nics": Nic,
    "switches": Switch,
    "links": Link,
    "price_breaks": PriceBreak,
    "cloud_offers": CloudOffer,
    METADATA: CatalogMeta,
}
AVAILABILITY_FIELDS = ("stock_units", "lead_time_days", "source")
"""Columns that fill a record's ``availability`` rather than the record itself."""


def _has_availability(table: str) -> bool:
    return "availability" in RECORD_TYPES[table].__dataclass_fields__


def build_record(table: str, values: Mapping[str, Value]) -> Record:
    """The record of ``table`` whose fields are ``values`` (keyed by column attribute).

    The values were checked against the schema's column types, which is what makes the
    record's field types hold; the keyword arguments are therefore ``Any`` here.
    """
    kwargs: dict[str, Any] = dict(values)
    if _has_availability(table):
        kwargs["availability"] = Availability(
            **{name: kwargs.pop(name) for name in AVAILABILITY_FIELDS}
        )
    return RECORD_TYPES[table](**kwargs)


def record_values(table: str, record: Record) -> dict[str, Value]:
    """The typed value of every column of ``table`` in ``record``; inverse of build_record."""
    availability = getattr(record, "availability", None) if _has_availability(table) else None
    return {
        c.field: getattr(
            availability if availability is not None and c.field in AVAILABILITY_FIELDS else record,
            c.field,
        )
        for c in columns_of(table)
    }
