"""Lower bounds on the wall-clock step of many candidate plans at once (issue 14, speed).

The planner times a plan exactly with ``estimator.StepModel`` (tens of microseconds each) and
must find the fastest of hundreds to thousands of candidates per search. This module prices
every candidate of one hardware size with NumPy in a few dozen array operations, as a bound
that no exact estimate undercuts, so only plans whose bound beats the best exact step so far
are timed.

The bound is the step of ``StepModel._terms`` with every network term replaced by what no
network can go below, built from the same network-independent quantities the estimator uses
(``estimator._compute_plan_core``, ``plan_traffic``) and the same formulas:

- compute, straggler, optimizer step, per-step and per-micro-batch overheads: exact;
- scale-up (NVLink) terms: the cheaper of the ring and the NVLS form, whatever the cluster
  enables;
- scale-out terms: their lightest form's bytes (SHARP's only where the switches reduce) at
  line rate times the fabric and collective efficiencies, slowed by the leaf-uplink
  slow-down of their own flows plus, for data-parallel rings and pipeline sends priced
  ``shared`` (the default), the other's flows weighted by the share of the compute its bytes
  keep the wire busy (as ``StepModel.leaf_multipliers``; never by hops or latency), or at
  the host TCP stack's rate where that is slower;
- the overlap of the data-parallel reductions (DDP window, FSDP per unit) as in the
  estimator: both are non-decreasing in the communication time, so a smaller communication
  time gives a smaller step;
- ring attention's exposed time, at least 0;
- goodput: the wall-clock step is at least step x (1 + sqrt(2 write x failure rate) +
  failure rate x restart), the minimum over every checkpoint interval of Young's loss.

Every term is a provable under-estimate whatever the fitted constants are; BOUND_SLACK
absorbs the rounding of a different order of the same float operations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from optimizer.performance import calibration as fitted
from optimizer.performance import collectives as coll
from optimizer.performance.calibration import CHUNK_PASS_OVERHEAD_S, NVLINK_ALPHA_S, generation
from optimizer.performance.cluster import ClusterSpec, UplinkTier
from optimizer.performance.compute import (
    compute_s_per_token,
    optimizer_step_s,
    straggler_fraction,
)
from optimizer.performance.estimator import (
    EstimateCase,
    StepModel,
    data_parallel_collectives,
    fsdp_units,
    nvlink_bytes_per_s,
    oversubscribed_block_nodes,
    plan_traffic,
)
from optimizer.performance.fabrics import FabricProfile
from optimizer.performance.goodput import Reliability, checkpoint_write_s, restart_s
from optimizer.performance.plan import ParallelPlan
from optimizer.workload.flops import hardware_flops_per_step, model_flops_per_step
from optimizer.workload.model import Workload
from optimizer.workload.pipeline_layout import bubble_fraction, pipeline_layout

# Relative slack under the bound: the same operations in another order round differently by
# a few ulps; a billionth is far above that and far below any difference between plans.
BOUND_SLACK = 1e-9
SECONDS_PER_HOUR = 3600.0

Floats = npt.NDArray[np.float64]


class NetBytes(NamedTuple):
    """Bytes one GPU puts on the scale-out network per step, per plan: each term in its
    lightest form."""

    tp: Floats
    a2a: Floats
    p2p: Floats
    dp: Floats


@dataclass(frozen=True)
class PlanArrays:
    """The network-independent quantities of each candidate plan on one hardware size, one
    array entry per plan (in ``plans`` order). Seconds of scale-up terms are at a collective
    efficiency of 1; bytes are what one GPU puts on the scale-out network per step."""

    plans: tuple[ParallelPlan, ...]
    tensor_core_s: Floats
    elementwise_s: Floats
    straggler: Floats
    fixed_s: Floats  # optimizer step + per-micro-batch overheads
    bubble: Floats  # bubble fraction (0 without a pipeline)
    micro_batches: Floats
    forward_share: float
    fsdp: npt.NDArray[np.bool_]
    reshard: npt.NDArray[np.bool_]
    units: Floats
    dp_collectives: Floats
    tp_nv_s: Floats  # bandwidth seconds, then latency seconds, per scale-up term
    tp_nv_lat_s: Floats
    a2a_nv_s: Floats
    a2a_nv_lat_s: Floats
    p2p_nv_s: Floats
    p2p_nv_lat_s: Floats
    dp_nv_s: Floats
    dp_nv_lat_s: Floats
    plain: NetBytes  # scale-out bytes where the switches do not reduce
    sharp: NetBytes  # and where they do (SHARP: all-reduces in their in-network form too)
    dp_span: Floats  # hosts the widest network data-parallel ring spans (0: none)
    p2p_stride: Floats  # nodes between pipeline partners (0: no network pipeline traffic)
    pipeline: Floats
    interleaved: npt.NDArray[np.bool_]  # virtual_pipeline > 1: pipeline sends overlap compute
    a2a_nodes: Floats  # nodes the expert all-to-all spans (0: none on the network)
    # per (kernel efficiency, collective efficiency): _static's terms
    static: dict[tuple[float, float], _Static] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    @cached_property
    def rings_and_sends(self) -> bool:
        """Whether some plan puts both data-parallel and pipeline bytes on the network."""
        return bool(((self.plain.p2p > 0) & (self.plain.dp > 0)).any())


def _nv(cost: coll.Cost, nvls: coll.Cost | None, nv_bw: float) -> tuple[float, float]:
    """Scale-up (bandwidth seconds, latency seconds) of the cheaper of the two forms."""
    b, s = cost.bytes, cost.steps
    if nvls is not None:
        b, s = min(b, nvls.bytes), min(s, nvls.steps)
    return b / nv_bw, s * NVLINK_ALPHA_S


# Network-free columns (network_free_terms), in PlanArrays order.
FREE_COLUMNS = ("tensor_core_s", "elementwise_s", "straggler", "fixed_s", "bubble", "micro_batches")


def network_free_terms(
    w: Workload, c: ClusterSpec, plans: tuple[ParallelPlan, ...], kernel_eff: float
) -> tuple[list[float], dict[str, list[float]]]:
    """Each plan's network-free part of the step in the way StepModel computes it (compute
    with straggler and bubble, optimizer step, per-micro-batch overheads) at kernel
    efficiency ``kernel_eff``, and the FREE_COLUMNS it is made of."""
    hbm = generation(c.gpu_model).hbm_tbytes_per_s
    cols: dict[str, list[float]] = {name: [] for name in FREE_COLUMNS}
    free: list[float] = []
    for plan in plans:
        tensor_core_s, elementwise_s = compute_s_per_token(
            w,
            plan.micro_batch_size,
            plan.tensor,
            c.gpu_model,
            c.gpu_peak_tflops,
            c.gpu_peak_fp8_tflops,
            plan.expert,
        )
        p, v = plan.pipeline, plan.virtual_pipeline
        layout = pipeline_layout(w, p, v)
        tokens = w.tokens_per_step / c.gpus * layout.slowest_stage_share
        tensor_core_s, elementwise_s = tensor_core_s * tokens, elementwise_s * tokens
        straggler = straggler_fraction(plan.data)
        m = w.global_batch_size // (plan.data * plan.micro_batch_size)
        bubble = bubble_fraction(p, v, m, layout.chunk_imbalance) if p > 1 else 0.0
        fixed_s = optimizer_step_s(w, plan, hbm) + 2 * (m * v + p - 1) * CHUNK_PASS_OVERHEAD_S
        compute = (tensor_core_s / kernel_eff + elementwise_s) * (1.0 + straggler)
        free.append(compute * (1.0 + bubble) + fixed_s)
        for name, value in zip(
            FREE_COLUMNS, (tensor_core_s, elementwise_s, straggler, fixed_s, bubble, m), strict=True
        ):
            cols[name].append(value)
    return free, cols


# plan_arrays' per-plan columns besides the network-free ones, in _plan_row's order.
_ROW_COLUMNS = (
    "fsdp",
    "reshard",
    "units",
    "dp_collectives",
    "pipeline",
    "interleaved",
    "tp_nv_s",
    "tp_nv_lat_s",
    "tp_bytes",
    "tp_sharp_bytes",
    "a2a_nv_s",
    "a2a_nv_lat_s",
    "a2a_bytes",
    "a2a_sharp_bytes",
    "p2p_nv_s",
    "p2p_nv_lat_s",
    "p2p_bytes",
    "p2p_sharp_bytes",
    "a2a_nodes",
    "p2p_stride",
    "dp_nv_s",
    "dp_nv_lat_s",
    "dp_bytes",
    "dp_sharp_bytes",
    "dp_span",
)


def _plan_row(
    w: Workload, plan: ParallelPlan, gpn: int, dom: int, nvls: bool, nv_bw: float
) -> tuple[float, ...]:
    """One plan's _ROW_COLUMNS (a row, not 25 list appends: this runs for every candidate
    of every size a search prices)."""
    traffic = plan_traffic(w, plan, gpn, dom)
    row: list[float] = [
        plan.zero_stage == 3,
        plan.reshard_after_forward,
        fsdp_units(w, plan),
        data_parallel_collectives(w, plan) if traffic.data else 1,
        plan.pipeline,
        plan.virtual_pipeline > 1,
    ]
    for part in (traffic.tensor, traffic.all_to_all, traffic.p2p):
        nv_s = lat_s = remote_bytes = sharp_bytes = 0.0
        if part is not None:
            local = 1.0 - part.remote_share
            if local > 0:
                nvls_cost = (
                    StepModel._nvls(part.in_network.times(local))
                    if nvls and part.in_network is not None
                    else None
                )
                nv_s, lat_s = _nv(part.cost.times(local), nvls_cost, nv_bw)
            if part.remote_share > 0:
                remote_bytes = sharp_bytes = part.cost.bytes * part.remote_share
                if part.in_network is not None:
                    sharp_bytes = min(remote_bytes, part.in_network.bytes * part.remote_share)
        row += (nv_s, lat_s, remote_bytes, sharp_bytes)
    a2a, p2p = traffic.all_to_all, traffic.p2p
    row.append(a2a.nodes if a2a is not None and a2a.remote_share > 0 else 0.0)
    row.append(p2p.stride if p2p is not None and p2p.remote_share > 0 else 0.0)
    dp_nv_s = dp_lat_s = dp_bytes = dp_sharp_bytes = dp_span = 0.0
    for dp in traffic.data:
        nvls_cost = (
            StepModel._nvls(dp.nvlink_in_network)
            if nvls and dp.nvlink_in_network is not None
            else None
        )
        b, s = _nv(dp.nvlink, nvls_cost, nv_bw)
        dp_nv_s += b
        dp_lat_s += s
        if dp.nodes > 1:
            lightest = min(dp.ring.bytes, dp.tree.bytes)
            dp_bytes += lightest
            reduced = dp.in_network
            dp_sharp_bytes += lightest if reduced is None else min(lightest, reduced.bytes)
            dp_span = max(dp_span, dp.span)
    row += (dp_nv_s, dp_lat_s, dp_bytes, dp_sharp_bytes, dp_span)
    return tuple(row)


def plan_arrays(
    w: Workload, c: ClusterSpec, plans: tuple[ParallelPlan, ...], free: dict[str, list[float]]
) -> PlanArrays:
    """The arrays of ``plans`` on ``c``'s hardware (its network is not read); ``free``: their
    network_free_terms columns."""
    nvls = generation(c.gpu_model).name in coll.NVLS_GENERATIONS
    nv_bw = nvlink_bytes_per_s(c)
    gpn, dom = min(c.gpus, c.gpus_per_node), min(c.gpus, c.scale_up_domain_gpus)
    rows = [_plan_row(w, plan, gpn, dom, nvls, nv_bw) for plan in plans]
    table = np.array(rows, dtype=np.float64).reshape(len(rows), len(_ROW_COLUMNS))
    arrays = dict(zip(_ROW_COLUMNS, np.ascontiguousarray(table.T), strict=True))
    arrays.update((k, np.array(v, dtype=np.float64)) for k, v in free.items())
    plain, sharp = (
        NetBytes(*(arrays.pop(f"{name}{form}_bytes") for name in ("tp", "a2a", "p2p", "dp")))
        for form in ("", "_sharp")
    )
    return PlanArrays(
        plans=plans,
        plain=plain,
        sharp=sharp,
        forward_share=model_flops_per_step(w) / (3.0 * hardware_flops_per_step(w)),
        fsdp=arrays.pop("fsdp").astype(bool),
        reshard=arrays.pop("reshard").astype(bool),
        interleaved=arrays.pop("interleaved").astype(bool),
        **arrays,
    )


# PlanArrays' per-plan arrays other than the bytes (concatenated field by field)
_PER_PLAN = tuple(
    f.name
    for f in fields(PlanArrays)
    if f.init and f.name not in ("plans", "forward_share", "plain", "sharp")
)


def concatenated(parts: list[PlanArrays]) -> PlanArrays:
    """The plans of ``parts`` (chunks of several sizes of one workload and hardware) as one
    set of arrays, in order, so one NumPy pass bounds them all."""
    if len(parts) == 1:
        return parts[0]
    columns = {name: np.concatenate([getattr(p, name) for p in parts]) for name in _PER_PLAN}
    plain, sharp = (
        NetBytes(*(np.concatenate(column) for column in zip(*forms, strict=True)))
        for forms in ([p.plain for p in parts], [p.sharp for p in parts])
    )
    return PlanArrays(
        plans=tuple(plan for p in parts for plan in p.plans),
        forward_share=parts[0].forward_share,
        plain=plain,
        sharp=sharp,
        **columns,
    )


@lru_cache(maxsize=65536)
def goodput_factor(parameters: float, gpus: int, r: Reliability) -> float:
    """What every wall-clock step is at least, per productive second, on ``gpus`` GPUs:
    1 + min over intervals tau of (write / tau + rate (tau / 2 + restart))."""
    rate = r.failures_per_gpu_hour * gpus / SECONDS_PER_HOUR
    write = checkpoint_write_s(parameters, gpus, r)
    return 1.0 + math.sqrt(2.0 * write * rate) + rate * restart_s(parameters, gpus, r)


class _Tiers(NamedTuple):
    """A network's uplink tiers as columns (one row per tier), so a chunk's flows on every
    tier are one (tiers x plans) array; ``uplinks`` and ``miss`` only of the tiers with
    uplinks (``switched``), the others slow nothing down."""

    nodes: Floats
    rails: Floats
    switched: npt.NDArray[np.intp] | None  # None: every tier
    uplinks: Floats
    miss: Floats  # 1 - 1/k: the chance a static-ECMP flow misses a given uplink of k


@lru_cache(maxsize=256)
def _tier_columns(tiers: tuple[UplinkTier, ...]) -> _Tiers:
    switched = [i for i, t in enumerate(tiers) if t.uplinks > 0]
    uplinks = [tiers[i].uplinks for i in switched]
    return _Tiers(
        nodes=np.array([[t.nodes] for t in tiers], dtype=np.float64),
        rails=np.array([[t.rails] for t in tiers], dtype=np.float64),
        switched=None if len(switched) == len(tiers) else np.array(switched, dtype=np.intp),
        uplinks=np.array([[u] for u in uplinks], dtype=np.float64),
        miss=np.array([[1.0 - 1.0 / max(1.0, u)] for u in uplinks], dtype=np.float64),
    )


def _leaf_slowdowns(tiers: _Tiers, flows: Floats, adaptive_routing: bool) -> Floats:
    """``estimator.leaf_slowdown`` for arrays of flow counts, ``flows[..., tier, plan]``:
    the slowest tier's, per plan (and per leading index)."""
    f = flows if tiers.switched is None else flows[..., tiers.switched, :]
    if f.shape[-2] == 0:
        return np.ones(flows.shape[:-2] + flows.shape[-1:])
    uplinks = tiers.uplinks
    safe = np.maximum(f, 1.0)
    if adaptive_routing:
        delivered = np.minimum(safe, uplinks)
    else:
        delivered = np.where(
            safe <= 1.0, np.minimum(safe, uplinks), uplinks * (1.0 - tiers.miss**safe)
        )
    slowdown = np.where(f <= 0, 1.0, np.maximum(1.0, safe / delivered))
    worst: Floats = np.maximum(1.0, slowdown.max(axis=-2))
    return worst


