"""Twin-port parts are bought whole per switch, not per link group.

A twin-port module (MMA4Z00-NS: one OSFP module for two 400G ports of a Quantum-2 twin-port
cage) or a splitter's twin-port end sits in one cage of one switch, so a switch with an odd
number of a group's link ends leaves half a part empty: the group needs the sum over its
switches of ceil(ends / 2), more than ceil(all ends / 2) (docs/topology.md, "Whole modules").
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog import load_catalog
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.layout import missing_modules, whole_modules
from optimizer.topology.plan import physical_plan

NDR = load_catalog(Path(__file__).resolve().parents[1] / "catalogs" / "infiniband-ndr")


def _design(nodes: int, topology: str) -> Design:
    return Design(
        server_sku="SYS-8125GS-TNHR",
        nodes=nodes,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=8,
        fabric="infiniband",
        topology=topology,
        switch_skus=("MQM9700-NS2F",),
    )


def _quantity(bom: BillOfMaterials, group: str, sku: str) -> int:
    return sum(ln.quantity for ln in bom.lines if ln.tier == group and ln.sku == sku)


def _switches(design: Design) -> dict[str, int]:
    return {d.tier: d.quantity for d in physical_plan(design, NDR).switches}


def test_twin_port_modules_are_bought_per_switch_on_an_odd_spine() -> None:
    # 130 nodes x 8 NICs: 33 leaves x 32 uplinks = 1,056 leaf-spine links over 32 spines of
    # 33 ends each (odd): each spine needs 17 modules, each leaf 16 (1,072, not 1,056).
    design = _design(130, "fat_tree")
    tiers = _switches(design)
    links = tiers["leaf"] * 32
    assert links % tiers["spine"] == 0 and (links // tiers["spine"]) % 2 == 1
    per_switch = tiers["leaf"] * 16 + tiers["spine"] * (links // tiers["spine"] + 1) // 2
    bom = build_bom(design, NDR)
    assert _quantity(bom, "leaf-spine", "MMA4Z00-NS") == per_switch > links


def test_check_bom_accepts_whole_modules_per_switch_and_refuses_a_per_group_count() -> None:
    design = _design(130, "fat_tree")
    bom = build_bom(design, NDR)
    assert check_bom(design, bom, NDR) == []
    fewer = tuple(
        dataclasses.replace(ln, quantity=32 * 33)  # ceil(1,056 ends / 2) per leaf-spine side
        if ln.tier == "leaf-spine" and ln.sku == "MMA4Z00-NS"
        else ln
        for ln in bom.lines
    )
    short = dataclasses.replace(bom, lines=fewer)
    assert "optic-ports" in {v.code for v in check_bom(design, short, NDR)}


def test_rail_splitters_pair_nics_on_the_same_rail_leaf() -> None:
    # 11 nodes x 8 rails: one leaf per rail with 11 NICs, each needing 6 splitters: 48, not 44.
    design = _design(11, "rail_optimized")
    bom = build_bom(design, NDR)
    splitters = sum(
        ln.quantity for ln in bom.lines if ln.tier == "node-leaf" and ln.category == "cable"
    )
    assert splitters == 8 * 6
    assert check_bom(design, bom, NDR) == []


def test_a_spare_port_shares_its_cage_with_a_link_of_the_same_part() -> None:
    """512 single-NIC nodes on 11 leaves at 3:1 (six with an odd count): the MIP put all six
    spare ports on twin modules that carried two links between them, a mix no cabling has,
    and the answer failed its own check ("a whole transceiver module is spare"); every
    twin-port module at a leaf now carries a link (as many host modules as switch modules)."""
    request = optimize_pb2.OptimizeRequest(
        catalog="infiniband-ndr",
        top_k=1,
        workload=estimate_pb2.Workload(model="llama3-70b", training_tokens=1e12),
        constraints=optimize_pb2.Constraints(target_training_hours=100, max_lead_time_days=60),
        allowed_vendors=["generic", "Supermicro", "NVIDIA"],
    )
    design = api.optimize(request).designs[0]
    optics = {
        line.sku: line.quantity
        for line in design.bom
        if line.category == "transceiver" and line.tier == "node-leaf"
    }
    assert optics.get("MMA4Z00-NS", 0) <= optics.get("MMA4Z00-NS400", 0)


def test_nodes_fill_the_leaves_in_order_so_whole_nodes_leave_no_cage_half_empty() -> None:
    """1,024 nodes x 2 NICs on a 3:1 fat-tree: 42 leaves of 48 ends and one of 32, all even,
    so 1,024 splitters (one a node). Spread evenly (47 or 48 a leaf), eight leaves each had
    a cage half empty and the main job's BOM listed 1,032."""
    design = dataclasses.replace(_design(1024, "fat_tree"), nics_per_node=2, oversubscription=3.0)
    bom = build_bom(design, NDR)
    splitters = sum(
        ln.quantity for ln in bom.lines if ln.tier == "node-leaf" and ln.category == "cable"
    )
    assert splitters == 1024
    assert check_bom(design, bom, NDR) == []


