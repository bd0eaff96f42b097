"""800G endpoints end to end: ConnectX-8 XDR NICs on Quantum-X800 Q3400 switches (issue 16).

Sources (the fixture tests/data/fabric_800g cites them per row): hardware.md section 3, the
Q3400-RA is 144 x 800G XDR from 72 twin-port OSFP cages; section 4.1, XDR has no passive
DAC at 200G/lane (NVIDIA uses linear active copper) and no multimode optics; section 5, the
DGX B300 SuperPOD on Q3400 (72 nodes per SU: 8 leaves, 4 spines, 576 cables per tier; 2, 4,
8 and 18 SU: 16/8, 32/18, 64/36, 144/72 leaves/spines).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.errors import InvalidInput
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan

CATALOG = load_catalog(Path(__file__).parent / "data" / "fabric_800g")
XDR_NIC = "CX8-XDR-1x800"
TWIN_1600 = "XDR-1.6T-2xDR4-TWIN"
FLAT_800 = "XDR-800G-DR4-FLAT"


def _xdr(nodes: int, nics_per_node: int = 8, topology: str = "rail_optimized") -> Design:
    return Design(
        server_sku="HGX-B300-8GPU",
        nodes=nodes,
        nic_sku=XDR_NIC,
        nics_per_node=nics_per_node,
        fabric="infiniband",
        topology=topology,
        switch_skus=("Q3400-RA",),
    )


def _qty(bom: BillOfMaterials, sku: str, tier: str) -> int:
    return sum(ln.quantity for ln in bom.lines if ln.sku == sku and ln.tier == tier)


@pytest.mark.parametrize(
    ("scalable_units", "leaves", "spines"),
    [(1, 8, 4), (2, 16, 8), (4, 32, 18), (8, 64, 36), (18, 144, 72)],
)
def test_an_xdr_rail_fabric_reproduces_the_b300_superpod_switch_counts(
    scalable_units: int, leaves: int, spines: int
) -> None:
    plan = physical_plan(_xdr(72 * scalable_units), CATALOG)
    counts = {d.tier: d.quantity for d in plan.switches}
    assert counts == {"leaf": leaves, "spine": spines}
    assert all(d.ports_per_switch == 144 for d in plan.switches)  # 800G ports, no breakout


def test_one_b300_scalable_unit_cables_576_links_per_tier_at_800g() -> None:
    plan = physical_plan(_xdr(72), CATALOG)
    assert {(d.group, d.count, d.speed_gbps) for d in plan.links} == {
        ("node-leaf", 576, 800),
        ("leaf-spine", 576, 800),
    }


def test_an_xdr_link_is_never_a_passive_dac() -> None:
    # One node on one leaf: in-rack links, which a 400G fabric would build from DAC.
    bom = build_bom(_xdr(1, topology="fat_tree"), CATALOG)
    kinds = {
        next(lk.kind for lk in CATALOG.links if lk.sku == ln.sku)
        for ln in bom.lines
        if ln.category == "cable"
    }
    assert kinds == {"aec"}  # linear active copper
    assert check_bom(_xdr(1, topology="fat_tree"), bom, CATALOG) == []


def test_a_1_6t_twin_port_switch_module_serves_two_800g_nic_ends() -> None:
    # 3 nodes x 8 NICs = 24 optical node-leaf links: 24 flat host modules, 12 twin modules.
    design = _xdr(3, topology="fat_tree")
    bom = build_bom(design, CATALOG)
    assert _qty(bom, FLAT_800, "node-leaf") == 24
    assert _qty(bom, TWIN_1600, "node-leaf") == 12
    assert check_bom(design, bom, CATALOG) == []


def test_leaf_spine_optics_at_800g_are_twin_port_halves_at_both_ends() -> None:
    design = _xdr(72)
    bom = build_bom(design, CATALOG)
    assert _qty(bom, TWIN_1600, "leaf-spine") == 576  # 1,152 switch ports, two per module
    assert _qty(bom, FLAT_800, "leaf-spine") == 0
    assert check_bom(design, bom, CATALOG) == []


def test_check_bom_counts_a_missing_twin_module_as_uncovered_800g_ends() -> None:
    design = _xdr(3, topology="fat_tree")
    bom = build_bom(design, CATALOG)
    lines = tuple(
        dataclasses.replace(ln, quantity=ln.quantity - 1)
        if ln.sku == TWIN_1600 and ln.tier == "node-leaf"
        else ln
        for ln in bom.lines
    )
    codes = {v.code for v in check_bom(design, dataclasses.replace(bom, lines=lines), CATALOG)}
    assert "optic-ports" in codes


def test_a_400g_nic_is_refused_on_a_switch_without_breakout() -> None:
    design = dataclasses.replace(_xdr(2, topology="fat_tree"), nic_sku="CX7-1x400")
    with pytest.raises(InvalidInput, match="cannot serve") as info:
        physical_plan(design, CATALOG)
    assert info.value.field == "design.switch_skus"
