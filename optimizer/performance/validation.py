"""Published measured runs as estimator cases: the ground truth of the calibration.

Reads ``data/published-runs.json`` (package data: a verbatim copy of the project's reference
``published-runs.json``, each record with its source; ``data/published-runs.md`` is its guide)
and turns the records the estimator models into (workload, cluster, fixed plan, measured value)
cases. It ships inside the package, so the tests and the benchmarks need nothing beside the
repository and work from an installed wheel.
Used by tests/test_published_runs.py and benchmarks/estimator_accuracy.py, so the tests and
the documented error table are computed from the same cases.

Comparison convention: FLOP counts differ between sources (published-runs.md), so measured
throughput is converted to *our* hardware FLOPs: measured tokens/s x our hardware FLOPs per
token / GPUs. For Megatron-LM the paper's eq. (3) equals our count exactly, so its TFLOP/s are
used as printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from optimizer.performance.calibration import generation
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.plan import PartialPlan
from optimizer.topology.sizing import size_network
from optimizer.workload.flops import hardware_flops_per_step
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

PUBLISHED_RUNS_JSON: Traversable = files("optimizer.performance") / "data" / "published-runs.json"


@dataclass(frozen=True)
class GpuSystem:
    """A node type of the published runs (vendor figures, published-runs.md sec. 5)."""

    gpu_model: str
    peak_tflops: float
    peak_fp8_tflops: float | None
    memory_gb: float
    nvlink_gbytes_per_s: float  # per GPU, one direction
    nic_gbps_per_node: float
    nics_per_node: int
    fabric: str
    switch_radix: int


# Selene (Megatron-LM SC'21 sec. 5): DGX A100 80GB, NVLink3 600 GB/s bidirectional, 8 x HDR
# 200 Gb/s compute HCAs, three-level fat-tree of 40-port HDR switches.
SELENE = GpuSystem("A100", 312.0, None, 80.0, 300.0, 1600.0, 8, "infiniband", 40)
# MosaicML H100 rows: HGX H100 (NVLink4 900 GB/s bidirectional); the network is not stated,
# so the usual 8 x 400 Gb/s NDR InfiniBand of an HGX H100 is assumed (an assumption).
HGX_H100 = GpuSystem("H100", 989.4, 1978.9, 80.0, 450.0, 3200.0, 8, "infiniband", 64)


@dataclass(frozen=True)
class PublishedCase:
    """One measured point: what to run, and what was measured."""

    id: str
    source: str
    workload: Workload
    cluster: ClusterSpec
    fixed: PartialPlan
    measured_hardware_tflops_per_gpu: float
    measured_training_days: float | None = None


def cluster_for(
    system: GpuSystem,
    gpus: int,
    topology: str = "fat_tree",
    fabric: str | None = None,
    oversubscription: float = 1.0,
) -> ClusterSpec:
    """``gpus`` GPUs of ``system`` (8 per node) on its network, or on ``fabric`` and
    ``topology`` at ``oversubscription`` instead."""
    nodes = max(1, gpus // 8)
    profile = size_network(
        topology,
        nodes * system.nics_per_node,
        system.switch_radix,
        oversubscription=oversubscription,
        rails=system.nics_per_node,
    ).profile
    return ClusterSpec(
        gpus=gpus,
        gpus_per_node=8,
        gpu_peak_tflops=system.peak_tflops,
        gpu_memory_gb=system.memory_gb,
        intra_node_gbytes_per_s=system.nvlink_gbytes_per_s,
        fabric=fabric or system.fabric,
        nic_gbps_per_node=system.nic_gbps_per_node,
        nics_per_node=system.nics_per_node,
        topology=profile,
        gpu_model=system.gpu_model,
        gpu_peak_fp8_tflops=system.peak_fp8_tflops,
    )


def _source(r: dict[str, Any]) -> str:
    src = r["source"]
    return f"{src['title']}, {src.get('table') or src['locator']} [{r['id']}]"


def _megatron_workload(r: dict[str, Any]) -> Workload:
    m = r["model"]
    h = m["hidden"]
    return Workload(
        name=m["name"],
        layers=m["layers"],
        hidden_size=h,
        ffn_hidden_size=4 * h,
        attention_heads=m["heads"],
        kv_heads=m["heads"],
        sequence_length=m["seq_len"],
        vocab_size=m.get("vocab", 51200),
        training_tokens=float(r.get("training_tokens", 300e9)),
        global_batch_size=r["global_batch_sequences"],
        activation_recompute="full",
        flash_attention=False,
    )  # SC'21 predates FlashAttention (Dao et al. 2022)


def _megatron_case(r: dict[str, Any]) -> PublishedCase:
    par = r["parallelism"]
    if "tp" in par:
        fixed = PartialPlan(tensor=par["tp"], pipeline=par["pp"], data=par["dp"])
    elif "model_parallel_size" in par:  # Table 2: tp = 8 is implied (published-runs.md)
        fixed = PartialPlan(
            tensor=8,
            pipeline=par["model_parallel_size"] // 8,
            data=par["dp"],
            micro_batch_size=par["microbatch"],
        )
    else:  # sec. 5.1 GPT-3 estimate: no plan given, the planner chooses
        fixed = PartialPlan()
    return PublishedCase(
        id=r["id"],
        source=_source(r),
        workload=_megatron_workload(r),
        cluster=cluster_for(SELENE, r["gpu_count"]),
        fixed=fixed,
        measured_hardware_tflops_per_gpu=float(r["metrics"]["achieved_tflops_per_gpu"]),
        measured_training_days=r["metrics"].get("estimated_training_days"),
    )


def _mosaic_case(r: dict[str, Any]) -> PublishedCase:
    par = r["parallelism"]
    seq = r["model"]["seq_len"]
    w = preset(
        r["model"]["name"].lower(),
        sequence_length=seq,
        global_batch_size=r["global_batch_sequences"],
        activation_recompute="full" if par["activation_checkpointing"] == "True" else "selective",
    )  # flash attention: scores recomputed in the backward
    gpus = r["gpu_count"]
    zero = 3 if "FULL_SHARD" in par["dp_kind"] else 2
    tokens_per_s = float(r["metrics"]["tokens_per_s"])
    measured = tokens_per_s / w.tokens_per_step * hardware_flops_per_step(w) / gpus / 1e12
    return PublishedCase(
        id=r["id"],
        source=_source(r),
        workload=w,
        cluster=cluster_for(HGX_H100, gpus),
        fixed=PartialPlan(
            tensor=1, pipeline=1, data=gpus, zero_stage=zero, micro_batch_size=par["microbatch"]
        ),
        measured_hardware_tflops_per_gpu=measured,
    )


def load_records(path: Path | Traversable = PUBLISHED_RUNS_JSON) -> list[dict[str, Any]]:
    """Every published record (the bundled copy unless ``path`` names another file)."""
    records: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return records


def megatron_cases(records: list[dict[str, Any]]) -> list[PublishedCase]:
    """Megatron-LM SC'21: Table 1, the PTD-P rows of Table 2, and the sec. 5.1 estimates."""
    return [
        _megatron_case(r)
        for r in records
        if r["id"].startswith("megatron-sc21-") and "achieved_tflops_per_gpu" in r["metrics"]
    ]