def test_the_modules_per_switch_rounding_adds_may_go_to_any_caged_part_in_use() -> None:
    """Two twin-port SKUs share a group's switch cages, 2 links each, and the switches leave
    2 ports spare: one module more than each SKU's own rounding, on either SKU (the
    exhaustive oracle tries both; the builder takes the MIP's choice or the cheapest)."""
    ports, per_module = {"A": 2, "B": 2}, {"A": 2, "B": 2}
    assert missing_modules(ports, per_module, {"A", "B"}, 2) == (("A", "B"), 1)
    assert missing_modules(ports, per_module, {"A", "B"}, 0) == (("A", "B"), 0)
    assert missing_modules(ports, per_module, {"B"}, 2) == (("B",), 1)
    prices = {"A": 900, "B": 1_250}
    assert whole_modules(ports, per_module, {"A", "B"}, 2, prices) == {"A": 2, "B": 1}
    assert whole_modules(ports, per_module, {"A", "B"}, 2, prices, {"B": 1}) == {"A": 1, "B": 2}


ROCE = load_catalog(Path(__file__).resolve().parents[1] / "catalogs" / "roce-spectrum")


def _thor2_rails(nodes: int) -> Design:
    """Thor2 400G NICs, 4 per node, on 4 rail leaves of one-port 800G OSFP800 cages: each leaf
    holds ``nodes`` links, far below its 64 cages, so the tier is not broken out."""
    return Design(
        server_sku="SYS-A22GA-NBRT",
        nodes=nodes,
        nic_sku="BCM957608-P1400GDF",
        nics_per_node=4,
        fabric="roce",
        topology="rail_optimized",
        switch_skus=("AS9817-64O",),
        oversubscription=3.0,
    )


def test_twin_port_modules_in_one_port_cages_are_bought_per_switch_too() -> None:
    """docs/cli.md's 24-GPU rank 2: 3 nodes on 4 rail leaves, 3 links each. A 2 x 400G module
    sits in one leaf's cage, so each leaf needs 2 (8), where the group's ceil(12 / 2) = 6 left
    every leaf a link without a module."""
    design = _thor2_rails(3)
    (node_leaf,) = [d for d in physical_plan(design, ROCE).links if d.group == "node-leaf"]
    assert "@" not in node_leaf.link_ends[1]  # a one-port cage, not broken out
    bom = build_bom(design, ROCE)
    assert _quantity(bom, "node-leaf", "OSFP-800G-2xSR4") == 4 * 2
    assert check_bom(design, bom, ROCE) == []


def test_check_bom_refuses_a_per_group_count_of_modules_in_one_port_cages() -> None:
    design = _thor2_rails(3)
    bom = build_bom(design, ROCE)
    fewer = tuple(
        dataclasses.replace(ln, quantity=6) if ln.sku == "OSFP-800G-2xSR4" else ln
        for ln in bom.lines
    )
    short = dataclasses.replace(bom, lines=fewer)
    assert "optic-ports" in {v.code for v in check_bom(design, short, ROCE)}


def test_optics_mixed_with_splitters_may_leave_a_cage_half_empty_on_every_odd_switch() -> None:
    # gen-2026 stocks 300 NDR splitters: 10 GB200 racks (720 NICs) on a dragonfly take them
    # and 120 optical links; 11 or 12 NIC links on each of 64 routers, 48 of them odd: 84
    # twin-port modules, not the 60 of 120 ends nor the 64 that 120 optical links alone,
    # spread evenly, would leave. A splitter's wide end fills a twin-port cage with two NIC links,
    # so a router's optics are as odd as its links; the builder buys whole modules per router
    # for that, and the check allowed only what the optical links alone, spread evenly, leave
    # (it refused every such design: "a whole transceiver module is spare").
    gen = load_catalog(Path(__file__).resolve().parents[1] / "catalogs" / "gen-2026")
    design = Design(
        server_sku="GB200-NVL72",
        nodes=10,
        nic_sku="MCX75310AAS-NEAT",
        nics_per_node=72,
        fabric="infiniband",
        topology="dragonfly",
        switch_skus=("MQM9700-NS2F",),
    )
    bom = build_bom(design, gen)
    optical = _quantity(bom, "node-leaf", "MMA4Z00-NS400")  # host-side: one per optical link
    splitters = _quantity(bom, "node-leaf", "NDR-AOC-800G-2x400G-30M")
    assert splitters and optical and optical % 2 == 0
    assert _quantity(bom, "node-leaf", "MMA4Z00-NS") > optical // 2
    assert check_bom(design, bom, gen) == []
