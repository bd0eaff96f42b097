"""Catalog look-ups by SKU with a field-named refusal when a design names an unknown part."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, TypeVar

from optimizer.errors import InvalidInput


class _HasSku(Protocol):
    @property
    def sku(self) -> str: ...


P = TypeVar("P", bound=_HasSku)


def find(rows: Iterable[P], sku: str, field: str) -> P:
    """The catalog row with ``sku``; InvalidInput naming ``field`` when there is none."""
    for row in rows:
        if row.sku == sku:
            return row
    msg = f"no such SKU {sku!r} in the catalog"
    raise InvalidInput(msg, field=field)
