"""The bounds the search prunes with are valid: no real design beats them (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.candidates import OVERSUBSCRIPTIONS, EstimateCache, SearchSpace, TimeKey
from optimizer.optimize.request import Confidence, Constraints, OptimizeSpec
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.workload.presets import preset

TOPOLOGY_FAMILIES = TOPOLOGIES.names()

CATALOG = load_catalog(next(p for p in bundled_catalogs() if p.name == "infiniband-ndr"))
SERVERS = {s.sku: s for s in CATALOG.servers}


def _timer(model: str, confidence: Confidence) -> EstimateCache:
    return EstimateCache(preset(model), SERVERS, confidence)


@settings(max_examples=100, deadline=None)
@given(
    model=st.sampled_from(["bert-large", "llama3-8b", "mixtral-8x7b", "llama3-70b"]),
    server=st.sampled_from(sorted(SERVERS)),
    fabric=st.sampled_from(["infiniband", "roce"]),
    npn=st.sampled_from([1, 2, 4, 8]),
    topology=st.sampled_from(TOPOLOGY_FAMILIES),
    ratio=st.sampled_from(OVERSUBSCRIPTIONS),
    nodes=st.integers(1, 600),
    confidence=st.sampled_from(list(Confidence)),
)
def test_no_topology_is_faster_than_the_ideal_network(
    model: str,
    server: str,
    fabric: str,
    npn: int,
    topology: str,
    ratio: float,
    nodes: int,
    confidence: Confidence,
) -> None:
    timer = _timer(model, confidence)
    key = TimeKey(
        server,
        fabric,
        400,
        npn,
        topology,
        ratio if topology in ("fat_tree", "rail_optimized") else 1.0,
        0 if topology == "torus" else 64,
        forwarding=True,  # a torus of any size (on hardware that relays traffic)
    )
    real = timer.hours(key, nodes)
    assert timer.ideal_hours(server, fabric, 400, npn, nodes) <= real * (1 + 1e-12)
    assert timer.lower_bound_hours(SERVERS[server], nodes) <= real * (1 + 1e-12)


def test_the_search_space_offers_every_family_the_request_allows() -> None:
    spec = OptimizeSpec(
        workload=preset("llama3-8b"), constraints=Constraints(target_training_hours=100.0)
    )
    families = {key.topology for key, _ in SearchSpace(CATALOG, spec).keys()}  # noqa: SIM118
    assert families == set(TOPOLOGY_FAMILIES)
