"""How long one training step, and the whole run, takes for a workload, cluster and plan.

Step time = compute + pipeline bubble + exposed communication + exposed host-CPU time
(docs/performance-model.md gives every formula and its source). The function is evaluated for
three scenarios (expected, optimistic, pessimistic efficiency factors) to give a training-time
range. ``estimate`` takes a complete plan and never searches; ``planner.plan_and_estimate``
searches plans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from optimizer.errors import InvalidInput
from optimizer.performance import calibration as fitted
from optimizer.performance import collectives as coll
from optimizer.performance.calibration import (
    CHUNK_PASS_OVERHEAD_S,
    NVLINK_ALPHA_S,
    NVLINK_EFFICIENCY,
    GpuGeneration,
    generation,
)
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.compute import (
    attention_share,
    head_dim_time_factor,
    kernel_head_dim,
    optimizer_step_bytes,
    sliding_window_note,
    straggler_fraction,
    timed_tokens_per_gpu,
)
from optimizer.performance.compute import (
    compute_s_per_token as compute_s_per_token,  # re-exported: the planner's lower bound
)
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.fabrics import (
    DEFAULT_FABRICS,
    FabricProfile,
    FabricTable,
    fabric_profile,
)
from optimizer.performance.goodput import describe as describe_goodput
from optimizer.performance.goodput import run_goodput
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.profile import CalibrationProfile
from optimizer.workload.flops import hardware_flops_per_step, model_flops_per_step
from optimizer.workload.memory import memory_per_gpu, memory_text
from optimizer.workload.model import Workload
from optimizer.workload.pipeline_layout import (
    PipelineLayout,
    bubble_fraction,
    combined_1f1b_refusal,
    combined_1f1b_unpaired_share,
    deepest_layout_interleaving,
    dualpipe_pipeline_refusal,
    dualpipe_refusal,
    dualpipe_unpaired_share,
    interleaving_refusal,
    layers_text,
    layout_note,
    mtp_note,
    pipeline_layout,
    unpaired_share,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

ACTIVATION_BYTES = 2.0  # bf16 activations on the wire (fp8 runs keep bf16 communication)
GRADIENT_BYTES = 2.0  # bf16 gradients reduced across data-parallel ranks
# A GPU's memory figure is in binary gigabytes (GiB: nvidia-smi shows 81,559 MiB of an "H100
# 80GB HBM3"); the model counts bytes in decimal GB. The driver keeps about 0.45 GiB of it,
# the CUDA context about 0.5 GiB and NCCL's buffers the rest of the reserve. Llama 3 405B ran
# tensor 8, pipeline 16, 8 chunks a stage on 80 GB H100s (Dubey et al. 2024, Table 4 and sec.
# 3.3.2), whose fullest stage needs 76.6 GiB in this model: the reserve is at most 3.4 GiB.
BYTES_PER_GIB = 2.0**30
MEMORY_USABLE_FRACTION = 0.96
SECONDS_PER_HOUR = 3600.0


@dataclass(frozen=True)
class StepBreakdown:
    """Seconds per optimizer step in each term (communication terms before overlap)."""

    compute_s: float
    pipeline_bubble_s: float
    tensor_parallel_s: float
    data_parallel_s: float
    pipeline_p2p_s: float
    all_to_all_s: float
    exposed_communication_s: float
    host_cpu_overhead_s: float
    # issue 16 (scale-up domain): the share of the communication terms above that runs on the
    # scale-out network rather than the scale-up fabric (before overlap), in total and for
    # the expert all-to-all alone; what the answer's text compares across domain sizes.
    network_s: float = 0.0
    all_to_all_network_s: float = 0.0
    # issue 14: the optimizer's update, fixed per-step costs (data loading, synchronisation)
    # and per-micro-batch costs (launches, schedule synchronisation), each added to the step.
    optimizer_step_s: float = 0.0
    step_overhead_s: float = 0.0
    micro_batch_overhead_s: float = 0.0
    # issue 14 (context): ring-attention K/V passes over the context group (before overlap;
    # what the attention compute does not hide is in exposed_communication_s).
    context_parallel_s: float = 0.0

    @property
    def step_time_s(self) -> float:
        return (
            self.compute_s
            + self.pipeline_bubble_s
            + self.exposed_communication_s
            + self.host_cpu_overhead_s
            + self.optimizer_step_s
            + self.step_overhead_s
            + self.micro_batch_overhead_s
        )


@dataclass(frozen=True)
class Estimate:
    """The estimator's answer; mirrors ``EstimateResponse``."""

    step_time_s: float
    training_time_hours: float
    training_time_hours_low: float
    training_time_hours_high: float
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    mfu: float
    memory_per_gpu_gb: float
    plan: ParallelPlan
    breakdown: StepBreakdown
    steps: float
    parameters: float
    tokens_per_s: float
    notes: tuple[str, ...] = ()
    gpus_used: int = 0  # GPUs the plan occupies (t x p x d); the rest of the cluster idles
    scale_up_gpus: int = 0  # GPUs per scale-up (NVLink) domain of the cluster estimated
    # issue 14 (goodput): productive share of wall-clock time, and the time without failures
    goodput: float = 1.0
    productive_training_time_hours: float = 0.0
    checkpoint_interval_minutes: float = 0.0  # productive minutes between checkpoints
    expected_interruptions: float = 0.0  # failures expected over the wall-clock run
    # issue 14 (pipeline layout): the layers of each stage the estimate timed, first to last
    # (the response's parallelism.stage_layers)
    stage_layers: tuple[int, ...] = ()
    # issue 14 (MoE): seconds a step the busiest expert rank adds over balanced routing, the
    # same plan re-timed (skew_note; 0: no rank waits for a busier one)
    expert_skew_s: float = 0.0
    # issue 14 (topology): a stated plan's step with its groups inside power-of-two parts of
    # its scale-up domains (domain_tiled_step_s; 0: no saving, or no such domain)
    domain_tiled_step_time_s: float = 0.0


def zero_refusal(w: Workload, pipeline: int, zero_stage: int) -> str:
    """Why the framework's engine will not run ``zero_stage`` ("" when it will). DeepSpeed's
    engine asserts ZeRO stage < 3 for any model with MoE layers ("MoE not supported with
    Stage 3", deepspeed/runtime/engine.py, _configure_zero_optimizer) and its PipelineEngine
    ZeRO stage < 2 ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
    deepspeed/runtime/pipe/engine.py); Megatron's schedules and PyTorch FSDP take every
    stage. DualPipe (Workload.pipeline_schedule) is modelled with the weights resident on
    their ranks, as DeepSeek-V3 trained (ZeRO-1: report sec. 3.2.3), so ZeRO-3 is refused."""
    if w.dualpipe and zero_stage == 3:
        return (
            "zero_stage 3 with workload.pipeline_schedule dualpipe: the model times DualPipe "
            "with each rank's two stages resident (DeepSeek-V3 trained it under ZeRO-1); "
            "expected at most 2"
        )
    if w.framework != "deepspeed":
        return ""
    if w.is_moe and zero_stage == 3:
        return (
            f"zero_stage 3 with the mixture of experts {w.name} and workload.framework "
            "deepspeed: DeepSpeed's engine asserts 'MoE not supported with Stage 3'; "
            "expected at most 2"
        )
    if pipeline > 1 and zero_stage >= 2:
        return (
            f"zero_stage {zero_stage} with pipeline {pipeline} and workload.framework "
            "deepspeed: DeepSpeed's PipelineEngine runs ZeRO stage 0 or 1 only (ZeRO-2 and "
            "ZeRO-3 are incompatible with pipeline parallelism); expected at most 1"
        )
    return ""


def check_pipeline_engine(
    w: Workload, pipeline: int, virtual_pipeline: int, zero_stage: int
) -> None:
    """Refuse what the framework's engine cannot run: interleaving, or a ZeRO stage
    (zero_refusal) with DeepSpeed's."""
    if virtual_pipeline > 1 and w.framework == "deepspeed":
        raise InvalidInput(
            f"virtual_pipeline {virtual_pipeline} with workload.framework deepspeed: "
            "DeepSpeed's PipelineEngine runs one chunk per stage (1F1B); expected 1",
            field="parallelism.virtual_pipeline",
        )
    if virtual_pipeline > 1 and w.dualpipe:
        raise InvalidInput(
            f"virtual_pipeline {virtual_pipeline} with workload.pipeline_schedule dualpipe: "
            "DualPipe's chunks are a rank's two stages, not virtual stages; expected 1",
            field="parallelism.virtual_pipeline",
        )
    if why := zero_refusal(w, pipeline, zero_stage):
        raise InvalidInput(why, field="parallelism.zero_stage")


def check_combined_1f1b(
    w: Workload, pipeline: int, virtual_pipeline: int | None, expert: int | None
) -> None:
    """Refuse the degrees Megatron-Core's Combined 1F1B does not run
    (Workload.pipeline_schedule combined_1f1b; transformer_config.py asserts them): a
    pipeline without interleaving (combined_1f1b_refusal) and no expert parallelism, whose
    all-to-all it overlaps. None: a degree the planner chooses."""
    if not w.combined_1f1b:
        return
    if virtual_pipeline is not None and (why := combined_1f1b_refusal(pipeline, virtual_pipeline)):
        raise InvalidInput(
            f"workload.pipeline_schedule combined_1f1b: {why}", field="parallelism.virtual_pipeline"
        )
    if expert is not None and expert < 2:
        raise InvalidInput(
            "workload.pipeline_schedule combined_1f1b overlaps the expert all-to-all, and "
            "Megatron-Core asserts expert parallelism for it: expected expert >= 2",
            field="parallelism.expert",
        )


def reshard_refusal(zero_stage: int, reshard_after_forward: bool) -> str:
    """Why a plan cannot keep its gathered weights ("" when it can): only FSDP (ZeRO-3)
    gathers them."""
    if reshard_after_forward or zero_stage == 3:
        return ""
    return (
        f"reshard_after_forward false applies to zero_stage 3 (FSDP); got zero_stage {zero_stage}"
    )


def check_plan(w: Workload, c: ClusterSpec, plan: ParallelPlan) -> None:
    """Refuse a plan that cannot run, naming the parallelism field at fault."""
    for name in (
        "tensor",
        "pipeline",
        "data",
        "expert",
        "virtual_pipeline",
        "micro_batch_size",
        "context",
    ):
        if getattr(plan, name) < 1:
            raise InvalidInput(
                f"must be >= 1, got {getattr(plan, name)}", field=f"parallelism.{name}"
            )
    if plan.gpus != c.gpus:
        raise InvalidInput(
            f"tensor x pipeline x context x data = {plan.tensor} x {plan.pipeline} x "
            f"{plan.context} x {plan.data} = {plan.gpus} does not match the cluster's "
            f"{c.gpus} GPUs",
            field="parallelism",
        )
    check_degrees(w, c, plan)


def check_degrees(w: Workload, c: ClusterSpec, plan: ParallelPlan) -> None:
    """check_plan's rules but the GPU count: what each degree asks of the workload and the
    GPUs, whatever the others (the planner names a fixed degree no size can take)."""
    if w.tensor_split % plan.tensor:
        # Megatron-Core splits heads, K/V groups and FFN columns evenly (Workload.tensor_split)
        name, n = next((name, n) for name, n in w.tensor_split_widths if n % plan.tensor)
        raise InvalidInput(
            f"tensor {plan.tensor} does not divide {name} {n} (every tensor rank holds an "
            "equal share of the heads, the K/V groups and the FFN)",
            field="parallelism.tensor",
        )
    # --- issue 14, pipeline: layers need not split evenly (the slowest stage is timed);
    # every stage holds a layer and every one of its v chunks too.
    if plan.pipeline > w.layers:
        raise InvalidInput(
            f"pipeline {plan.pipeline} exceeds the {w.layers} layers (each stage needs one)",
            field="parallelism.pipeline",
        )
    if w.stage_layers and len(w.stage_layers) != plan.pipeline:
        raise InvalidInput(
            f"pipeline {plan.pipeline}, but parallelism.stage_layers lays the layers on "
            f"{len(w.stage_layers)} stages",
            field="parallelism.pipeline",
        )
    deepest = deepest_layout_interleaving(w, plan.pipeline)
    if plan.virtual_pipeline > deepest:
        fills = (
            f"the chunks parallelism.stage_layers {layers_text(w.stage_layers)} fills"
            if w.stage_layers
            else f"(layers + 2) / pipeline = ({w.layers} + 2) / {plan.pipeline}"
        )
        raise InvalidInput(
            f"virtual_pipeline {plan.virtual_pipeline} exceeds {fills} (each chunk needs a "
            "layer but the first stage's embedding chunk and the last stage's output chunk); "
            f"expected at most {deepest}",
            field="parallelism.virtual_pipeline",
        )
    if plan.virtual_pipeline > 1 and plan.pipeline == 1:
        raise InvalidInput(
            "virtual_pipeline > 1 needs pipeline > 1 (chunks interleave across stages)",
            field="parallelism.virtual_pipeline",
        )
    check_pipeline_engine(w, plan.pipeline, plan.virtual_pipeline, plan.zero_stage)
    if why := reshard_refusal(plan.zero_stage, plan.reshard_after_forward):
        raise InvalidInput(why, field="parallelism.reshard_after_forward")
    # --- end issue 14, pipeline
    if refusal := expert_tensor_refusal(w, plan.tensor, plan.expert_tensor_degree):
        raise InvalidInput(refusal, field="parallelism.expert_tensor")
    if plan.folded:
        spans = plan.tensor * plan.data
        if spans % (plan.expert * plan.expert_tensor_degree) or w.experts % plan.expert:
            raise InvalidInput(
                f"expert {plan.expert} x expert_tensor {plan.expert_tensor_degree} must divide "
                f"tensor x data = {spans}, and expert the {w.experts} experts",
                field="parallelism.expert",
            )
    elif plan.data % plan.expert or w.experts % plan.expert:
        raise InvalidInput(
            f"expert {plan.expert} must divide both data {plan.data} and experts {w.experts}"
            + (
                " (or, with parallelism.expert_tensor 1, tensor x data)"
                if w.is_moe and plan.tensor > 1
                else ""
            ),
            field="parallelism.expert",
        )
    check_combined_1f1b(w, plan.pipeline, plan.virtual_pipeline, plan.expert)
    if w.global_batch_size % (plan.data * plan.micro_batch_size):
        raise InvalidInput(
            f"global_batch_size {w.global_batch_size} is not a multiple of data x "
            f"micro_batch_size = {plan.data * plan.micro_batch_size}",
            field="parallelism.micro_batch_size",
        )
    if w.dualpipe and (
        why := dualpipe_refusal(
            plan.pipeline, w.global_batch_size // (plan.data * plan.micro_batch_size)
        )
    ):
        stages = "parallelism.stage_layers" if w.stage_layers else "parallelism.pipeline"
        raise InvalidInput(
            f"workload.pipeline_schedule dualpipe: {why}",
            field=stages
            if dualpipe_pipeline_refusal(plan.pipeline)
            else "parallelism.micro_batch_size",
        )
    if plan.virtual_pipeline > 1:
        why = interleaving_refusal(
            plan.pipeline, w.global_batch_size // (plan.data * plan.micro_batch_size)
        )
        if why:
            raise InvalidInput(
                f"virtual_pipeline {plan.virtual_pipeline}: {why}; expected 1, or a "
                "micro_batch_size or data degree that makes it one",
                field="parallelism.virtual_pipeline",
            )
    check_context(w, plan)
    if plan.zero_stage not in (0, 1, 2, 3):
        raise InvalidInput(
            f"expected 0, 1, 2 or 3, got {plan.zero_stage}", field="parallelism.zero_stage"
        )
    if w.precision == "fp8" and c.gpu_peak_fp8_tflops is None:
        raise InvalidInput(
            f"fp8 needs the GPU's dense FP8 peak, and the cluster gives no "
            f"gpu_peak_fp8_tflops{f' for {c.gpu_model}' if c.gpu_model else ''}; expected "
            "cluster.gpu_peak_fp8_tflops (H100, H200, B200: twice the BF16 peak) or precision "
            "bf16 (A100 has no FP8 tensor cores)",
            field="workload.precision",
        )


