"""How long one training step, and the whole run, takes for a workload, cluster and plan.

Step time = compute + pipeline bubble + exposed communication + exposed host-CPU time
(docs/performance-model.md gives every formula and its source). The function is evaluated for
three scenarios (expected, optimistic, pessimistic efficiency factors) to give a training-time
range. ``estimate`` takes a complete plan and never searches; ``planner.plan_and_estimate``
searches plans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from optimizer.errors import InvalidInput
from optimizer.performance import collectives as coll
from optimizer.performance.calibration import (
    CHUNK_PASS_OVERHEAD_S,
    ELEMENTWISE_PASSES,
    NVLINK_ALPHA_S,
    NVLINK_EFFICIENCY,
    GpuGeneration,
    generation,
)
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.fabrics import (
    DEFAULT_FABRICS,
    FabricProfile,
    FabricTable,
    fabric_profile,
)
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.profile import CalibrationProfile
from optimizer.workload.flops import (
    forward_flops_per_token,
    gemm_intensity_flops_per_byte,
    hardware_flops_per_step,
    model_flops_per_step,
)
from optimizer.workload.memory import materialised_bytes_per_token_layer, memory_per_gpu
from optimizer.workload.model import Workload
from optimizer.workload.pipeline_layout import bubble_fraction, pipeline_layout

ACTIVATION_BYTES = 2.0  # bf16 activations on the wire (fp8 runs keep bf16 communication)
GRADIENT_BYTES = 2.0  # bf16 gradients reduced across data-parallel ranks
MEMORY_USABLE_FRACTION = 0.95  # CUDA context (~1 GB) and NCCL buffers take the rest
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


def check_plan(w: Workload, c: ClusterSpec, plan: ParallelPlan) -> None:
    """Refuse a plan that cannot run, naming the parallelism field at fault."""
    for name in ("tensor", "pipeline", "data", "expert", "virtual_pipeline", "micro_batch_size"):
        if getattr(plan, name) < 1:
            raise InvalidInput(
                f"must be >= 1, got {getattr(plan, name)}", field=f"parallelism.{name}"
            )
    if plan.gpus != c.gpus:
        raise InvalidInput(
            f"tensor x pipeline x data = {plan.tensor} x {plan.pipeline} x "
            f"{plan.data} = {plan.gpus} does not match the cluster's {c.gpus} GPUs",
            field="parallelism",
        )
    if w.attention_heads % plan.tensor:
        raise InvalidInput(
            f"tensor {plan.tensor} does not divide attention_heads {w.attention_heads}",
            field="parallelism.tensor",
        )
    # --- issue 14, pipeline: layers need not split evenly (the slowest stage is timed);
    # every stage holds a layer and every one of its v chunks too.
    if plan.pipeline > w.layers:
        raise InvalidInput(
            f"pipeline {plan.pipeline} exceeds the {w.layers} layers (each stage needs one)",
            field="parallelism.pipeline",
        )
    if plan.pipeline * plan.virtual_pipeline > w.layers:
        raise InvalidInput(
            f"virtual_pipeline {plan.virtual_pipeline} exceeds layers / pipeline = "
            f"{w.layers} / {plan.pipeline} (each chunk needs a layer); expected at most "
            f"{w.layers // plan.pipeline}",
            field="parallelism.virtual_pipeline",
        )
    if plan.virtual_pipeline > 1 and plan.pipeline == 1:
        raise InvalidInput(
            "virtual_pipeline > 1 needs pipeline > 1 (chunks interleave across stages)",
            field="parallelism.virtual_pipeline",
        )
    if not plan.reshard_after_forward and plan.zero_stage != 3:
        raise InvalidInput(
            f"reshard_after_forward false applies to zero_stage 3 (FSDP); got zero_stage "
            f"{plan.zero_stage}",
            field="parallelism.reshard_after_forward",
        )
    # --- end issue 14, pipeline
    if plan.data % plan.expert or w.experts % plan.expert:
        raise InvalidInput(
            f"expert {plan.expert} must divide both data {plan.data} and experts {w.experts}",
            field="parallelism.expert",
        )
    if w.global_batch_size % (plan.data * plan.micro_batch_size):
        raise InvalidInput(
            f"global_batch_size {w.global_batch_size} is not a multiple of data x "
            f"micro_batch_size = {plan.data * plan.micro_batch_size}",
            field="parallelism.micro_batch_size",
        )
    if plan.zero_stage not in (0, 1, 2, 3):
        raise InvalidInput(
            f"expected 0, 1, 2 or 3, got {plan.zero_stage}", field="parallelism.zero_stage"
        )
    if w.precision == "fp8" and c.gpu_peak_fp8_tflops is None:
        raise InvalidInput(
            f"fp8 needs a GPU with FP8 tensor cores; {c.gpu_model or 'this GPU'} "
            "has no gpu_peak_fp8_tflops",
            field="workload.precision",
        )


def usable_memory_gb(c: ClusterSpec) -> float:
    return c.gpu_memory_gb * MEMORY_USABLE_FRACTION


def _ring_multiplier(c: ClusterSpec, nodes: int) -> float:
    """Slow-down of neighbour (ring, p2p) traffic spanning ``nodes`` packed nodes.

    Each ring leaves a leaf once; in a plain fat-tree every rail's ring leaves every leaf
    (``nics_per_node`` flows), in a rail-optimized one a leaf carries one rail (one flow). The
    leaf's uplinks carry endpoints_per_leaf / oversubscription line rates, so the ring slows
    only when the crossing flows exceed that. Rings embed in a direct network (a torus) without
    crossing its cut.
    """
    topo = c.topology
    if nodes <= c.nodes_per_leaf or topo.direct:
        return 1.0
    flows = 1 if topo.rail_optimized else c.nics_per_node
    uplink_line_rates = topo.endpoints_per_leaf * topo.bisection_ratio
    return max(1.0, flows / uplink_line_rates)


def _all_to_all_multiplier(c: ClusterSpec, nodes: int) -> float:
    """Slow-down of uniform all-to-all traffic spanning ``nodes`` packed nodes.

    A share 1 - 1/L of the traffic leaves its leaf (L leaves spanned) and crosses a tier with
    bisection_ratio of the non-blocking bandwidth (1/oversubscription in a fat-tree; the global
    links of a dragonfly; the cut of a torus): time x ((1 - x) + x / bisection_ratio).
    """
    leaves = -(-nodes // c.nodes_per_leaf)
    if leaves <= 1:
        return 1.0
    crossing = 1.0 - 1.0 / leaves
    return (1.0 - crossing) + crossing / c.topology.bisection_ratio


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


def _torus_all_to_all_multiplier(c: ClusterSpec, shape: tuple[int, ...], nodes: int) -> float:
    """Slow-down of uniform all-to-all over ``nodes`` consecutive torus nodes: half of it
    crosses the block's bisection, 2 n / max(d_i) links (n / 2 for a largest side of 2; the
    parallel links of each neighbour pair counted), against n x NIC ports / 2 non-blocking
    (Dally & Towles, "Principles and Practices of Interconnection Networks", 2004, ch. 3)."""
    sides = group_shape(shape, nodes)
    largest = max(sides)
    if largest <= 1:
        return 1.0
    ports = sum(2 if k >= 3 else (1 if k == 2 else 0) for k in shape)
    parallel = max(1, c.nics_per_node // max(1, ports))
    cut_links = (2 * nodes / largest if largest >= 3 else nodes / 2) * parallel
    ratio = min(1.0, cut_links / (nodes * c.nics_per_node / 2))
    crossing = 1.0 - 1.0 / nodes
    return (1.0 - crossing) + crossing / ratio


def _hops(c: ClusterSpec, nodes: int, neighbour: bool) -> int:
    """Switch hops on the path: one leaf when the group fits under it, else the worst path."""
    if nodes <= c.nodes_per_leaf:
        return 0 if c.topology.direct else 1
    if neighbour and c.topology.direct:
        return 1
    return c.topology.max_switch_hops


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


@lru_cache(maxsize=8192)
def compute_s_per_token(
    w: Workload,
    micro_batch: int,
    tensor: int,
    gpu_model: str,
    peak_tflops: float,
    peak_fp8_tflops: float | None,
) -> tuple[float, float]:
    """(tensor-core seconds at 100% kernel efficiency, element-wise seconds) per token.

    Each FLOP class runs at its peak (GEMMs at FP8 peak in fp8 runs) derated by a smooth
    roofline (Williams et al., CACM 2009): intensity I against the ridge point R = peak / HBM
    bandwidth gives I / (I + R). Attention scores are batched GEMMs with inner size head_dim
    unless flash attention fuses them (then they run like the layer GEMMs). Element-wise work
    (norms, activations, dropout, softmax without flash attention) is memory-bound:
    ELEMENTWISE_PASSES x the bytes each layer materialises, at HBM speed.
    """
    f = forward_flops_per_token(w)
    full = w.activation_recompute == "full"
    gemm_flops = 3 * (f.layer_matmul + f.logits) + (f.layer_matmul if full else 0)
    attn_flops = hardware_flops_per_step(w) / w.tokens_per_step - gemm_flops
    fp8 = w.precision == "fp8" and peak_fp8_tflops is not None
    peak_gemm = 1e12 * (peak_fp8_tflops if fp8 and peak_fp8_tflops else peak_tflops)
    peak_bf16 = 1e12 * peak_tflops
    hbm = generation(gpu_model).hbm_tbytes_per_s * 1e12
    gemm_i = gemm_intensity_flops_per_byte(w, micro_batch, tensor)
    head_dim = w.hidden_size / w.attention_heads
    attn_i = gemm_i if w.flash_attention else 1 / (2 / w.sequence_length + 1 / head_dim)
    tensor_core = gemm_flops / (peak_gemm * gemm_i / (gemm_i + peak_gemm / hbm)) + attn_flops / (
        peak_bf16 * attn_i / (attn_i + peak_bf16 / hbm)
    )
    passes = ELEMENTWISE_PASSES + (1 if full else 0)
    per_token = materialised_bytes_per_token_layer(w, attention_matrix=not w.flash_attention)
    return tensor_core, passes * per_token * w.layers / hbm


def _layer_collectives_per_step(w: Workload, plan: ParallelPlan) -> float:
    """Per-layer collectives one GPU runs per step (tensor all-reduces; MoE all-to-alls).

    Megatron: 2 all-reduces forward (attention, MLP) + 2 backward per layer, +2 when the
    forward is recomputed (Narayanan et al. sec. 3.3). MoE: dispatch + combine, the same count
    per MoE layer (Lepikhin et al., GShard, 2021).
    """
    per_layer = 6 if w.activation_recompute == "full" else 4
    micro_batches = w.global_batch_size // (plan.data * plan.micro_batch_size)
    return micro_batches * w.layers / plan.pipeline * per_layer


def tensor_parallel_cost(w: Workload, plan: ParallelPlan) -> coll.Cost:
    """Ring all-reduces of the micro-batch activations over the tensor group, per step."""
    size = plan.micro_batch_size * w.sequence_length * w.hidden_size * ACTIVATION_BYTES
    return coll.ring_all_reduce(size, plan.tensor).times(_layer_collectives_per_step(w, plan))


def nvlink_bytes_per_s(c: ClusterSpec) -> float:
    return c.intra_node_gbytes_per_s * 1e9 * NVLINK_EFFICIENCY


class _NetTerm:
    """A network collective repeated ``calls`` times: its cost, topology slow-down and hops."""

    __slots__ = ("cost", "hops", "multiplier")

    def __init__(self, cost: coll.Cost, multiplier: float, hops: int) -> None:
        self.cost, self.multiplier, self.hops = cost, multiplier, hops

    def seconds(self, line_bytes_per_s: float, sc: EstimateCase, hop_s: float) -> float:
        return self.cost.seconds(
            line_bytes_per_s * sc.fabric_efficiency / self.multiplier,
            sc.base_latency_s + self.hops * hop_s,
        )


class _Part(NamedTuple):
    """One collective of a plan, per step: its cost, the share that leaves the node, the
    nodes its group spans, its traffic pattern ("ring" or "all_to_all") and how many nodes
    apart two partners sit (1: neighbours; pipeline stages sit a whole stage apart)."""

    cost: coll.Cost
    remote_share: float
    nodes: int
    pattern: str
    stride: int = 1


class _DataParallel(NamedTuple):
    """One data-parallel reduction: its scale-up part and its network ring and tree forms
    over ``nodes`` domains, which span ``span`` hosts."""

    nvlink: coll.Cost
    ring: coll.Cost
    tree: coll.Cost
    nodes: int
    span: int


class PlanTraffic(NamedTuple):
    """The collectives one GPU runs per step under a plan; independent of the network."""

    tensor: _Part
    all_to_all: _Part | None
    p2p: _Part | None
    data: tuple[_DataParallel, ...]


@lru_cache(maxsize=65536)
def plan_traffic(
    w: Workload, plan: ParallelPlan, gpus_per_node: int, domain_gpus: int | None = None
) -> PlanTraffic:
    """Every collective of ``plan`` with its placement (Megatron order: tensor innermost,
    then data with expert parallelism inside it, then pipeline). Cached: the optimizer times
    the same plans on many candidate networks.

    ``gpus_per_node`` is the host (its NICs are the node's); ``domain_gpus`` the GPUs sharing
    the scale-up fabric (NVLink, Infinity Fabric; None: the host). A group that fits in the
    domain stays on it; what crosses the domain goes on the scale-out network, whose spans are
    counted in hosts (docs/performance-model.md, "Scale-up domain").
    """
    t, p, d, e = plan.tensor, plan.pipeline, plan.data, plan.expert
    gpn = gpus_per_node
    dom = domain_gpus or gpn
    m = w.global_batch_size // (d * plan.micro_batch_size)
    tokens_mb = plan.micro_batch_size * w.sequence_length
    tensor = _Part(tensor_parallel_cost(w, plan), 1.0 if t > dom else 0.0, -(-t // gpn), "ring")

    # Expert parallel all-to-all; with sequence parallelism a tensor rank routes 1/t of the
    # tokens, k copies each. Ranks of the group in the same domain use the scale-up fabric.
    a2a = None
    if w.is_moe and e > 1:
        ep_local = _ranks_in_domain(e, t, dom)
        cost = coll.all_to_all(
            tokens_mb * w.hidden_size * ACTIVATION_BYTES * w.experts_per_token / t, e
        )
        a2a = _Part(
            cost.times(_layer_collectives_per_step(w, plan)),
            1.0 - ep_local / e,
            -(-e // ep_local) * _hosts_per_block(ep_local * t, gpn),
            "all_to_all",
        )

    # Pipeline: activations forward and gradients backward per micro-batch and chunk, split
    # over the t ranks (scatter/gather, Narayanan et al. sec. 4.1). Adjacent stages sit in
    # different domains once one stage (t x d ranks) fills a domain.
    p2p = None
    if p > 1:
        cost = coll.p2p(tokens_mb * w.hidden_size * ACTIVATION_BYTES / t)
        p2p = _Part(
            cost.times(2 * m * plan.virtual_pipeline),
            1.0 if t * d >= dom else 0.0,
            2,
            "ring",
            max(1, t * d // gpn),
        )

    # Data parallel: per-rank gradient bytes, reduced hierarchically (scale-up fabric inside
    # the domain, one rail per rank across domains); experts over their own d/e replicas.
    # ZeRO-3 (FSDP): all-gather weights for forward and backward and reduce-scatter gradients,
    # every micro-batch (Zhao et al., PyTorch FSDP, VLDB 2023); otherwise one all-reduce per
    # step (ZeRO-1/2's reduce-scatter + all-gather move the same bytes).
    dense_grad = (w.parameters - w.expert_parameters) / (t * p) * GRADIENT_BYTES
    expert_grad = w.expert_parameters / (t * p * e) * GRADIENT_BYTES
    dp_local = max(1, min(d, dom // t))
    groups = [(dense_grad, d, dp_local)] if d > 1 else []
    if expert_grad and d // e > 1:
        groups.append((expert_grad, d // e, max(1, min(d // e, dp_local // min(e, dp_local)))))
    data = []
    for size, ranks, local in groups:
        nodes = -(-ranks // local)
        span = nodes * _hosts_per_block(local * t, gpn)
        shard = size / local
        if plan.zero_stage == 3:
            ring = coll.reduce_scatter(shard, nodes).times(3 * m)
            data.append(
                _DataParallel(
                    coll.reduce_scatter(size, local).times(3 * m), ring, ring, nodes, span
                )
            )
        else:
            data.append(
                _DataParallel(
                    coll.reduce_scatter(size, local).times(2),
                    coll.ring_all_reduce(shard, nodes),
                    coll.tree_all_reduce(shard, nodes),
                    nodes,
                    span,
                )
            )
    return PlanTraffic(tensor, a2a, p2p, tuple(data))


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


class StepModel:
    """Everything about one (workload, cluster, plan) that no scenario changes.

    Each communication term is either NVLink seconds (fixed) or a network ``_NetTerm`` priced
    per scenario; bytes a GPU puts on the network are summed for the host-CPU term.
    """

    def __init__(
        self, w: Workload, c: ClusterSpec, plan: ParallelPlan, fabric: FabricProfile
    ) -> None:
        self.w, self.c, self.plan, self.fabric = w, c, plan, fabric
        self.micro_batches = w.global_batch_size // (plan.data * plan.micro_batch_size)
        self.hardware_flops = hardware_flops_per_step(w)
        self.model_flops = model_flops_per_step(w)
        tensor_core_s, elementwise_s = compute_s_per_token(
            w,
            plan.micro_batch_size,
            plan.tensor,
            c.gpu_model,
            c.gpu_peak_tflops,
            c.gpu_peak_fp8_tflops,
        )
        # issue 14, pipeline: the step runs at the pace of the slowest stage (uneven layers,
        # the output layer on the last stage); 1 without a pipeline.
        self.layout = pipeline_layout(w, plan.pipeline, plan.virtual_pipeline)
        tokens_per_gpu = w.tokens_per_step / c.gpus * self.layout.slowest_stage_share
        self.tensor_core_s = tensor_core_s * tokens_per_gpu
        self.elementwise_s = elementwise_s * tokens_per_gpu
        self.memory_gb = memory_per_gpu(w, plan).total_gb
        self.line = c.nic_bytes_per_s_per_gpu
        self.hop_s = fabric.per_hop_latency_ns * 1e-9
        self.fsdp = plan.zero_stage == 3
        self.shape = c.topology.shape if c.topology.direct else ()
        nv_bw = nvlink_bytes_per_s(c)
        self.net_bytes = 0.0  # bytes one GPU puts on the scale-out network per step
        traffic = plan_traffic(
            w, plan, min(c.gpus, c.gpus_per_node), min(c.gpus, c.scale_up_domain_gpus)
        )
        self.tp_nv_s, self.tp_net = self._split(traffic.tensor, nv_bw)
        self.a2a_nv_s, self.a2a_net = self._split(traffic.all_to_all, nv_bw)
        self.p2p_nv_s, self.p2p_net = self._split(traffic.p2p, nv_bw)
        self.dp_nv_s = 0.0
        self.dp_ring: list[_NetTerm] = []
        self.dp_tree: list[_NetTerm] = []
        for part in traffic.data:
            self.dp_nv_s += part.nvlink.seconds(nv_bw, NVLINK_ALPHA_S)
            if part.nodes > 1:
                mult = _ring_multiplier(c, part.span)
                hops = _hops(c, part.span, neighbour=True)
                ring, tree = part.ring, part.tree
                if self.shape:  # a torus: dimension-ordered rings; a tree would pay hops
                    ring = tree = _torus_collective(part.ring, part.nodes, self.shape)
                self.dp_ring.append(_NetTerm(ring, mult, hops))
                self.dp_tree.append(_NetTerm(tree, mult, hops))
                self.net_bytes += part.ring.bytes

    def _split(self, part: _Part | None, nv_bw: float) -> tuple[float, _NetTerm | None]:
        """NVLink seconds of the node-local share, and the network term of the rest."""
        if part is None:
            return 0.0, None
        local = 1.0 - part.remote_share
        nv_s = part.cost.times(local).seconds(nv_bw, NVLINK_ALPHA_S) if local > 0 else 0.0
        if part.remote_share <= 0:
            return nv_s, None
        remote = part.cost.times(part.remote_share)
        self.net_bytes += remote.bytes
        if self.shape:
            term = self._torus_term(part, remote)
        elif part.pattern == "ring":
            term = _NetTerm(
                remote,
                _ring_multiplier(self.c, part.nodes),
                _hops(self.c, part.nodes, neighbour=True),
            )
        else:
            term = _NetTerm(
                remote,
                _all_to_all_multiplier(self.c, part.nodes),
                _hops(self.c, part.nodes, neighbour=False),
            )
        return nv_s, term

    def _torus_term(self, part: _Part, remote: coll.Cost) -> _NetTerm:
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
                _torus_all_to_all_multiplier(self.c, shape, part.nodes),
                max(1, sum(k // 2 for k in sides)),
            )
        if part.stride > 1:
            hops = torus_distance(shape, part.stride)
            return _NetTerm(remote, float(max(1, max(hops))), max(1, sum(hops)))
        return _NetTerm(_torus_collective(remote, part.nodes, shape), 1.0, 1)

    def step_time_s(self, sc: EstimateCase) -> float:
        compute, bubble, _, _, _, _, exposed, host_cpu = self._terms(sc)
        return compute + bubble + exposed + host_cpu + self.micro_batch_overhead_s

    @property
    def micro_batch_overhead_s(self) -> float:
        """issue 14, pipeline: every forward and backward pass of a micro-batch through a
        model chunk pays CHUNK_PASS_OVERHEAD_S on the critical path: m v chunks per stage,
        plus the (p - 1) chunk slots of the fill and drain."""
        plan = self.plan
        slots = self.micro_batches * plan.virtual_pipeline + plan.pipeline - 1
        return 2 * slots * CHUNK_PASS_OVERHEAD_S

    def breakdown(self, sc: EstimateCase) -> StepBreakdown:
        line, hop_s = self.line, self.hop_s
        a2a_net = self.a2a_net.seconds(line, sc, hop_s) if self.a2a_net else 0.0
        network = a2a_net + sum(
            term.seconds(line, sc, hop_s) for term in (self.tp_net, self.p2p_net) if term
        )
        network += sum(
            min(r.seconds(line, sc, hop_s), t.seconds(line, sc, hop_s))
            for r, t in zip(self.dp_ring, self.dp_tree, strict=True)
        )
        return StepBreakdown(
            *self._terms(sc),
            network_s=network,
            all_to_all_network_s=a2a_net,
            micro_batch_overhead_s=self.micro_batch_overhead_s,
        )

    def _terms(
        self, sc: EstimateCase
    ) -> tuple[float, float, float, float, float, float, float, float]:
        """The StepBreakdown fields, in order."""
        line, hop_s, plan = self.line, self.hop_s, self.plan
        m = self.micro_batches
        compute = self.tensor_core_s / sc.kernel_efficiency + self.elementwise_s
        tp = self.tp_nv_s + (self.tp_net.seconds(line, sc, hop_s) if self.tp_net else 0.0)
        a2a = max(self.a2a_nv_s, self.a2a_net.seconds(line, sc, hop_s) if self.a2a_net else 0.0)
        p2p = self.p2p_nv_s + (self.p2p_net.seconds(line, sc, hop_s) if self.p2p_net else 0.0)
        dp = self.dp_nv_s + sum(
            min(r.seconds(line, sc, hop_s), t.seconds(line, sc, hop_s))
            for r, t in zip(self.dp_ring, self.dp_tree, strict=True)
        )
        if self.fsdp:  # prefetched under each micro-batch's compute
            dp_exposed = max(0.0, dp - compute)
        else:
            # Overlap with the backward pass of the last micro-batch (PyTorch DDP buckets,
            # Li et al., VLDB 2020; Megatron overlap_grad_reduce): 2/3 of its model FLOPs.
            window = compute / m * (2.0 / 3.0) * self.model_flops / self.hardware_flops
            dp_exposed = max(0.0, dp - window)
        # --- issue 14, pipeline: (p - 1) fill-and-drain slots of the slowest chunk, 1/v of
        # the slowest stage's time per micro-batch when the chunks split evenly.
        bubble = (
            bubble_fraction(plan.pipeline, plan.virtual_pipeline, m, self.layout.chunk_imbalance)
            * (compute + tp + a2a)
            if plan.pipeline > 1
            else 0.0
        )
        # --- end issue 14, pipeline
        # TCP: the host stack handles every byte of the node; only what outlasts the wire
        # time is exposed (Foong et al., ISPASS 2003).
        node_bytes = self.net_bytes * min(self.c.gpus, self.c.gpus_per_node)
        wire_s = self.net_bytes / (line * sc.fabric_efficiency)
        host_cpu = max(0.0, node_bytes * sc.host_cpu_s_per_byte - wire_s)
        return compute, bubble, tp, dp, p2p, a2a, tp + a2a + p2p + dp_exposed, host_cpu


def scenario(
    c: ClusterSpec, fabric: FabricProfile, name: str, options: ModelOptions = DEFAULT_OPTIONS
) -> EstimateCase:
    return scenario_for(generation(c.gpu_model), fabric, name, options.calibration)


@lru_cache(maxsize=1024)
def scenario_for(
    gen: GpuGeneration,
    fabric: FabricProfile,
    name: str,
    calibration: CalibrationProfile | None = None,
) -> EstimateCase:
    return EstimateCase(
        kernel_efficiency=gen.efficiency(name),
        fabric_efficiency=fabric.efficiency(name),
        base_latency_s=fabric.base_latency_s(name),
        host_cpu_s_per_byte=fabric.host_cpu_s_per_byte(name),
    )


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
            f"needs {step.memory_gb:.1f} GB per GPU, more than {usable_memory_gb(c):.1f} GB "
            f"usable of {c.gpu_memory_gb:g} GB",
            field="parallelism",
        )
    return estimate_from_step(step, fabric, options)


def estimate_from_step(
    step: StepModel, fabric: FabricProfile, options: ModelOptions = DEFAULT_OPTIONS
) -> Estimate:
    w, c = step.w, step.c
    expected = step.breakdown(scenario(c, fabric, "expected", options))
    low = step.step_time_s(scenario(c, fabric, "optimistic", options))
    high = step.step_time_s(scenario(c, fabric, "pessimistic", options))
    step_s = expected.step_time_s
    steps = w.steps
    model_tflops = step.model_flops / step_s / c.gpus / 1e12
    notes: list[str] = []
    if generation(c.gpu_model).name == "default":
        notes.append(
            f"no calibrated kernel efficiency for GPU {c.gpu_model!r}; used the default generation"
        )
    return Estimate(
        step_time_s=step_s,
        training_time_hours=steps * step_s / SECONDS_PER_HOUR,
        productive_training_time_hours=steps * step_s / SECONDS_PER_HOUR,
        training_time_hours_low=steps * low / SECONDS_PER_HOUR,
        training_time_hours_high=steps * high / SECONDS_PER_HOUR,
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
        scale_up_gpus=c.scale_up_domain_gpus,
    )
