"""The decision-quality benchmark says which choices the optimizer made differently from a
baseline (benchmarks/quality.py's "what the optimizer chose differently" and "why" tables)."""

from __future__ import annotations

import dataclasses

from benchmarks.scenarios import Choices, differences

RULE = Choices(
    server_sku="DGX-B200",
    nodes=32,
    fabric="infiniband",
    topology="rail_optimized",
    oversubscription=1.0,
    nic_sku="MCX75310AAS-NEAT",
    nics_per_node=8,
    switch_skus=("MQM9790-NS2F",),
)


def test_the_same_choices_differ_in_nothing() -> None:
    assert differences(RULE, RULE) == []


def test_each_changed_choice_is_named_with_both_values() -> None:
    optimizer = dataclasses.replace(
        RULE, topology="fat_tree", oversubscription=2.0, nics_per_node=4, switch_skus=()
    )
    assert differences(RULE, optimizer) == [
        "topology: rail_optimized -> fat_tree",
        "oversubscription: 1:1 -> 2:1",
        "NICs per node: 8 -> 4",
        "switch: MQM9790-NS2F -> none",
    ]


def test_switched_only_leaves_out_the_switchless_families() -> None:
    from benchmarks.quality import switched_topologies
    from optimizer.registry.topologies import TOPOLOGIES

    kept = switched_topologies()
    assert "torus" not in kept
    assert {"single_switch", "fat_tree", "rail_optimized"} <= set(kept)
    assert all(not TOPOLOGIES.get(name).switchless for name in kept)
