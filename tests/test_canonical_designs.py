"""Canonical designs: the same hardware is one design, ranked once (issue 13, defect 4)."""

from __future__ import annotations

from collections import Counter

from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.registry.topologies import SINGLE_SWITCH_NAME, TOPOLOGIES
from optimizer.topology.sizing import size_network
from optimizer.workload.presets import preset


def _bundled(name: str):
    return load_catalog(next(p for p in bundled_catalogs() if p.name == name))


def _order(bom) -> frozenset[tuple[str, int]]:
    """What a buyer orders: each SKU with its total quantity (computed here, independently)."""
    totals: Counter[str] = Counter()
    for line in bom.lines:
        totals[line.sku] += line.quantity
    return frozenset(totals.items())


def _llama3_8b_spec(top_k: int, topologies: tuple[str, ...] = ()) -> OptimizeSpec:
    """The issue's repro: llama3-8b on 1e12 tokens within 336 h on the InfiniBand catalog."""
    return OptimizeSpec(
        workload=preset("llama3-8b", training_tokens=1e12),
        constraints=Constraints(target_training_hours=336.0),
        top_k=top_k,
        allowed_topologies=topologies,
    )


def test_a_one_router_dragonfly_is_the_single_switch() -> None:
    sizing = size_network("dragonfly", endpoints=8, radix=64)
    assert sizing.switches == 1  # the premise: eight endpoints fit one router
    twins = TOPOLOGIES.get("dragonfly").twins(8, 1, sizing.profile)
    assert SINGLE_SWITCH_NAME in twins


def test_a_dragonfly_of_several_routers_is_its_own_design() -> None:
    sizing = size_network("dragonfly", endpoints=200, radix=64)
    assert sizing.switches > 1
    assert TOPOLOGIES.get("dragonfly").twins(25, 8, sizing.profile) == ()


def test_top_k_never_ranks_the_same_bill_of_materials_twice() -> None:
    result = optimize(_bundled("infiniband-ndr"), _llama3_8b_spec(top_k=5))
    signatures = [_order(d.bom) for d in result.designs]
    assert len(result.designs) >= 3
    assert len(set(signatures)) == len(signatures)


def test_a_twin_left_by_the_search_gives_its_rank_to_the_next_distinct_design() -> None:
    # Only fat-trees and rail-optimized fat-trees: no registry rule maps one onto the other at
    # this size, so the ranking loop itself must notice an identical BOM and move on.
    spec = OptimizeSpec(
        workload=preset("mpt-30b"),
        constraints=Constraints(target_training_hours=84.47),
        top_k=6,
        allowed_fabrics=("roce",),
        allowed_topologies=("fat_tree", "rail_optimized"),
    )
    result = optimize(_bundled("ethernet-budget"), spec)
    signatures = [_order(d.bom) for d in result.designs]
    assert len(result.designs) == 6
    assert len(set(signatures)) == 6
    assert result.status == "OPTIMAL"
