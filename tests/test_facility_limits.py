"""Each facility limit binds on its own: re-solving without it changes rank 1 or feasibility.

The hall: BERT-Large in a time only two nodes meet (facility_fixtures.two_node_target_hours);
the cheapest are two liquid-only SRV-LQ (14.3 kW each, 3 floor positions: a server rack, a
network rack and the row's CDU), the next two air-cooled SRV-A (10.2 kW, 2 floor positions).
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from facility_fixtures import AIR_SKU, HALL, LIQUID_SKU, solve, two_node_spec

from optimizer.errors import InvalidInput
from optimizer.optimize.facility import AIR_RACK_KW, facility_layout
from optimizer.topology.layout import Layout, place
from optimizer.topology.network import NetworkSizing
from optimizer.topology.plan import physical_plan
from optimizer.topology.sizing import size_network


def _rank1_server(**constraints: object) -> str | None:
    result = solve(two_node_spec(**constraints))
    return result.designs[0].design.server_sku if result.designs else None


def test_without_facility_limits_the_liquid_server_is_rank_1() -> None:
    best = solve(two_node_spec()).designs[0]
    assert (best.design.server_sku, best.design.nodes) == (LIQUID_SKU, 2)
    assert (best.bom.racks, best.floor_positions, best.cooling) == (2, 3, "liquid")


def test_an_air_cooled_facility_excludes_liquid_only_servers() -> None:
    assert _rank1_server(cooling="air") == AIR_SKU
    assert _rank1_server(cooling="liquid") == LIQUID_SKU


def test_floor_positions_count_the_cdu_that_racks_do_not() -> None:
    assert _rank1_server(max_racks=2) == LIQUID_SKU
    assert _rank1_server(max_floor_positions=2) == AIR_SKU


def test_a_rack_limit_below_a_servers_draw_refuses_that_server() -> None:
    spec = replace(two_node_spec(), rack_power_kw=14.0)
    assert solve(spec).designs[0].design.server_sku == AIR_SKU


def test_the_rack_limit_binds_through_the_rack_count() -> None:
    """At 12 kW a rack holds one SRV-A: two nodes take three racks, over a cap of two."""
    assert _rank1_server(max_racks=2) is not None
    assert solve(replace(two_node_spec(max_racks=2), rack_power_kw=12.0)).designs == ()


def test_power_cap_binds() -> None:
    assert _rank1_server(max_power_kw=25.0) == AIR_SKU
    assert _rank1_server(max_power_kw=20.0) is None


def test_air_facility_caps_racks_at_the_typical_air_limit_unless_a_limit_is_given() -> None:
    spec = two_node_spec(cooling="air")
    assert facility_layout(spec).rack_power_kw == AIR_RACK_KW
    assert facility_layout(replace(spec, rack_power_kw=42.0)).rack_power_kw == 42.0
    assert facility_layout(two_node_spec()).rack_power_kw == Layout().rack_power_kw


def test_the_design_reports_its_fullest_rack() -> None:
    best = solve(two_node_spec(cooling="air")).designs[0]
    node_kw = 10.2 + best.design.nics_per_node * 0.025  # server plus its NICs
    assert best.rack_kw == pytest.approx(2 * node_kw)


def _sizing() -> NetworkSizing:
    return size_network("fat_tree", 256, 64)


def test_liquid_servers_add_one_cdu_per_row_of_their_racks() -> None:
    layout = Layout(racks_per_row=10)
    kwargs = {"nodes": 88, "nodes_per_rack": 4, "nodes_per_leaf": 4, "network_racks": 2}
    air = place(layout, _sizing(), **kwargs)  # type: ignore[arg-type]
    liquid = place(layout, _sizing(), liquid_cooled=True, **kwargs)  # type: ignore[arg-type]
    assert (air.racks, air.floor_positions) == (24, 24)
    assert (liquid.racks, liquid.floor_positions) == (24, 24 + 3)  # 22 server racks: 3 rows


def test_a_placement_over_the_floor_is_refused_naming_the_constraint() -> None:
    layout = Layout(max_floor_positions=23)
    with pytest.raises(InvalidInput) as e:
        place(layout, _sizing(), nodes=88, nodes_per_rack=4, nodes_per_leaf=4, network_racks=2)
    assert e.value.field == "constraints.max_floor_positions"
    assert "24 floor positions" in str(e.value)


def test_either_way_servers_go_in_liquid_only_in_a_liquid_facility() -> None:
    assert Layout(facility_cooling="liquid").liquid_installed("either")
    assert not Layout(facility_cooling="air").liquid_installed("either")
    assert not Layout().liquid_installed("either")
    assert Layout().liquid_installed("liquid")


def test_the_plan_counts_the_cdu_of_a_liquid_design() -> None:
    design = solve(two_node_spec()).designs[0].design
    assert physical_plan(design, HALL).placement.floor_positions == 3


def test_rank_1_names_the_facility_limit_that_binds_it() -> None:
    best = solve(two_node_spec(max_floor_positions=2)).designs[0]
    assert best.design.server_sku == AIR_SKU
    assert "floor_positions" in best.binding
    assert "floor_positions." in best.explanation.split("Binding")[-1]


def test_rank_1_names_air_cooling_when_it_excludes_the_cheaper_liquid_server() -> None:
    assert "cooling" in solve(two_node_spec(cooling="air")).designs[0].binding
    assert "cooling" not in solve(two_node_spec(cooling="liquid")).designs[0].binding
