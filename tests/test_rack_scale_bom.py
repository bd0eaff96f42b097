"""A rack-scale system in the bill of materials and check_bom (issue 16, rackscale).

The fixture (tests/data/rack_scale_bom): one GB200 NVL72-like row bought whole (72 GPUs on 18
hosts of 4, 72 built-in ConnectX-7 400G, 132 kW, 48 U, liquid-only, $3.4M) with the small test
catalog's Quantum-2 switch and 400G links. Two racks on a fat-tree: 144 NICs to cable.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from optimizer.catalog import load_catalog
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.plan import physical_plan

CATALOG = load_catalog(Path(__file__).parent / "data" / "rack_scale_bom")
RACK = "GB200-NVL72"
NIC = "NIC-CX7-400"
RACK_PRICE_CENTS = 340_000_000


def rack_design(racks: int = 2, layout: Layout | None = None) -> Design:
    return Design(
        RACK,
        racks,
        NIC,
        72,
        "infiniband",
        "fat_tree",
        switch_skus=("SW-QM9790",),
        layout=layout or Layout(),
    )


def codes(design: Design, bom: BillOfMaterials) -> set[str]:
    return {v.code for v in check_bom(design, bom, CATALOG)}


def with_line(bom: BillOfMaterials, index: int, **changes: object) -> BillOfMaterials:
    """``bom`` with one line changed and its totals kept consistent (so only the change is
    a finding)."""
    line = bom.lines[index]
    changed = replace(line, **changes)  # type: ignore[arg-type]
    changed = replace(changed, extended_price_cents=changed.unit_price_cents * changed.quantity)
    lines = (*bom.lines[:index], changed, *bom.lines[index + 1 :])
    return replace(
        bom,
        lines=lines,
        capex_cents=sum(ln.extended_price_cents for ln in lines),
        network_cents=sum(ln.extended_price_cents for ln in lines if ln.category != "server"),
        power_kw=sum(ln.power_kw for ln in lines),
    )


def line_index(bom: BillOfMaterials, category: str, tier: str | None = None) -> int:
    return next(
        i
        for i, ln in enumerate(bom.lines)
        if ln.category == category and (tier is None or ln.tier == tier)
    )


def test_the_rack_is_one_line_quantity_racks_at_the_rack_price() -> None:
    bom = build_bom(rack_design(2), CATALOG)
    servers = [ln for ln in bom.lines if ln.category == "server"]
    assert [(ln.sku, ln.quantity, ln.unit_price_cents) for ln in servers] == [
        (RACK, 2, RACK_PRICE_CENTS)
    ]
    assert servers[0].power_kw == 264.0


def test_the_rack_line_says_its_nvlink_switch_trays_are_not_bought_separately() -> None:
    rack = next(ln for ln in build_bom(rack_design(), CATALOG).lines if ln.category == "server")
    assert "NVLink switch trays" in rack.source
    assert "not bought separately" in rack.source
    assert "18 hosts of 4" in rack.source


def test_the_built_in_nics_are_72_per_rack_at_zero_included_in_the_racks_price() -> None:
    bom = build_bom(rack_design(3), CATALOG)
    nics = [ln for ln in bom.lines if ln.category == "nic"]
    assert [(ln.sku, ln.quantity, ln.extended_price_cents) for ln in nics] == [(NIC, 216, 0)]
    assert "included in the rack's price" in nics[0].source


def test_every_nic_of_every_rack_has_a_node_leaf_link() -> None:
    plan = physical_plan(rack_design(3), CATALOG)
    node_leaf = next(d for d in plan.links if d.group == "node-leaf")
    assert node_leaf.count == 3 * 72


def test_the_nics_reach_leaves_in_a_network_rack_of_the_row() -> None:
    """A rack has no room for a leaf: the links span the row's racks, not the 3 m in-rack
    class a one-rack leaf span would give."""
    layout = Layout()
    plan = physical_plan(rack_design(4, layout), CATALOG)
    assert plan.placement.length_m("node-leaf") == layout.span_length_m(4)
    assert plan.placement.length_m("node-leaf") > layout.in_rack_link_m


def test_check_bom_passes_a_rack_scale_bom() -> None:
    design = rack_design(2)
    assert check_bom(design, build_bom(design, CATALOG), CATALOG) == []


def test_check_bom_flags_a_rack_nic_left_uncabled() -> None:
    design = rack_design(2)
    bom = build_bom(design, CATALOG)
    i = line_index(bom, "transceiver", "node-leaf")  # two modules a link: one link short
    found = check_bom(design, with_line(bom, i, quantity=bom.lines[i].quantity - 2), CATALOG)
    assert [v.message for v in found if v.code == "nic-uncabled"] == [
        "144 NIC ports bought, links reach 143: 1 uncabled"
    ]


def test_check_bom_flags_a_rack_over_the_stated_rack_power() -> None:
    bom = build_bom(rack_design(2), CATALOG)
    limited = rack_design(2, Layout(rack_power_kw=40.0, rack_power_stated=True))
    found = check_bom(limited, bom, CATALOG)
    assert [v.message for v in found if v.code == "rack-power"] == [
        "each GB200-NVL72 rack draws 132 kW, above the facility's 40 kW per rack (--max-rack-kw)"
    ]


def test_check_bom_holds_a_rack_to_the_power_its_line_lists() -> None:
    design = rack_design(2, Layout(rack_power_kw=150.0, rack_power_stated=True))
    bom = build_bom(design, CATALOG)
    assert codes(design, bom) == set()
    i = line_index(bom, "server")
    assert "rack-power" in codes(design, with_line(bom, i, power_kw=2 * 160.0))


def test_check_bom_flags_a_liquid_only_rack_in_an_air_facility() -> None:
    bom = build_bom(rack_design(2), CATALOG)
    in_air = rack_design(2, Layout(facility_cooling="air"))
    assert "cooling" in codes(in_air, bom)


def test_check_bom_flags_built_in_nics_short_of_72_per_rack() -> None:
    design = rack_design(2)
    bom = build_bom(design, CATALOG)
    i = line_index(bom, "nic")
    assert "builtin-nics" in codes(design, with_line(bom, i, quantity=143))


def test_check_bom_flags_a_nic_of_another_sku_than_the_rack_ships() -> None:
    design = rack_design(2)
    bom = build_bom(design, CATALOG)
    i = line_index(bom, "nic")
    found = check_bom(design, with_line(bom, i, sku="NIC-E810-100"), CATALOG)
    assert "NIC-E810-100 ordered for GB200-NVL72, which ships with its own 72 x NIC-CX7-400" in {
        v.message for v in found if v.code == "builtin-nics"
    }
