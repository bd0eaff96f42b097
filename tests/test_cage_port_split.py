"""A switch tier's down and up ports are split in whole cages: a cage holds a splitter's or a
twin-port module's two NIC ends, or uplinks, not one of each (docs/topology.md, fat-tree
rules). 85 down and 43 up 400G lanes of an SN5600 (64 x 800G ports broken out 2 x 400G) need
43 + 22 = 65 cages of its 64; the builder made such BOMs and check_bom refused them."""

from __future__ import annotations

import pytest

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.catalog.resolve import resolve_catalog
from optimizer.errors import InvalidInput
from optimizer.topology.compat import port_lanes
from optimizer.topology.sizing import size_network

SWITCHES = {s.sku: s for s in resolve_catalog("gen-2026").switches}


def test_a_broken_out_leaf_splits_its_ports_in_whole_cages() -> None:
    sizing = size_network("fat_tree", 255, 128, oversubscription=2.0, port_lanes=2)
    leaf = sizing.tier("leaf")
    assert leaf is not None
    assert sizing.profile.endpoints_per_leaf == 84  # 42 cages down, 22 up: all 64
    assert leaf.up_ports_used == 44 * leaf.switches


def test_a_split_already_in_whole_cages_is_unchanged() -> None:
    """1:1 and 3:1 of 128 lanes (64:64, 96:32) are whole cages: the same trees as before."""
    for ratio in (1.0, 3.0):
        assert size_network(
            "fat_tree", 1000, 128, oversubscription=ratio, port_lanes=2
        ) == size_network("fat_tree", 1000, 128, oversubscription=ratio)


def test_ports_a_cage_holds_are_lanes_times_ports_per_cage() -> None:
    assert port_lanes((SWITCHES["SN5600"],), 400) == 2  # an 800G port broken out
    assert port_lanes((SWITCHES["SN5600"],), 800) == 1
    assert port_lanes((SWITCHES["MQM9700-NS2F"],), 400) == 2  # a twin-port OSFP cage


def _estimate(lanes: int | None) -> estimate_pb2.EstimateResponse:
    cluster = estimate_pb2.Cluster(
        server_sku="SYS-A22GA-NBRT",
        gpus=255 * 8,
        fabric="roce",
        topology="fat_tree",
        oversubscription=2.0,
        nics_per_node=1,
        nic_gbps_per_node=400,
        switch_radix=128,
    )
    if lanes is not None:
        cluster.switch_port_lanes = lanes
    return api.estimate(
        estimate_pb2.EstimateRequest(
            catalog="gen-2026",
            workload=estimate_pb2.Workload(model="llama3-8b"),
            cluster=cluster,
        )
    )


def test_estimate_sizes_with_the_cage_lanes_it_is_given() -> None:
    assert _estimate(2).training_time_hours != _estimate(None).training_time_hours
    assert _estimate(1).training_time_hours == _estimate(None).training_time_hours


def test_cage_lanes_that_do_not_divide_the_radix_are_refused() -> None:
    with pytest.raises(InvalidInput) as err:
        _estimate(3)
    assert err.value.field == "cluster.switch_port_lanes"