class _Static(NamedTuple):
    """What the bound of a chunk needs from a scenario's kernel and collective efficiencies
    only (the same on every network of a fabric): the network-free terms, and which network
    terms any plan of the chunk has at all."""

    compute: Floats
    base: Floats  # compute + optimizer step + per-micro-batch overheads
    tp_nv: Floats
    a2a_nv: Floats
    p2p_nv: Floats
    dp_nv: Floats
    window: Floats  # the last micro-batch's backward (DDP overlap)
    forward: Floats  # per FSDP unit
    backward: Floats
    fsdp_times: Floats  # micro-batches (re-sharding) or 1
    tp_net: bool
    a2a_net: bool
    p2p_net: bool
    dp_net: bool
    any_ddp: bool
    any_fsdp: bool
    any_bubble: bool
    any_interleaved: bool
    gather_backward: Floats  # backward all-gathers per forward one: 2 re-sharding, else 1
    p2p_reach: Floats  # nodes a pipeline's sends span: stride x stages (0: none)


def _static(a: PlanArrays, ke: float, ce: float) -> _Static:
    key = (ke, ce)
    hit = a.static.get(key)
    if hit is not None:
        return hit
    compute = (a.tensor_core_s / ke + a.elementwise_s) * (1.0 + a.straggler)
    per_mb = compute / a.micro_batches
    forward = per_mb * a.forward_share / a.units
    static = _Static(
        compute=compute,
        base=compute + a.fixed_s,
        tp_nv=a.tp_nv_s / ce + a.tp_nv_lat_s,
        a2a_nv=a.a2a_nv_s / ce + a.a2a_nv_lat_s,
        p2p_nv=a.p2p_nv_s / ce + a.p2p_nv_lat_s,
        dp_nv=a.dp_nv_s / ce + a.dp_nv_lat_s,
        window=per_mb * 2.0 * a.forward_share,
        forward=forward,
        backward=per_mb / a.units - forward,
        fsdp_times=np.where(a.reshard, a.micro_batches, 1.0),
        tp_net=bool((a.plain.tp > 0).any()),
        a2a_net=bool((a.plain.a2a > 0).any()),
        p2p_net=bool((a.plain.p2p > 0).any()),
        dp_net=bool((a.plain.dp > 0).any()),
        any_ddp=not bool(a.fsdp.all()),
        any_fsdp=bool(a.fsdp.any()),
        any_bubble=bool((a.bubble > 0).any()),
        any_interleaved=bool(a.interleaved.any()),
        gather_backward=np.where(a.reshard, 2.0, 1.0),
        p2p_reach=a.p2p_stride * a.pipeline,
    )
    a.static[key] = static
    return static


