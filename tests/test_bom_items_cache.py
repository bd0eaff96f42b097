"""A design's BOM items with its cheapest links are kept per design and what they read of the
catalog (topology.bom._cheapest_items: the parts but their prices, and the links' prices): the
min-time explanations re-solve on catalogs that differ only in switch prices. Every BOM is
still priced at its own catalog's prices, and a catalog whose links differ in price or stock
chooses its links again."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from optimizer.catalog.model import Catalog
from optimizer.topology import bom as bom_module
from optimizer.topology.bom import BillOfMaterials, build_bom
from tests.test_planned_cache import CAT, DESIGN


@pytest.fixture(autouse=True)
def empty_items_cache() -> Iterator[None]:
    bom_module._items_cache.clear()
    yield
    bom_module._items_cache.clear()


def _fresh(catalog: Catalog) -> BillOfMaterials:
    """The BOM built with nothing kept from another catalog."""
    bom_module._items_cache.clear()
    return build_bom(DESIGN, catalog)


def _link(catalog: Catalog, sku: str, **change: object) -> Catalog:
    return replace(
        catalog,
        links=tuple(replace(lk, **change) if lk.sku == sku else lk for lk in catalog.links),
    )


def _link_skus(bom: BillOfMaterials) -> set[tuple[str, int]]:
    return {(ln.sku, ln.quantity) for ln in bom.lines if ln.category in ("cable", "transceiver")}


def test_a_switch_price_cut_is_priced_at_the_cut() -> None:
    build_bom(DESIGN, CAT)
    cut = replace(
        CAT, switches=tuple(replace(s, price_cents=s.price_cents // 2) for s in CAT.switches)
    )

    bom = build_bom(DESIGN, cut)

    assert bom == _fresh(cut)
    assert bom.capex_cents < build_bom(DESIGN, CAT).capex_cents
    assert {ln.unit_price_cents for ln in bom.lines if ln.sku == "NDR-64"} == {1_800_000}


def test_a_cheaper_link_is_chosen_where_it_reaches() -> None:
    before = build_bom(DESIGN, CAT)
    cheap_aoc = _link(CAT, "IB-AOC-30M", price_cents=1_000)

    bom = build_bom(DESIGN, cheap_aoc)

    assert bom == _fresh(cheap_aoc)
    assert ("IB-AOC-30M", 300) in _link_skus(bom)  # its whole stock of 300
    assert "IB-AOC-30M" not in {sku for sku, _ in _link_skus(before)}


def test_a_link_stock_change_chooses_the_links_again() -> None:
    cheap_aoc = _link(CAT, "IB-AOC-30M", price_cents=1_000)
    build_bom(DESIGN, cheap_aoc)
    unlimited = _link(
        cheap_aoc,
        "IB-AOC-30M",
        availability=replace(
            next(lk for lk in CAT.links if lk.sku == "IB-AOC-30M").availability, stock_units=None
        ),
    )

    bom = build_bom(DESIGN, unlimited)

    assert bom == _fresh(unlimited)
    assert ("IB-AOC-30M", 300) not in _link_skus(bom)
