"""Physical plan: exact quantities, and refusals of parts that do not work together."""

from __future__ import annotations

import pytest

from optimizer.errors import InvalidInput
from optimizer.topology.design import Design
from optimizer.topology.plan import physical_plan
from tests.topology_fixtures import forwarding_catalog, topology_catalog

CAT = topology_catalog()


def _design(**kw) -> Design:
    base = {
        "server_sku": "SRV-H100",
        "nodes": 64,
        "nic_sku": "CX7-400",
        "nics_per_node": 8,
        "fabric": "infiniband",
        "topology": "rail_optimized",
        "switch_skus": ("NDR-64",),
    }
    return Design(**{**base, **kw})


def test_plan_lists_servers_nics_switches_and_link_demands():
    plan = physical_plan(_design(), CAT)
    assert (plan.servers.sku, plan.servers.quantity) == ("SRV-H100", 64)
    assert (plan.nics.sku, plan.nics.quantity) == ("CX7-400", 512)
    assert [(s.tier, s.quantity) for s in plan.switches] == [("leaf", 16), ("spine", 8)]
    assert [(d.group, d.count, d.speed_gbps) for d in plan.links] == [
        ("node-leaf", 512, 400),
        ("leaf-spine", 512, 400),
    ]


def test_plan_power_and_rack_units_add_up_from_the_parts():
    plan = physical_plan(_design(), CAT)
    assert plan.server_power_kw == pytest.approx(64 * 10.2)
    assert plan.nic_power_kw == pytest.approx(512 * 0.025)
    assert plan.switch_power_kw == pytest.approx(24 * 1.3)
    assert plan.rack_units == 64 * 8 + 24 * 1


def test_breakout_doubles_the_radix_and_halves_the_switches():
    ib = physical_plan(_design(nodes=128, topology="fat_tree"), CAT)
    eth = physical_plan(
        _design(nodes=128, topology="fat_tree", fabric="roce", switch_skus=("SN5600",)), CAT
    )
    assert sum(s.quantity for s in eth.switches) < sum(s.quantity for s in ib.switches)
    assert eth.switches[0].ports_per_switch == 128


@pytest.mark.parametrize(
    ("change", "field", "why"),
    [
        ({"nic_sku": "THOR2-400"}, "design.nic_sku", "not infiniband"),
        ({"fabric": "roce", "switch_skus": ("TH5-LOSSY",)}, "design.switch_skus", "lossless"),
        ({"fabric": "roce"}, "design.switch_skus", "ethernet switch"),
        ({"fabric": "ethernet", "switch_skus": ("NDR-64",)}, "design.switch_skus", "ethernet"),
        ({"nic_sku": "CX8-800"}, "design.switch_skus", "cannot serve"),
        ({"nics_per_node": 9}, "design.nics_per_node", "slots"),
        ({"server_sku": "NOPE"}, "design.server_sku", "no such SKU"),
        ({"fabric": "fddi"}, "design.fabric", "expected one of"),
        ({"switch_skus": ()}, "design.switch_skus", "at least one"),
        ({"switch_skus": ("NDR-64",) * 3}, "design.switch_skus", "one per tier"),
        ({"topology": "torus", "nodes": 2}, "design.switch_skus", "switchless"),
        ({"topology": "torus", "switch_skus": ()}, "design.topology", "forwards between ports"),
    ],
)
def test_incompatible_designs_are_refused_with_the_reason(change, field, why):
    with pytest.raises(InvalidInput, match=why) as e:
        physical_plan(_design(**change), CAT)
    assert e.value.field == field


def test_one_switch_sku_per_tier_is_accepted():
    plan = physical_plan(_design(fabric="ethernet", switch_skus=("SN5600", "TH5-LOSSY")), CAT)
    assert [s.sku for s in plan.switches] == ["SN5600", "TH5-LOSSY"]


def test_torus_plan_has_no_switches_and_nic_to_nic_links():
    design = _design(topology="torus", switch_skus=(), nodes=64, nics_per_node=6)
    plan = physical_plan(design, forwarding_catalog(CAT))
    assert plan.switches == ()
    assert [(d.group, d.count) for d in plan.links] == [("torus", 3 * 64)]