# --- issue 14 (context): context-parallel rules ------------------------------------------------
def context_chunks(w: Workload, context: int) -> int:
    """Equal chunks the sequence is cut into over ``context`` ranks. Megatron-LM's ring
    attention cuts a causal sequence into 2 x context (each rank takes one early and one late
    chunk, so the masked work balances); DeepSpeed-Ulysses gives every rank the whole
    sequence of its heads inside attention, balanced as it is, so context chunks."""
    return 2 * context if w.causal and w.framework != "deepspeed" else context


def ulysses_refusal(w: Workload, tensor: int, context: int) -> str:
    """Why DeepSpeed will not run ``context`` > 1 with ``tensor`` ("" when it will). Its
    sequence parallelism is DeepSpeed-Ulysses (Jacobs et al., arXiv:2309.14509): all-to-alls
    that hand each rank whole query and K/V heads (deepspeed/sequence/layer.py splits the head
    dimension by the group size; the uneven-heads path assumes as many K/V as query heads), and
    Megatron-DeepSpeed runs it with tensor parallel size 1 only ("Currently we only support
    MP=1 with SP>1", examples_deepspeed/sequence_parallel)."""
    if tensor > 1:
        return (
            f"Megatron-DeepSpeed runs DeepSpeed-Ulysses sequence parallelism with tensor "
            f"parallel size 1 only, not tensor {tensor}"
        )
    if w.attention_heads % context or w.kv_heads % context:
        return (
            f"DeepSpeed-Ulysses hands each of its {context} ranks whole heads, and the "
            f"{w.attention_heads} query and {w.kv_heads} K/V heads do not split evenly"
        )
    return ""


