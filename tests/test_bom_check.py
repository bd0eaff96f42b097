"""check_bom rejects each hand-broken BOM with the violation that names what broke."""

from __future__ import annotations

import dataclasses

import pytest

from optimizer.topology.bom import BillOfMaterials, BomLine, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from tests.topology_fixtures import forwarding_catalog, topology_catalog

CAT = topology_catalog(aoc_stock=300)
DESIGN = Design(
    "SRV-H100", 64, "CX7-400", 8, "infiniband", "rail_optimized", switch_skus=("NDR-64",)
)
BOM = build_bom(DESIGN, CAT)


def _with_lines(lines: list[BomLine], bom: BillOfMaterials = BOM) -> BillOfMaterials:
    """The BOM with ``lines``, its totals recomputed so only the line change is wrong."""
    return dataclasses.replace(
        bom,
        lines=tuple(lines),
        capex_cents=sum(ln.extended_price_cents for ln in lines),
        network_cents=sum(ln.extended_price_cents for ln in lines if ln.category != "server"),
        power_kw=sum(ln.power_kw for ln in lines),
    )


def _line(pred) -> int:
    return next(i for i, ln in enumerate(BOM.lines) if pred(ln))


def _replace(index: int, **changes) -> BillOfMaterials:
    lines = list(BOM.lines)
    line = dataclasses.replace(lines[index], **changes)
    if "quantity" in changes or "unit_price_cents" in changes:
        line = dataclasses.replace(line, extended_price_cents=line.unit_price_cents * line.quantity)
    lines[index] = line
    return _with_lines(lines)


def _codes(bom: BillOfMaterials, design: Design = DESIGN) -> set[str]:
    return {v.code for v in check_bom(design, bom, CAT)}


def test_the_reference_bom_is_sound():
    assert check_bom(DESIGN, BOM, CAT) == []


def test_a_missing_spine_is_a_switch_count_violation():
    spine = _line(lambda ln: ln.tier == "spine")
    assert _codes(_replace(spine, quantity=BOM.lines[spine].quantity - 1)) == {
        "switch-count",
        "switch-ports",
    }


def test_too_few_leaves_overflow_their_ports():
    leaf = _line(lambda ln: ln.tier == "leaf")
    assert "switch-ports" in _codes(_replace(leaf, quantity=8))


def test_a_missing_server_is_a_server_count_violation():
    assert _codes(_replace(_line(lambda ln: ln.category == "server"), quantity=63)) == {
        "server-count"
    }


def test_a_missing_nic_is_a_nic_count_violation():
    assert _codes(_replace(_line(lambda ln: ln.category == "nic"), quantity=511)) == {"nic-count"}


def test_dropping_the_node_links_leaves_endpoints_unlinked():
    lines = [ln for ln in BOM.lines if ln.tier != "node-leaf"]
    assert _codes(_with_lines(lines)) == {"endpoint-unlinked", "nic-uncabled"}


def test_dropping_the_uplinks_is_a_link_count_violation():
    lines = [ln for ln in BOM.lines if ln.tier != "leaf-spine"]
    assert _codes(_with_lines(lines)) == {"link-count"}


def test_copper_on_a_long_group_is_a_reach_violation():
    lines = [ln for ln in BOM.lines if ln.tier != "leaf-spine"]
    uplinks = (
        sum(
            ln.quantity
            for ln in BOM.lines
            if ln.tier == "leaf-spine" and ln.category == "transceiver"
        )
        // 2
    )
    length = next(ln.length_m for ln in BOM.lines if ln.tier == "leaf-spine")
    lines.append(
        BomLine(
            "cable",
            "IB-DAC-3M",
            "Acme",
            uplinks,
            18_000,
            uplinks * 18_000,
            "leaf-spine",
            0.0,
            0,
            "test",
            length,
        )
    )
    assert _codes(_with_lines(lines)) == {"reach"}


def test_an_ethernet_cable_in_an_infiniband_fabric_is_a_protocol_violation():
    lines = [ln for ln in BOM.lines if ln.tier != "leaf-spine"]
    uplinks = 512
    lines.append(
        BomLine(
            "cable",
            "ETH-AOC-50M",
            "Acme",
            uplinks,
            80_000,
            uplinks * 80_000,
            "leaf-spine",
            0.0,
            0,
            "test",
            9.0,
        )
    )
    assert _codes(_with_lines(lines)) == {"protocol"}


def test_an_ethernet_switch_in_an_infiniband_fabric_is_a_protocol_violation():
    spine = _line(lambda ln: ln.tier == "spine")
    broken = _replace(spine, sku="SN5600", unit_price_cents=5_500_000)
    assert {"protocol", "switch-sku"} <= _codes(broken)


def test_a_price_ignoring_the_volume_break_is_a_unit_price_violation():
    design = dataclasses.replace(DESIGN, nodes=128)
    bom = build_bom(design, CAT)
    index = next(i for i, ln in enumerate(bom.lines) if ln.category == "server")
    assert bom.lines[index].unit_price_cents == 29_100_000  # the 128-unit break applies
    lines = list(bom.lines)
    lines[index] = dataclasses.replace(
        lines[index], unit_price_cents=30_000_000, extended_price_cents=128 * 30_000_000
    )
    assert {v.code for v in check_bom(design, _with_lines(lines, bom), CAT)} == {"unit-price"}


