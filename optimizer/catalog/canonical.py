"""The one byte-exact serialisation of a catalog, and the content hash that names it.

The store keeps these bytes and identifies a catalog version by their SHA-256, so the
encoding must not depend on the order rows were read in, on int-vs-float spelling of a
number, or on the file format the catalog came from: rows are sorted by SKU (price breaks
by SKU then quantity), keys are sorted, prices stay integer cents, dates are ISO 8601 and
protocol sets are sorted lists.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import typing
from datetime import date
from typing import Any

from optimizer.catalog.model import (
    Availability,
    Catalog,
    CatalogMeta,
    CloudOffer,
    Link,
    Nic,
    PriceBreak,
    Server,
    Switch,
)
from optimizer.errors import InvalidInput

# Bump when the encoding changes; it is part of the hashed bytes.
CANONICAL_VERSION = 1
LATER_FIELDS = frozenset(
    {
        "forwarding",
        "builtin_nic_sku",
        "builtin_nics",
        "side",
        "form_factor",
        "ports_per_module",
        "support_rate",
        "scale_up_gpus",
        "gpus_per_host",
        "planes",  # issue 16 (fabric800)
        "ports_per_cage",  # issue 16 (fabric800)
        "in_network_reduction",  # issue 14 (sharp)
        "nic_slot_gbps",  # issue 14 (host link)
        "nic_cage",
        "connector",
        "gpu_memory_gb",  # cloud_offers only: a servers row always has it
    }
)
"""Record fields added after version 1: left out while at their default, so a catalog that
does not use them keeps the id it was stored under."""

_ROW_TYPES: dict[str, type] = {
    "servers": Server,
    "nics": Nic,
    "switches": Switch,
    "links": Link,
    "price_breaks": PriceBreak,
    "cloud_offers": CloudOffer,
}
LATER_TABLES = frozenset({"cloud_offers"})
"""Tables added after version 1: left out while empty, so a catalog without them keeps the
id it was stored under (and reads back with the table empty)."""


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """(name, resolved type) of each field of a record class, in declaration order."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


@functools.cache
def _defaulted(cls: type) -> frozenset[str]:
    return frozenset(
        f.name
        for f in dataclasses.fields(cls)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    )


def _encode_value(value: Any, hint: Any) -> Any:
    if isinstance(value, Availability):
        return _encode_record(value)
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, date):
        return value.isoformat()
    if value is not None and hint in (float, float | None):
        # 989 and 989.0, or 0.0 and -0.0, are the same number and must hash the same.
        return float(value) + 0.0
    return value


def _encode_record(record: Any) -> dict[str, Any]:
    record_type: type = type(record)
    return {
        name: _encode_value(getattr(record, name), hint)
        for name, hint in _fields(record_type)
        if not (name in LATER_FIELDS and getattr(record, name) == _default(record_type, name))
    }


@functools.cache
def _default(cls: type, name: str) -> Any:
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def _sort_key(table: str) -> Any:
    if table == "price_breaks":
        return lambda r: (r.sku, r.min_quantity)
    return lambda r: r.sku


def canonical_document(catalog: Catalog) -> dict[str, Any]:
    """The catalog as plain JSON-able data in canonical order (what ``canonical_json`` encodes)."""
    doc: dict[str, Any] = {
        "canonical_version": CANONICAL_VERSION,
        "meta": _encode_record(catalog.meta),
    }
    for table in _ROW_TYPES:
        rows = sorted(getattr(catalog, table), key=_sort_key(table))
        if rows or table not in LATER_TABLES:
            doc[table] = [_encode_record(r) for r in rows]
    return doc


def canonical_json(catalog: Catalog) -> bytes:
    """Deterministic UTF-8 JSON of ``catalog``: equal content gives equal bytes."""
    try:
        text = json.dumps(
            canonical_document(catalog),
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=False,
        )
    except ValueError as e:  # NaN or infinity cannot be part of a catalog
        raise InvalidInput(f"catalog holds a non-finite number ({e})", field="catalog") from e
    return text.encode("utf-8")


def content_hash(catalog: Catalog) -> str:
    """SHA-256 hex digest of the canonical JSON: the catalog's content-addressed id."""
    return hash_canonical(canonical_json(catalog))


def hash_canonical(data: bytes) -> str:
    """The id of already-encoded canonical JSON (saves encoding a catalog twice)."""
    return hashlib.sha256(data).hexdigest()


def _decode_record(cls: type, data: dict[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    for name, hint in _fields(cls):
        if name not in data and name in _defaulted(cls):
            continue  # a field added to the model after this version was stored
        value = data[name]
        if hint is Availability:
            value = _decode_record(Availability, value)
        elif hint == frozenset[str]:
            value = frozenset(value)
        elif hint in (date, date | None) and value is not None:
            value = date.fromisoformat(value)
        kwargs[name] = value
    return cls(**kwargs)


def catalog_from_canonical(data: bytes) -> Catalog:
    """Rebuild a ``Catalog`` from ``canonical_json`` output (rows come back in canonical order)."""
    try:
        doc = json.loads(data.decode("utf-8"))
        if doc.get("canonical_version") != CANONICAL_VERSION:
            msg = f"unsupported canonical_version {doc.get('canonical_version')!r}"
            raise InvalidInput(msg, field="canonical_version")
        tables = {
            t: tuple(
                _decode_record(cls, r) for r in (doc.get(t, []) if t in LATER_TABLES else doc[t])
            )
            for t, cls in _ROW_TYPES.items()
        }
        return Catalog(meta=_decode_record(CatalogMeta, doc["meta"]), **tables)
    except InvalidInput:
        raise
    except (
        UnicodeDecodeError,
        json.JSONDecodeError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
    ) as e:
        raise InvalidInput(
            f"not a canonical catalog document ({type(e).__name__}: {e})", field="catalog"
        ) from e
