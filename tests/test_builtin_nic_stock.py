"""A server's built-in NICs come with the server: they never draw on the NIC row's stock, in
the greedy BOM search (search.standalone_bom), the MIP's stock rows and check_bom alike
(issue 13 review item 2: standalone_bom counted a DGX's eight ConnectX-7 against the NIC
row's stock, so a design the MIP and check_bom accept was dropped)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.optimize.formulation import ordered_quantities, over_stock, stock_limits
from optimizer.optimize.search import standalone_bom
from optimizer.topology.bom import build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
NIC = "MCX75310AAS-NEAT"  # the DGX H100's built-in ConnectX-7
NIC_STOCK = 4  # fewer than the 16 two DGX H100 ship with


def _catalog_with_nic_stock(units: int) -> Catalog:
    ndr = load_catalog(CATALOGS / "infiniband-ndr")
    nics = tuple(
        dataclasses.replace(n, availability=dataclasses.replace(n.availability, stock_units=units))
        if n.sku == NIC
        else n
        for n in ndr.nics
    )
    return dataclasses.replace(ndr, nics=nics)


CATALOG = _catalog_with_nic_stock(NIC_STOCK)


def _design(server: str) -> Design:
    return Design(server, 2, NIC, 8, "infiniband", "single_switch", 1.0, ("MQM9700-NS2F",))


def test_two_dgx_h100_are_buildable_with_four_of_their_nic_in_stock() -> None:
    design = _design("DGX-H100")
    bom = standalone_bom(design, CATALOG, stock_limits(CATALOG))
    assert bom is not None
    assert [v for v in check_bom(design, bom, CATALOG) if v.code == "stock"] == []


def test_built_in_nics_are_not_ordered_from_stock() -> None:
    design = _design("DGX-H100")
    bom = build_bom(design, CATALOG)
    server = next(s for s in CATALOG.servers if s.sku == "DGX-H100")
    assert sum(ln.quantity for ln in bom.lines if ln.sku == NIC) == 16
    assert NIC not in ordered_quantities(bom, server)
    assert not over_stock(bom, stock_limits(CATALOG), server)


def test_the_same_nics_bought_as_add_ons_are_over_stock() -> None:
    design = _design("SYS-8125GS-TNHR")  # no built-in NICs: 16 ordered, 4 in stock
    assert standalone_bom(design, CATALOG, stock_limits(CATALOG)) is None
    bom = build_bom(design, CATALOG)
    assert [v for v in check_bom(design, bom, CATALOG) if v.code == "stock"]
