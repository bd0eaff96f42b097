"""Racks, link lengths and the cable or optic each length allows."""

from __future__ import annotations

import dataclasses

import pytest

from optimizer.errors import InvalidInput
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout, fiber_metres, link_options, place
from optimizer.topology.network import LinkGroupSizing, NetworkSizing
from optimizer.topology.plan import physical_plan
from optimizer.topology.sizing import size_network
from tests.topology_fixtures import topology_catalog

CAT = topology_catalog()


def _ib(nodes: int, topology: str = "rail_optimized", **kw) -> Design:
    return Design(
        "SRV-H100", nodes, "CX7-400", 8, "infiniband", topology, switch_skus=("NDR-64",), **kw
    )


def test_span_of_one_rack_is_the_in_rack_length():
    assert Layout().span_length_m(1) == 3.0


def test_span_grows_along_the_row_and_across_rows():
    layout = Layout()
    # 2 * 1.5 m vertical + 0.6 m x ceil(8/2) racks along the row
    assert layout.span_length_m(8) == pytest.approx(5.4)
    # 40 racks = 4 rows: + 3 m x floor(4/2) rows
    assert layout.span_length_m(40) == pytest.approx(2 * 1.5 + 0.6 * 5 + 3.0 * 2)


def test_racks_hold_four_dgx_class_nodes_by_default():
    plan = physical_plan(_ib(127), CAT)
    assert plan.placement.nodes_per_rack == 4
    assert plan.placement.server_racks == 32


def test_a_lower_rack_power_cap_means_more_racks():
    plan = physical_plan(_ib(128, layout=Layout(rack_power_kw=21.0)), CAT)
    assert plan.placement.nodes_per_rack == 2
    assert plan.placement.server_racks == 64


def test_a_node_too_big_for_any_rack_is_refused():
    with pytest.raises(InvalidInput) as e:
        physical_plan(_ib(8, layout=Layout(rack_power_kw=5.0)), CAT)
    assert e.value.field == "layout.rack_power_kw"


def test_layout_parameters_must_be_positive():
    with pytest.raises(InvalidInput) as e:
        Layout(row_pitch_m=0.0)
    assert e.value.field == "layout.row_pitch_m"


def test_rail_leaves_span_several_racks_so_node_links_leave_the_rack():
    plan = physical_plan(_ib(127), CAT)
    assert plan.placement.length_m("node-leaf") > 3.0


def test_packed_fat_tree_leaves_stay_in_the_rack():
    # 32 down ports = 4 nodes x 8 NICs = one rack: a top-of-rack leaf.
    plan = physical_plan(_ib(127, "fat_tree"), CAT)
    assert plan.placement.length_m("node-leaf") == 3.0


def test_upper_tiers_run_longer_than_node_links():
    plan = physical_plan(_ib(512), CAT)
    lengths = dict(plan.placement.group_lengths_m)
    assert lengths["node-leaf"] < lengths["leaf-spine"] <= lengths["spine-core"]


def test_short_links_get_copper_first():
    options = link_options(2.5, 400, "infiniband", CAT)
    assert options[0].parts == (("IB-DAC-3M", 1),)


def test_copper_does_not_reach_beyond_its_rating():
    skus = {sku for o in link_options(5.0, 400, "infiniband", CAT) for sku, _ in o.parts}
    assert "IB-DAC-3M" not in skus
    assert "IB-AOC-30M" in skus


def test_optics_are_two_transceivers_plus_fiber_rounded_up_to_whole_metres():
    optics = [o for o in link_options(12.2, 400, "infiniband", CAT) if o.kind == "optics"]
    sr4 = next(o for o in optics if o.parts[0][0] == "IB-SR4")
    assert sr4.parts == (("IB-SR4", 2), ("FIBER-OM4", 13))
    assert sr4.unit_cost_cents == 2 * 45_000 + 13 * 250


def test_multimode_optics_pair_with_multimode_fiber_and_single_mode_with_single_mode():
    optics = {
        o.parts[0][0]: o.parts[1][0]
        for o in link_options(40.0, 400, "infiniband", CAT)
        if o.kind == "optics"
    }
    assert optics == {"IB-SR4": "FIBER-OM4", "IB-DR4": "FIBER-OS2"}


def test_beyond_multimode_reach_only_single_mode_remains():
    options = link_options(120.0, 400, "infiniband", CAT)
    assert [o.parts[0][0] for o in options] == ["IB-DR4"]


def test_no_part_reaches_returns_no_options():
    assert link_options(800.0, 400, "infiniband", CAT) == []


def test_fiber_is_at_least_one_metre():
    assert fiber_metres(0.2) == 1
    assert fiber_metres(3.0) == 3


def test_a_node_taller_than_the_rack_names_rack_units():
    with pytest.raises(InvalidInput) as e:
        physical_plan(_ib(8, layout=Layout(rack_units=6)), CAT)
    assert e.value.field == "layout.rack_units"


def _sizing_with(group: LinkGroupSizing) -> NetworkSizing:
    """A two-tier fat-tree's sizing with one more link group (as a new family would add)."""
    base = size_network("fat_tree", 256, 64)
    return dataclasses.replace(base, link_groups=(*base.link_groups, group))


def test_a_new_link_group_is_placed_by_the_span_its_family_names():
    sizing = _sizing_with(LinkGroupSizing("express", 8, span="cluster"))
    placed = place(Layout(), sizing, nodes=32, nodes_per_rack=4, nodes_per_leaf=4, network_racks=2)
    assert placed.length_m("express") == placed.length_m("leaf-spine")


def test_a_new_link_group_without_a_span_is_a_programming_error():
    sizing = _sizing_with(LinkGroupSizing("express", 8))
    with pytest.raises(ValueError, match="express"):
        place(Layout(), sizing, nodes=32, nodes_per_rack=4, nodes_per_leaf=4, network_racks=2)
