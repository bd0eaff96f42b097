"""Mixed speeds on 800G-port switches: leaves 400G down (breakout) and 800G up (issue 16).

An SN5600 port is 800G or, broken out, 2 x 400G (hardware.md section 3). A port broken out
carries two 400G links, never an 800G and a 400G link at once, so a leaf with d 400G
downlinks and m 800G uplinks uses ceil(d/2) + m of its ports.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan

CATALOG = load_catalog(Path(__file__).parent / "data" / "fabric_800g")


def _mixed(nodes: int, nic: str = "CX7-1x400") -> Design:
    return Design(
        server_sku="HGX-B300-8GPU",
        nodes=nodes,
        nic_sku=nic,
        nics_per_node=8,
        fabric="roce",
        topology="fat_tree",
        switch_skus=("SN5600",),
    )


def _codes(design: Design, bom: BillOfMaterials) -> set[str]:
    return {v.code for v in check_bom(design, bom, CATALOG)}


def _physical_ports(plan_design: Design) -> dict[str, int]:
    """Whole 800G ports each tier's switches use: 400G links two to a port, 800G one each."""
    plan = physical_plan(plan_design, CATALOG)
    used: dict[str, int] = {}
    for tier in ("leaf", "spine"):
        ports = 0
        for link in plan.links:
            ends = {"node-leaf": {"leaf": 1}, "leaf-spine": {"leaf": 1, "spine": 1}}
            on_tier = ends[link.group].get(tier, 0) * link.count
            ports += math.ceil(on_tier * link.speed_gbps / 800)
        used[tier] = ports
    return used


def test_a_leaf_runs_400g_down_by_breakout_and_800g_up() -> None:
    plan = physical_plan(_mixed(64), CATALOG)
    assert {(d.group, d.count, d.speed_gbps) for d in plan.links} == {
        ("node-leaf", 512, 400),
        ("leaf-spine", 256, 800),
    }
    assert {d.tier: (d.quantity, d.ports_per_switch) for d in plan.switches} == {
        "leaf": (8, 128),  # 64 ports x 2 lanes of 400G
        "spine": (4, 128),
    }


def test_the_mixed_leaf_uses_every_physical_port_once() -> None:
    # 8 leaves x 64 ports: 256 ports broken out for 512 NICs + 256 ports at 800G up.
    assert _physical_ports(_mixed(64)) == {"leaf": 512, "spine": 256}


def test_a_mixed_speed_bom_verifies() -> None:
    design = _mixed(64)
    assert check_bom(design, build_bom(design, CATALOG), CATALOG) == []


def test_check_bom_refuses_an_800g_link_on_a_broken_out_host_port() -> None:
    design = _mixed(64)
    bom = build_bom(design, CATALOG)
    lines = (
        *bom.lines,
        dataclasses.replace(
            next(ln for ln in bom.lines if ln.tier == "leaf-spine" and ln.category == "fiber"),
            category="cable",
            sku="DAC-800G-3M",
            quantity=1,
            tier="node-leaf",
        ),
    )
    assert "speed" in _codes(design, dataclasses.replace(bom, lines=lines))


def test_check_bom_counts_both_speeds_against_the_leaf_ports() -> None:
    design = _mixed(64)
    bom = build_bom(design, CATALOG)
    # 6 leaves instead of 8: 512 x 400G down + 256 x 800G up need 1,024 lanes, 6 x 128 = 768;
    # the 512 down ends spread 86, 86, 85, 85, 85, 85 over the 6 leaves, and each of the four
    # odd leaves leaves half a twin-port module's cage empty: 1,028.
    lines = tuple(
        dataclasses.replace(ln, quantity=6) if ln.category == "switch" and ln.tier == "leaf" else ln
        for ln in bom.lines
    )
    violations = check_bom(design, dataclasses.replace(bom, lines=lines), CATALOG)
    ports = [v.message for v in violations if v.code == "switch-ports"]
    assert ports == [
        "leaf tier uses 1028 ports at 400G (an 800G link takes 2), its 6 SN5600 switches "
        "have 768 (64 x 800G ports each, broken out 2 x 400G)"
    ]


@pytest.mark.parametrize("ports", [32, 64])
def test_counting_400g_lanes_is_counting_whole_ports_when_uplinks_take_whole_ports(
    ports: int,
) -> None:
    # Why check_bom counts a tier in 400G lanes (2 per port): d lanes down and m whole 800G
    # ports up fit exactly when ceil(d/2) + m <= ports, for every split of the switch.
    for m in range(ports + 1):
        for d in range(2 * ports + 1):
            assert (d + 2 * m <= 2 * ports) == (math.ceil(d / 2) + m <= ports)