def mosaic_h100_cases(records: list[dict[str, Any]]) -> list[PublishedCase]:
    """MosaicML llm-foundry H100 BF16 rows run on more than one node."""
    return [
        _mosaic_case(r)
        for r in records
        if r["id"].startswith("llmfoundry-H100_80GB_BF16") and r["gpu_count"] >= 16
    ]


def calibration_cases(path: Path | Traversable = PUBLISHED_RUNS_JSON) -> list[PublishedCase]:
    """Every case the kernel efficiencies are fitted on and reported against."""
    records = load_records(path)
    return megatron_cases(records) + mosaic_h100_cases(records)


@dataclass(frozen=True)
class TimeToTrainPoint:
    """One MLPerf Training time-to-train at a stated system size (issue 16's new hardware).

    MLPerf trains to a quality target, not a token count, and the stored sources state no
    token count, so these are never converted to TFLOP/s (and never calibration cases). Two
    points of the same benchmark at the same GPU count still compare GPUs: their time ratio
    is their speed ratio, which the model predicts without a token count.
    """

    id: str
    source: str
    hardware: str
    gpu_model: str
    gpu_count: int
    benchmark: str
    precision: str
    time_to_train_minutes: float
    peak_fp8_tflops_per_gpu: float | None
    approximate: bool


def time_to_train_points(records: list[dict[str, Any]]) -> list[TimeToTrainPoint]:
    """The ``mlperf-time-to-train`` records (B200, Blackwell NVL72, MI300X, MI355X)."""
    return [
        TimeToTrainPoint(
            id=r["id"],
            source=_source(r),
            hardware=r["hardware"],
            gpu_model=r["gpu_model"],
            gpu_count=int(r["gpu_count"]),
            benchmark=r["benchmark"],
            precision=r["precision"],
            time_to_train_minutes=float(r["metrics"]["time_to_train_minutes"]),
            peak_fp8_tflops_per_gpu=r.get("peak_fp8_tflops_per_gpu"),
            approximate=bool(r["metrics"].get("approximate", False)),
        )
        for r in records
        if r["category"] == "mlperf-time-to-train"
    ]


def predicted_time_ratio(a: TimeToTrainPoint, b: TimeToTrainPoint) -> float:
    """The model's time-to-train of ``a`` over ``b`` for the same FP8 benchmark at the same
    GPU count: inverse ratio of calibrated kernel efficiency x FP8 peak (a compute-bound
    single-node job, where the network does not enter)."""
    if (a.benchmark, a.gpu_count) != (b.benchmark, b.gpu_count):
        raise ValueError(f"{a.id} and {b.id} are not the same benchmark at the same size")
    if a.peak_fp8_tflops_per_gpu is None or b.peak_fp8_tflops_per_gpu is None:
        raise ValueError(f"{a.id} or {b.id} states no FP8 peak")
    rate_a = generation(a.gpu_model).kernel_efficiency * a.peak_fp8_tflops_per_gpu
    rate_b = generation(b.gpu_model).kernel_efficiency * b.peak_fp8_tflops_per_gpu
    return rate_b / rate_a


def time_ratio_error(a: TimeToTrainPoint, b: TimeToTrainPoint) -> float:
    """Predicted over measured time ratio of ``a`` to ``b``, minus 1 (+: the model thinks
    ``a`` slower relative to ``b`` than it measured)."""
    measured = a.time_to_train_minutes / b.time_to_train_minutes
    return predicted_time_ratio(a, b) / measured - 1
