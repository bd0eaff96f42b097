"""Published measured runs as estimator cases: the ground truth of the calibration.

Reads ``data/published-runs.json`` (package data: a verbatim copy of the project's reference
``published-runs.json``, each record with its source; ``data/published-runs.md`` is its guide)
and turns the records the estimator models into (workload, cluster, fixed plan, measured value)
cases. It ships inside the package, so the tests and the benchmarks need nothing beside the
repository and work from an installed wheel.
Used by tests/test_published_runs.py, tests/test_visible_published_set.py and
benchmarks/estimator_accuracy.py, so the tests and the documented error table are computed
from the same cases.

Comparison convention: FLOP counts differ between sources (published-runs.md), so measured
throughput is converted to *our* hardware FLOPs: measured tokens/s x our hardware FLOPs per
token / GPUs. For Megatron-LM the paper's eq. (3) equals our count exactly, so its TFLOP/s are
used as printed.

Issue 14 adds ``data/paper-configs.json`` (guide: ``data/paper-configs.md``): every other
configuration a paper or log states precisely enough to estimate (Llama 3 405B, BLOOM-176B,
MT-NLG 530B, DeepSpeed on Azure), each with its source, system, fixed plan and measured value
in the source's own FLOP convention; :func:`paper_config_cases` loads them and
:func:`visible_cases` is the whole visible published set.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from optimizer.errors import InvalidInput
from optimizer.performance.calibration import generation
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.plan import PartialPlan
from optimizer.topology.sizing import size_network
from optimizer.workload.flops import hardware_flops_per_step
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

PUBLISHED_RUNS_JSON: Traversable = files("optimizer.performance") / "data" / "published-runs.json"
PAPER_CONFIGS_JSON: Traversable = files("optimizer.performance") / "data" / "paper-configs.json"
UNSEEN_RUNS_JSON: Traversable = files("optimizer.performance") / "data" / "unseen-runs.json"


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
    gpus_per_node: int = 8
    oversubscription: float = 1.0  # down:up at ``oversubscribed_tier`` of its fat-tree
    oversubscribed_tier: str = "leaf"


# Selene (Megatron-LM SC'21 sec. 5): DGX A100 80GB, NVLink3 600 GB/s bidirectional, 8 x HDR
# 200 Gb/s compute HCAs, three-level fat-tree of 40-port HDR switches.
SELENE = GpuSystem("A100", 312.0, None, 80.0, 300.0, 1600.0, 8, "infiniband", 40)
# MosaicML H100 rows: HGX H100 (NVLink4 900 GB/s bidirectional); the network is not stated,
# so the usual 8 x 400 Gb/s NDR InfiniBand of an HGX H100 is assumed (an assumption).
HGX_H100 = GpuSystem("H100", 989.4, 1978.9, 80.0, 450.0, 3200.0, 8, "infiniband", 64)
# Meta's Llama 3 405B cluster (Dubey et al. 2024, sec. 3.3.1): Grand Teton, 8 x H100 SXM 80GB
# HBM3 at 700 W per server over NVLink, one 400 Gb/s RoCE NIC per GPU, a three-layer Clos of
# 3,072-GPU pods at full bisection joined with 1:7 oversubscription at the aggregation layer.
# Radix 64 = a Minipack2 ToR's 64 x 400G ports (25.6 Tb/s); our fat-tree's pods are then 1,024
# endpoints, not 3,072 (an approximation: more data-parallel rings cross the 1:7 tier).
META_LLAMA3_ROCE = GpuSystem(
    "H100",
    989.4,
    1978.9,
    80.0,
    450.0,
    3200.0,
    8,
    "roce",
    64,
    oversubscription=7.0,
    oversubscribed_tier="aggregation",
)
# Jean Zay A100 partition (BigScience tr11 README): 8 x A100 80GB per node over NVLink, "4
# OmniPath links" per node; Omni-Path is modelled as an RDMA fabric of InfiniBand class at
# 100 Gb/s a link (link speed not stated: UNVERIFIED), 48-port edge switches (UNVERIFIED).
JEAN_ZAY_A100 = GpuSystem("A100", 312.0, None, 80.0, 300.0, 400.0, 4, "infiniband", 48)
# Azure NDm A100 v4 (DeepSpeed blog 2022): 8 x A100 80GB per VM, each GPU with its own 200 Gb/s
# HDR InfiniBand link (8 x 200 Gb/s per VM), 40-port HDR switches.
AZURE_NDM_A100_V4 = GpuSystem("A100", 312.0, None, 80.0, 300.0, 1600.0, 8, "infiniband", 40)

# GPT-NeoX-20B's cluster (Black et al. 2022): 12 Supermicro AS-4124GO-NART servers of 8 x
# A100-SXM4-40GB over NVLink, four ConnectX-6 HCAs per server (200 Gb/s HDR assumed), two
# MQM8700 (40-port HDR) spine switches.
# MosaicML llm-foundry A100 tables ("A100 80GB / 40GB with 1600 Gbps node-node interconnect
# (RoCE)", published-runs.md sec. 3): DGX-class A100 nodes, NVLink3 at 300 GB/s per direction.
MOSAIC_A100_80GB = GpuSystem("A100", 312.0, None, 80.0, 300.0, 1600.0, 8, "roce", 64)
MOSAIC_A100_40GB = GpuSystem("A100", 312.0, None, 40.0, 300.0, 1600.0, 8, "roce", 64)
NEOX_A100_40GB = GpuSystem("A100", 312.0, None, 40.0, 300.0, 800.0, 4, "infiniband", 40)

SYSTEMS: dict[str, GpuSystem] = {
    "SELENE": SELENE,
    "HGX_H100": HGX_H100,
    "META_LLAMA3_ROCE": META_LLAMA3_ROCE,
    "JEAN_ZAY_A100": JEAN_ZAY_A100,
    "AZURE_NDM_A100_V4": AZURE_NDM_A100_V4,
    "NEOX_A100_40GB": NEOX_A100_40GB,
}


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
    oversubscription: float | None = None,
) -> ClusterSpec:
    """``gpus`` GPUs of ``system`` on its network, or on ``fabric`` and ``topology`` at
    ``oversubscription`` (at the system's oversubscribed tier) instead."""
    nodes = max(1, gpus // system.gpus_per_node)
    profile = size_network(
        topology,
        nodes * system.nics_per_node,
        system.switch_radix,
        oversubscription=(
            system.oversubscription if oversubscription is None else oversubscription
        ),
        rails=system.nics_per_node,
        oversubscribed_tier=system.oversubscribed_tier,
    ).profile
    return ClusterSpec(
        gpus=gpus,
        gpus_per_node=system.gpus_per_node,
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
    # PTD-P replicates the optimizer: its data parallelism is a plain gradient all-reduce
    # (sec. 5.9 measures "the data-parallel all-reduce"; Table 2 sets PTD-P against ZeRO-3, a
    # different system), so no row, nor the planner's own GPT-3 plan, may shard (ZeRO 0).
    if "tp" in par:
        fixed = PartialPlan(tensor=par["tp"], pipeline=par["pp"], data=par["dp"], zero_stage=0)
    elif "model_parallel_size" in par:  # Table 2: tp = 8 is implied (published-runs.md)
        fixed = PartialPlan(
            tensor=8,
            pipeline=par["model_parallel_size"] // 8,
            data=par["dp"],
            micro_batch_size=par["microbatch"],
            zero_stage=0,
        )
    else:  # sec. 5.1 GPT-3 estimate: no plan given, the planner chooses (without ZeRO)
        fixed = PartialPlan(zero_stage=0)
    return PublishedCase(
        id=r["id"],
        source=_source(r),
        workload=_megatron_workload(r),
        cluster=cluster_for(SELENE, r["gpu_count"]),
        fixed=fixed,
        measured_hardware_tflops_per_gpu=float(r["metrics"]["achieved_tflops_per_gpu"]),
        measured_training_days=r["metrics"].get("estimated_training_days"),
    )


def _mosaic_case(r: dict[str, Any], system: GpuSystem = HGX_H100) -> PublishedCase:
    par = r["parallelism"]
    seq = r["model"]["seq_len"]
    w = preset(
        r["model"]["name"].lower(),
        sequence_length=seq,
        global_batch_size=r["global_batch_sequences"],
        activation_recompute="full" if par["activation_checkpointing"] == "True" else "selective",
        # The benchmark script runs MPT's Triton kernel (llm-foundry,
        # scripts/train/benchmarking/submit_benchmarks.py: --attn_impl defaults to triton, on
        # PyTorch 1.13), whose ALiBi bias FlashAttention's CUDA kernels lacked.
        attention_kernel="triton",
        # The FP8 table's amp_fp8: Transformer Engine's FP8 GEMMs under Composer's autocast.
        precision="fp8" if r["precision"] == "amp_fp8" else "bf16",
    )  # flash attention: scores recomputed in the backward
    gpus = r["gpu_count"]
    zero = 3 if "FULL_SHARD" in par["dp_kind"] else 2
    tokens_per_s = float(r["metrics"]["tokens_per_s"])
    measured = tokens_per_s / w.tokens_per_step * hardware_flops_per_step(w) / gpus / 1e12
    return PublishedCase(
        id=r["id"],
        source=_source(r),
        workload=w,
        cluster=cluster_for(system, gpus),
        # FULL_SHARD reshards after the forward and gathers again for the backward
        # (torch.distributed.fsdp.ShardingStrategy); SHARD_GRAD_OP (ZeRO-2) keeps them.
        fixed=PartialPlan(
            tensor=1,
            pipeline=1,
            data=gpus,
            zero_stage=zero,
            micro_batch_size=par["microbatch"],
            reshard_after_forward=True if zero == 3 else None,
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


def mosaic_h100_fp8_cases(records: list[dict[str, Any]]) -> list[PublishedCase]:
    """MosaicML llm-foundry H100 FP8 rows (one 8-GPU node, MPT-1B and 3B, sequences 512 to
    32,768): what fits the FP8 GEMMs' efficiency, and nothing else."""
    return [_mosaic_case(r) for r in records if r["id"].startswith("llmfoundry-H100_80GB_FP8")]


def _mosaic_a100_system(record_id: str) -> GpuSystem:
    return MOSAIC_A100_40GB if "A100_40GB" in record_id else MOSAIC_A100_80GB


def mosaic_a100_cases(records: list[dict[str, Any]]) -> list[PublishedCase]:
    """MosaicML llm-foundry A100 rows run on more than one node (16-128 GPUs), each on its
    GPU: out of the fit (newer software than the Megatron runs that set A100's kernel
    efficiency), what calibration is for."""
    return [
        _mosaic_case(r, _mosaic_a100_system(r["id"]))
        for r in records
        if r["id"].startswith("llmfoundry-A100") and r["gpu_count"] >= 16
    ]


def mosaic_a100_sweep_cases(records: list[dict[str, Any]]) -> list[PublishedCase]:
    """MosaicML llm-foundry A100 rows on one node (8 GPUs), sequences 512 to 65,536: the
    40 GB and 80 GB tables, each on its GPU (the tables' RoCE network carries nothing here)."""
    return [
        _mosaic_case(r, _mosaic_a100_system(r["id"]))
        for r in records
        if r["id"].startswith("llmfoundry-A100") and r["gpu_count"] < 16
    ]


def calibration_cases(path: Path | Traversable = PUBLISHED_RUNS_JSON) -> list[PublishedCase]:
    """Every case the kernel efficiencies are fitted on and reported against."""
    records = load_records(path)
    return megatron_cases(records) + mosaic_h100_cases(records)


# Paper configurations (issue 14): data/paper-configs.json, guide data/paper-configs.md.

FLOP_CONVENTIONS = ("6N+12lsh", "megatron-eq3")
MEASURED_KEYS = ("tflops_per_gpu", "step_time_s", "samples_per_s")
_MODEL_KEYS = {
    "name": str,
    "layers": int,
    "hidden_size": int,
    "ffn_hidden_size": int,
    "attention_heads": int,
    "kv_heads": int,
    "vocab_size": int,
    "sequence_length": int,
    "gated_ffn": bool,
    "tied_embeddings": bool,
    "dropout": bool,
    "flash_attention": bool,
    "activation_recompute": str,
    "precision": str,
    "framework": str,
}
_OPTIONAL_MODEL_KEYS = {"framework"}  # Workload's default (megatron) where absent
_PLAN_KEYS = {
    "tensor": int,
    "context": int,
    "pipeline": int,
    "data": int,
    "virtual_pipeline": int,
    "zero_stage": int,
    "micro_batch_size": int,
    "reshard_after_forward": bool,
}


_KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _bad(record_id: str, where: str, expected: str) -> InvalidInput:
    return InvalidInput(
        f"record {record_id!r}: expected {expected}", field=f"paper-configs.{where}"
    )


def _typed(record_id: str, where: str, value: Any, kind: type) -> Any:
    """``value`` if it is of ``kind`` (an int where a float is asked is fine; a bool never
    stands for a number)."""
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        ok = True
    if not ok:
        raise _bad(record_id, where, f"{_KIND_NAMES[kind]}, got {value!r}")
    return value


def _section(r: dict[str, Any], rid: str, key: str, schema: dict[str, type]) -> dict[str, Any]:
    section = r.get(key)
    if not isinstance(section, dict):
        raise _bad(rid, key, "an object")
    unknown = sorted(set(section) - set(schema))
    if unknown:
        raise _bad(rid, f"{key}.{unknown[0]}", f"one of the keys {', '.join(schema)}")
    return {k: _typed(rid, f"{key}.{k}", v, schema[k]) for k, v in section.items()}


def convention_flops_per_token(w: Workload, convention: str, parameters: float) -> float:
    """Training FLOPs per token the way a source counts them (forward + backward).

    ``6N+12lsh``: 6 x parameters plus the full s x s attention square, 12 l s h (Kaplan et al.
    2020 with attention, the torchtitan / Megatron model-FLOP convention); ``megatron-eq3``:
    Narayanan et al. eq. (3) per token, 96 l h^2 (1 + s/6h + V/16lh), which counts the
    recompute forward pass.
    """
    s, layers, h, v = w.sequence_length, w.layers, w.hidden_size, w.vocab_size
    if convention == "6N+12lsh":
        return 6.0 * parameters + 12.0 * layers * s * h
    if convention == "megatron-eq3":
        return 96.0 * layers * h * h * (1 + s / (6 * h) + v / (16 * layers * h))
    raise ValueError(f"unknown FLOP convention {convention!r}")


def _measured_tokens_per_s(r: dict[str, Any], rid: str, w: Workload, gpus: int) -> float:
    """The source's measured throughput as tokens per second, from whichever it states."""
    m = r.get("measured")
    if not isinstance(m, dict) or not any(k in m for k in MEASURED_KEYS):
        raise _bad(rid, "measured", f"an object with one of {', '.join(MEASURED_KEYS)}")
    if "tflops_per_gpu" in m:
        convention = m.get("flop_convention")
        if convention not in FLOP_CONVENTIONS:
            raise _bad(rid, "measured.flop_convention", f"one of {', '.join(FLOP_CONVENTIONS)}")
        parameters = float(_typed(rid, "parameters", r.get("parameters", 0.0), float))
        if convention == "6N+12lsh" and not parameters > 0:
            raise _bad(rid, "parameters", "the parameter count N the 6N convention uses")
        tflops = float(_typed(rid, "measured.tflops_per_gpu", m["tflops_per_gpu"], float))
        return tflops * 1e12 * gpus / convention_flops_per_token(w, convention, parameters)
    if "samples_per_s" in m:
        samples = float(_typed(rid, "measured.samples_per_s", m["samples_per_s"], float))
        return samples * w.sequence_length
    step = float(_typed(rid, "measured.step_time_s", m["step_time_s"], float))
    return w.tokens_per_step / step


def paper_config_case(r: dict[str, Any]) -> PublishedCase:
    """One record of paper-configs.json as a case; a malformed record raises InvalidInput
    naming the record and the field."""
    rid = r.get("id")
    if not isinstance(rid, str) or not rid:
        raise InvalidInput("expected a non-empty id string", field="paper-configs.id")
    src = r.get("source")
    if not isinstance(src, dict) or not all(src.get(k) for k in ("short", "title", "locator")):
        raise _bad(rid, "source", "an object with a short citation, a title and a locator")
    system_name = r.get("system")
    if system_name not in SYSTEMS:
        raise _bad(rid, "system", f"one of {', '.join(SYSTEMS)}, got {system_name!r}")
    gpus = int(_typed(rid, "gpus", r.get("gpus"), int))
    model = _section(r, rid, "model", _MODEL_KEYS)
    missing = sorted(set(_MODEL_KEYS) - _OPTIONAL_MODEL_KEYS - set(model))
    if missing:
        raise _bad(rid, f"model.{missing[0]}", "a value (every model key is required)")
    tokens = float(_typed(rid, "training_tokens", r.get("training_tokens"), float))
    batch = int(_typed(rid, "global_batch_sequences", r.get("global_batch_sequences"), int))
    try:
        w = Workload(**model, training_tokens=tokens, global_batch_size=batch)
    except InvalidInput as exc:  # name the record and its key, not the Workload field
        key = (exc.field or "model").removeprefix("workload.")
        where = {"global_batch_size": "global_batch_sequences"}.get(key, key)
        if where in _MODEL_KEYS:
            where = f"model.{where}"
        raise InvalidInput(
            f"record {rid!r}: {exc.problem}", field=f"paper-configs.{where}"
        ) from exc
    plan = _section(r, rid, "plan", _PLAN_KEYS)
    tokens_per_s = _measured_tokens_per_s(r, rid, w, gpus)
    measured = tokens_per_s / w.tokens_per_step * hardware_flops_per_step(w) / gpus / 1e12
    return PublishedCase(
        id=rid,
        source=f"{src['short']}, {src['title']}, {src['locator']} [{rid}]",
        workload=w,
        cluster=cluster_for(SYSTEMS[system_name], gpus),
        fixed=PartialPlan(**plan),
        measured_hardware_tflops_per_gpu=measured,
    )


def load_paper_configs(path: Path | Traversable = PAPER_CONFIGS_JSON) -> list[dict[str, Any]]:
    """Every paper-configuration record (the bundled file unless ``path`` names another)."""
    records: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return records


def paper_config_cases(path: Path | Traversable = PAPER_CONFIGS_JSON) -> list[PublishedCase]:
    """Every paper-configs.json record as a case (built even where today's estimator refuses
    the plan: context parallelism, uneven pipelines)."""
    return [paper_config_case(r) for r in load_paper_configs(path)]


def visible_cases() -> list[PublishedCase]:
    """The visible published set: the calibration cases plus every paper configuration."""
    return calibration_cases() + paper_config_cases()


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


@dataclass(frozen=True)
class UnseenRun:
    """A published training throughput on a stated layout (data/unseen-runs.json):
    ``request`` is an EstimateRequest in its protobuf JSON form; ``known_gap`` says why the
    model misses issue 14's bar on it (None: it should not); ``series`` names the published
    series it belongs to (one stack and precision at growing scale; None: none);
    ``same_stack_as`` the H100 row of the same table, stack, model and precision (None:
    none), over which its published speed-up checks its GPU generation's standing."""

    id: str
    source: str
    published_tokens_per_s_per_gpu: float
    request: dict[str, Any]
    known_gap: str | None
    series: str | None = None
    same_stack_as: str | None = None


def unseen_runs(path: Path | Traversable = UNSEEN_RUNS_JSON) -> list[UnseenRun]:
    """The runs the model is checked on but never fitted to."""
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    return [
        UnseenRun(
            r["id"],
            r["source"],
            float(r["published_tokens_per_s_per_gpu"]),
            r["request"],
            r["known_gap"],
            r.get("series"),
            r.get("same_stack_as"),
        )
        for r in rows
    ]
