"""In-network reduction: SHARP in the switches, NVLS in an NVSwitch domain (issue 14)."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib.resources import files

import pytest

from optimizer.performance import collectives as coll
from optimizer.performance.estimator import StepModel, estimate, nvlink_bytes_per_s
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

LLAMA_8B = preset("llama3-8b")
DDP = ParallelPlan(1, 1, 64, zero_stage=1, micro_batch_size=1)
TP8 = ParallelPlan(8, 1, 8, zero_stage=1, micro_batch_size=1)
RUNS = {
    r["id"]: r
    for r in json.loads(
        (files("optimizer.performance") / "data" / "published-runs.json").read_text("utf-8")
    )
}


def test_sharp_sends_each_byte_once_instead_of_the_rings_two_n_minus_1_over_n() -> None:
    size = 1e9
    assert coll.in_network_all_reduce(size, 8).bytes == size
    assert coll.ring_all_reduce(size, 8).bytes == pytest.approx(2 * 7 / 8 * size)
    assert coll.in_network_all_reduce(size, 8).steps == 2  # up and down the switch tree
    assert coll.in_network_all_reduce(size, 1) == coll.NO_COST


def test_sharp_speeds_up_the_data_parallel_all_reduce_across_nodes() -> None:
    c = cluster(64)
    ring = estimate(LLAMA_8B, c, DDP).breakdown
    sharp = estimate(LLAMA_8B, replace(c, in_network_reduction=True), DDP).breakdown
    assert sharp.network_s < 0.6 * ring.network_s  # 1 / 1.75 of the bytes, fewer steps


def test_fsdp_gathers_get_nothing_from_sharp() -> None:
    """SHARP reduces; FSDP's all-gathers and reduce-scatters are not all-reduces here."""
    c = cluster(64)
    fsdp = replace(DDP, zero_stage=3)
    assert (
        estimate(LLAMA_8B, replace(c, in_network_reduction=True), fsdp).breakdown.network_s
        == estimate(LLAMA_8B, c, fsdp).breakdown.network_s
    )


def _nvls_busbw_gbytes_per_s(intra_gbytes_per_s: float) -> float:
    """Modelled nccl-tests bus bandwidth of an 8-GPU NVLS all-reduce (large messages)."""
    c = replace(cluster(8), intra_node_gbytes_per_s=intra_gbytes_per_s)
    size = 16 * 2**30
    cost = StepModel._nvls(coll.in_network_all_reduce(size, 8))
    seconds = cost.bytes / nvlink_bytes_per_s(c)
    return 2 * 7 / 8 * size / seconds / 1e9


@pytest.mark.parametrize(
    ("run_id", "metric"),
    [
        ("nccl-maintainer-h100-1node-nvls", "busbw_GBps_peak_nvls"),  # the fitted point
        ("stas00-h200-1node-allreduce", "busbw_GBps_at_16GiB"),  # checks
        ("nccl-maintainer-h100-1node-476", "busbw_GBps"),
    ],
)
def test_nvls_all_reduce_matches_the_published_measurements(run_id: str, metric: str) -> None:
    measured = float(RUNS[run_id]["metrics"][metric])
    assert _nvls_busbw_gbytes_per_s(450.0) == pytest.approx(measured, rel=0.02)


def test_nvls_speeds_up_the_tensor_all_reduce_on_hopper_only() -> None:
    def tp_s(gpu: str, on: bool) -> float:
        c = replace(cluster(64, gpu=gpu), in_network_reduction=on)
        return estimate(LLAMA_8B, c, TP8).breakdown.tensor_parallel_s

    assert tp_s("H100", True) < tp_s("H100", False)
    assert tp_s("A100", True) == tp_s("A100", False)  # NVSwitch 2 has no NVLS


def test_nvls_is_not_used_where_the_ring_moves_fewer_bytes() -> None:
    """Two ranks: the ring also sends S per rank, at the ring's better efficiency."""
    c = replace(cluster(64), in_network_reduction=True)
    plan = ParallelPlan(2, 1, 32, zero_stage=1, micro_batch_size=1)
    step = StepModel(LLAMA_8B, c, plan, DEFAULT_FABRICS["infiniband"])
    off = StepModel(
        LLAMA_8B, replace(c, in_network_reduction=False), plan, DEFAULT_FABRICS["infiniband"]
    )
    assert step.tp_nv == off.tp_nv
