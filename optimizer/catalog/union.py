"""Several catalogs as one: optimise over the union of vendors' quotes.

A buyer often holds one quote for servers and another for the fabric; ``procure optimize
--catalog A --catalog B`` (the request's ``catalog`` plus its repeated ``catalogs``) lets the
optimizer mix them, and every BOM line names the catalog it is ordered from.

The rules (docs/service.md, "Several catalogs"):

* Every row keeps its catalog's price, price breaks, stock and lead time: a quote's volume
  price applies to what is ordered from that quote only.
* A SKU that appears in more than one catalog is one *offer per catalog*, named
  ``CATALOG:SKU`` in the union (for example ``roce-spectrum:B3140H``); a SKU only one catalog
  lists keeps its name. References between rows (a field ending in ``_sku``) follow the rename
  within their own catalog.
* A catalog is named by its metadata ``name``; two catalogs with the same name are named by
  the reference the request gave. The same catalog twice is refused, and so are catalogs
  priced in different currencies (no exchange rate is assumed).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

from optimizer.catalog.model import Catalog, CatalogMeta
from optimizer.errors import InvalidInput

# The separator of a qualified SKU (CATALOG:SKU); catalog names never contain it in practice,
# and a SKU that does still reads unambiguously because the catalog comes first.
QUALIFIER = ":"
_ROW_TABLES = ("servers", "nics", "switches", "links")
# What a catalog reference may be: embedded (CLI) and on a server (never a path there).
LOCAL_REFS = "a catalog path, bundled name or stored id"
SERVER_REFS = "a catalog name, name@version or id"

R = TypeVar("R")


@dataclass(frozen=True)
class CatalogUnion(Catalog):
    """A catalog built from several; ``origins`` names the catalog of every row's SKU."""

    origins: tuple[tuple[str, str], ...] = ()  # (sku in the union, catalog name)

    @cached_property
    def _origin_of(self) -> dict[str, str]:
        return dict(self.origins)

    def origin(self, sku: str) -> str:
        """The name of the catalog ``sku`` is ordered from ("" for a SKU it does not hold)."""
        return self._origin_of.get(sku, "")


def catalog_of(catalog: Catalog, sku: str) -> str:
    """The catalog a BOM line of ``sku`` is ordered from: the union's origin of the SKU, or
    the catalog's own name."""
    if isinstance(catalog, CatalogUnion):
        return catalog.origin(sku)
    return catalog.meta.name


def request_catalog_refs(
    catalog: str, catalogs: Sequence[str], *, expected: str = LOCAL_REFS
) -> list[tuple[str, str]]:
    """(request field, reference) of every catalog a request names: ``catalog`` first, then
    ``catalogs`` in order. Refuses none at all, an empty entry and a repeated reference
    (``expected`` says what a reference may be where the request is read)."""
    refs: list[tuple[str, str]] = []
    if catalog:
        refs.append(("catalog", catalog))
    for i, ref in enumerate(catalogs):
        field = f"catalogs[{i}]"
        if not ref.strip():
            raise InvalidInput(f"empty; expected {expected}", field=field)
        seen = next((f for f, r in refs if r == ref), None)
        if seen is not None:
            msg = f"{ref!r} is already named by {seen}; name each catalog once"
            raise InvalidInput(msg, field=field)
        refs.append((field, ref))
    if not refs:
        raise InvalidInput(f"required; expected {expected}", field="catalog")
    return refs


def union_catalogs(named: Sequence[tuple[str, str, Catalog]]) -> Catalog:
    """One catalog from ``(field, reference, catalog)`` triples (see the module's rules).

    A single catalog is returned unchanged. Raises ``InvalidInput`` naming the request field
    of a catalog that repeats another or is priced in another currency.
    """
    if len(named) == 1:
        return named[0][2]
    names = _names(named)
    first_field, _, first = named[0]
    for (field, _, cat), name in zip(named, names, strict=True):
        if cat.meta.currency != first.meta.currency:
            msg = (
                f"catalog {name!r} is priced in {cat.meta.currency}, catalog "
                f"{names[0]!r} ({first_field}) in {first.meta.currency}; expected one currency"
            )
            raise InvalidInput(msg, field=field)
    counts = Counter(
        row.sku for _, _, cat in named for table in _ROW_TABLES for row in getattr(cat, table)
    )
    clashing = {sku for sku, n in counts.items() if n > 1}
    tables: dict[str, list[Any]] = {t: [] for t in (*_ROW_TABLES, "price_breaks")}
    origins: list[tuple[str, str]] = []
    for (_, _, cat), name in zip(named, names, strict=True):
        rename = {sku: f"{name}{QUALIFIER}{sku}" for sku in clashing}
        for table in _ROW_TABLES:
            for row in getattr(cat, table):
                renamed = _renamed(row, rename)
                tables[table].append(renamed)
                origins.append((renamed.sku, name))
        tables["price_breaks"].extend(_renamed(pb, rename) for pb in cat.price_breaks)
    meta = CatalogMeta(
        name="+".join(names),
        vendor="; ".join(cat.meta.vendor for _, _, cat in named),
        currency=first.meta.currency,
        quote_date=_earliest([cat.meta.quote_date for _, _, cat in named]),
        valid_until=_earliest([cat.meta.valid_until for _, _, cat in named]),
    )
    return CatalogUnion(
        meta=meta,
        servers=tuple(tables["servers"]),
        nics=tuple(tables["nics"]),
        switches=tuple(tables["switches"]),
        links=tuple(tables["links"]),
        price_breaks=tuple(tables["price_breaks"]),
        # Offers name no SKU, so they never clash; one offer listed by two catalogs counts once.
        cloud_offers=tuple(dict.fromkeys(o for _, _, cat in named for o in cat.cloud_offers)),
        origins=tuple(origins),
    )


def _names(named: Sequence[tuple[str, str, Catalog]]) -> list[str]:
    """Each catalog's name in the union: its own, or the reference where names repeat."""
    own = Counter(cat.meta.name for _, _, cat in named)
    names = [cat.meta.name if own[cat.meta.name] == 1 else ref for _, ref, cat in named]
    for i, name in enumerate(names):
        if name in names[:i]:
            field, ref, _ = named[i]
            other = named[names.index(name)][0]
            msg = f"{ref!r} is the same catalog as {other}; name each catalog once"
            raise InvalidInput(msg, field=field)
    return names


def _renamed(row: R, rename: dict[str, str]) -> R:
    """``row`` with its SKU and every ``*_sku`` reference renamed where ``rename`` says."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(row):  # type: ignore[arg-type]
        if f.name == "sku" or f.name.endswith("_sku"):
            value = getattr(row, f.name)
            if isinstance(value, str) and value in rename:
                changes[f.name] = rename[value]
    return dataclasses.replace(row, **changes) if changes else row  # type: ignore[type-var]


def _earliest(dates: list[Any]) -> Any:
    """The earliest of the dates given (a union's quote is as old, and valid as briefly, as
    its oldest part), or None when no catalog gives one."""
    known = [d for d in dates if d is not None]
    return min(known) if known else None
