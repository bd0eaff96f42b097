"""TCP collectives take max(wire, host CPU) before overlap (issue 14, defect 6)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.performance.estimator import estimate
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

LLAMA_8B = preset("llama3-8b")
FSDP_64 = ParallelPlan(1, 1, 64, zero_stage=3, micro_batch_size=1)
DDP_16 = ParallelPlan(1, 1, 16, zero_stage=1, micro_batch_size=1)


@pytest.mark.parametrize(
    ("gpus", "plan", "name"), [(64, FSDP_64, "llama3-8b"), (16, DDP_16, "mpt-7b")]
)
@pytest.mark.parametrize(("slow_gbps", "fast_gbps"), [(400, 800), (800, 1600), (1600, 6400)])
def test_a_faster_ethernet_nic_never_slows_the_step(
    gpus: int, plan: ParallelPlan, name: str, slow_gbps: float, fast_gbps: float
) -> None:
    """Fails on main: the CPU term was max(0, cpu - wire) after overlap, so a faster wire
    exposed more CPU time (llama3-8b FSDP: 22.0 s at 800 Gb/s, 27.2 s at 1600 Gb/s)."""
    c = cluster(gpus, fabric="ethernet")
    slow = estimate(preset(name), replace(c, nic_gbps_per_node=slow_gbps), plan)
    fast = estimate(preset(name), replace(c, nic_gbps_per_node=fast_gbps), plan)
    assert fast.step_time_s <= slow.step_time_s * (1 + 1e-12)  # equal when CPU-bound


def test_a_cpu_bound_collective_is_timed_by_the_host_stack_alone() -> None:
    """Once the host CPU is the bottleneck, more wire bandwidth changes nothing."""
    c = cluster(64, fabric="ethernet")
    fast = estimate(LLAMA_8B, replace(c, nic_gbps_per_node=6400), FSDP_64)
    faster = estimate(LLAMA_8B, replace(c, nic_gbps_per_node=12800), FSDP_64)
    cpu = DEFAULT_FABRICS["ethernet"].host_cpu_s_per_byte("expected") * 8
    wire = 1 / (6400e9 / 8 / 8 * DEFAULT_FABRICS["ethernet"].efficiency_expected)
    assert cpu > wire  # the premise: the stack is slower than a 6400 Gb/s node's wire
    assert faster.step_time_s == pytest.approx(fast.step_time_s, rel=1e-12)


def test_host_cpu_overhead_reports_what_the_stack_adds_over_the_wire() -> None:
    """The breakdown still sums to the step; RDMA fabrics report no host-CPU time."""
    tcp = estimate(LLAMA_8B, cluster(64, fabric="ethernet", nic_gbps_per_node=3200), FSDP_64)
    b = tcp.breakdown
    assert b.host_cpu_overhead_s > 0
    parts = b.compute_s + b.exposed_communication_s + b.host_cpu_overhead_s
    parts += b.optimizer_step_s + b.step_overhead_s + b.micro_batch_overhead_s
    assert parts == pytest.approx(tcp.step_time_s)
    rdma = estimate(LLAMA_8B, cluster(64, fabric="roce", nic_gbps_per_node=3200), FSDP_64)
    assert rdma.breakdown.host_cpu_overhead_s == 0.0
