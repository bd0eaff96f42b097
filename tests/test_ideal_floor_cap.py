"""The min-cost search's ideal floors (search._ideal_floors) are searched only up to
FLOOR_COST_CAP times the cheapest floor found so far: past it, the cap plus one is still a
lower bound for the pair's keys (no size up to it meets the target even on an ideal network),
so the ranking is the one the uncapped floors give, and a fabric priced out of the top K is
no longer sized to its whole floor (a DeepSeek-V3 min-cost search on gen-2026 spent 19 of its
40 s finding that TCP Ethernet needs 768 to 1,320 nodes)."""

from __future__ import annotations

import math
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import synthetic_catalog
from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import resolve_catalog
from optimizer.optimize import candidates, search
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

CATALOGS = {seed: synthetic_catalog(24, seed=seed) for seed in range(4)}


def _spec(model: str, target_hours: float, top_k: int, objective: Objective) -> OptimizeSpec:
    return OptimizeSpec(
        workload=preset(model),
        constraints=Constraints(target_training_hours=target_hours),
        objective=objective,
        top_k=top_k,
        time_limit_s=300.0,
    )


def _ranking(result: OptimizeResult) -> list[tuple[object, ...]]:
    return [(d.design, d.bom.capex_cents, d.time_hours) for d in result.designs]


@settings(max_examples=12, deadline=None)
@given(
    seed=st.sampled_from(sorted(CATALOGS)),
    model=st.sampled_from(("llama3-8b", "mpt-7b", "llama3-70b")),
    target_hours=st.sampled_from((150.0, 720.0, 3000.0)),
    top_k=st.integers(1, 3),
    objective=st.sampled_from((Objective.MIN_COST, Objective.MIN_TCO)),
)
def test_capped_floors_rank_the_designs_the_uncapped_ones_do(
    seed: int, model: str, target_hours: float, top_k: int, objective: Objective
) -> None:
    spec = _spec(model, target_hours, top_k, objective)
    capped = optimize(CATALOGS[seed], spec, explain=False)
    with mock.patch.object(search, "FLOOR_COST_CAP", math.inf):
        uncapped = optimize(CATALOGS[seed], spec, explain=False)

    assert _ranking(capped) == _ranking(uncapped)
    assert capped.status == uncapped.status


def _largest_ideal_sizes(catalog: Catalog, spec: OptimizeSpec) -> dict[tuple[str, str], int]:
    """The largest size an ideal network is timed at, per (server, fabric), in ``spec``'s
    optimization without explanations."""
    largest: dict[tuple[str, str], int] = {}
    real = candidates.EstimateCache.ideal_hours

    def recorded(  # type: ignore[no-untyped-def]
        self, server_sku, fabric, nic_gbps, nics_per_node, nodes, torus=True
    ) -> float:
        pair = (server_sku, fabric)
        largest[pair] = max(largest.get(pair, 0), nodes)
        return real(self, server_sku, fabric, nic_gbps, nics_per_node, nodes, torus)

    with mock.patch.object(candidates.EstimateCache, "ideal_hours", recorded):
        optimize(catalog, spec, explain=False)
    return largest


def test_a_fabric_priced_out_is_not_sized_to_its_whole_floor() -> None:
    """ethernet-budget, Llama 3 70B in 720 h: H100 servers meet it on an ideal InfiniBand or
    RoCE network from 1,024 nodes, on TCP Ethernet only from 2,624, past twice that cost; the
    Ethernet floor is searched up to twice the cost (2,043 nodes), not to 2,624."""
    catalog = resolve_catalog("ethernet-budget")
    spec = _spec("llama3-70b", 720.0, 3, Objective.MIN_COST)
    capped = _largest_ideal_sizes(catalog, spec)
    with mock.patch.object(search, "FLOOR_COST_CAP", math.inf):
        uncapped = _largest_ideal_sizes(catalog, spec)

    ethernet = ("SYS-8125GS-TNHR", "ethernet")
    assert uncapped[ethernet] >= 2_624
    assert capped[ethernet] < 2 * 1_024 < uncapped[ethernet]