def _leaf_per_byte(
    a: PlanArrays,
    net: NetBytes,
    st: _Static,
    c: ClusterSpec,
    fabric: FabricProfile,
    wire: Floats | float,
    cpu: Floats | float,
    per_byte: Floats | float,
    shared: bool,
) -> tuple[Floats | float, Floats | float]:
    """Seconds per byte of the pipeline sends and of the data-parallel rings on the leaf
    uplinks: ``StepModel.leaf_multipliers`` vectorised (each slowed by its own flows plus,
    when ``shared``, the other's, weighted by the share of the compute the other's bytes are
    busy alone), at the lightest form's bytes, so no exact multiplier is smaller. Without
    ``shared`` each term's own flows still bound it, for two thirds of the operations.
    ``per_byte``: max(1 / wire, cpu), the seconds per byte without any slow-down."""
    if c.topology.direct:
        return per_byte, per_byte
    tiers, ar = _tier_columns(c.uplink_tiers), fabric.adaptive_routing
    # flows per (tier, plan); a plan without network sends has p2p_stride 0, so none
    p2p_flows = np.where(
        st.p2p_reach > tiers.nodes,
        np.minimum(a.p2p_stride, tiers.nodes) * tiers.rails,
        0.0,
    )
    dp_flows = np.where(a.dp_span > tiers.nodes, tiers.rails, 0.0)  # per rail
    p2p_per_byte, dp_per_byte = np.maximum(
        _leaf_slowdowns(tiers, np.stack((p2p_flows, dp_flows)), ar) / wire, cpu
    )
    if not (shared and st.p2p_net and st.dp_net):
        return p2p_per_byte, dp_per_byte
    both = (p2p_flows > 0).any(axis=0) & (dp_flows > 0).any(axis=0) & (st.compute > 0)
    if not both.any():
        return p2p_per_byte, dp_per_byte
    compute = np.where(both, st.compute, 1.0)
    p2p_busy = np.minimum(1.0, net.p2p * p2p_per_byte / compute)
    dp_busy = np.minimum(1.0, net.dp * dp_per_byte / compute)
    together = np.stack((p2p_flows + dp_busy * dp_flows, dp_flows + p2p_busy * p2p_flows))
    p2p_together, dp_together = np.maximum(_leaf_slowdowns(tiers, together, ar) / wire, cpu)
    return np.where(both, p2p_together, p2p_per_byte), np.where(both, dp_together, dp_per_byte)


