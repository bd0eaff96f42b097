"""Leaf uplinks in the step time: oversubscription, concurrent flows and ECMP collisions
(issue 14, "Topology in the time"). A starved network slows exactly the traffic that crosses
it, by exactly what does not fit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.estimator import StepModel, estimate, leaf_slowdown, scenario
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

LLAMA_8B = preset("llama3-8b")
# 16 nodes of 8 GPUs, 4 nodes under each radix-64 leaf (32 endpoints, 8 NICs per node): the
# data-parallel ring of each of the 8 rails leaves every leaf once, 8 crossing flows. (Eight
# nodes' 64 endpoints fit one 64-port switch, which is then the whole tree.)
DDP = ParallelPlan(1, 1, 128, zero_stage=1, micro_batch_size=1)


def _oversubscribed(c: ClusterSpec, ratio: float) -> ClusterSpec:
    """The same leaves with 32 / ratio uplinks (only the uplinks change)."""
    topo = replace(c.topology, oversubscription=ratio, bisection_ratio=1.0 / ratio)
    return replace(c, topology=topo)


def _network_s(ratio: float, plan: ParallelPlan = DDP, gpus: int = 128) -> float:
    c = _oversubscribed(cluster(gpus), ratio)
    return estimate(LLAMA_8B, c, plan).breakdown.network_s


def test_oversubscription_changes_nothing_while_the_crossing_flows_fit() -> None:
    """8 crossing flows fit in 32, 16 and 8 uplinks: 1:1, 2:1 and 4:1 time the same."""
    flat = _network_s(1.0)
    assert _network_s(2.0) == flat
    assert _network_s(4.0) == flat


def test_beyond_the_uplinks_the_crossing_traffic_slows_by_exactly_what_does_not_fit() -> None:
    """At 8:1 the 8 flows share 4 uplinks (x2), at 16:1 they share 2 (x4): each doubling
    adds the bandwidth term again; latency and the NVLink share do not move."""
    at4, at8, at16 = _network_s(4.0), _network_s(8.0), _network_s(16.0)
    assert at8 > at4
    assert at16 - at8 == pytest.approx(2 * (at8 - at4), rel=1e-9)
    nvlink = [
        estimate(LLAMA_8B, _oversubscribed(cluster(128), r), DDP).breakdown
        for r in (1.0, 8.0, 16.0)
    ]
    assert len({round(b.data_parallel_s - b.network_s, 15) for b in nvlink}) == 1


def test_traffic_inside_one_leaf_ignores_oversubscription() -> None:
    """32 GPUs = 4 nodes under one leaf: nothing crosses, nothing slows."""
    plan = ParallelPlan(1, 1, 32, zero_stage=1, micro_batch_size=1)
    assert _network_s(16.0, plan, 32) == _network_s(1.0, plan, 32)


def test_pipeline_sends_and_data_parallel_rings_share_the_uplinks() -> None:
    """Two stages of 8 nodes (stride 8 > 4 nodes per leaf): every node's 8 NICs send across
    the leaf (32 flows) while the 8 rails' rings cross it too; at 4:1 the leaf has 8
    uplinks, which the rings alone would fill exactly. Each sees the other's flows for the
    share of the compute time the other's bytes occupy the wire."""
    c = _oversubscribed(cluster(128), 4.0)
    plan = ParallelPlan(1, 2, 64, zero_stage=1, micro_batch_size=1)
    step = StepModel(LLAMA_8B, c, plan, DEFAULT_FABRICS["infiniband"])
    sc = scenario(c, DEFAULT_FABRICS["infiniband"], "expected")
    b = step.breakdown(sc)
    assert step.p2p_net is not None
    wire_bytes_per_s = step.line * sc.fabric_efficiency * sc.collective_efficiency
    sends_s = step.p2p_net.cost.bytes * step.p2p_net.multiplier / wire_bytes_per_s
    sends_busy = sends_s / b.compute_s
    assert 0 < sends_busy < 1
    rings, sends = step.leaf_multipliers(sc, b.compute_s)
    assert rings == pytest.approx((8 + 32 * sends_busy) / 8)
    assert sends > 32 / 8  # the sends alone already exceed the uplinks; the rings add
    alone = replace(plan, pipeline=1, data=128)
    assert StepModel(LLAMA_8B, c, alone, DEFAULT_FABRICS["infiniband"]).leaf_multipliers(
        sc, b.compute_s
    ) == (1.0, 1.0)  # the same rings without the sends fit in the uplinks


def test_static_ecmp_delivers_about_63_percent_of_many_uplinks() -> None:
    """k flows hashed onto k uplinks keep k (1 - (1 - 1/k)^k) of them busy (Al-Fares et al.,
    SIGCOMM 2008); adaptive routing keeps all k busy."""
    c = cluster(128)  # 32 uplinks per leaf
    assert 1 / leaf_slowdown(c, (32,), adaptive_routing=False) == pytest.approx(
        1 - (1 - 1 / 32) ** 32
    )
    assert 1 / leaf_slowdown(c, (32,), adaptive_routing=False) == pytest.approx(0.63, abs=0.01)
    assert leaf_slowdown(c, (32,), adaptive_routing=True) == 1.0
    assert leaf_slowdown(c, (1,), adaptive_routing=False) == 1.0  # one flow never collides


def test_adaptive_routing_recovers_what_ecmp_collisions_cost_on_roce() -> None:
    roce = DEFAULT_FABRICS["roce"]
    assert not roce.adaptive_routing and DEFAULT_FABRICS["infiniband"].adaptive_routing
    spectrum_x = {"roce": replace(roce, adaptive_routing=True)}
    crossing = cluster(128, fabric="roce")
    hashed = estimate(LLAMA_8B, crossing, DDP).breakdown.network_s
    routed = estimate(LLAMA_8B, crossing, DDP, fabrics=spectrum_x).breakdown.network_s
    assert routed < hashed
    one_leaf = cluster(32, fabric="roce")
    plan = ParallelPlan(1, 1, 32, zero_stage=1, micro_batch_size=1)
    assert (
        estimate(LLAMA_8B, one_leaf, plan, fabrics=spectrum_x).breakdown.network_s
        == estimate(LLAMA_8B, one_leaf, plan).breakdown.network_s
    )


def test_a_table_without_adaptive_routing_loads_with_the_familys_and_a_bad_value_is_named(
    tmp_path: Path,
) -> None:
    from optimizer.errors import InvalidInput
    from optimizer.performance.fabrics import DEFAULT_FABRICS_CSV, load_fabrics

    text = DEFAULT_FABRICS_CSV.read_text(encoding="utf-8")
    lines = text.splitlines()
    old = tmp_path / "old.csv"
    old.write_text("\n".join(line.rsplit(",", 1)[0] for line in lines) + "\n")
    table = load_fabrics(old)  # absent column: the family's routing
    assert table["infiniband"].adaptive_routing and not table["roce"].adaptive_routing
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([lines[0], lines[1].rsplit(",", 1)[0] + ",maybe"]) + "\n")
    with pytest.raises(InvalidInput, match=r"bad\.csv, row 2, column adaptive_routing"):
        load_fabrics(bad)


def test_a_single_rack_scale_node_has_no_uplinks_to_slow() -> None:
    """The single-node family has no leaf tier (endpoints_per_leaf 0): nothing crosses.
    Failed with ZeroDivisionError before (procure optimize on gen-2026, llama3-405b)."""
    c = cluster(64)
    lone = replace(c, topology=replace(c.topology, endpoints_per_leaf=0, family="single_node"))
    assert leaf_slowdown(lone, (8,), adaptive_routing=False) == 1.0
