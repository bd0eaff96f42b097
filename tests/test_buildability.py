"""Designs an architect would sign (issue 13, defects 1, 2, 3 and 5).

ConnectX HCAs and Ethernet NICs do not forward between ports, so a switchless torus of more
than two nodes cannot be built from them; every NIC port bought is cabled; a DGX comes with
its 8 ConnectX-7; a one-node cluster needs no fabric.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.errors import InvalidInput
from optimizer.optimize.candidates import EstimateCache, SearchSpace
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.result import OptimizeResult, RankedDesign
from optimizer.optimize.solve import optimize
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan
from optimizer.topology.sizing import size_network
from optimizer.workload.presets import preset
from tests.topology_fixtures import forwarding_catalog, topology_catalog

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"


@cache
def bundled(name: str) -> Catalog:
    return load_catalog(CATALOGS / name)


def _solve(
    catalog: str, workload: str, target_hours: float, tokens: float | None = None, **kw: object
) -> OptimizeResult:
    overrides = {} if tokens is None else {"training_tokens": tokens}
    constraints = Constraints(
        target_training_hours=target_hours,
        max_power_kw=kw.pop("max_power_kw", None),  # type: ignore[arg-type]
    )
    spec = OptimizeSpec(preset(workload, **overrides), constraints, **kw)  # type: ignore[arg-type]
    return optimize(bundled(catalog), spec)


def _nic_ports(bom: BillOfMaterials) -> int:
    return sum(ln.quantity for ln in bom.lines if ln.category == "nic")


def _nic_link_ends(bom: BillOfMaterials, catalog: Catalog) -> int:
    """NIC ports the BOM's links reach: node-leaf links end on one, torus links on two.

    A cable (DAC or AOC) is one link, a splitter one per narrow end (ports_per_module).
    A transceiver sits at one end: a host-side module is at
    a NIC port, a switch-side (twin-port) module at switch ports only, and a module that fits
    either side is one of a pair per link, the NIC end's on a node-leaf link and both ends'
    on a torus link.
    """
    sides = {lk.sku: lk.fits_side for lk in catalog.links}
    ports = {lk.sku: lk.module_ports for lk in catalog.links}
    total = 0.0
    for ln in bom.lines:
        if ln.category == "cable":
            total += ln.quantity * ports[ln.sku] * {"node-leaf": 1, "torus": 2}.get(ln.tier, 0)
        elif ln.category == "transceiver" and ln.tier in ("node-leaf", "torus"):
            side = sides[ln.sku]
            if side == "host" or ln.tier == "torus":
                total += ln.quantity
            elif side == "any":
                total += ln.quantity / 2
    return int(total)


def _switchless(d: RankedDesign) -> bool:
    return not any(ln.category == "switch" for ln in d.bom.lines)


# --- defects 1 and 2 on the README's main job ------------------------------------------------


@cache
def _main_job() -> OptimizeResult:
    return _solve("infiniband-ndr", "llama3-70b", 720)


def test_the_main_job_ranks_no_switchless_multi_node_design() -> None:
    designs = _main_job().designs
    assert designs
    assert not [d.design for d in designs if d.design.nodes > 1 and _switchless(d)]


def test_the_main_job_cables_every_nic_port_it_buys() -> None:
    """Every NIC port is reached; a splitter bought whole per leaf (its two narrow ends on
    two NICs of one leaf) leaves at most one narrow end spare per leaf."""
    for d in _main_job().designs:
        leaves = sum(ln.quantity for ln in d.bom.lines if ln.tier in ("leaf", "router"))
        ends = _nic_link_ends(d.bom, bundled("infiniband-ndr"))
        assert _nic_ports(d.bom) <= ends <= _nic_ports(d.bom) + leaves, d.design


# --- defect 3: built-in NICs -------------------------------------------------------------------


def test_dgx_b200_comes_with_its_eight_nics_at_zero_inside_the_server() -> None:
    result = _solve("infiniband-ndr", "llama3-8b", 336, tokens=1e12)
    dgx = [d for d in result.designs if d.design.server_sku == "DGX-B200"]
    assert dgx
    for d in dgx:
        nodes = d.design.nodes
        nics = [ln for ln in d.bom.lines if ln.category == "nic"]
        assert [(ln.sku, ln.quantity, ln.unit_price_cents) for ln in nics] == [
            ("MCX75310AAS-NEAT", 8 * nodes, 0)
        ]
        assert "included in its price" in nics[0].source
        server = next(ln for ln in d.bom.lines if ln.category == "server")
        assert server.unit_price_cents == 379_273_00
        assert d.bom.capex_cents == sum(ln.extended_price_cents for ln in d.bom.lines)


def test_a_server_with_built_in_nics_is_refused_with_others() -> None:
    design = Design(
        "DGX-B200", 4, "B3140H", 8, "infiniband", "single_switch", switch_skus=("MQM9790-NS2F",)
    )
    with pytest.raises(InvalidInput, match="ships with 8 x MCX75310AAS-NEAT") as e:
        physical_plan(design, bundled("infiniband-ndr"))
    assert e.value.field == "design.nic_sku"


def test_check_bom_accepts_zero_dollars_only_for_the_servers_built_in_nics() -> None:
    catalog = bundled("infiniband-ndr")
    design = Design(
        "SYS-8125GS-TNHR",
        4,
        "MCX75310AAS-NEAT",
        8,
        "infiniband",
        "single_switch",
        switch_skus=("MQM9790-NS2F",),
    )
    bom = build_bom(design, catalog)
    free = tuple(
        dataclasses.replace(ln, unit_price_cents=0, extended_price_cents=0)
        if ln.category == "nic"
        else ln
        for ln in bom.lines
    )
    capex = sum(ln.extended_price_cents for ln in free)
    network = sum(ln.extended_price_cents for ln in free if ln.category != "server")
    forged = dataclasses.replace(bom, lines=free, capex_cents=capex, network_cents=network)
    assert check_bom(design, bom, catalog) == []
    assert {v.code for v in check_bom(design, forged, catalog)} == {"unit-price"}


# --- defects 1 and 2 in check_bom --------------------------------------------------------------

CAT = topology_catalog()


def _torus(nodes: int, nics_per_node: int) -> Design:
    return Design("SRV-H100", nodes, "CX7-400", nics_per_node, "infiniband", "torus")


def test_check_bom_flags_a_switchless_four_node_torus_of_connectx_nics() -> None:
    design = _torus(4, 2)
    bom = build_bom(design, forwarding_catalog(CAT))  # hand-built: the builder would refuse
    codes = {v.code for v in check_bom(design, bom, CAT)}
    assert "no-forwarding" in codes
    assert check_bom(design, bom, forwarding_catalog(CAT)) == []


def test_check_bom_flags_a_torus_that_leaves_nic_ports_uncabled() -> None:
    design = _torus(64, 6)  # 4x4x4: 6 ports per node, all cabled
    catalog = forwarding_catalog(CAT)
    bom = build_bom(design, catalog)
    eight = dataclasses.replace(design, nics_per_node=8)
    lines = tuple(
        dataclasses.replace(ln, quantity=64 * 8, extended_price_cents=64 * 8 * ln.unit_price_cents)
        if ln.category == "nic"
        else ln
        for ln in bom.lines
    )
    capex = sum(ln.extended_price_cents for ln in lines)
    network = sum(ln.extended_price_cents for ln in lines if ln.category != "server")
    forged = dataclasses.replace(bom, lines=lines, capex_cents=capex, network_cents=network)
    codes = {v.code for v in check_bom(eight, forged, catalog)}
    assert "nic-uncabled" in codes


def test_a_torus_of_non_forwarding_nics_is_refused_beyond_two_nodes() -> None:
    with pytest.raises(InvalidInput, match="forwards between ports") as e:
        physical_plan(_torus(3, 2), CAT)
    assert e.value.field == "design.topology"


def test_two_nodes_back_to_back_cable_every_rail_to_the_peer() -> None:
    design = _torus(2, 8)
    plan = physical_plan(design, CAT)
    assert [(d.group, d.count) for d in plan.links] == [("torus", 8)]
    assert check_bom(design, build_bom(design, CAT), CAT) == []


def test_a_torus_is_refused_when_nics_per_node_would_leave_ports_uncabled() -> None:
    with pytest.raises(InvalidInput, match="uncabled") as e:
        physical_plan(_torus(64, 8), forwarding_catalog(CAT))  # 4x4x4 uses 6 of 8
    assert e.value.field == "nics_per_node"


def test_the_search_offers_a_non_forwarding_torus_only_back_to_back() -> None:
    spec = OptimizeSpec(preset("llama3-8b"), allowed_topologies=("torus",))
    keys = [k for k, _ in SearchSpace(bundled("infiniband-ndr"), spec).keys()]  # noqa: SIM118 - SearchSpace is not a mapping
    assert keys
    assert {k.max_nodes() for k in keys} == {2}


def test_the_search_offers_a_forwarding_torus_at_any_size() -> None:
    spec = OptimizeSpec(preset("llama3-8b"), allowed_topologies=("torus",))
    keys = [k for k, _ in SearchSpace(forwarding_catalog(CAT), spec).keys()]  # noqa: SIM118 - SearchSpace is not a mapping
    assert keys
    assert {k.max_nodes() for k in keys} == {None}


# --- defect 5: one-node clusters ---------------------------------------------------------------


def test_a_one_node_job_is_offered_without_a_fabric() -> None:
    result = _solve("infiniband-ndr", "bert-large", 24, tokens=4e10)
    one_node = [d for d in result.designs if not TOPOLOGIES.get(d.design.topology).scale_out]
    assert one_node
    for d in one_node:
        assert d.design.nodes == 1
        assert {ln.category for ln in d.bom.lines} <= {"server", "nic"}
        assert all(ln.unit_price_cents == 0 for ln in d.bom.lines if ln.category == "nic")
        assert check_bom(d.design, d.bom, bundled("infiniband-ndr")) == []
    assert any(_switchless(d) is False for d in result.designs)  # with a fabric as well


def test_a_one_node_job_under_fifteen_kilowatts_is_feasible() -> None:
    result = _solve("infiniband-ndr", "bert-large", 24, tokens=4e10, max_power_kw=15)
    assert result.designs
    best = result.designs[0]
    assert best.design.nodes == 1
    assert best.bom.power_kw <= 15
    assert best.bom.capex_cents <= 363_873_00


def test_require_fabric_leaves_only_fabric_designs() -> None:
    result = _solve("infiniband-ndr", "bert-large", 24, tokens=4e10, require_fabric=True)
    assert result.designs
    assert all(TOPOLOGIES.get(d.design.topology).scale_out for d in result.designs)
    assert all(not _switchless(d) for d in result.designs)


def test_a_dgx_alone_keeps_its_nics_as_spares_at_zero() -> None:
    design = Design("DGX-B200", 1, "MCX75310AAS-NEAT", 8, "infiniband", "single_node")
    catalog = bundled("infiniband-ndr")
    bom = build_bom(design, catalog)
    nic = next(ln for ln in bom.lines if ln.category == "nic")
    assert (nic.quantity, nic.unit_price_cents) == (8, 0)
    assert "spare" in nic.source
    assert bom.capex_cents == 379_273_00
    assert check_bom(design, bom, catalog) == []


def test_a_one_node_design_that_buys_nics_is_flagged() -> None:
    bare = Design("SRV-H100", 1, "", 0, "infiniband", "single_node")
    bom = build_bom(bare, CAT)
    assert [ln.category for ln in bom.lines] == ["server"]
    assert check_bom(bare, bom, CAT) == []
    with_nics = dataclasses.replace(bare, nic_sku="CX7-400", nics_per_node=8)
    with pytest.raises(InvalidInput, match="buys none"):
        physical_plan(with_nics, CAT)
    cabled = build_bom(
        Design("SRV-H100", 1, "CX7-400", 8, "infiniband", "single_switch", switch_skus=("NDR-64",)),
        CAT,
    )
    nic_line = next(ln for ln in cabled.lines if ln.category == "nic")
    forged = dataclasses.replace(
        bom,
        lines=(*bom.lines, nic_line),
        capex_cents=bom.capex_cents + nic_line.extended_price_cents,
        network_cents=nic_line.extended_price_cents,
    )
    assert "nic-uncabled" in {v.code for v in check_bom(bare, forged, CAT)}


def test_the_one_node_time_does_not_depend_on_the_nominal_network() -> None:
    catalog = bundled("infiniband-ndr")
    spec = OptimizeSpec(preset("bert-large", training_tokens=4e10))
    timer = EstimateCache(spec.workload, {s.sku: s for s in catalog.servers}, spec.confidence)
    alone = Design("SYS-8125GS-TNHR", 1, "", 0, "infiniband", "single_node")
    switched = Design(
        "SYS-8125GS-TNHR",
        1,
        "MCX75310AAS-NEAT",
        8,
        "infiniband",
        "single_switch",
        switch_skus=("MQM9790-NS2F",),
    )
    a = timer.reestimate(alone, physical_plan(alone, catalog))
    b = timer.reestimate(switched, physical_plan(switched, catalog))
    assert a is not None and b is not None
    assert a.training_time_hours == pytest.approx(b.training_time_hours, rel=1e-12)


def test_a_two_port_nic_line_says_why_its_second_port_is_spare() -> None:
    catalog = bundled("ethernet-budget")
    design = Design(
        "SYS-8125GS-TNHR", 2, "E810-CQDA2", 8, "ethernet", "single_switch", switch_skus=("SN4600C",)
    )
    bom = build_bom(design, catalog)
    nic = next(ln for ln in bom.lines if ln.category == "nic")
    assert "1 of 2 ports cabled per NIC, 1 spare" in nic.source
    assert check_bom(design, bom, catalog) == []
    silent = tuple(
        dataclasses.replace(ln, source="no word on ports") if ln.category == "nic" else ln
        for ln in bom.lines
    )
    codes = {v.code for v in check_bom(design, dataclasses.replace(bom, lines=silent), catalog)}
    assert codes == {"nic-uncabled"}


def test_the_one_node_family_refuses_several_nodes_with_the_field() -> None:
    with pytest.raises(InvalidInput, match="has one node") as e:
        size_network("single_node", 16, 0, rails=8)
    assert e.value.field == "nodes"
    assert size_network("single_node", 8, 0, rails=8).link_groups == ()


def test_the_one_node_explanation_names_no_fabric_and_no_nic() -> None:
    result = _solve("infiniband-ndr", "bert-large", 24, tokens=4e10)
    best = result.designs[0]
    assert best.design.topology == "single_node"
    assert best.explanation.startswith(
        "Rank 1: 1 x SYS-8125GS-TNHR (8 GPUs), single node without a scale-out fabric."
    )