def test_a_wrong_extended_price_is_an_extended_price_violation():
    index = _line(lambda ln: ln.category == "nic")
    lines = list(BOM.lines)
    lines[index] = dataclasses.replace(
        lines[index], extended_price_cents=lines[index].extended_price_cents + 1
    )
    assert _codes(_with_lines(lines)) == {"extended-price"}


def test_capex_off_by_one_cent_is_a_capex_violation():
    assert _codes(dataclasses.replace(BOM, capex_cents=BOM.capex_cents + 1)) == {"capex"}


def test_a_wrong_network_total_is_a_network_cents_violation():
    assert _codes(dataclasses.replace(BOM, network_cents=BOM.network_cents - 100)) == {
        "network-cents"
    }


def test_an_odd_transceiver_count_does_not_pair_up():
    index = _line(lambda ln: ln.category == "transceiver" and ln.tier == "leaf-spine")
    assert "optic-ports" in _codes(_replace(index, quantity=BOM.lines[index].quantity + 1))


def test_short_fiber_is_a_fiber_length_violation():
    index = _line(lambda ln: ln.category == "fiber")
    assert _codes(_replace(index, quantity=BOM.lines[index].quantity - 1)) == {"fiber-length"}


def test_a_line_listed_for_a_shorter_length_than_the_layout_is_a_length_violation():
    index = _line(lambda ln: ln.tier == "leaf-spine")
    assert _codes(_replace(index, length_m=1.0)) == {"length"}


def test_ordering_beyond_stock_is_a_stock_violation():
    lines = [ln for ln in BOM.lines if ln.tier != "node-leaf"]
    length = next(ln.length_m for ln in BOM.lines if ln.tier == "node-leaf")
    lines.append(
        BomLine(
            "cable",
            "IB-AOC-30M",
            "Acme",
            512,
            95_000,
            512 * 95_000,
            "node-leaf",
            512 * 0.016,
            0,
            "test",
            length,
        )
    )
    assert _codes(_with_lines(lines)) == {"stock"}


def test_an_unknown_sku_is_reported():
    lines = [*BOM.lines, BomLine("cable", "MYSTERY", "?", 1, 1, 1, "node-leaf", 0.0, 0, "", 1.0)]
    assert "unknown-sku" in _codes(_with_lines(lines))


def test_a_part_listed_under_the_wrong_category_is_reported():
    index = _line(lambda ln: ln.category == "nic")
    assert "category" in _codes(_replace(index, category="cable"))


def test_a_wrong_rack_count_is_a_racks_violation():
    assert _codes(dataclasses.replace(BOM, racks=BOM.racks - 1)) == {"racks"}


def test_a_wrong_power_total_is_a_power_violation():
    assert _codes(dataclasses.replace(BOM, power_kw=BOM.power_kw - 1.0)) == {"power"}


def test_more_nics_than_slots_is_a_nic_slots_violation():
    design = dataclasses.replace(DESIGN, nics_per_node=9)
    assert {"nic-slots", "nic-count"} <= {v.code for v in check_bom(design, BOM, CAT)}


def test_a_switch_tier_the_topology_lacks_is_a_switch_count_violation():
    extra = BomLine("switch", "NDR-64", "Acme", 4, 3_600_000, 4 * 3_600_000, "core", 5.2, 4, "test")
    assert "switch-count" in _codes(_with_lines([*BOM.lines, extra]))


@pytest.mark.parametrize("topology", ["fat_tree", "dragonfly", "single_switch"])
def test_removing_any_switch_line_is_caught_for_every_switched_family(topology):
    design = dataclasses.replace(
        DESIGN, topology=topology, nodes=8 if topology == "single_switch" else 64
    )
    bom = build_bom(design, CAT)
    lines = [ln for ln in bom.lines if ln.category != "switch"]
    assert "switch-count" in {v.code for v in check_bom(design, _with_lines(lines, bom), CAT)}


def _without(bom: BillOfMaterials, tier: str) -> BillOfMaterials:
    return _with_lines([ln for ln in bom.lines if ln.tier != tier], bom)


def test_a_three_tier_tree_without_its_core_is_caught():
    design = dataclasses.replace(DESIGN, nodes=512)
    bom = build_bom(design, CAT)
    codes = {v.code for v in check_bom(design, _without(bom, "core"), CAT)}
    assert "switch-count" in codes


def test_a_dragonfly_without_global_links_is_caught():
    design = dataclasses.replace(DESIGN, topology="dragonfly", nodes=128)
    bom = build_bom(design, CAT)
    assert {v.code for v in check_bom(design, _without(bom, "global"), CAT)} == {"link-count"}


def test_a_torus_without_its_links_is_caught():
    design = dataclasses.replace(DESIGN, topology="torus", switch_skus=(), nics_per_node=6)
    cat = forwarding_catalog(CAT)
    bom = build_bom(design, cat)
    codes = {v.code for v in check_bom(design, _without(bom, "torus"), cat)}
    assert codes == {"link-count", "nic-uncabled"}