def shares_uplinks(a: PlanArrays, c: ClusterSpec) -> bool:
    """Whether some plan of ``a`` may put data-parallel rings and pipeline sends on the same
    leaf uplinks of ``c``: only then does ``shared`` pricing differ."""
    return not c.topology.direct and a.rings_and_sends


def wall_step_lower_bounds_s(
    a: PlanArrays,
    c: ClusterSpec,
    gpus: int | Floats,
    fabric: FabricProfile,
    sc: EstimateCase,
    goodput: float | Floats,
    shared: bool = True,
) -> Floats:
    """A lower bound on each plan's wall-clock step on ``c`` cut to ``gpus`` GPUs (the plans'
    size) in scenario ``sc``; ``goodput``: goodput_factor for that size. Both may be arrays,
    one entry per plan, when the plans are of several sizes of ``c``'s network (concatenated).
    Terms no plan of the chunk has are skipped. ``shared``: price the leaf uplinks the
    data-parallel rings share with the pipeline sends (tighter, a third more operations)."""
    ce = sc.collective_efficiency
    st = _static(a, sc.kernel_efficiency, ce)
    # as ClusterSpec.nic_bytes_per_s_per_gpu; plain floats for one size (the same values)
    node_gpus = (
        min(gpus, c.gpus_per_node) if isinstance(gpus, int) else np.minimum(gpus, c.gpus_per_node)
    )
    cpu = sc.host_cpu_s_per_byte * node_gpus
    wire = c.nic_gbps_per_node * 1e9 / 8 / node_gpus * sc.fabric_efficiency * ce
    per_byte = max(1.0 / wire, cpu) if isinstance(wire, float) else np.maximum(1.0 / wire, cpu)
    topo = c.topology
    direct = topo.direct

    # SHARP's in-network form only where the switches reduce (StepModel.sharp)
    net = a.sharp if c.in_network_reduction and not direct else a.plain
    tp = st.tp_nv + net.tp * per_byte if st.tp_net else st.tp_nv
    a2a = st.a2a_nv
    if st.a2a_net:  # its own uplink slow-down (1 on a direct network, where it is >= 1)
        if direct:
            a2a_per_byte: Floats | float = per_byte
        else:
            leaves = np.ceil(a.a2a_nodes / oversubscribed_block_nodes(c))
            crossing = np.where(leaves > 1, 1.0 - 1.0 / np.maximum(leaves, 1.0), 0.0)
            a2a_mult = (1.0 - crossing) + crossing / topo.bisection_ratio
            a2a_per_byte = np.maximum(a2a_mult / wire, cpu)
        a2a = np.maximum(st.a2a_nv, net.a2a * a2a_per_byte)
    p2p, dp = st.p2p_nv, st.dp_nv
    if st.p2p_net or st.dp_net:
        p2p_per_byte, dp_per_byte = _leaf_per_byte(
            a, net, st, c, fabric, wire, cpu, per_byte, shared
        )
        p2p = st.p2p_nv + net.p2p * p2p_per_byte if st.p2p_net else p2p
        dp = st.dp_nv + net.dp * dp_per_byte if st.dp_net else dp

    slow = fitted.COMPUTE.overlap_compute_slowdown  # the live fitted value, as overlapped_s
    exposed: Floats | float = 0.0
    if st.any_ddp:  # DDP / ZeRO-1/2: the reduction overlaps the last micro-batch's backward
        window = st.window
        exposed = np.maximum(window + slow * np.minimum(window, dp), dp) - window
    if st.any_fsdp:  # per unit max(compute_i, gather_i), the first gather, last reduce-scatter
        forward, backward = st.forward, st.backward
        g = dp / a.dp_collectives
        fwd = a.units * (np.maximum(forward + slow * np.minimum(forward, g), g) - forward)
        g_bwd = g * st.gather_backward
        bwd = a.units * (
            np.maximum(backward + slow * np.minimum(backward, g_bwd), g_bwd) - backward
        )
        fsdp = st.fsdp_times * (g + fwd + bwd + g)
        exposed = np.where(a.fsdp, fsdp, exposed) if st.any_ddp else fsdp

    if st.any_interleaved:  # sends under the next chunk's compute (StepModel._communication)
        compute = st.compute
        hidden_p2p = np.maximum(compute + slow * np.minimum(compute, p2p), p2p) - compute
        p2p = np.where(a.interleaved, hidden_p2p, p2p)
    step = st.base + tp + a2a + p2p + exposed + sc.step_overhead_s
    if st.any_bubble:
        step = step + a.bubble * (st.compute + tp + a2a)
    result: Floats = step * (goodput * (1.0 - BOUND_SLACK))
    return result
