"""Uplinks at switch speed: where the switch port is a multiple of the NIC speed (800G port,
400G NIC, breakout 2), switch-to-switch links run at the port speed (issue 13, defect 9)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.errors import InvalidInput
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.fat_tree import size_fat_tree, uplink_lanes
from optimizer.topology.layout import Layout
from optimizer.topology.plan import physical_plan

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
ROCE = load_catalog(CATALOGS / "roce-spectrum")
# A compact hall: every link is short enough for copper, so the cable choice shows the speed.
COMPACT = Layout(
    rack_width_m=0.1, row_pitch_m=0.1, vertical_run_m=0.1, racks_per_row=100, in_rack_link_m=2.0
)


def _design(nodes: int, **kw: object) -> Design:
    base: dict[str, object] = {
        "server_sku": "SYS-8125GS-TNHR",
        "nodes": nodes,
        "nic_sku": "MCX75310AAS-NEAT",
        "nics_per_node": 8,
        "fabric": "roce",
        "topology": "fat_tree",
        "switch_skus": ("SN5600",),
        "layout": COMPACT,
    }
    return Design(**{**base, **kw})  # type: ignore[arg-type]


def _qty(bom: BillOfMaterials, sku: str, tier: str) -> int:
    return sum(ln.quantity for ln in bom.lines if ln.sku == sku and ln.tier == tier)


def test_leaf_spine_links_run_at_the_800g_port_speed() -> None:
    # 32 nodes x 8 NICs = 256 ports at 400G: 4 leaves of 128 (64 down, 64 up), 2 spines.
    plan = physical_plan(_design(32), ROCE)
    speeds = {d.group: (d.count, d.speed_gbps) for d in plan.links}
    assert speeds["node-leaf"] == (256, 400)
    assert speeds["leaf-spine"] == (128, 800)  # 256 x 400G of uplink bandwidth as 128 x 800G
    bom = build_bom(_design(32), ROCE)
    assert _qty(bom, "DAC-800G-OSFP-3M", "leaf-spine") == 128
    assert check_bom(_design(32), bom, ROCE) == []


def test_without_800g_parts_uplinks_stay_at_the_nic_speed() -> None:
    no_800 = dataclasses.replace(
        ROCE, links=tuple(lk for lk in ROCE.links if lk.speed_gbps < 800 or lk.kind == "fiber")
    )
    plan = physical_plan(_design(32), no_800)
    assert {d.group: (d.count, d.speed_gbps) for d in plan.links}["leaf-spine"] == (256, 400)


def test_without_parts_that_fill_an_800g_port_its_breakout_cannot_be_built() -> None:
    """256 hosts on 800G leaves need 2 x 400G per cage: only an 800G part makes that split."""
    no_800 = dataclasses.replace(
        ROCE, links=tuple(lk for lk in ROCE.links if lk.speed_gbps < 800 or lk.kind == "fiber")
    )
    with pytest.raises(InvalidInput, match="fills a broken-out 800G switch port"):
        build_bom(_design(32), no_800)


def test_an_800g_cable_is_not_a_host_link() -> None:
    bom = build_bom(_design(32), ROCE)
    lines = tuple(
        dataclasses.replace(ln, sku="DAC-800G-OSFP-3M", quantity=128)
        if ln.tier == "node-leaf" and ln.category == "cable"
        else ln
        for ln in bom.lines
    )
    codes = {v.code for v in check_bom(_design(32), dataclasses.replace(bom, lines=lines), ROCE)}
    assert "speed" in codes


def test_uplinks_bundle_only_where_every_switch_pair_carries_whole_port_speed_links() -> None:
    two_tier = size_fat_tree(256, 128)  # 4 leaves x 64 uplinks over 2 spines: 32 per pair
    assert uplink_lanes(two_tier, "leaf-spine", {"leaf": 800, "spine": 800}, 400) == 2
    assert uplink_lanes(two_tier, "leaf-spine", {"leaf": 800, "spine": 400}, 400) == 1
    assert uplink_lanes(two_tier, "node-leaf", {"leaf": 800, "spine": 800}, 400) == 1
    three_tier = size_fat_tree(16_000, 128)  # each leaf reaches each pod spine once
    assert len(three_tier.tiers) == 3
    speeds = {"leaf": 800, "spine": 800, "core": 800}
    assert uplink_lanes(three_tier, "leaf-spine", speeds, 400) == 1