def context_refusal(w: Workload, tensor: int, context: int) -> tuple[str, str]:
    """(why, field) the framework will not run ``context`` ranks with ``tensor`` (("", "")
    when it will): no sliding window (not modelled with context ranks), the context chunks
    (context_chunks), Ulysses' rules under DeepSpeed
    (ulysses_refusal) and, with sequence parallelism (which the memory model assumes wherever
    tensor > 1), each rank's tokens split again over the tensor group, with or without
    context parallelism."""
    cp, s = context, w.sequence_length
    if cp > 1 and w.windowed_layers:
        why = (
            f"context {cp} with sliding-window attention (workload.sliding_window_tokens): "
            "ring attention that passes only the window's keys and values is not modelled; "
            "expected context 1"
        )
        return why, "parallelism.context"
    if cp > 1 and s % (chunks := context_chunks(w, cp)):
        why = (
            f"sequence_length {s} does not split into {chunks} equal chunks "
            f"({'2 x ' if chunks > cp else ''}context {cp})"
        )
        return why, "parallelism.context"
    if cp > 1 and w.framework == "deepspeed" and (ulysses := ulysses_refusal(w, tensor, cp)):
        why = (
            f"context {cp} with workload.framework deepspeed: {ulysses}; expected tensor 1 and "
            f"a context degree that divides {math.gcd(w.attention_heads, w.kv_heads)}"
        )
        return why, "parallelism.context"
    if (s // cp) % tensor:
        tokens = (
            f"the {s // cp} tokens of a context rank" if cp > 1 else f"the {s} tokens of a sequence"
        )
        why = f"{tokens} do not split over tensor {tensor} (sequence parallelism)"
        return why, "parallelism.context" if cp > 1 else "parallelism.tensor"
    return "", ""


def check_context(w: Workload, plan: ParallelPlan) -> None:
    """Refuse a context degree the framework will not run with the plan's tensor degree."""
    why, field = context_refusal(w, plan.tensor, plan.context)
    if why:
        raise InvalidInput(why, field=field)


# --- end issue 14 (context) ---------------------------------------------------------------------


def usable_memory_gb(c: ClusterSpec) -> float:
    """Decimal GB a rank may fill of its GPU's ``gpu_memory_gb`` (binary, as vendors state it)."""
    return c.gpu_memory_gb * BYTES_PER_GIB / 1e9 * MEMORY_USABLE_FRACTION


Flows = tuple[float, ...]  # line-rate flows out of one block of each ClusterSpec.uplink_tiers


def _ring_flows(c: ClusterSpec, nodes: int) -> Flows:
    """Line-rate flows a ring (one per rail) over ``nodes`` packed nodes sends out of a block
    of each uplink tier: a ring leaves each block it spans once per rail, and not at all
    inside one block or in a direct network (a ring embeds in a torus without crossing its
    cut)."""
    flows = []
    for t in c.uplink_tiers:
        flows.append(float(t.rails) if nodes > t.nodes else 0.0)
    return tuple(flows)


def _p2p_flows(c: ClusterSpec, stride: int, stages: int) -> Flows:
    """Line-rate flows pipeline sends put on a block's uplinks, per uplink tier: of a block's
    B nodes, the min(stride, B) whose partner ``stride`` nodes on sits under another block
    (none when the whole pipeline, stride x stages nodes, fits under one block)."""
    span = stride * stages
    flows = []
    for t in c.uplink_tiers:
        flows.append(float(min(stride, t.nodes) * t.rails) if span > t.nodes else 0.0)
    return tuple(flows)


def uplink_slowdown(uplinks: float, flows: float, adaptive_routing: bool) -> float:
    """Slow-down of line-rate flows leaving a block together (``flows`` of them) over its
    ``uplinks`` line rates (endpoints x 1 / oversubscription of the tier above it).

    Adaptive routing (InfiniBand AR, Spectrum-X) spreads the flows: min(flows, uplinks)
    line rates are delivered. Static ECMP hashes each flow onto one of k uplinks at random;
    the expected number of busy uplinks is k (1 - (1 - 1/k)^flows), about 63 % of k when
    flows = k is large (Al-Fares et al., SIGCOMM 2008, sec. 2.3; Hedera, Al-Fares et al.,
    NSDI 2010, sec. 2), and colliding flows share their uplink. The slow-down is flows over
    what is delivered, never below 1 (a flow never beats its NIC).
    """
    if flows <= 0 or uplinks <= 0:  # no switched tier above (a single rack-scale node)
        return 1.0
    if adaptive_routing or flows <= 1:  # a single flow has nothing to collide with
        delivered = min(flows, uplinks)
    else:
        k = max(1.0, uplinks)
        delivered = uplinks * (1.0 - (1.0 - 1.0 / k) ** flows)
    return max(1.0, flows / delivered)


def leaf_slowdown(
    c: ClusterSpec, flows: Flows, adaptive_routing: bool, beside: Flows = (), share: float = 0.0
) -> float:
    """Slow-down of traffic putting ``flows`` on a block of each uplink tier, with ``share``
    of the ``beside`` flows in flight next to it: the slowest tier's (a flow runs at the rate
    of its most congested link)."""
    worst = 1.0
    for i, tier in enumerate(c.uplink_tiers):  # one flow count per tier
        f = flows[i] + share * beside[i] if beside else flows[i]
        if f > 0:
            slowdown = uplink_slowdown(tier.uplinks, f, adaptive_routing)
            if slowdown > worst:
                worst = slowdown
    return worst


def oversubscribed_block_nodes(c: ClusterSpec) -> int:
    """Nodes under one block of the oversubscribed tier (the leaf, or the pod)."""
    return c.uplink_tiers[-1].nodes if c.uplink_tiers else c.nodes_per_leaf


def _all_to_all_multiplier(c: ClusterSpec, nodes: int, busiest: float = 1.0) -> float:
    """Slow-down of uniform all-to-all traffic spanning ``nodes`` packed nodes.

    A share 1 - 1/L of the traffic leaves its block (L blocks spanned: leaves, or the pods of
    a tree oversubscribed at its aggregation tier) and crosses a tier with bisection_ratio of
    the non-blocking bandwidth (1/oversubscription in a fat-tree; the global links of a
    dragonfly; the cut of a torus): time x ((1 - x) + x / bisection_ratio).
    ``busiest``: the timed rank's bytes over the mean rank's (Part.busiest), which the tier
    carries: crossing_slowdown.
    """
    leaves = -(-nodes // oversubscribed_block_nodes(c))
    if leaves <= 1:
        return 1.0
    crossing = 1.0 - 1.0 / leaves
    return (1.0 - crossing) + crossing * crossing_slowdown(c.topology.bisection_ratio, busiest)


def crossing_slowdown(ratio: float, busiest: float) -> float:
    """The slow-down of the bytes the busiest rank of an all-to-all sends across a tier of
    ``ratio`` x the non-blocking bandwidth, ``busiest`` x the mean rank's bytes: the tier
    carries every rank's, the mean, in 1 / ratio of the time they take at line rate, the
    busiest rank's NIC its own in ``busiest`` x that; the later ends the transfer, so its
    bytes are slowed max(1, 1 / (busiest x ratio)): an imbalance the tier has room for
    costs the busiest rank's NIC only (1 / ratio when balanced, as before)."""
    return 1.0 / min(1.0, busiest * ratio)


def group_shape(shape: tuple[int, ...], nodes: int) -> tuple[int, ...]:
    """Sides of the sub-torus that ``nodes`` consecutive nodes fill (first side fastest), the
    Megatron placement: a group of 512 nodes of a 16 x 16 x 8 torus is a 16 x 16 x 2 block,
    of a 2,053-node ring a chain of 512."""
    sides, left = [], nodes
    for k in shape:
        sides.append(min(k, left))
        left = -(-left // k)
    return tuple(sides)


def torus_ring_steps(shape: tuple[int, ...], nodes: int) -> int:
    """Latency steps of one reduce-scatter (or all-gather) over ``nodes`` consecutive nodes of
    a torus run as dimension-ordered rings, one ring per side in turn: sum(d_i - 1) instead of
    a flat ring's n - 1 (Sack & Gropp, "Collective Algorithms for Multiported Torus Networks",
    ACM TOPC 2015; the TPU v4 pod's 3-D torus, Jouppi et al., ISCA 2023). Each ring uses the
    node's ports of its side, so the byte term stays the ring's bound."""
    return sum(d - 1 for d in group_shape(shape, nodes))


def torus_distance(shape: tuple[int, ...], stride: int) -> tuple[int, ...]:
    """Link hops per side between node i and node i + ``stride`` (first side fastest), the
    shorter way round each ring: (0, 0, 2) for a stride of 512 on 16 x 16 x 8, (512,) on a
    2,053-node ring."""
    out = []
    for k in shape:
        delta = stride % k
        out.append(min(delta, k - delta))
        stride //= k
    return tuple(out)


def _torus_collective(cost: coll.Cost, nodes: int, shape: tuple[int, ...]) -> coll.Cost:
    """A flat ring collective over ``nodes`` (steps a multiple of n - 1) re-timed as
    dimension-ordered rings: the same bytes, sum(d_i - 1) steps per pass."""
    if nodes <= 1 or not cost.steps:
        return cost
    return coll.Cost(cost.bytes, cost.steps * torus_ring_steps(shape, nodes) / (nodes - 1))


def _torus_all_to_all_multiplier(
    c: ClusterSpec, shape: tuple[int, ...], nodes: int, busiest: float = 1.0
) -> float:
    """Slow-down of uniform all-to-all over ``nodes`` consecutive torus nodes: half of it
    crosses the block's bisection, 2 n / max(d_i) links (n / 2 for a largest side of 2; the
    parallel links of each neighbour pair counted), against n x NIC ports / 2 non-blocking
    (Dally & Towles, "Principles and Practices of Interconnection Networks", 2004, ch. 3);
    ``busiest`` as _all_to_all_multiplier's."""
    sides = group_shape(shape, nodes)
    largest = max(sides)
    if largest <= 1:
        return 1.0
    ports = sum(2 if k >= 3 else (1 if k == 2 else 0) for k in shape)
    parallel = max(1, c.nics_per_node // max(1, ports))
    cut_links = (2 * nodes / largest if largest >= 3 else nodes / 2) * parallel
    ratio = min(1.0, cut_links / (nodes * c.nics_per_node / 2))
    crossing = 1.0 - 1.0 / nodes
    return (1.0 - crossing) + crossing * crossing_slowdown(ratio, busiest)


def _hops(c: ClusterSpec, nodes: int, neighbour: bool) -> int:
    """Switch hops on the path: one leaf when the group fits under it, else the worst path."""
    if nodes <= c.nodes_per_leaf:
        return 0 if c.topology.direct else 1
    if neighbour and c.topology.direct:
        return 1
    return c.topology.max_switch_hops


_Seconds = TypeVar("_Seconds", float, "npt.NDArray[np.float64]")


class KernelSpeed(NamedTuple):
    """How fast a scenario (EstimateCase) runs a step's compute: its kernel efficiency, and
    its element-wise work over the built-in model's (a calibration profile's fusion). The one
    place the compute's two parts are combined, so the planner's bounds and StepModel's steps
    cannot part ways."""

    kernel_efficiency: float
    elementwise_scale: float = 1.0

    @classmethod
    def of(cls, sc: EstimateCase) -> KernelSpeed:
        return cls(sc.kernel_efficiency, sc.elementwise_scale)

    def kernel_s(self, tensor_core_s: _Seconds, elementwise_s: _Seconds) -> _Seconds:
        """Compute seconds, before the straggler's stretch, of ``tensor_core_s`` at large-GEMM
        efficiency 1 and ``elementwise_s`` at the built-in passes (floats or arrays)."""
        return tensor_core_s / self.kernel_efficiency + elementwise_s * self.elementwise_scale


@dataclass(frozen=True)
class EstimateCase:
    """One scenario's parameters (expected, optimistic, pessimistic), after calibration."""

    kernel_efficiency: float
    fabric_efficiency: float
    base_latency_s: float
    host_cpu_s_per_byte: float
    # issue 14: fixed seconds per optimizer step (data loading, synchronisation), and the
    # framework's achieved share of the fabric's collective bandwidth.
    step_overhead_s: float = 0.0
    collective_efficiency: float = 1.0
    # issue 14 (the range): flash attention's time over its time at the fitted attention
    # efficiency; below 1 in the optimistic scenario (calibration.optimistic_attention_factor)
    attention_time_factor: float = 1.0
    # issue 14 (calibrate): the element-wise (memory-bound) work over the built-in model's, a
    # framework's kernel fusion as a calibration profile fits it (1: the built-in passes)
    elementwise_scale: float = 1.0


def expert_tensor_refusal(w: Workload, tensor: int, expert_tensor: int) -> str | None:
    """Why the expert layers cannot take this tensor degree (None: they can). Folding
    (ParallelPlan) is Megatron-Core's, for MoE layers, to 1: a degree between 1 and the
    tensor degree would need the tensor collectives of a group this model does not place."""
    if expert_tensor == tensor:
        return None
    if not w.is_moe:
        return (
            f"expert_tensor {expert_tensor} applies to mixture-of-experts workloads only; this one "
            f"is dense (experts 1): expected the tensor degree {tensor} or no value"
        )
    if w.framework != "megatron":
        return (
            f"expert_tensor {expert_tensor}: MoE parallel folding is Megatron-Core's "
            f"(--expert-tensor-parallel-size), not {w.framework}'s; expected the tensor degree "
            f"{tensor} or no value"
        )
    if expert_tensor != 1:
        return (
            f"expected 1 (each expert whole on its rank) or the tensor degree {tensor}, got "
            f"{expert_tensor}"
        )
    return None


def tensor_collective_share(w: Workload, folded: bool) -> float:
    """Share of a layer's tensor collectives (an all-gather of h and a reduce-scatter of h
    around the attention, the same around the FFN) a step runs. Around the attention MLA
    gathers its latents instead of h (Workload.attention_gather_width). Around the FFN
    nothing in an MoE layer when the experts are folded (each tensor rank routes its own
    sequence shard to the experts and takes their outputs back), unless a shared expert,
    split over the tensor ranks like a dense FFN, gathers its input and reduce-scatters its
    output there (Megatron-Core's SharedExpertMLP); the dense layers' always."""
    attention = (w.attention_gather_width / w.hidden_size + 1.0) / 2.0
    # a dense layer's FFN is split over the tensor ranks, folded or not
    moe_ffn = 0.0 if w.is_moe and folded and not w.shared_expert_ffn_hidden_size else 1.0
    ffn = moe_ffn * w.expert_layer_share + w.dense_layers / w.transformer_blocks
    return (attention + ffn) / 2.0


def rank_tokens(w: Workload, plan: ParallelPlan) -> float:
    """A context rank's tokens per micro-batch (issue 14: Megatron order tensor, context,
    data, pipeline), what each per-micro-batch collective moves activations of."""
    return plan.micro_batch_size * w.sequence_length / plan.context


def layer_collectives_per_step(w: Workload, data: int, micro_batch: int, pipeline: int) -> float:
    """Per-layer collectives one GPU runs per step (tensor all-reduces; MoE all-to-alls).

    Megatron: 2 all-reduces forward (attention, MLP) + 2 backward per layer, +2 when the
    forward is recomputed (Narayanan et al. sec. 3.3). MoE: dispatch + combine, the same count
    per MoE layer (Lepikhin et al., GShard, 2021). An MTP module's block runs them too, on
    the last stage; they are counted as a stage's mean, as the compute is (pipeline_layout
    balances the stages' compute).
    """
    per_layer = 6 if w.activation_recompute == "full" else 4
    micro_batches = w.global_batch_size // (data * micro_batch)
    return micro_batches * w.transformer_blocks / pipeline * per_layer


def _layer_collectives_per_step(w: Workload, plan: ParallelPlan) -> float:
    return layer_collectives_per_step(w, plan.data, plan.micro_batch_size, plan.pipeline)


def nvlink_bytes_per_s(c: ClusterSpec) -> float:
    return c.intra_node_gbytes_per_s * 1e9 * NVLINK_EFFICIENCY


class _NetTerm:
    """A network collective repeated over a step: its cost, topology slow-down and hops."""

    __slots__ = ("cost", "hops", "multiplier")

    def __init__(self, cost: coll.Cost, multiplier: float, hops: int) -> None:
        self.cost, self.multiplier, self.hops = cost, multiplier, hops

    def seconds(
        self,
        rate_bytes_per_s: float,
        latency_s: float,
        hop_s: float,
        cpu_s_per_byte: float = 0.0,
        multiplier: float | None = None,
    ) -> float:
        """Seconds on the wire at ``rate_bytes_per_s`` (the scenario's:
        scenario_rate_bytes_per_s) over the uplink slow-down, ``latency_s`` per step plus
        ``hop_s`` per switch hop; or in the host's TCP stack when that is slower.

        The stack processes bytes while they flow, so a TCP collective takes max(wire, cpu),
        never their sum (Foong et al., "TCP performance re-visited", ISPASS 2003):
        ``cpu_s_per_byte`` is host-CPU seconds per byte this GPU sends (0 for RDMA).
        ``multiplier`` replaces the term's own slow-down (traffic sharing its uplinks).
        """
        slowdown = self.multiplier if multiplier is None else multiplier
        wire = wire_bytes_per_s(rate_bytes_per_s, slowdown, cpu_s_per_byte)
        cost = self.cost
        return cost.bytes / wire + cost.steps * (latency_s + self.hops * hop_s)


def wire_bytes_per_s(rate_bytes_per_s: float, slowdown: float, cpu_s_per_byte: float) -> float:
    """What a GPU's traffic moves at: the scenario's rate over the uplink slow-down, or the
    host's TCP stack's rate where that is slower (``cpu_s_per_byte`` 0: RDMA)."""
    wire = rate_bytes_per_s / slowdown
    if cpu_s_per_byte > 0:
        wire = min(wire, 1.0 / cpu_s_per_byte)
    return wire


def scenario_rate_bytes_per_s(line_bytes_per_s: float, sc: EstimateCase) -> float:
    """A GPU's scale-out line rate as the scenario achieves it: the framework's collective
    efficiency derates the achieved bandwidth like the fabric's."""
    return line_bytes_per_s * sc.fabric_efficiency * sc.collective_efficiency


class Part(NamedTuple):
    """One collective of a plan, per step: its cost, the share that leaves the node, the
    nodes its group spans, its traffic pattern ("ring" or "all_to_all") and how many nodes
    apart two partners sit (1: neighbours; pipeline stages sit a whole stage apart).
    ``in_network`` is the same all-reduces reduced by the switches (None: not an all-reduce).
    ``busiest``: an all-to-all's timed rank's bytes (``cost``) over the mean rank's, which
    the network's tiers carry (_all_to_all_multiplier)."""

    cost: coll.Cost
    remote_share: float
    nodes: int
    pattern: str
    stride: int = 1
    in_network: coll.Cost | None = None
    busiest: float = 1.0

    def times(self, k: float) -> Part:
        """This collective ``k`` times in a row."""
        reduced = None if self.in_network is None else self.in_network.times(k)
        return Part(
            self.cost.times(k),
            self.remote_share,
            self.nodes,
            self.pattern,
            self.stride,
            reduced,
            self.busiest,
        )


class _DataParallel(NamedTuple):
    """One data-parallel reduction, per step: its scale-up part and its network ring and tree
    forms over ``nodes`` domains, which span ``span`` hosts. ``collectives`` counts the equal
    collectives these totals are made of (3 per FSDP unit and micro-batch), each paying its
    own latency; ``in_network`` is the switch-reduced form of an all-reduce (None for FSDP's
    gathers and reduce-scatters), ``nvlink_in_network`` its NVLS form inside one domain."""

    nvlink: coll.Cost
    ring: coll.Cost
    tree: coll.Cost
    nodes: int
    span: int
    collectives: int = 1
    in_network: coll.Cost | None = None
    nvlink_in_network: coll.Cost | None = None


class PlanTraffic(NamedTuple):
    """The collectives one GPU runs per step under a plan; independent of the network."""

    tensor: Part
    all_to_all: Part | None
    p2p: Part | None
    data: tuple[_DataParallel, ...]
    context: Part | None = None  # issue 14: ring attention over the context group


def fsdp_units(w: Workload, plan: ParallelPlan) -> int:
    """FSDP units of a pipeline stage: one per transformer layer, the wrapping policy of
    llm-foundry and the Llama recipes (Zhao et al., PyTorch FSDP, VLDB 2023, sec. 3.2)."""
    return max(1, -(-w.layers // plan.pipeline))


def data_parallel_collectives(w: Workload, plan: ParallelPlan) -> int:
    """Data-parallel collectives a GPU runs per step, each paying its latency.

    ZeRO-3 / FSDP FULL_SHARD: per unit and micro-batch, an all-gather for the forward, one
    for the backward and a reduce-scatter of the gradients. Without re-sharding after the
    forward (SHARD_GRAD_OP): one all-gather and one reduce-scatter per unit and step. ZeRO 0-2:
    one all-reduce (ZeRO-1/2's reduce-scatter + all-gather move the same bytes) per step.
    """
    if plan.zero_stage != 3:
        return 1
    m = w.global_batch_size // (plan.data * plan.micro_batch_size)
    units = fsdp_units(w, plan)
    return 3 * units * m if plan.reshard_after_forward else 2 * units


def plan_traffic(
    w: Workload, plan: ParallelPlan, gpus_per_node: int, domain_gpus: int | None = None
) -> PlanTraffic:
    """Every collective of ``plan`` with its placement (Megatron order: tensor innermost,
    then data with expert parallelism inside it, then pipeline). Not cached itself: what
    the optimizer times on many candidate networks is cached per plan and hardware
    (``_plan_core``; the planner's ``PlanArrays``), and a cache of these tens of thousands
    of small objects cost more in garbage-collection passes than it saved (issue 14, speed).

    ``gpus_per_node`` is the host (its NICs are the node's); ``domain_gpus`` the GPUs sharing
    the scale-up fabric (NVLink, Infinity Fabric; None: the host). A group that fits in the
    domain stays on it; what crosses the domain goes on the scale-out network, whose spans are
    counted in hosts (docs/performance-model.md, "Scale-up domain").
    """
    gpn = gpus_per_node
    dom = domain_gpus or gpn
    tensor, a2a, data, context = depth_free_traffic(w, plan, gpn, dom)
    return PlanTraffic(tensor, a2a, pipeline_traffic(w, plan, gpn, dom), data, context)


def depth_free_traffic(
    w: Workload, plan: ParallelPlan, gpn: int, dom: int
) -> tuple[Part, Part | None, tuple[_DataParallel, ...], Part | None]:
    """The tensor, expert all-to-all, data-parallel and context collectives of ``plan``
    (plan_traffic): none depends on the interleaving depth, so the planner works them out
    once for all the depths of a plan (plan_pricing.plan_arrays), each part once for the
    plans that share what it reads."""
    return (
        tensor_traffic(w, plan, gpn, dom),
        expert_traffic(w, plan, gpn, dom),
        data_traffic(w, plan, gpn, dom),
        _context_part(w, plan, gpn, dom),
    )


def tensor_traffic(w: Workload, plan: ParallelPlan, gpn: int, dom: int) -> Part:
    """The tensor group's ring all-reduces of the micro-batch activations, per step (reads
    the tensor, pipeline, data, micro-batch and context degrees)."""
    share = tensor_collective_share(w, plan.folded)
    return tensor_collective(w, plan, gpn, dom).times(_layer_collectives_per_step(w, plan) * share)


def tensor_collective(w: Workload, plan: ParallelPlan, gpn: int, dom: int) -> Part:
    """One of tensor_traffic's all-reduces (reads the tensor, micro-batch and context degrees:
    the planner prices the plans that share them from one)."""
    t = plan.tensor
    activation = rank_tokens(w, plan) * w.hidden_size * ACTIVATION_BYTES
    straddles = _straddles(t, dom)
    return Part(
        coll.ring_all_reduce(activation, t),
        1.0 if t > dom or straddles else 0.0,
        max(-(-t // gpn), 2 if straddles else 1),
        "ring",
        in_network=coll.in_network_all_reduce(activation, t),
    )


def expert_traffic(w: Workload, plan: ParallelPlan, gpn: int, dom: int) -> Part | None:
    """Expert parallel all-to-all, per step: the MoE layers' (not the dense layers'). Reads
    what tensor_traffic does and the expert degree."""
    a2a = expert_collective(w, plan, gpn, dom)
    if a2a is None:
        return None
    return a2a.times(_layer_collectives_per_step(w, plan) * w.expert_layer_share)


def expert_collective(w: Workload, plan: ParallelPlan, gpn: int, dom: int) -> Part | None:
    """One of expert_traffic's all-to-alls; with sequence parallelism a tensor rank routes
    1/t of the tokens, k copies each. Ranks of the group in the same domain use the scale-up
    fabric. With ``node_deduplicated`` dispatch a token crosses the network once per other
    domain its experts are in (collectives.expected_remote_domains) and is forwarded over the
    scale-up fabric to the experts' ranks there, both at once (DeepEP's internode kernels),
    timed at the mean rank's load: a domain's NICs carry all its ranks' tokens, whose skew
    no field states, and its busiest rank's forwarded share rides the faster scale-up fabric
    (a lower estimate under imbalance).
    Reads the tensor, expert, micro-batch and context degrees."""
    t, e = plan.tensor, plan.expert
    if not w.is_moe or e == 1:
        return None
    k = w.experts_per_token
    # k copies each; the NCCL all-to-all at the busiest rank's load (Workload.
    # busiest_expert_load): it receives them in the dispatch and sends them back in the
    # combine, and the group waits for it; the network's tiers carry the mean rank's
    # (Part.busiest)
    mean = rank_tokens(w, plan) * w.hidden_size * ACTIVATION_BYTES * w.expert_token_share / t
    busiest = w.busiest_expert_load(e) / w.expert_token_share  # over the mean rank's load
    ep_local, domains = _expert_domains(plan, dom)
    hosts = domains * _hosts_per_block(ep_local * plan.expert_tensor_degree, gpn)
    if w.expert_dispatch == "all_to_all" or domains == 1:
        return Part(
            coll.all_to_all(mean * k * busiest, e),
            1.0 - ep_local / e,
            hosts,
            "all_to_all",
            busiest=busiest,
        )
    network = coll.expected_remote_domains(w.experts, k, domains, w.expert_node_limit)
    # copies to the other ranks of the own domain, and remote copies forwarded on landing
    forwarded = k * (ep_local - 1) / e + k * (e - ep_local) / e * (ep_local - 1) / ep_local
    total = network + forwarded
    return Part(
        coll.Cost(mean * total, domains - 1 + ep_local - 1), network / total, hosts, "all_to_all"
    )


def _expert_domains(plan: ParallelPlan, dom: int) -> tuple[int, int]:
    """(the expert group's ranks every scale-up domain it spans holds, those domains): its
    ranks are blocks of ``expert_tensor`` GPUs (the tensor ranks, unless folded)."""
    ep_local = _ranks_in_domain(plan.expert, plan.expert_tensor_degree, dom)
    return ep_local, -(-plan.expert // ep_local)


def expert_dispatch_note(w: Workload, plan: ParallelPlan, dom: int) -> str | None:
    """What the expert all-to-all puts on the network a token, and what the other dispatch
    would (None: the expert group stays inside one scale-up domain of ``dom`` GPUs)."""
    if not w.is_moe or plan.expert == 1:
        return None
    ep_local, domains = _expert_domains(plan, dom)
    if domains == 1:
        return None
    k, e = w.experts_per_token, plan.expert
    copies = k * (e - ep_local) / e
    once = coll.expected_remote_domains(w.experts, k, domains, w.expert_node_limit)
    where = f"expert all-to-all over {domains} scale-up domains"
    if w.expert_dispatch == "all_to_all":
        return (
            f"{where}: the NCCL all-to-all sends {copies:.1f} of each token's {k} routed copies "
            f"over the network; a node-deduplicating dispatcher (DeepEP, HybridEP: "
            f"workload.expert_dispatch node_deduplicated) would send {once:.1f}"
        )
    limit = f", at most {w.expert_node_limit} a token" if w.expert_node_limit else ""
    return (
        f"{where}, deduplicated per domain{limit}: {once:.1f} network sends a token instead "
        f"of {copies:.1f} routed copies"
    )


# A stated plan whose groups straddle scale-up domains is told what tiling them would save
# when it saves at least this share of its step (domain_tiling_note).
DOMAIN_TILING_NOTE_SHARE = 0.01


def domain_tiled_step_s(
    step: StepModel, fabric: FabricProfile, case: EstimateCase, step_s: float
) -> float | None:
    """A stated plan's step on scale-up domains of no power-of-two size (an NVL72's 72 GPUs)
    placed ClusterSpec.domain_tile_gpus GPUs to a domain, as a scheduler's segments of whole
    hosts place a job (Slurm's topology/block plugin, ``--segment``; the planner weighs that
    placement itself: its domain tilings). The estimate times the GPUs filling each domain in
    turn, where a group of power-of-two ranks straddles two domains wherever it starts
    (_ranks_in_domain) and what crosses rides the network; the same plan is re-timed on the
    tiled domains. None when that saves less than DOMAIN_TILING_NOTE_SHARE of ``step_s``."""
    c = step.c
    tile = c.domain_tile_gpus
    if tile is None or c.gpus <= c.scale_up_domain_gpus:
        return None
    tiled = StepModel(step.w, replace(c, scale_up_gpus=tile), step.plan, fabric)
    tiled_s = tiled.step_time_s(case)
    return tiled_s if tiled_s <= step_s * (1.0 - DOMAIN_TILING_NOTE_SHARE) else None


def domain_tiling_note(c: ClusterSpec, plan: ParallelPlan, tiled_s: float, step_s: float) -> str:
    """What placing ``plan``'s groups inside power-of-two parts of ``c``'s scale-up domains
    saves: ``tiled_s`` (domain_tiled_step_s) against ``step_s``, with the domains and idle
    GPUs it takes."""
    dom, tile = c.scale_up_domain_gpus, c.domain_tile_gpus
    assert tile is not None, "domain_tiled_step_s times only domains with a tile"
    domains = -(-plan.gpus // tile)
    ep_local, spans = _expert_domains(plan, dom)
    which = (
        f"an expert group of {plan.expert} keeps {ep_local} of its ranks in one domain"
        if plan.expert > 1 and spans > 1
        else "its groups straddle two domains wherever they start"
    )
    return (
        f"scale-up domains of {dom} GPUs, filled in turn: {which}, and what crosses is timed "
        f"on the network; placed {tile} GPUs to a domain ({domains} domains, "
        f"{domains * dom - plan.gpus} of their GPUs idle: a scheduler's segments of "
        f"{tile // c.gpus_per_node} hosts), every group stays inside one and the step takes "
        f"{tiled_s:.2f} s instead of {step_s:.2f} s ({1.0 - tiled_s / step_s:.0%} less; "
        f"cluster.scale_up_gpus {tile} times it so); a search that chooses the plan (a degree "
        "left out) weighs that placement itself"
    )


def capacity_note(w: Workload, expert: int) -> str:
    """What token dropping (Workload.expert_capacity_factor) does to the expert layers' time:
    never a capacity silently ignored."""
    c = w.expert_capacity_factor
    where = f"token dropping: each expert takes at most {c:g} x its even share of the routed tokens"
    busiest = w.busiest_expert_load(expert)
    if w.pad_expert_input_to_capacity:
        return (
            f"{where}, its input padded to that capacity: every expert rank computes, sends and "
            f"holds {c:g} x the tokens of a dropless balanced layer, however balanced the routing"
        )
    dropped = f"; at least {1.0 - c:.0%} of the routed copies are dropped" if c < 1.0 else ""
    who = (
        f" (workload.expert_load_imbalance {w.expert_load_imbalance:g}): the busiest of "
        f"{expert} expert ranks is"
        if expert > 1
        else ": the experts are"
    )
    return f"{where}{who} timed at {busiest:.2f} x a balanced layer's load{dropped}"


def skew_note(w: Workload, plan: ParallelPlan, dom: int, skew_s: float, step_s: float) -> str:
    """What skewed routing (Workload.expert_load_imbalance above 1, dropless: under a
    capacity capacity_note says it) costs the step of ``plan``, whose expert group tiles
    scale-up domains of ``dom`` GPUs: ``skew_s``, the step over the same plan's with balanced
    routing, re-timed. Never an assumption the answer hides: benchmarks that force-balance
    their routing state 1."""
    expert = plan.expert
    busiest = w.busiest_expert_load(expert)
    # as expert_collective: a deduplicated dispatch across domains at the mean rank's load
    deduplicated = w.expert_dispatch == "node_deduplicated" and _expert_domains(plan, dom)[1] > 1
    waits = (
        "its expert GEMMs (the deduplicated all-to-all is timed at the mean rank's load)"
        if deduplicated
        else "its expert GEMMs and the all-to-all, which wait for it"
    )
    return (
        f"expert load skew: the busiest of {expert} expert ranks is timed at {busiest:.2f} x "
        f"the mean rank's load (workload.expert_load_imbalance {w.expert_load_imbalance:g}) "
        f"in {waits}: {skew_s:.2f} s of the {step_s:.2f} s step ({skew_s / step_s:.1%}) over "
        "balanced routing; a run whose routing is balanced (or force-balanced, as NVIDIA's "
        "benchmarks are) states 1"
    )


# An expert all-to-all this share of the step or more is worth a note that it is exposed.
EXPOSED_ALL_TO_ALL_NOTE_SHARE = 0.05


def exposed_all_to_all_note(all_to_all_s: float, step_s: float) -> str | None:
    """What the estimate assumes of the expert all-to-all when it is a visible share of the
    step: exposed whole, each dispatch and combine waiting for its layer's compute (Megatron-
    Core's default). Schedules that run it beside another micro-batch's compute hide part of
    it, and a request states them (Workload.pipeline_schedule): DeepSeek's DualPipe
    (arXiv:2412.19437 sec. 3.2.1; dualpipe_note instead) and Megatron-Core's Combined 1F1B
    (overlap_moe_expert_parallel_comm; combined_1f1b_note instead)."""
    if step_s <= 0.0 or all_to_all_s < EXPOSED_ALL_TO_ALL_NOTE_SHARE * step_s:
        return None
    return (
        f"the expert all-to-all ({all_to_all_s:.2f} s of the {step_s:.2f} s step, "
        f"{all_to_all_s / step_s:.0%}) is timed exposed, as Megatron-Core and DeepSpeed run "
        f"it by default; a stack that overlaps it with another micro-batch's compute saves "
        f"up to that share of the step: workload.pipeline_schedule dualpipe times "
        f"DeepSeek's DualPipe, combined_1f1b Megatron-Core's overlap_moe_expert_parallel_comm"
    )


# issue 14 (honest limits): NVIDIA's published H100 runs of mixtures of experts with few active
# parameters train slower than the model times their stated plans, those with many within the
# bar (optimizer/performance/data/unseen-runs.json, never fitted; docs/performance-model.md,
# "Fine-grained MoE"): Qwen3-30B-A3B (3.4B active as the model counts them) and GPT-OSS 120B
# (5.7B) at 1.16-2.31 x the model's speed, Qwen3-235B-A22B (22B) and DeepSeek-V3 (38B) within
# 18 % either way. The threshold lies between them; tests/test_small_moe_note.py re-derives
# both figures from the rows.
SMALL_MOE_ACTIVE_PARAMETERS = 10e9
SMALL_MOE_NOTE_PREFIX = "a mixture of experts with "  # the optimizer warns once of it
SMALL_MOE_PUBLISHED_SPEED_RATIOS = (1.16, 2.31)  # the model's tokens/s over NVIDIA's
LARGE_MOE_PUBLISHED_ERROR = 0.18


def small_moe_note(w: Workload) -> str | None:
    """What a mixture of experts with few active parameters a token should expect of the
    estimate (None: a dense model, or one with SMALL_MOE_ACTIVE_PARAMETERS or more): the
    published runs most like it are slower than the model times them."""
    if not w.is_moe or w.active_parameters >= SMALL_MOE_ACTIVE_PARAMETERS:
        return None
    low, high = SMALL_MOE_PUBLISHED_SPEED_RATIOS
    return (
        f"{SMALL_MOE_NOTE_PREFIX}{w.active_parameters / 1e9:.1f}B active parameters a "
        f"token: NVIDIA's published H100 runs of such models (Qwen3-30B-A3B, GPT-OSS 120B) "
        f"train {low:.2f}-{high:.2f} x slower than this model times their stated plans, while "
        f"those of {SMALL_MOE_ACTIVE_PARAMETERS / 1e9:.0f}B active parameters and more are "
        f"within {LARGE_MOE_PUBLISHED_ERROR:.0%}: what a small model's MoE layers cost on their "
        "stack (token-dropless host synchronisation, short kernels) has no term here; "
        "calibrate on a run of your own (procure calibrate)"
    )


def dualpipe_note(pipeline: int, micro_batches: int, breakdown: StepBreakdown) -> str:
    """What DualPipe does to the step (Workload.pipeline_schedule): the bubble it leaves and
    how much of the all-to-all and the sends runs beside the paired chunk's compute."""
    unpaired = dualpipe_unpaired_share(pipeline, micro_batches)
    moved = breakdown.all_to_all_s + breakdown.pipeline_p2p_s
    return (
        f"DualPipe over {pipeline} ranks, {micro_batches} micro-batches a step: each rank "
        f"holds two stages (their weights, gradients and optimizer states) and runs half the "
        f"micro-batches through each, the bubble is "
        f"(p - 2) / (3 m) of the compute, and the expert all-to-all and pipeline sends "
        f"({moved:.2f} s a step) run beside the paired chunk's compute but in the "
        f"{unpaired:.0%} of the chunks the end ranks run unpaired"
    )


# issue 14 (honest limits): where Combined 1F1B's all-to-all outlasts the compute that hides
# it, the published runs disagree with the model's saving (docs/performance-model.md,
# "Combined 1F1B"; tests/test_combined_1f1b.py's strict xfails). The same words for every
# design, so the optimizer warns of it once with the ranks it concerns.
COMBINED_1F1B_CAUTION = (
    "Combined 1F1B with an all-to-all longer than the compute that hides it: the model's "
    "saving there is unconfirmed. NVIDIA's published Qwen3-235B-A22B runs on H100, whose stored "
    "recipe turns the schedule on, go near the model's speed with workload.pipeline_schedule "
    "1f1b (the all-to-all exposed), far below its speed with combined_1f1b"
)


def combined_1f1b_note(plan: ParallelPlan, micro_batches: int, breakdown: StepBreakdown) -> str:
    """What Combined 1F1B does to the step (Workload.pipeline_schedule): how much of the
    all-to-all runs beside the paired chunk's compute, and what it leaves exposed."""
    unpaired = combined_1f1b_unpaired_share(plan.pipeline, plan.virtual_pipeline, micro_batches)
    where = (
        "the first forward and the last backward"
        if plan.pipeline == 1
        else "the first rank's warm-up forwards and cool-down backwards"
    )
    return (
        f"Combined 1F1B (Megatron-Core's overlap_moe_expert_parallel_comm): the expert "
        f"all-to-all ({breakdown.all_to_all_s:.2f} s a step) runs beside another "
        f"micro-batch's compute ({breakdown.compute_s:.2f} s a step), slowing it while both "
        f"run, but in {where}, {unpaired:.0%} of the chunks, which run it exposed; the "
        f"tensor-parallel collectives stay exposed"
    )


def data_traffic(w: Workload, plan: ParallelPlan, gpn: int, dom: int) -> tuple[_DataParallel, ...]:
    """Data parallel: per-rank gradient bytes, reduced hierarchically (scale-up fabric inside
    the domain, one rail per rank across domains); experts over their own d cp / e replicas.
    ZeRO-3 (FSDP): all-gather weights for forward and backward and reduce-scatter gradients
    per FSDP unit, every micro-batch (Zhao et al., PyTorch FSDP, VLDB 2023), or once per
    step without re-sharding; otherwise one all-reduce per step. Reads the tensor, pipeline,
    data, expert, ZeRO and context degrees, and the micro-batch only through
    data_parallel_collectives (FSDP re-sharding gathers per micro-batch)."""
    t, p, d, e, cp = plan.tensor, plan.pipeline, plan.data, plan.expert, plan.context
    et = plan.expert_tensor_degree
    # a DualPipe rank reduces the gradients of both its stages (Workload.stages_per_rank)
    held = w.stages_per_rank
    dense_grad = (w.parameters - w.expert_parameters) / (t * p) * GRADIENT_BYTES * held
    expert_grad = w.expert_parameters / (et * p * e) * GRADIENT_BYTES * held
    # issue 14 (context): gradients reduce over data x context ranks (Megatron's dp-cp group).
    dp_local = max(1, min(d * cp, dom // t))
    # (bytes, ranks, ranks in one domain, GPUs a rank's block spans)
    groups = [(dense_grad, d * cp, dp_local, t)] if d * cp > 1 else []
    # experts are replicated over the data x context ranks too, e of them split the experts;
    # folded, over the expert grid's data ranks: t d cp GPUs in blocks of e x expert_tensor,
    # as many of them in a domain as it holds whole blocks
    replicas = t * d * cp // (et * e)
    if expert_grad and replicas > 1:
        local = max(1, min(replicas, dom // (et * e)))
        groups.append((expert_grad, replicas, local, et))
    calls = data_parallel_collectives(w, plan)
    data = []
    for size, ranks, local, block in groups:
        nodes = -(-ranks // local)
        span = nodes * _hosts_per_block(local * block, gpn)
        shard = size / local
        if plan.zero_stage == 3:  # ``calls`` equal collectives of one unit's bytes each
            unit = size / fsdp_units(w, plan)
            ring = coll.reduce_scatter(unit / local, nodes).times(calls)
            nvlink = coll.reduce_scatter(unit, local).times(calls)
            data.append(_DataParallel(nvlink, ring, ring, nodes, span, calls))
        else:
            data.append(
                _DataParallel(
                    coll.reduce_scatter(size, local).times(2),
                    coll.ring_all_reduce(shard, nodes),
                    coll.tree_all_reduce(shard, nodes),
                    nodes,
                    span,
                    in_network=coll.in_network_all_reduce(shard, nodes),
                    nvlink_in_network=(
                        coll.in_network_all_reduce(size, local) if nodes == 1 else None
                    ),
                )
            )
    return tuple(data)


def pipeline_traffic(w: Workload, plan: ParallelPlan, gpn: int, dom: int) -> Part | None:
    """The pipeline's sends (plan_traffic), the one collective the interleaving depth
    changes: activations forward and gradients backward per micro-batch and chunk, split
    over the t ranks (scatter/gather, Narayanan et al. sec. 4.1). The stages are the
    outermost ranks, so once the pipeline spans more than one domain some adjacent stages
    sit in different domains (all of them once a stage, t x cp x d ranks, fills one), and
    every micro-batch crosses those edges: the network paces the sends."""
    t, d, cp = plan.tensor, plan.data, plan.context
    if plan.pipeline == 1:
        return None
    m = w.global_batch_size // (d * plan.micro_batch_size)
    tokens_mb = rank_tokens(w, plan)
    cost = coll.p2p(tokens_mb * w.hidden_size * ACTIVATION_BYTES / t)
    return Part(
        cost.times(2 * m * plan.virtual_pipeline),
        1.0 if t * cp * d * plan.pipeline > dom else 0.0,
        2,
        "ring",
        max(1, t * cp * d // gpn),
    )


# --- issue 14 (context): ring attention ---------------------------------------------------------
def _context_part(w: Workload, plan: ParallelPlan, gpn: int, dom: int) -> Part | None:
    """Ring attention over the context group (Liu et al., "Ring Attention", 2023; Megatron-LM
    context parallelism): per layer and micro-batch the forward passes each rank's K and V
    chunk (kv_ratio x (q + v) x local tokens, q and v the query and value widths, heads x
    their head widths, bf16, split over the tensor group's heads) to its neighbour
    context - 1 times; the backward passes K, V and their gradients (2x); a full
    recomputation repeats the forward. The group is ``context`` blocks of ``tensor`` GPUs:
    once it leaves the scale-up domain, its ring's slowest link is the network."""
    cp, t = plan.context, plan.tensor
    if cp == 1:
        return None
    local_tokens = rank_tokens(w, plan)
    recompute = 1 if w.activation_recompute == "full" else 0
    m = w.global_batch_size // (plan.data * plan.micro_batch_size)
    layers = m * w.transformer_blocks / plan.pipeline  # block passes per step
    if w.framework == "deepspeed":
        return _ulysses_part(w, local_tokens, layers * (2 + recompute), cp, t, gpn, dom)
    chunk = w.kv_ratio * (w.query_width + w.value_width) * local_tokens / t * ACTIVATION_BYTES
    sends = layers * (3 + recompute) * (cp - 1)
    span = t * cp
    straddles = _straddles(span, dom)
    return Part(
        coll.p2p(chunk).times(sends),
        1.0 if span > dom or straddles else 0.0,
        max(-(-span // gpn), 2 if straddles else 1),
        "ring",
    )


def _straddles(group: int, dom: int) -> bool:
    """Consecutive groups of ``group`` GPUs that fit a scale-up domain of ``dom`` but do not
    divide it: one of them spans two domains (GPUs 7 to 13 at tensor 7 on 8-GPU hosts), and
    every step waits for it."""
    return group < dom and dom % group != 0


def _ulysses_part(
    w: Workload, local_tokens: float, passes: float, cp: int, t: int, gpn: int, dom: int
) -> Part:
    """DeepSpeed-Ulysses over the context group (Jacobs et al., arXiv:2309.14509, sec. 3;
    deepspeed/sequence/layer.py DistributedAttention): per layer and micro-batch the forward
    runs an all-to-all each for Q, K and V (sequence-sharded to head-sharded) and one for the
    attention output, (1 + kv_ratio) x (q + v) x local tokens (the query and value widths),
    bf16, in
    all; the backward moves their gradients the same way (``passes``: forward, backward and a
    full recomputation's forward, per step). The attention waits for them: nothing hides them
    (StepModel)."""
    size = (1 + w.kv_ratio) * (w.query_width + w.value_width) * local_tokens * ACTIVATION_BYTES
    local = _ranks_in_domain(cp, t, dom)
    return Part(
        coll.all_to_all(size / 4, cp).times(4 * passes),
        1.0 - local / cp,
        -(-cp // local) * _hosts_per_block(local * t, gpn),
        "all_to_all",
    )


# --- end issue 14 (context) ---------------------------------------------------------------------


def _ranks_in_domain(ranks: int, tensor: int, domain_gpus: int) -> int:
    """Ranks of a group (consecutive blocks of ``tensor`` GPUs) that share one scale-up
    domain whatever the group's offset: gcd(ranks, domain / tensor). An expert group of 64
    in a 72-GPU domain is not wholly inside it (groups tile 64, 128, ... across racks), but
    8 of its ranks always are; an 8-GPU domain gives the former min(ranks, 8 / tensor)."""
    if tensor > domain_gpus or domain_gpus % tensor:
        return 1
    return math.gcd(ranks, domain_gpus // tensor)


def _hosts_per_block(block_gpus: int, gpus_per_node: int) -> int:
    """Hosts one domain-local block of a group occupies (at least one): network spans are
    counted in hosts, the unit the topology places under a leaf."""
    return max(1, block_gpus // gpus_per_node)


# Compute runs slower while a collective's kernels share the GPU with it: NCCL kernels occupy
# SMs (an all-gather beside a GEMM takes 24 of an H100's 132 SMs) and HBM bandwidth (Rashidi
# et al., ISCA 2021, sec. 3; Wang et al., ASPLOS 2023, sec. 2). issue 14 accuracy: the
# slow-down is a fitted constant (calibration.COMPUTE.overlap_compute_slowdown, fitted by
# benchmarks/estimator_accuracy.py).


def overlapped_s(compute_s: float, communication_s: float, slowdown: float | None = None) -> float:
    """Wall time of ``compute_s`` with ``communication_s`` running beside it on the same GPU:
    the longer of the two, the compute stretched by ``slowdown`` (default: the fitted
    calibration.COMPUTE.overlap_compute_slowdown) while both run."""
    if slowdown is None:
        slowdown = fitted.COMPUTE.overlap_compute_slowdown
    return max(compute_s + slowdown * min(compute_s, communication_s), communication_s)


def paired_exposed_s(compute_s: float, communication_s: float, unpaired: float) -> float:
    """What the communication a schedule pairs (``communication_s``) adds to its step: the
    ``unpaired`` share of the chunks runs it exposed; the paired chunks run it beside the
    other chunk's compute, the compute slowed while both run (overlapped_s). DualPipe pairs
    the expert all-to-all and the pipeline sends (DeepSeek-V3 report, arXiv:2412.19437, sec.
    3.2.1, Figure 4; dualpipe_unpaired_share); Megatron-Core's Combined 1F1B the all-to-all
    (combined_1f1b.py: "EP A2A in forward step is hidden by the attention/mlp computation in
    the backward step, and vice versa"; combined_1f1b_unpaired_share)."""
    hidden_under = (1.0 - unpaired) * compute_s
    paired = (1.0 - unpaired) * communication_s
    return unpaired * communication_s + overlapped_s(hidden_under, paired) - hidden_under


# --- end issue 14 accuracy


# --- issue 14, speed: what a StepModel shares across networks --------------------------------
# Keyed on the workload, the plan and the hardware (GPU, host, scale-up domain): the optimizer
# re-prices one plan on many candidate networks, and this part is the same on all of them.
# Each entry remembers the fitted constants it was computed with (the calibration's fitting
# loop replaces them; compute.clear_caches does not know this cache), and is recomputed when
# they changed.
class _ScaleUp(NamedTuple):
    """The scale-up (NVLink) shares of a plan's terms, and (bandwidth seconds, latency
    seconds) of the tensor, all-to-all, pipeline and data-parallel ones."""

    tensor: coll.Cost
    all_to_all: coll.Cost
    p2p: coll.Cost
    context: coll.Cost
    data: coll.Cost
    seconds: tuple[float, ...]


def _local_cost(part: Part | None, nvls: bool) -> coll.Cost:
    """The scale-up cost of the domain-local share of ``part`` (the cheaper NVLS form when
    ``nvls``)."""
    if part is None:
        return coll.NO_COST
    local = 1.0 - part.remote_share
    nv = part.cost.times(local) if local > 0 else coll.NO_COST
    if nvls and part.in_network is not None and local > 0:
        nv = min(nv, StepModel._nvls(part.in_network.times(local)))
    return nv


def _scale_up(traffic: PlanTraffic, nvls: bool, nv_bw: float) -> _ScaleUp:
    tp = _local_cost(traffic.tensor, nvls)
    a2a = _local_cost(traffic.all_to_all, nvls)
    p2p = _local_cost(traffic.p2p, nvls)
    cp = _local_cost(traffic.context, nvls)
    dp = coll.NO_COST
    for part in traffic.data:
        nvlink = part.nvlink
        if nvls and part.nvlink_in_network is not None:
            nvlink = min(nvlink, StepModel._nvls(part.nvlink_in_network))
        dp = coll.Cost(dp.bytes + nvlink.bytes, dp.steps + nvlink.steps)
    seconds = tuple(
        x for cost in (tp, a2a, p2p, dp) for x in (cost.bytes / nv_bw, cost.steps * NVLINK_ALPHA_S)
    )
    return _ScaleUp(tp, a2a, p2p, cp, dp, seconds)


class _Remote(NamedTuple):
    """The share of a tensor, expert, pipeline or context collective that leaves the
    scale-up domain, before any network is known."""

    part: Part
    cost: coll.Cost
    in_network: coll.Cost  # the same reduced by the switches (SHARP): never dearer
    span: int  # hosts a ring's step spans: its group, or two stages ``stride`` apart


def _remote_share(part: Part | None) -> _Remote | None:
    """``part``'s network share (None: it stays on the scale-up fabric)."""
    if part is None or part.remote_share <= 0:
        return None
    remote = part.cost.times(part.remote_share)
    reduced = remote
    if part.in_network is not None:
        reduced = min(remote, part.in_network.times(part.remote_share))
    span = part.nodes if part.stride <= 1 else part.stride + 1
    return _Remote(part, remote, reduced, span)


class _PlanCore(NamedTuple):
    """The StepModel attributes that depend on the workload, the plan and the hardware only."""

    gen: GpuGeneration
    constants: object  # the fitted compute constants this was computed with
    micro_batches: int
    hardware_flops: float
    model_flops: float
    layout: PipelineLayout
    optimizer_step_s: float
    micro_batch_overhead_s: float
    straggler: float
    tensor_core_s: float
    elementwise_s: float
    memory_gb: float
    node_gpus: int
    fsdp: bool
    reshard: bool
    units: int
    forward_share: float
    nv_bw: float
    cp_hidden: float
    flash_share: float  # flash attention's share of tensor_core_s (0: unfused or none)
    traffic: PlanTraffic
    gen_nvls: bool
    plain_local: _ScaleUp  # without NVLS
    nvls_local: _ScaleUp  # with NVLS where the GPU has it (the cluster enables it)
    # The network shares of the terms: per network only hops and slow-downs are left.
    tp_remote: _Remote | None
    a2a_remote: _Remote | None
    p2p_remote: _Remote | None
    cp_remote: _Remote | None
    dp_remote: tuple[_DataParallel, ...]  # the reductions that cross domains (nodes > 1)
    dp_span: int  # hosts the widest of them spans (0: none)
    dp_collectives: int  # collectives each of their totals is made of


_CORE_CACHE_SIZE = 65_536
_core_cache: dict[tuple[object, ...], _PlanCore] = {}


def _plan_core(w: Workload, c: ClusterSpec, plan: ParallelPlan) -> _PlanCore:
    """The StepModel attributes that depend on (workload, plan, hardware) only, cached."""
    key = (w, plan, c.hardware)
    gen = generation(c.gpu_model)
    core = _core_cache.get(key)
    if core is not None and core.gen is gen and core.constants is fitted.COMPUTE:
        return core
    if len(_core_cache) >= _CORE_CACHE_SIZE:
        _core_cache.clear()
    core = _core_cache[key] = _compute_plan_core(w, c, plan, gen)
    return core


def _compute_plan_core(
    w: Workload, c: ClusterSpec, plan: ParallelPlan, gen: GpuGeneration
) -> _PlanCore:
    micro_batches = w.global_batch_size // (plan.data * plan.micro_batch_size)
    t, p, d, e, mb, cp, et = plan.family
    hardware_flops = hardware_flops_per_step(w)
    model_flops = model_flops_per_step(w)
    # compute_s_per_token's and attention_share's arguments: the plan's kernels on this GPU
    kernels = (w, mb, t, c.gpu_model, c.gpu_peak_tflops, c.gpu_peak_fp8_tflops, e, et)
    tensor_core_s, elementwise_s = compute_s_per_token(*kernels)
    # issue 14, pipeline: the step runs at the pace of the slowest stage (uneven layers,
    # the output layer on the last stage); 1 without a pipeline.
    layout = pipeline_layout(w, plan.pipeline, plan.virtual_pipeline)
    tokens_per_gpu = timed_tokens_per_gpu(w, c.gpus, plan.pipeline, layout.slowest_stage_share)
    traffic = plan_traffic(
        w, plan, min(c.gpus, c.gpus_per_node), min(c.gpus, c.scale_up_domain_gpus)
    )
    nv_bw = nvlink_bytes_per_s(c)
    gen_nvls = gen.name in coll.NVLS_GENERATIONS
    plain = _scale_up(traffic, False, nv_bw)
    dp_remote = tuple([part for part in traffic.data if part.nodes > 1])
    share = attention_share(*kernels)
    return _PlanCore(
        gen=gen,
        constants=fitted.COMPUTE,
        micro_batches=micro_batches,
        hardware_flops=hardware_flops,
        model_flops=model_flops,
        layout=layout,
        # issue 14 compute (compute.py): the optimizer update and the straggler share.
        optimizer_step_s=optimizer_step_bytes(w, t, p, d, e, cp, plan.zero_stage >= 1, et)
        / (gen.hbm_tbytes_per_s * 1e12),
        # issue 14, pipeline: every forward and backward pass of a micro-batch through a
        # model chunk pays CHUNK_PASS_OVERHEAD_S on the critical path: m v chunks per stage,
        # plus the (p - 1) chunk slots of the fill and drain.
        micro_batch_overhead_s=(
            2 * (micro_batches * plan.virtual_pipeline + plan.pipeline - 1) * CHUNK_PASS_OVERHEAD_S
        ),
        straggler=straggler_fraction(plan.data),
        tensor_core_s=tensor_core_s * tokens_per_gpu,
        elementwise_s=elementwise_s * tokens_per_gpu,
        memory_gb=memory_per_gpu(w, plan).total_gb,
        node_gpus=min(c.gpus, c.gpus_per_node),  # GPUs whose bytes one host stack handles
        fsdp=plan.zero_stage == 3,
        reshard=plan.reshard_after_forward,
        units=fsdp_units(w, plan),
        # Share of the compute that is the forward pass (the rest: backward and recompute).
        forward_share=model_flops / (3.0 * hardware_flops),
        nv_bw=nv_bw,
        # issue 14 (context): ring attention, hidden behind the attention of each block;
        # DeepSpeed-Ulysses' all-to-alls, which the attention waits for, behind nothing
        cp_hidden=0.0 if w.framework == "deepspeed" else (plan.context - 1) / plan.context * share,
        flash_share=share if w.flash_attention else 0.0,
        traffic=traffic,
        # NVLS needs a Hopper-or-later NVSwitch (and a cluster that enables it).
        gen_nvls=gen_nvls,
        plain_local=plain,
        nvls_local=_scale_up(traffic, True, nv_bw) if gen_nvls else plain,
        tp_remote=_remote_share(traffic.tensor),
        a2a_remote=_remote_share(traffic.all_to_all),
        p2p_remote=_remote_share(traffic.p2p),
        cp_remote=_remote_share(traffic.context),
        dp_remote=dp_remote,
        dp_span=max([part.span for part in dp_remote], default=0),
        dp_collectives=traffic.data[-1].collectives if traffic.data else 1,
    )


# --- end issue 14, speed ----------------------------------------------------------------------


# StepModel._terms: the StepBreakdown fields but host_cpu_overhead_s, in order.
_Terms = tuple[float, float, float, float, float, float, float, float, float]


class StepModel:
    """Everything about one (workload, cluster, plan) that no scenario changes.

    Each communication term is either a scale-up (NVLink) cost or a network ``_NetTerm``,
    both priced per scenario; bytes a GPU puts on the network are summed (``net_bytes``).
    """

    # Slots: a plan is re-priced on every candidate network (issue 14, speed), and an
    # instance dict of this many attributes costs more to fill than the pricing itself.
    __slots__ = (
        "_concurrent",
        "_dp_min_bytes",
        "_last",
        "_network_s",
        "_nv_s",
        "a2a_net",
        "a2a_nv",
        "c",
        "cp_hidden",
        "cp_net",
        "cp_nv",
        "dp_collectives",
        "dp_flows",
        "dp_forms",
        "dp_multiplier",
        "dp_nv",
        "elementwise_s",
        "fabric",
        "flash_share",
        "forward_share",
        "fsdp",
        "gen_nvls",
        "hardware_flops",
        "hop_s",
        "layout",
        "line",
        "memory_gb",
        "micro_batch_overhead_s",
        "micro_batches",
        "model_flops",
        "net_bytes",
        "node_gpus",
        "nv_bw",
        "nvls",
        "nvls_local",
        "optimizer_step_s",
        "p2p_flows",
        "p2p_net",
        "p2p_nv",
        "plain_local",
        "plan",
        "reshard",
        "shape",
        "sharp",
        "straggler",
        "tensor_core_s",
        "tp_net",
        "tp_nv",
        "traffic",
        "units",
        "w",
    )

    micro_batches: int
    hardware_flops: float
    model_flops: float
    layout: PipelineLayout
    optimizer_step_s: float
    straggler: float
    tensor_core_s: float
    elementwise_s: float
    memory_gb: float
    node_gpus: int
    fsdp: bool
    reshard: bool
    units: int
    forward_share: float
    nv_bw: float
    cp_hidden: float
    flash_share: float
    traffic: PlanTraffic
    gen_nvls: bool
    plain_local: _ScaleUp
    nvls_local: _ScaleUp

    def __init__(
        self, w: Workload, c: ClusterSpec, plan: ParallelPlan, fabric: FabricProfile
    ) -> None:
        self.w, self.c, self.plan, self.fabric = w, c, plan, fabric
        core = _plan_core(w, c, plan)
        self.micro_batches = core.micro_batches
        self.hardware_flops = core.hardware_flops
        self.model_flops = core.model_flops
        self.layout = core.layout
        self.optimizer_step_s = core.optimizer_step_s
        self.micro_batch_overhead_s = core.micro_batch_overhead_s
        self.straggler = core.straggler
        self.tensor_core_s = core.tensor_core_s
        self.elementwise_s = core.elementwise_s
        self.memory_gb = core.memory_gb
        self.node_gpus = core.node_gpus
        self.fsdp = core.fsdp
        self.reshard = core.reshard
        self.units = core.units
        self.forward_share = core.forward_share
        self.nv_bw = core.nv_bw
        self.cp_hidden = core.cp_hidden
        self.flash_share = core.flash_share
        self.traffic = core.traffic
        self.gen_nvls = core.gen_nvls
        self.plain_local = core.plain_local
        self.nvls_local = core.nvls_local
        self.dp_collectives = core.dp_collectives
        self.line = c.nic_bytes_per_s_per_gpu
        self.hop_s = fabric.per_hop_latency_ns * 1e-9
        topology = c.topology
        shape = self.shape = topology.shape if topology.direct else ()
        # In-network reduction: SHARP needs switches; NVLS needs a Hopper-or-later NVSwitch.
        sharp = self.sharp = c.in_network_reduction and not topology.direct
        self.nvls = (c.in_network_reduction if c.nvls is None else c.nvls) and self.gen_nvls
        self.net_bytes = 0.0  # bytes one GPU puts on the scale-out network per step
        # (network seconds, of which all-to-all) before overlap, of the last _terms call:
        # the breakdown reports them without pricing every term twice.
        self._network_s = (0.0, 0.0)
        # The last scenario _terms priced, its terms and _network_s: the planner times the
        # winner in the expected scenario, and its estimate's breakdown asks again.
        self._last: tuple[EstimateCase, _Terms, tuple[float, float]] | None = None
        # Line-rate flows the data-parallel rings (the widest one's) and the pipeline sends
        # put on a block's uplinks, per uplink tier (0: the traffic stays under its block,
        # or the network is direct).
        none = (0.0,) * len(c.uplink_tiers)
        self.dp_flows = _ring_flows(c, core.dp_span) if core.dp_span else none
        p2p = core.p2p_remote
        self.p2p_flows = (
            _p2p_flows(c, p2p.part.stride, plan.pipeline) if p2p is not None and not shape else none
        )
        ar = fabric.adaptive_routing
        # alone on the uplinks (1 when no reduction leaves its domain: no flows)
        self.dp_multiplier = leaf_slowdown(c, self.dp_flows, ar) if core.dp_span else 1.0
        self._concurrent = any(self.dp_flows) and any(self.p2p_flows)
        # The scale-up share of every term (with or without NVLS) is the same on every network.
        local = self.nvls_local if self.nvls else self.plain_local
        self.tp_nv, self.a2a_nv, self.p2p_nv, self.cp_nv, self.dp_nv, self._nv_s = local
        share = core.tp_remote
        self.tp_net = self._remote(share, ar) if share is not None else None
        share = core.a2a_remote
        self.a2a_net = self._remote(share, ar) if share is not None else None
        self.p2p_net = self._remote(p2p, ar, self.p2p_flows) if p2p is not None else None
        # issue 14 (context): ring attention, hidden behind the attention of each block
        share = core.cp_remote
        self.cp_net = self._remote(share, ar) if share is not None else None
        # Each reduction's hops and forms (ring, tree, SHARP), all at dp_multiplier.
        self.dp_forms: list[tuple[int, tuple[coll.Cost, ...]]] = []
        dp_min_bytes = 0.0
        for part in core.dp_remote:
            hops = _hops(c, part.span, neighbour=True)
            if shape:  # a torus: dimension-ordered rings; a tree would pay hops
                ring = _torus_collective(part.ring, part.nodes, shape)
                forms: tuple[coll.Cost, ...] = (ring, ring)
            elif sharp and part.in_network is not None:
                # Up and down the switch tree: the worst path's hops, once each way.
                forms = (part.ring, part.tree, part.in_network)
            else:
                forms = (part.ring, part.tree)
            self.dp_forms.append((hops, forms))
            self.net_bytes += part.ring.bytes
            # Bytes of the data-parallel reductions on the wire, each in its lightest form.
            lightest = forms[0].bytes
            for form in forms:
                if form.bytes < lightest:
                    lightest = form.bytes
            dp_min_bytes += lightest
        self._dp_min_bytes = dp_min_bytes

    @property
    def a2a_nv_s(self) -> float:
        """Scale-up seconds of the expert all-to-all at the nominal collective efficiency."""
        return self.a2a_nv.seconds(self.nv_bw, NVLINK_ALPHA_S)

    def leaf_multipliers(
        self,
        sc: EstimateCase,
        compute: float,
        cpu_s_per_byte: float = 0.0,
        rate: float | None = None,
    ) -> tuple[float, float]:
        """Uplink slow-downs of the data-parallel rings and the pipeline sends, in flight
        together in a real step (the reduction under the backward passes while stages keep
        sending): each sees its own flows plus the other's, weighted by the share of the
        time the other's bytes occupy the wire alone (at most 1): the sum of the concurrent
        flows, averaged over the time they are concurrent. That time is the compute's, or
        its own transfer's where that is longer: a reduction that outlasts the compute meets
        the sends for their length, not for all of its own (weighing by the compute alone
        made a faster GPU slow the reduction down)."""
        p2p = self.p2p_net
        if not (self._concurrent and p2p is not None and compute > 0):
            return self.dp_multiplier, p2p.multiplier if p2p is not None else 1.0
        if rate is None:
            rate = scenario_rate_bytes_per_s(self.line, sc)
        p2p_s = max(p2p.cost.bytes * p2p.multiplier / rate, p2p.cost.bytes * cpu_s_per_byte)
        dp_bytes = self._dp_min_bytes
        dp_s = max(dp_bytes * self.dp_multiplier / rate, dp_bytes * cpu_s_per_byte)
        p2p_busy = min(1.0, p2p_s / max(compute, dp_s))
        dp_busy = min(1.0, dp_s / max(compute, p2p_s))
        c, ar = self.c, self.fabric.adaptive_routing
        dp_flows, p2p_flows = self.dp_flows, self.p2p_flows
        return (
            leaf_slowdown(c, dp_flows, ar, p2p_flows, p2p_busy),
            leaf_slowdown(c, p2p_flows, ar, dp_flows, dp_busy),
        )

    @staticmethod
    def _nvls(cost: coll.Cost) -> coll.Cost:
        """An NVLS all-reduce as scale-up bytes at the ring's efficiency (it runs at
        NVLS_EFFICIENCY of the line rate, the ring at NVLINK_EFFICIENCY)."""
        return coll.Cost(cost.bytes * NVLINK_EFFICIENCY / coll.NVLS_EFFICIENCY, cost.steps)

    def _remote(
        self, share: _Remote, adaptive_routing: bool, flows: Flows | None = None
    ) -> _NetTerm:
        """The network term of a collective's network ``share`` (its scale-up share is
        _scale_up's): a ring is slowed by the leaf-uplink slow-down of ``flows`` (default:
        one ring's over its group), an all-to-all by the bisection it crosses."""
        shape, part = self.shape, share.part
        remote = share.in_network if self.sharp and not shape else share.cost
        self.net_bytes += remote.bytes
        if shape:
            return self._torus_term(part, remote)
        c = self.c
        if part.pattern == "ring":
            if flows is None:
                flows = _ring_flows(c, part.nodes)
            slowdown = leaf_slowdown(c, flows, adaptive_routing)
            return _NetTerm(remote, slowdown, _hops(c, share.span, neighbour=True))
        return _NetTerm(
            remote,
            _all_to_all_multiplier(c, part.nodes, part.busiest),
            _hops(c, part.nodes, neighbour=False),
        )

    def _torus_term(self, part: Part, remote: coll.Cost) -> _NetTerm:
        """A tensor, pipeline or expert collective on a torus. Rings of neighbours run as
        dimension-ordered rings; partners ``stride`` nodes apart are that many hops away and
        every node's flow shares each link on the way with the others of the shift (channel
        load max_i min(delta_i, d_i - delta_i)); all-to-all crosses its block's bisection and
        pays its diameter sum(floor(d_i / 2))."""
        shape = self.shape
        if part.pattern == "all_to_all":
            sides = group_shape(shape, part.nodes)
            return _NetTerm(
                remote,
                _torus_all_to_all_multiplier(self.c, shape, part.nodes, part.busiest),
                max(1, sum(k // 2 for k in sides)),
            )
        if part.stride > 1:
            hops = torus_distance(shape, part.stride)
            return _NetTerm(remote, float(max(1, max(hops))), max(1, sum(hops)))
        return _NetTerm(_torus_collective(remote, part.nodes, shape), 1.0, 1)

    def step_time_s(self, sc: EstimateCase) -> float:
        return self._step_s(self._terms(sc))

    def _step_s(self, terms: _Terms) -> float:
        compute, bubble, _, _, _, _, exposed, optimizer, overhead = terms
        return compute + bubble + exposed + optimizer + overhead + self.micro_batch_overhead_s

    def breakdown(self, sc: EstimateCase) -> StepBreakdown:
        return self.breakdown_and_step_s(sc)[0]

    def breakdown_and_step_s(self, sc: EstimateCase) -> tuple[StepBreakdown, float]:
        """The step's breakdown, and its step time (``step_time_s``, of which the breakdown's
        sum may differ by an ulp where TCP's host CPU binds: the split is reported, never
        timed). Where the host's TCP stack binds, the communication terms take max(wire, host
        CPU) per collective; the breakdown reports what the host CPU adds over the wire alone,
        which costs a second pricing of the collectives: the search's step times skip it."""
        terms = self._terms(sc)
        compute, bubble, tp, dp, p2p, a2a, exposed, optimizer_s, overhead_s = terms
        host_cpu = 0.0
        cpu = sc.host_cpu_s_per_byte * self.node_gpus
        # The stack binds only where it is slower than the line rate (before any slow-down).
        if cpu * self.line * sc.fabric_efficiency * sc.collective_efficiency > 1.0:
            wire_exposed = self._communication(sc, compute, 0.0)[5]
            exposed, host_cpu = _host_cpu_split(compute + bubble, exposed, wire_exposed)
        network, a2a_net = self._network_s
        breakdown = StepBreakdown(
            compute,
            bubble,
            tp,
            dp,
            p2p,
            a2a,
            exposed,
            host_cpu,
            network_s=network,
            all_to_all_network_s=a2a_net,
            optimizer_step_s=optimizer_s,
            step_overhead_s=overhead_s,
            context_parallel_s=self._context_s(sc),
            micro_batch_overhead_s=self.micro_batch_overhead_s,
        )
        return breakdown, self._step_s(terms)

    def _dp_network_s(
        self, rate: float, latency_s: float, cpu_s_per_byte: float, multiplier: float | None
    ) -> float:
        """Network seconds of the data-parallel reductions, each in its fastest form (NCCL's
        tuner picks ring, tree or, where the switches reduce, SHARP per message size), at
        ``rate`` (the scenario's) slowed by ``multiplier`` (default: their own slow-down)."""
        # Every form shares the reductions' slow-down and hops.
        slowdown = self.dp_multiplier if multiplier is None else multiplier
        wire = wire_bytes_per_s(rate, slowdown, cpu_s_per_byte)
        hop_s = self.hop_s
        total = 0.0
        for hops, forms in self.dp_forms:
            step_s = latency_s + hops * hop_s
            fastest = math.inf
            for form in forms:
                seconds = form.bytes / wire + form.steps * step_s
                if seconds < fastest:
                    fastest = seconds
            total += fastest
        return total

    def _communication(
        self, sc: EstimateCase, compute: float, cpu_s_per_byte: float
    ) -> tuple[float, float, float, float, float, float]:
        """(tensor, data-parallel, pipeline, all-to-all seconds before overlap, what of the
        tensor seconds is exposed, exposed communication), with the host's TCP stack bounding
        every network term when ``cpu_s_per_byte`` > 0."""
        rate = scenario_rate_bytes_per_s(self.line, sc)
        latency_s, hop_s, cpu = sc.base_latency_s, self.hop_s, cpu_s_per_byte
        # Scale-up (bandwidth seconds at full collective efficiency, latency seconds).
        tp_b, tp_l, a2a_b, a2a_l, p2p_b, p2p_l, dp_b, dp_l = self._nv_s
        ce = sc.collective_efficiency
        term = self.tp_net
        tp_net = term.seconds(rate, latency_s, hop_s, cpu) if term is not None else 0.0
        tp = tp_b / ce + tp_l + tp_net
        term = self.a2a_net
        a2a_net = term.seconds(rate, latency_s, hop_s, cpu) if term is not None else 0.0
        a2a = max(a2a_b / ce + a2a_l, a2a_net)
        dp_mult, p2p_mult = (
            self.leaf_multipliers(sc, compute, cpu, rate) if self._concurrent else (None, None)
        )
        term = self.p2p_net
        p2p_net = term.seconds(rate, latency_s, hop_s, cpu, p2p_mult) if term is not None else 0.0
        p2p = p2p_b / ce + p2p_l + p2p_net
        dp_net = self._dp_network_s(rate, latency_s, cpu, dp_mult) if self.dp_forms else 0.0
        dp = dp_b / ce + dp_l + dp_net
        term = self.cp_net
        cp_net = term.seconds(rate, latency_s, hop_s, cpu) if term is not None else 0.0
        if cpu_s_per_byte == sc.host_cpu_s_per_byte * self.node_gpus:  # the step's own terms
            self._network_s = (a2a_net + tp_net + p2p_net + dp_net + cp_net, a2a_net)
        if self.fsdp:
            window = compute  # every unit's collectives under the compute
            dp_exposed = self._fsdp_exposed_s(compute, dp / self.dp_collectives)
        else:
            # Overlap with the backward pass of the last micro-batch (PyTorch DDP buckets,
            # Li et al., VLDB 2020; Megatron overlap_grad_reduce): 2/3 of its model FLOPs,
            # slowed while the reduction's kernels share the GPU.
            window = compute / self.micro_batches * 2.0 * self.forward_share
            dp_exposed = overlapped_s(window, dp) - window
        # Interleaved schedules overlap each chunk's sends with the next chunk's compute
        # (Megatron overlap_p2p_comm, on whenever virtual_pipeline > 1; Llama 3's asynchronous
        # point-to-point, Dubey et al. 2024, sec. 3.3.2). With every send alike, the sum of
        # per-send overlaps is the overlap of the totals. One-chunk stages send in a batch
        # that waits for the compute (batch_p2p_comm), so their sends stay exposed.
        interleaved = self.plan.virtual_pipeline > 1 and p2p > 0
        hidden = dp_exposed
        if interleaved or self.plan.context > 1:
            # The compute hides the data-parallel traffic, the interleaved sends and ring
            # attention once, not once each (adding the exposures let a faster GPU give a
            # slower step: docs/performance-model.md, "Pipeline sends under interleaving").
            # The step ends with the latest of: the compute, slowed under all of what runs
            # beside it ("beside": of the reduction, what runs under its window); the
            # reduction, started late by the slow-down the others cause before its window
            # (spread evenly over the compute); ring attention's own stalls; and the NICs,
            # which carry the network parts of all of it ("network").
            slow = fitted.COMPUTE.overlap_compute_slowdown
            network, beside, before = dp_net, min(window, dp), 0.0
            if interleaved:
                network, beside, before = network + p2p_net, beside + p2p, p2p
            if self.plan.context > 1:  # issue 14 (context)
                ring = self._context_s(sc, cp_net)
                network, beside, before = network + cp_net, beside + ring, before + ring
                hidden = max(hidden, self._context_exposed_s(sc, cp_net))
            late = slow * min(compute, before) * (1.0 - window / compute) if compute > 0 else 0.0
            hidden = max(hidden, dp_exposed + late, slow * min(compute, beside), network - compute)
        tp_exposed = self._tensor_exposed_s(sc, tp)
        unpaired = unpaired_share(
            self.w, self.plan.pipeline, self.plan.virtual_pipeline, self.micro_batches
        )
        if self.w.dualpipe:
            paired = paired_exposed_s(compute, a2a + p2p, unpaired)
            return tp, dp, p2p, a2a, tp_exposed, tp_exposed + paired + hidden
        a2a_exposed = paired_exposed_s(compute, a2a, unpaired) if self.w.combined_1f1b else a2a
        exposed = tp_exposed + a2a_exposed + hidden + (0.0 if interleaved else p2p)
        return tp, dp, p2p, a2a, tp_exposed, exposed

    def _tensor_exposed_s(self, sc: EstimateCase, tp: float) -> float:
        """What the tensor-parallel collectives (``tp`` seconds) add to the step. Exposed
        whole (Megatron-LM: each waits for the GEMM before it), unless the stack overlaps
        them (``Workload.tp_comm_overlap``): each all-gather or reduce-scatter is split into
        chunks that run beside the GEMM it feeds or follows (Wang et al., "Overlap
        Communication with Dependent Computation via Decomposition", ASPLOS 2023;
        Transformer Engine's userbuffers), so the step takes the longer of the layers' GEMMs
        (flash attention has no collective beside it) and the collectives, the GEMMs slowed
        while both run (overlapped_s). With every layer alike, the sum of per-GEMM overlaps is
        the overlap of the totals."""
        if not self.w.tp_comm_overlap or tp == 0.0:
            return tp
        gemm = self.tensor_core_s * (1.0 - self.flash_share) / sc.kernel_efficiency
        return overlapped_s(gemm, tp) - gemm

    # --- issue 14 (context) ---------------------------------------------------------------------
    def _context_s(self, sc: EstimateCase, cp_net: float | None = None) -> float:
        """Ring-attention seconds per step before overlap (``cp_net``: its network share,
        by default timed with the step's own host-CPU bound)."""
        if self.plan.context == 1:
            return 0.0
        if cp_net is None:
            cpu = sc.host_cpu_s_per_byte * self.node_gpus
            cp_net = (
                self.cp_net.seconds(
                    scenario_rate_bytes_per_s(self.line, sc), sc.base_latency_s, self.hop_s, cpu
                )
                if self.cp_net
                else 0.0
            )
        nv = self.cp_nv
        nv_s = nv.bytes / (self.nv_bw * sc.collective_efficiency) + nv.steps * NVLINK_ALPHA_S
        return nv_s + cp_net

    def _context_exposed_s(self, sc: EstimateCase, cp_net: float | None = None) -> float:
        """What the attention compute of the blocks does not hide."""
        hidden = self.tensor_core_s / sc.kernel_efficiency * self.cp_hidden
        if self.flash_share > 0.0:  # the attention that hides the ring at its scenario speed
            hidden *= sc.attention_time_factor
        return max(0.0, self._context_s(sc, cp_net) - hidden)

    # --- end issue 14 (context) -----------------------------------------------------------------

    def _fsdp_exposed_s(self, compute: float, collective_s: float) -> float:
        """Seconds ZeRO-3 / FSDP adds to the compute, per FSDP unit (Zhao et al., PyTorch
        FSDP, VLDB 2023, sec. 3-4).

        Each unit's collective (``collective_s``, latency included) is prefetched under the
        previous unit's compute: a unit takes max(compute_i, communication_i) (compute
        slowed while both run), plus the first all-gather nothing hides and the last
        reduce-scatter that ends the backward. FULL_SHARD gathers forward, gathers and
        reduce-scatters backward, every micro-batch; without re-sharding the gathers run
        under the first micro-batch's forward and the reduce-scatters under the last's
        backward.
        """
        m, units = self.micro_batches, self.units
        forward = compute / m * self.forward_share / units
        backward = compute / m / units - forward
        g = collective_s
        fwd = units * (overlapped_s(forward, g) - forward)
        if self.reshard:
            bwd = units * (overlapped_s(backward, 2.0 * g) - backward)
            return m * (g + fwd + bwd + g)
        bwd = units * (overlapped_s(backward, g) - backward)
        return g + fwd + bwd + g

    def _terms(self, sc: EstimateCase) -> _Terms:
        """The StepBreakdown fields but host_cpu_overhead_s, in order (through
        step_overhead_s); the exposed communication includes what the host CPU adds."""
        last = self._last
        if last is not None and last[0] is sc:
            self._network_s = last[2]
            return last[1]
        plan = self.plan
        m = self.micro_batches
        # issue 14 compute block: the straggler share of waiting for the slowest replica.
        tensor_core_s = self.tensor_core_s
        if sc.attention_time_factor != 1.0:  # issue 14 (the range): flash attention's speed
            tensor_core_s *= 1.0 + self.flash_share * (sc.attention_time_factor - 1.0)
        compute = KernelSpeed.of(sc).kernel_s(tensor_core_s, self.elementwise_s) * (
            1.0 + self.straggler
        )
        cpu = sc.host_cpu_s_per_byte * self.node_gpus
        tp, dp, p2p, a2a, tp_exposed, exposed = self._communication(sc, compute, cpu)
        bubble = (
            bubble_fraction(
                plan.pipeline,
                plan.virtual_pipeline,
                m,
                self.layout.chunk_imbalance,
                self.w.dualpipe,
            )
            * (compute + tp_exposed + a2a)
            if plan.pipeline > 1
            else 0.0
        )
        # issue 14 compute block (compute.py): Adam's update and the fixed per-step overhead.
        terms = (
            compute,
            bubble,
            tp,
            dp,
            p2p,
            a2a,
            exposed,
            self.optimizer_step_s,
            sc.step_overhead_s,
        )
        self._last = (sc, terms, self._network_s)
        return terms


def _host_cpu_split(
    before_s: float, exposed_s: float, wire_exposed_s: float
) -> tuple[float, float]:
    """(exposed wire time, host-CPU time) whose sum after ``before_s`` rounds to exactly
    before_s + exposed_s where a few ulps of host time reach it, so the reported fields add
    up to the step time (which is timed without the split: StepModel.breakdown)."""
    target = before_s + exposed_s
    host_s = max(0.0, exposed_s - wire_exposed_s)
    for _ in range(8):
        got = before_s + wire_exposed_s + host_s
        if got == target:
            break
        host_s = math.nextafter(host_s, math.inf if got < target else -math.inf)
    return wire_exposed_s, max(0.0, host_s)


def scenario(
    c: ClusterSpec,
    fabric: FabricProfile,
    name: str,
    options: ModelOptions = DEFAULT_OPTIONS,
    attention_kernel: str = "flash",
    precision: str = "bf16",
) -> EstimateCase:
    """One scenario's constants for a run at ``precision`` with ``attention_kernel`` on ``c``
    (a calibration profile may scale an FP8 run's kernel efficiency apart)."""
    return scenario_for(
        generation(c.gpu_model),
        fabric,
        name,
        options.calibration,
        attention_kernel,
        precision == "fp8",
    )


@lru_cache(maxsize=1024)
def scenario_for(
    gen: GpuGeneration,
    fabric: FabricProfile,
    name: str,
    calibration: CalibrationProfile | None = None,
    attention_kernel: str = "flash",
    fp8: bool = False,
) -> EstimateCase:
    case = EstimateCase(
        kernel_efficiency=gen.efficiency(name),
        fabric_efficiency=fabric.efficiency(name),
        base_latency_s=fabric.base_latency_s(name),
        host_cpu_s_per_byte=fabric.host_cpu_s_per_byte(name),
        # fitted with the compute model (calibration.COMPUTE); a calibration profile may
        # override it (issue 14, "calibrate").
        step_overhead_s=fitted.COMPUTE.step_overhead_s,
    )
    if calibration is not None:  # issue 14 (calibrate): the user's fitted parameters win
        case = calibration.apply(case, gen, fabric.fabric, name, fp8)
    if name == "optimistic":  # issue 14 (the range): attention as fast as published kernels
        factor = fitted.optimistic_attention_factor(gen, case.kernel_efficiency, attention_kernel)
        case = replace(case, attention_time_factor=factor)
    return case


def estimate(
    w: Workload,
    c: ClusterSpec,
    plan: ParallelPlan,
    fabrics: FabricTable = DEFAULT_FABRICS,
    options: ModelOptions = DEFAULT_OPTIONS,
) -> Estimate:
    """Training time of ``w`` on ``c`` under ``plan``, with a low/expected/high range.

    Raises
    ------
    InvalidInput
        The plan does not fit the cluster or the model (the field is named).
    PlanInfeasible
        The plan does not fit in GPU memory.
    """
    check_plan(w, c, plan)
    fabric = fabric_profile(fabrics, c.fabric)
    step = StepModel(w, c, plan, fabric)
    if step.memory_gb > usable_memory_gb(c):
        raise PlanInfeasible(
            f"needs {memory_text(memory_per_gpu(w, plan), w)}; more than "
            f"{usable_memory_gb(c):.1f} GB usable of {c.gpu_memory_gb:g} GB",
            field="parallelism",
        )
    return estimate_from_step(step, fabric, options)


# issue 14 (the range): a step whose tensor-core time is mostly flash attention is said to be
# attention-bound: its expected time is the fitted kernel's, and its range is wide.
ATTENTION_BOUND_SHARE = 0.5


# Whose runs set each attention kernel's speed (workload.ATTENTION_KERNELS).
_KERNEL_SPEED = {
    "flash": "the flash kernels' (Llama 3's) fitted speed",
    "triton": "MPT's Triton kernel's fitted speed",
    "cudnn": "cuDNN's speed (the flash kernels' fitted speed x its published gain)",
}


def cudnn_attention_note(w: Workload, gen: GpuGeneration) -> str | None:
    """Why a cuDNN workload's attention is timed as the FlashAttention-2 class on ``gen``
    (calibration.kernel_speedup); None where cuDNN's gain applies or another kernel runs."""
    if w.attention_kernel != "cudnn" or gen.cudnn_attention:
        return None
    return (
        f"attention_kernel cudnn is timed as the FlashAttention-2 class on {gen.name}: "
        "Transformer Engine runs cuDNN's fused attention on Hopper and later GPUs, and no "
        "published figure times it on this one"
    )


def _attention_bound_note(
    share: float,
    peak_tflops: float,
    gen: GpuGeneration,
    case: EstimateCase,
    calibrated: bool,
    w: Workload,
) -> str:
    """Why an attention-bound step's range is wide, and what would pin its expected time
    (``calibrated``: a profile's kernel efficiency times this GPU already). The speeds are
    at ``w``'s head dim (head_dim_time_factor)."""
    kernel, slower = w.attention_kernel, head_dim_time_factor(w, gen)
    tflops = peak_tflops * case.kernel_efficiency * fitted.attention_efficiency(gen, kernel)
    tflops /= slower
    best_tflops = peak_tflops * fitted.published_best_share(gen, kernel) / slower
    best_kernel = "cuDNN" if fitted.kernel_speedup(gen, kernel) > 1.0 else "FlashAttention-2"
    whose, advice = (
        ("at the calibration profile's kernel efficiency", "")
        if calibrated
        else (
            _KERNEL_SPEED[kernel],
            "; procure calibrate on a run of your own at this sequence length times your kernel",
        )
    )
    at_head = (
        ""
        if slower == 1.0
        else f" at head dim {kernel_head_dim(w):g} ({slower:.2f} x the time at 128, as the "
        "kernels publish it)"
    )
    return (
        f"attention-bound: flash attention is {share:.0%} of the tensor-core time, timed at "
        f"{tflops:.0f} TFLOP/s per GPU{at_head}, {whose}; the low end assumes the fastest "
        f"published kernel's {best_tflops:.0f} ({best_kernel}){advice}"
    )


def estimate_from_step(
    step: StepModel,
    fabric: FabricProfile,
    options: ModelOptions = DEFAULT_OPTIONS,
    planned_on: ClusterSpec | None = None,
) -> Estimate:
    """The whole answer for ``step``'s plan. ``planned_on``: the cluster a planner searched,
    when the plan uses fewer of its GPUs (``step.c``): its scale-up domain is reported, and a
    note says why the plan leaves the rest idle."""
    w, c = step.w, step.c
    case = scenario(c, fabric, "expected", options, precision=w.precision)
    expected, step_s = step.breakdown_and_step_s(case)
    low = step.step_time_s(
        scenario(c, fabric, "optimistic", options, w.attention_kernel, w.precision)
    )
    high = step.step_time_s(scenario(c, fabric, "pessimistic", options, precision=w.precision))
    steps = w.steps
    model_tflops = step.model_flops / step_s / c.gpus / 1e12
    notes: list[str] = list(w.inferred)  # issue 14 (inputs): what the request left implicit
    if generation(c.gpu_model).name == "default":
        notes.append(
            f"no calibrated kernel efficiency for GPU {c.gpu_model!r}; used the default generation"
        )
    if w.precision == "fp8" and c.gpu_peak_fp8_tflops:  # which peak the MFU is of
        notes.append(
            f"MFU {model_tflops / c.gpu_peak_tflops:.1%} is of the dense BF16 peak "
            f"({c.gpu_peak_tflops:,.0f} TFLOP/s); of the dense FP8 peak "
            f"({c.gpu_peak_fp8_tflops:,.0f}) it is {model_tflops / c.gpu_peak_fp8_tflops:.1%}"
        )
    if step.flash_share >= ATTENTION_BOUND_SHARE:
        profile = options.calibration
        calibrated = (
            profile is not None
            and profile.kernel_scale_for(generation(c.gpu_model), w.precision == "fp8") is not None
        )
        notes.append(
            _attention_bound_note(
                step.flash_share,
                c.gpu_peak_tflops,
                generation(c.gpu_model),
                case,
                calibrated,
                w,
            )
        )
    cudnn = cudnn_attention_note(w, generation(c.gpu_model))
    if cudnn is not None:
        notes.append(cudnn)
    if w.windowed_layers:
        notes.append(sliding_window_note(w))
    dom = min(c.gpus, c.scale_up_domain_gpus)
    dispatch = expert_dispatch_note(w, step.plan, dom)
    if dispatch is not None:
        notes.append(dispatch)
    tiled_s = None if planned_on is not None else domain_tiled_step_s(step, fabric, case, step_s)
    if tiled_s is not None:
        notes.append(domain_tiling_note(c, step.plan, tiled_s, step_s))
    skew_s = 0.0
    if w.expert_capacity_factor:
        notes.append(capacity_note(w, step.plan.expert))
    elif w.expert_load_imbalance > 1.0 and step.plan.expert > 1:
        balanced = StepModel(replace(w, expert_load_imbalance=1.0), c, step.plan, fabric)
        skew_s = max(0.0, step_s - balanced.step_time_s(case))
        notes.append(skew_note(w, step.plan, dom, skew_s, step_s))
    if w.dualpipe:
        notes.append(dualpipe_note(step.plan.pipeline, step.micro_batches, expected))
    elif w.combined_1f1b:
        notes.append(combined_1f1b_note(step.plan, step.micro_batches, expected))
        if expected.all_to_all_s > expected.compute_s:
            notes.append(COMBINED_1F1B_CAUTION)
    elif (exposed_a2a := exposed_all_to_all_note(expected.all_to_all_s, step_s)) is not None:
        notes.append(exposed_a2a)
    if (small_moe := small_moe_note(w)) is not None:
        notes.append(small_moe)
    if w.mtp_layers:
        notes.append(mtp_note(w, step.layout))
    if (layout := layout_note(w, step.layout)) is not None:
        notes.append(layout)
    # issue 14 (goodput) -- owned by the goodput work: failures, checkpoints and restarts
    # stretch the productive time into wall-clock time (optimizer/performance/goodput.py).
    # The failure rate counts the GPUs the plan uses; the same factor applies to the range.
    productive_hours = steps * step_s / SECONDS_PER_HOUR
    good = run_goodput(
        w.checkpoint_size_bytes,
        step.plan.gpus,
        productive_hours * SECONDS_PER_HOUR,
        options.reliability,
        step_s=step_s,
    )
    notes.append(
        describe_goodput(good, w.checkpoint_size_bytes, step.plan.gpus, options.reliability)
    )
    wall = 1.0 / good.goodput
    if options.calibration is not None:  # issue 14 (calibrate): what is unused or stretched
        notes.extend(options.calibration.notes_for(generation(c.gpu_model), c.fabric, step_s))
    root = c if planned_on is None else planned_on
    if c.scale_up_domain_gpus != root.scale_up_domain_gpus:
        notes.append(
            f"the plan uses {c.scale_up_domain_gpus} of the {root.scale_up_domain_gpus} GPUs "
            f"of each scale-up domain ({c.gpus:,} of {root.gpus:,}): its groups tile "
            f"{c.scale_up_domain_gpus} GPUs and none straddles two domains"
        )
    elif c.gpus < root.gpus:
        notes.append(
            f"the plan uses {c.gpus:,} of the {root.gpus:,} GPUs: no plan on more of them "
            "that the request's parallelism allows is faster"
        )
    return Estimate(
        step_time_s=step_s,
        training_time_hours=productive_hours * wall,
        productive_training_time_hours=productive_hours,
        goodput=good.goodput,
        checkpoint_interval_minutes=good.checkpoint_interval_s / 60.0,
        expected_interruptions=good.expected_interruptions,
        training_time_hours_low=steps * low / SECONDS_PER_HOUR * wall,
        training_time_hours_high=steps * high / SECONDS_PER_HOUR * wall,
        model_tflops_per_gpu=model_tflops,
        hardware_tflops_per_gpu=step.hardware_flops / step_s / c.gpus / 1e12,
        mfu=model_tflops / c.gpu_peak_tflops,
        memory_per_gpu_gb=step.memory_gb,
        plan=step.plan,
        breakdown=expected,
        steps=steps,
        parameters=w.parameters,
        tokens_per_s=w.tokens_per_step / step_s,
        notes=tuple(notes),
        gpus_used=step.plan.gpus,
        scale_up_gpus=root.scale_up_domain_gpus,
        stage_layers=step.layout.layers,
        expert_skew_s=skew_s,
        domain_tiled_step_time_s=tiled_s or 0.0,
    )
