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

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
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
    optimizer_step_bytes,
    straggler_fraction,
    timed_tokens_per_gpu,
)
from optimizer.performance.estimator import (
    EstimateCase,
    KernelSpeed,
    Part,
    StepModel,
    data_parallel_collectives,
    data_traffic,
    expert_collective,
    fsdp_units,
    layer_collectives_per_step,
    nvlink_bytes_per_s,
    oversubscribed_block_nodes,
    pipeline_traffic,
    tensor_collective,
    tensor_collective_share,
    torus_distance,
)
from optimizer.performance.fabrics import FabricProfile
from optimizer.performance.goodput import Reliability, checkpoint_write_s, restart_s
from optimizer.performance.plan import Degrees, ParallelPlan
from optimizer.workload.flops import hardware_flops_per_step, model_flops_per_step
from optimizer.workload.model import Workload
from optimizer.workload.pipeline_layout import (
    bubble_fraction,
    pipeline_layout,
    unpaired_share,
)

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


# NetRows: the rows of the arrays a pass prices the tensor-parallel, pipeline and
# data-parallel terms in (PlanArrays.network_bytes, _Static.scale_up), one NumPy call for all.
P2P_ROW, DP_ROW = 1, 2  # row 0: the tensor-parallel term


# Network-free columns (network_free_terms), the first rows of PlanArrays.table.
FREE_COLUMNS = (
    "tensor_core_s",
    "elementwise_s",
    "straggler",
    "fixed_s",
    "bubble",
    "micro_batches",
    "unpaired",
)


# plan_arrays' per-plan columns besides the network-free ones, in plan_arrays' order: what
# the interleaving depth leaves alone (_depth_free_row), then the pipeline's (pipeline_traffic).
_DEPTH_FREE_COLUMNS = (
    "fsdp",
    "reshard",
    "units",
    "dp_collectives",
    "pipeline",
    "tp_nv_s",
    "tp_nv_lat_s",
    "tp_bytes",
    "tp_sharp_bytes",
    "a2a_nv_s",
    "a2a_nv_lat_s",
    "a2a_bytes",
    "a2a_sharp_bytes",
    "a2a_nodes",
    "a2a_busiest",
    "dp_nv_s",
    "dp_nv_lat_s",
    "dp_bytes",
    "dp_sharp_bytes",
    "dp_span",
)
_ROW_COLUMNS = (
    *_DEPTH_FREE_COLUMNS,
    "interleaved",
    "p2p_nv_s",
    "p2p_nv_lat_s",
    "p2p_bytes",
    "p2p_sharp_bytes",
    "p2p_stride",
)


# PlanArrays.table's rows, by name
TABLE_ROWS = (*FREE_COLUMNS, *_ROW_COLUMNS)


class _Row:
    """A named row of PlanArrays.table (a view: one entry per plan), looked up once per table
    (then kept in the instance, which shadows this descriptor, as functools.cached_property
    does): a pricing pass reads thirty of them."""

    __slots__ = ("index", "name")

    def __set_name__(self, owner: type, name: str) -> None:
        self.index, self.name = TABLE_ROWS.index(name), name

    def __get__(self, arrays: PlanArrays, owner: type | None = None) -> Floats:
        row: Floats = arrays.table[self.index]
        arrays.__dict__[self.name] = row
        return row


class _Flag(_Row):
    """A row of PlanArrays.table that holds yes (1) or no (0), as booleans."""

    __slots__ = ()

    def __get__(self, arrays: PlanArrays, owner: type | None = None) -> npt.NDArray[np.bool_]:  # type: ignore[override]
        flags: npt.NDArray[np.bool_] = arrays.table[self.index] != 0.0
        arrays.__dict__[self.name] = flags
        return flags


@dataclass(frozen=True)
class PlanArrays:
    """The network-independent quantities of each candidate plan on one hardware size, one
    column of ``table`` per plan (in ``plans`` order), a named row per quantity (TABLE_ROWS:
    the candidates of several sizes are one band, and one table makes them one copy, not
    thirty). Seconds of scale-up terms are at a collective efficiency of 1; bytes are what
    one GPU puts on the scale-out network per step."""

    plans: tuple[Degrees, ...]
    forward_share: float
    table: Floats
    # the schedule pairs the pipeline sends with the all-to-all (DualPipe), or the all-to-all
    # alone (Combined 1F1B; estimator.paired_exposed_s)
    pairs_sends: bool = False
    # per (kernel speed, collective efficiency, per-step overhead): _static's terms
    static: dict[tuple[KernelSpeed, float, float], _Static] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    # per shape of network (uplink tiers, adaptive routing): _leaf's flows and slow-downs
    leaves: dict[tuple[tuple[UplinkTier, ...], bool], _Leaf] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )
    # per torus shape: _torus_slowdowns
    tori: dict[tuple[int, ...], Floats] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    tensor_core_s = _Row()
    elementwise_s = _Row()
    straggler = _Row()
    fixed_s = _Row()  # optimizer step + per-micro-batch overheads
    bubble = _Row()  # bubble fraction (0 without a pipeline)
    micro_batches = _Row()
    unpaired = _Row()  # the schedule's unpaired share of the chunks (0: it pairs nothing)
    fsdp = _Flag()
    reshard = _Flag()
    units = _Row()
    dp_collectives = _Row()
    pipeline = _Row()
    tp_nv_s = _Row()  # bandwidth seconds, then latency seconds, per scale-up term
    tp_nv_lat_s = _Row()
    a2a_nv_s = _Row()
    a2a_nv_lat_s = _Row()
    a2a_nodes = _Row()  # nodes the expert all-to-all spans (0: none on the network)
    a2a_busiest = _Row()  # its timed rank's bytes over the mean rank's (Part.busiest)
    dp_nv_s = _Row()
    dp_nv_lat_s = _Row()
    dp_span = _Row()  # hosts the widest network data-parallel ring spans (0: none)
    interleaved = _Flag()  # virtual_pipeline > 1: pipeline sends overlap compute
    p2p_nv_s = _Row()
    p2p_nv_lat_s = _Row()
    p2p_stride = _Row()  # nodes between pipeline partners (0: no network pipeline traffic)

    @cached_property
    def plain(self) -> NetBytes:
        """Scale-out bytes where the switches do not reduce."""
        return NetBytes(*(self.table[TABLE_ROWS.index(f"{n}_bytes")] for n in NetBytes._fields))

    @cached_property
    def sharp(self) -> NetBytes:
        """And where they do (SHARP: all-reduces in their in-network form too)."""
        return NetBytes(
            *(self.table[TABLE_ROWS.index(f"{n}_sharp_bytes")] for n in NetBytes._fields)
        )

    @cached_property
    def network_bytes(self) -> tuple[Floats, Floats]:
        """The tensor-parallel, pipeline and data-parallel bytes on the network as the rows
        of one array (a pass prices them at once), in the plain form and the SHARP one."""
        return (
            np.stack((self.plain.tp, self.plain.p2p, self.plain.dp)),
            np.stack((self.sharp.tp, self.sharp.p2p, self.sharp.dp)),
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


class _FreeRows(NamedTuple):
    """What the distinct network-free rows of a candidate list (_free_rows) are made of that
    no GPU model changes, a column each, and each plan's row (``row_of``). ``kernel`` indexes
    ``kernels`` (micro-batch, tensor, expert): compute_s_per_token's arguments;
    ``collective`` indexes ``collectives``, per (tensor, expert, micro-batch, context) the
    degrees of one plan with them, whose tensor all-reduce and expert all-to-all
    (_collective_rows) every row with them shares: its step runs ``collectives_per_step`` of
    each."""

    row_of: npt.NDArray[np.intp]
    kernels: list[tuple[int, int, int, int]]  # (micro-batch, t, e, expert tensor)
    kernel: npt.NDArray[np.intp]
    collectives: list[CollectiveDegrees]
    collective: npt.NDArray[np.intp]
    collectives_per_step: Floats
    tokens: Floats
    straggler: Floats
    micro_batches: Floats
    bubble: Floats
    chunk_s: Floats  # the per-micro-batch chunk overheads
    optimizer_bytes: Floats  # optimizer_step_bytes
    unpaired: Floats  # the schedule's unpaired share (unpaired_share; 0: it pairs nothing)


_FREE_ROWS_CACHE_SIZE = 4_096
# Each candidate list's _FreeRows, by the list's id (the list is kept with them, so the id
# stays its own), the workload, the GPUs and the fitted constants they were worked out
# under: the planner's lists are cached (planner._candidate_plans) and priced again on
# every hardware type of their size.
_free_rows_cache: dict[int, tuple[tuple[Degrees, ...], Workload, int, object, _FreeRows]] = {}


def _free_rows(w: Workload, gpus: int, plans: tuple[Degrees, ...]) -> _FreeRows:
    """The distinct network-free rows of ``plans`` on ``gpus`` GPUs, but their GPU model's
    part. A row reads the degrees but the context, and the ZeRO stage only as sharded
    optimizer states or not (optimizer_step_s): plans differing in the rest share it (worked
    out from the first of them)."""
    constants = fitted.COMPUTE
    hit = _free_rows_cache.get(id(plans))
    if hit is not None and (hit[0], hit[1], hit[2], hit[3]) == (plans, w, gpus, constants):
        return hit[4]
    known: dict[tuple[int, ...], int] = {}
    kernels: dict[tuple[int, int, int, int], int] = {}
    collectives: dict[tuple[int, int, int, int, int], tuple[int, CollectiveDegrees]] = {}
    stages: dict[tuple[int, int], tuple[float, float]] = {}  # (tokens, chunk imbalance)
    rows: list[tuple[float, ...]] = []
    index: list[int] = []
    for t, p, d, e, v, z, mb, cp, _, et in plans:
        key = (mb, t, e, p, v, d, z >= 1, et)
        row = known.get(key)
        if row is None:
            row = known[key] = len(rows)
            kernel = kernels.get((mb, t, e, et))
            if kernel is None:
                kernel = kernels[mb, t, e, et] = len(kernels)
            collective = collectives.get((t, e, mb, cp, et))
            if collective is None:  # the first plan's degrees stand for the rest
                collective = collectives[t, e, mb, cp, et] = (
                    len(collectives),
                    (t, p, d, e, mb, cp, et),
                )
            stage = stages.get((p, v))
            if stage is None:
                layout = pipeline_layout(w, p, v)
                stage = stages[p, v] = (
                    timed_tokens_per_gpu(w, gpus, p, layout.slowest_stage_share),
                    layout.chunk_imbalance,
                )
            tokens, imbalance = stage
            m = w.global_batch_size // (d * mb)
            rows.append(
                (
                    kernel,
                    collective[0],
                    layer_collectives_per_step(w, d, mb, p),
                    tokens,
                    straggler_fraction(d),
                    m,
                    bubble_fraction(p, v, m, imbalance, w.dualpipe) if p > 1 else 0.0,
                    2 * (m * v + p - 1) * CHUNK_PASS_OVERHEAD_S,
                    optimizer_step_bytes(w, t, p, d, e, cp, z >= 1, et),
                    unpaired_share(w, p, v, m),
                )
            )
        index.append(row)
    table = np.array(rows, dtype=np.float64).reshape(len(rows), 10).T
    found = _FreeRows(
        np.array(index, dtype=np.intp),
        list(kernels),
        table[0].astype(np.intp),
        [degrees for _, degrees in collectives.values()],
        table[1].astype(np.intp),
        *table[2:],
    )
    if isinstance(plans, tuple):  # a list might change under its id
        if len(_free_rows_cache) >= _FREE_ROWS_CACHE_SIZE:
            _free_rows_cache.clear()
        _free_rows_cache[id(plans)] = (plans, w, gpus, constants, found)
    return found


def network_free_terms(
    w: Workload,
    c: ClusterSpec,
    plans: tuple[Degrees, ...],
    speed: KernelSpeed,
    parts: RowParts | None = None,
) -> tuple[Floats, Floats]:
    """Each plan's network-free part of the step in the way StepModel computes it (compute
    with straggler and bubble, optimizer step, per-micro-batch overheads) at the scenario's
    ``speed``, plus what no scale-out network shortens: the tensor-parallel
    and expert all-to-all seconds on the scale-up fabric (_collective_s, times the
    collectives a step runs), stretched by the bubble as StepModel stretches them. Also the
    FREE_COLUMNS the first part is made of (a row each). A size's candidates share a few
    (micro-batch, tensor, expert) kernels and (pipeline, depth) layouts, and their distinct
    rows are fewer still: what no GPU model changes is worked out once per candidate list
    (_free_rows), the rest per call for the distinct rows in one NumPy pass (the same
    operations, in the same order, as StepModel's), the plans index them. ``parts``: the
    scale-up rows worked out so far for ``w`` on ``c``'s RowHardware (plan_arrays' too)."""
    hbm = generation(c.gpu_model).hbm_tbytes_per_s
    rows = _free_rows(w, c.gpus, plans)
    hw, known = row_hardware(c), RowParts() if parts is None else parts
    per_collective = np.array(
        [_collective_s(w, degrees, hw, known) for degrees in rows.collectives], dtype=np.float64
    )
    scale_up = per_collective[rows.collective] * rows.collectives_per_step
    kernel = np.array(
        [
            compute_s_per_token(
                w, mb, t, c.gpu_model, c.gpu_peak_tflops, c.gpu_peak_fp8_tflops, e, et
            )
            for mb, t, e, et in rows.kernels
        ],
        dtype=np.float64,
    ).reshape(len(rows.kernels), 2)[rows.kernel]
    tensor_core_s = kernel[:, 0] * rows.tokens
    elementwise_s = kernel[:, 1] * rows.tokens
    fixed_s = rows.optimizer_bytes / (hbm * 1e12) + rows.chunk_s
    compute = speed.kernel_s(tensor_core_s, elementwise_s) * (1.0 + rows.straggler)
    stretch = 1.0 + rows.bubble
    free = compute * stretch + fixed_s + stretch * scale_up
    table = np.stack(
        (
            free,
            tensor_core_s,
            elementwise_s,
            rows.straggler,
            fixed_s,
            rows.bubble,
            rows.micro_batches,
            rows.unpaired,
        )
    )
    columns = table[:, rows.row_of]
    return columns[0], columns[1:]


class RowHardware(NamedTuple):
    """What a row needs of the hardware: the host, the scale-up domain, whether it reduces
    in the switch (NVLS), its bandwidth per GPU."""

    gpn: int
    dom: int
    nvls: bool
    nv_bw: float


def row_hardware(c: ClusterSpec) -> RowHardware:
    """What ``c``'s rows read of it (plan_arrays): every cluster with the same rows it."""
    return RowHardware(
        gpn=min(c.gpus, c.gpus_per_node),
        dom=min(c.gpus, c.scale_up_domain_gpus),
        nvls=generation(c.gpu_model).name in coll.NVLS_GENERATIONS,
        nv_bw=nvlink_bytes_per_s(c),
    )


def _part_row(part: Part | None, hw: RowHardware) -> tuple[float, float, float, float]:
    """(scale-up bandwidth seconds, scale-up latency seconds, network bytes, network bytes
    where the switches reduce) of one collective."""
    nv_s = lat_s = remote_bytes = sharp_bytes = 0.0
    if part is not None:
        local = 1.0 - part.remote_share
        if local > 0:
            nvls_cost = (
                StepModel._nvls(part.in_network.times(local))
                if hw.nvls and part.in_network is not None
                else None
            )
            nv_s, lat_s = _nv(part.cost.times(local), nvls_cost, hw.nv_bw)
        if part.remote_share > 0:
            remote_bytes = sharp_bytes = part.cost.bytes * part.remote_share
            if part.in_network is not None:
                sharp_bytes = min(remote_bytes, part.in_network.bytes * part.remote_share)
    return nv_s, lat_s, remote_bytes, sharp_bytes


class RowParts:
    """What the depth-free rows of families share, each worked out once per what it reads
    (one tensor all-reduce and one expert all-to-all, estimator.tensor_collective and
    expert_collective, by the tensor, expert, micro-batch and context degrees; a plan's
    data_traffic, which families differing only in the micro-batch share unless FSDP
    re-shards per micro-batch), and the rows themselves by family. Its rows must all be of
    one workload and one RowHardware (row_hardware): a family's degrees name its size, so
    every size and memory limit of that hardware may share it."""

    __slots__ = ("data", "expert", "rows", "sends", "tensor")

    def __init__(self) -> None:
        self.tensor: dict[tuple[int, ...], tuple[float, ...]] = {}
        # the pipeline's sends (estimator.pipeline_traffic): the tensor, pipeline, data,
        # micro-batch and context degrees and the depth, whatever the ZeRO stage or experts
        self.sends: dict[tuple[int, ...], tuple[float, ...]] = {}
        self.expert: dict[tuple[int, ...], tuple[float, ...]] = {}
        self.data: dict[tuple[int | bool, ...], tuple[float, ...]] = {}
        self.rows: dict[Family, tuple[float, ...]] = {}


def _expert_row(a2a: Part | None, hw: RowHardware) -> tuple[float, ...]:
    nodes = a2a.nodes if a2a is not None and a2a.remote_share > 0 else 0.0
    return (*_part_row(a2a, hw), nodes, 1.0 if a2a is None else a2a.busiest)


def _data_row(w: Workload, plan: ParallelPlan, hw: RowHardware) -> tuple[float, ...]:
    """(collectives, then the data-parallel columns) of one plan's data-parallel traffic."""
    data = data_traffic(w, plan, hw.gpn, hw.dom)
    dp_nv_s = dp_lat_s = dp_bytes = dp_sharp_bytes = dp_span = 0.0
    for dp in data:
        nvls_cost = (
            StepModel._nvls(dp.nvlink_in_network)
            if hw.nvls and dp.nvlink_in_network is not None
            else None
        )
        b, s = _nv(dp.nvlink, nvls_cost, hw.nv_bw)
        dp_nv_s += b
        dp_lat_s += s
        if dp.nodes > 1:
            lightest = min(dp.ring.bytes, dp.tree.bytes)
            dp_bytes += lightest
            reduced = dp.in_network
            dp_sharp_bytes += lightest if reduced is None else min(lightest, reduced.bytes)
            dp_span = max(dp_span, dp.span)
    calls = data_parallel_collectives(w, plan) if data else 1
    return (calls, dp_nv_s, dp_lat_s, dp_bytes, dp_sharp_bytes, dp_span)


def _collective_rows(
    w: Workload,
    degrees: CollectiveDegrees,
    hw: RowHardware,
    parts: RowParts,
    plan: ParallelPlan | None = None,
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """One tensor all-reduce's and one expert all-to-all's rows (_part_row, _expert_row) of
    the plans with these (tensor, pipeline, data, expert, micro-batch, context, expert
    tensor) degrees, each worked out once per what it reads (estimator.tensor_collective,
    expert_collective: a size's thousands of degrees share a few dozen; ``plan``: one of
    those plans, if at hand)."""
    t, p, d, e, mb, cp, et = degrees
    tensor = parts.tensor.get((t, mb, cp))
    if tensor is None:
        plan = plan or ParallelPlan(t, p, d, e, micro_batch_size=mb, context=cp, expert_tensor=et)
        # Overlapped under the GEMMs (Workload.tp_comm_overlap), a plan's tensor collectives
        # may add nothing to its step: the bounds take none of them.
        collective = None if w.tp_comm_overlap else tensor_collective(w, plan, hw.gpn, hw.dom)
        tensor = parts.tensor[t, mb, cp] = _part_row(collective, hw)
    expert = parts.expert.get((t, e, mb, cp, et))
    if expert is None:
        plan = plan or ParallelPlan(t, p, d, e, micro_batch_size=mb, context=cp, expert_tensor=et)
        expert = parts.expert[t, e, mb, cp, et] = _expert_row(
            expert_collective(w, plan, hw.gpn, hw.dom), hw
        )
    return tensor, expert


def _collective_s(
    w: Workload, degrees: CollectiveDegrees, hw: RowHardware, parts: RowParts
) -> float:
    """One tensor all-reduce's (at the share a step runs: estimator.tensor_collective_share)
    and one expert all-to-all's (at the MoE layers' share) seconds on the scale-up fabric of
    the plans with these degrees, at a collective efficiency of 1: no scenario's is higher
    (request_limits: at most 1), and their network parts only add, so no network gives a plan
    less (wall_step_lower_bounds_s adds them as StepModel does, with the network's)."""
    tensor, expert = _collective_rows(w, degrees, hw, parts)
    share = tensor_collective_share(w, degrees[-1] not in (0, degrees[0]))
    # DualPipe and Combined 1F1B run the all-to-all partly beside the compute:
    # wall_step_lower_bounds_s adds it as they pair it
    if w.dualpipe or w.combined_1f1b:
        return share * (tensor[0] + tensor[1])
    return share * (tensor[0] + tensor[1]) + w.expert_layer_share * (expert[0] + expert[1])


def _depth_free_row(
    w: Workload, plan: ParallelPlan, hw: RowHardware, parts: RowParts
) -> tuple[float, ...]:
    """One plan's _DEPTH_FREE_COLUMNS (a row, not appends: this runs for every family of
    depths of every size a search prices), from the parts it shares with other families."""
    t, p, d, e, mb, cp, et = plan.family
    z, reshard = plan.zero_stage, plan.reshard_after_forward
    (nv_s, lat_s, tp_bytes, tp_sharp_bytes), expert = _collective_rows(
        w, (t, p, d, e, mb, cp, et), hw, parts, plan
    )
    a2a_nv_s, a2a_lat_s, a2a_bytes, a2a_sharp_bytes, a2a_nodes, a2a_busiest = expert
    n = layer_collectives_per_step(w, d, mb, p)  # what a step runs of each
    n_tp = n * tensor_collective_share(w, plan.folded)
    n_a2a = n * w.expert_layer_share  # the MoE layers' only
    # FSDP with re-sharding gathers per micro-batch: only then does the micro-batch count
    per_micro_batch = mb if z == 3 and reshard else 0
    key = (t, p, d, e, z, reshard, cp, per_micro_batch, et)
    data = parts.data.get(key)
    if data is None:
        data = parts.data[key] = _data_row(w, plan, hw)
    calls, *dp_columns = data
    return (
        z == 3,
        reshard,
        fsdp_units(w, plan),
        calls,
        p,
        n_tp * nv_s,
        n_tp * lat_s,
        n_tp * tp_bytes,
        n_tp * tp_sharp_bytes,
        n_a2a * a2a_nv_s,
        n_a2a * a2a_lat_s,
        n_a2a * a2a_bytes,
        n_a2a * a2a_sharp_bytes,
        a2a_nodes,
        a2a_busiest,
        *dp_columns,
    )


# A plan's degrees but its interleaving depth: a size offers each at several depths
# (planner.depth_ladder), whose rows share _depth_free_row.
Family = tuple[int, int, int, int, int, int, int, bool, int]
# (tensor, pipeline, data, expert, micro-batch, context, expert tensor): what one tensor
# all-reduce and one expert all-to-all of a plan read (_collective_rows).
CollectiveDegrees = tuple[int, int, int, int, int, int, int]


def _sends_row(w: Workload, plan: ParallelPlan, hw: RowHardware) -> tuple[float, ...]:
    """One plan's columns of _ROW_COLUMNS after the depth-free ones: its pipeline's sends."""
    p2p = pipeline_traffic(w, plan, hw.gpn, hw.dom)
    stride = p2p.stride if p2p is not None and p2p.remote_share > 0 else 0.0
    return (plan.virtual_pipeline > 1, *_part_row(p2p, hw), stride)


def plan_arrays(
    w: Workload,
    c: ClusterSpec,
    plans: tuple[Degrees, ...],
    free: Floats,
    parts: RowParts | None = None,
) -> PlanArrays:
    """The arrays of ``plans`` on ``c``'s hardware (its network is not read); ``free``: their
    network_free_terms columns; ``parts``: depth-free rows and their parts to reuse and add
    to (of ``w`` on ``c``'s RowHardware)."""
    hw = row_hardware(c)
    known = RowParts() if parts is None else parts
    # Each distinct family's depth-free row and each distinct pipeline's sends once, as the
    # columns of two small tables the plans index: a size's plans share a family at
    # several depths and ZeRO stages, so copying rows plan by plan cost twice as much.
    families: dict[Family, int] = {}
    pipelines: dict[tuple[int, ...], int] = {}
    heads: list[tuple[float, ...]] = []
    tails: list[tuple[float, ...]] = []
    head_of: list[int] = []
    tail_of: list[int] = []
    for degrees in plans:
        t, p, d, e, v, z, mb, cp, reshard, et = degrees
        plan = None  # built only for a row not worked out yet (the traffic reads a plan)
        family = (t, p, d, e, z, mb, cp, reshard, et)
        i = families.get(family)
        if i is None:
            i = families[family] = len(heads)
            head = known.rows.get(family)
            if head is None:
                plan = ParallelPlan(*degrees)
                head = known.rows[family] = _depth_free_row(w, plan, hw, known)
            heads.append(head)
        head_of.append(i)
        sends = (t, p, d, mb, cp, v)
        j = pipelines.get(sends)
        if j is None:
            j = pipelines[sends] = len(tails)
            tail = known.sends.get(sends)
            if tail is None:
                plan = plan or ParallelPlan(*degrees)
                tail = known.sends[sends] = _sends_row(w, plan, hw)
            tails.append(tail)
        tail_of.append(j)
    # row by row (C order): a pass reads each row whole, and a strided row cost it 2-3 times
    table = np.empty((len(TABLE_ROWS), len(plans)))
    heads_end = len(FREE_COLUMNS) + len(_DEPTH_FREE_COLUMNS)
    table[: len(FREE_COLUMNS)] = free
    table[len(FREE_COLUMNS) : heads_end] = (
        np.array(heads, dtype=np.float64)
        .reshape(len(heads), len(_DEPTH_FREE_COLUMNS))
        .T[:, head_of]
    )
    table[heads_end:] = (
        np.array(tails, dtype=np.float64)
        .reshape(len(tails), len(TABLE_ROWS) - heads_end)
        .T[:, tail_of]
    )
    return PlanArrays(
        plans=plans,
        forward_share=model_flops_per_step(w) / (3.0 * hardware_flops_per_step(w)),
        table=table,
        pairs_sends=w.dualpipe,
    )


def concatenated(parts: list[PlanArrays], lengths: Sequence[int] | None = None) -> PlanArrays:
    """The plans of ``parts`` (the candidates of several sizes of one workload and hardware) as one
    set of arrays, in order, so one NumPy pass bounds them all; ``lengths``: only the first so
    many of each part's."""
    if lengths is None:
        if len(parts) == 1:
            return parts[0]
        lengths = [len(p.plans) for p in parts]
    pairs = list(zip(parts, lengths, strict=True))
    return PlanArrays(
        plans=tuple(itertools.chain.from_iterable(p.plans[:n] for p, n in pairs)),
        forward_share=parts[0].forward_share,
        table=np.concatenate([p.table[:, :n] for p, n in pairs], axis=1),
        pairs_sends=parts[0].pairs_sends,
    )


@lru_cache(maxsize=65536)
def goodput_factor(checkpoint_size_bytes: float, gpus: int, r: Reliability) -> float:
    """What every wall-clock step is at least, per productive second, on ``gpus`` GPUs:
    1 + min over intervals tau of (write / tau + rate (tau / 2 + restart)), a checkpoint of
    ``checkpoint_size_bytes`` (Workload.checkpoint_size_bytes)."""
    rate = r.failures_per_gpu_hour * gpus / SECONDS_PER_HOUR
    write = checkpoint_write_s(checkpoint_size_bytes, gpus, r)
    return 1.0 + math.sqrt(2.0 * write * rate) + rate * restart_s(checkpoint_size_bytes, gpus, r)


class _Tiers(NamedTuple):
    """A network's uplink tiers as columns (one row per tier), so the plans' flows on every
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
    """What the plans' bounds need from a scenario's kernel and collective efficiencies only
    (the same on every network of a fabric): the network-free terms, and which network terms
    any of the plans has at all. The overlaps are priced as one array, a row per
    overlap (wall_step_lower_bounds_s): a pass costs a microsecond or so per NumPy call
    whatever its length, so fewer, wider calls make it cheaper."""

    compute: Floats
    # compute + optimizer step + per-micro-batch and per-step overheads + bubble x compute
    base: Floats
    stretch: Floats  # 1 + bubble
    a2a_nv: Floats
    scale_up: Floats  # the tensor, pipeline and data-parallel scale-up seconds (NetRows rows)
    # the rows of (NetRows) the overlapped transfers are made of, and what share of each
    transfer_rows: npt.NDArray[np.intp]
    transfer_share: Floats
    # the compute each overlapped transfer hides under, a row each: the last micro-batch's
    # backward (DDP) or an FSDP unit's forward; an FSDP unit's backward (when any plan has
    # FSDP). Interleaved sends hide under the whole compute with the reduction, apart.
    hide_under: Floats
    # FSDP's exposed seconds per step: the first gather and the last reduce-scatter (per
    # data-parallel second) plus each unit's part of the first two rows, all as many times
    # as the step gathers (micro-batches when re-sharding, else once); 0 and 1 for DDP
    fsdp_ends: Floats
    fsdp_units: Floats
    tp_net: bool
    a2a_net: bool
    p2p_net: bool
    dp_net: bool
    any_a2a: bool
    any_fsdp: bool
    any_interleaved: bool
    any_paired: bool
    p2p_reach: Floats  # nodes a pipeline's sends span: stride x stages (0: none)


def _static(a: PlanArrays, speed: KernelSpeed, ce: float, overhead_s: float) -> _Static:
    key = (speed, ce, overhead_s)
    hit = a.static.get(key)
    if hit is not None:
        return hit
    compute = speed.kernel_s(a.tensor_core_s, a.elementwise_s) * (1.0 + a.straggler)
    per_mb = compute / a.micro_batches
    forward = per_mb * a.forward_share / a.units
    any_fsdp = bool(a.fsdp.any())
    any_interleaved = bool(a.interleaved.any())
    gather = 1.0 / a.dp_collectives
    # per data-parallel second: the whole reduction (DDP) or one forward all-gather (FSDP);
    # the backward all-gathers (2 re-sharding, else 1); the sends, whole
    hide_under = [np.where(a.fsdp, forward, per_mb * 2.0 * a.forward_share)]
    rows, share = [DP_ROW], [np.where(a.fsdp, gather, 1.0)]
    fsdp_times = np.where(a.reshard, a.micro_batches, 1.0)
    if any_fsdp:
        hide_under.append(np.where(a.fsdp, per_mb / a.units - forward, 0.0))
        rows.append(DP_ROW)
        share.append(np.where(a.fsdp, gather * np.where(a.reshard, 2.0, 1.0), 0.0))
    a2a_nv = a.a2a_nv_s / ce + a.a2a_nv_lat_s
    static = _Static(
        compute=compute,
        base=compute * (1.0 + a.bubble) + a.fixed_s + overhead_s,
        stretch=1.0 + a.bubble,
        a2a_nv=a2a_nv,
        scale_up=np.stack(
            (
                a.tp_nv_s / ce + a.tp_nv_lat_s,
                a.p2p_nv_s / ce + a.p2p_nv_lat_s,
                a.dp_nv_s / ce + a.dp_nv_lat_s,
            )
        ),
        transfer_rows=np.array(rows, dtype=np.intp),
        transfer_share=np.array(share),
        hide_under=np.array(hide_under),
        fsdp_ends=np.where(a.fsdp, 2.0 * fsdp_times * gather, 0.0),
        fsdp_units=np.where(a.fsdp, fsdp_times * a.units, 1.0),
        tp_net=bool((a.plain.tp > 0).any()),
        a2a_net=bool((a.plain.a2a > 0).any()),
        p2p_net=bool((a.plain.p2p > 0).any()),
        dp_net=bool((a.plain.dp > 0).any()),
        any_a2a=bool((a.plain.a2a > 0).any() or (a2a_nv > 0).any()),
        any_fsdp=any_fsdp,
        any_interleaved=any_interleaved,
        any_paired=bool((a.unpaired > 0).any()),
        p2p_reach=a.p2p_stride * a.pipeline,
    )
    a.static[key] = static
    return static


class _Leaf(NamedTuple):
    """The plans' flows per (tier, plan) on one shape of network (its uplink tiers and
    routing), and the slow-down each term's own flows cause (NetRows rows; 1 for the
    tensor-parallel term, which stays off the uplinks): the same at every NIC speed, NIC
    efficiency and latency of that shape, which the optimizer's networks vary."""

    p2p_flows: Floats
    dp_flows: Floats
    slowdowns: Floats
    both: npt.NDArray[np.bool_]  # plans whose sends and rings both leave a block somewhere


# Network shapes a set of plans' arrays keep (_leaf): a search's networks share a few.
_SHAPES_KEPT = 64


def _leaf(a: PlanArrays, st: _Static, c: ClusterSpec, adaptive_routing: bool) -> _Leaf:
    key = (c.uplink_tiers, adaptive_routing)
    hit = a.leaves.get(key)
    if hit is not None:
        return hit
    if len(a.leaves) >= _SHAPES_KEPT:
        a.leaves.clear()
    tiers = _tier_columns(c.uplink_tiers)
    # flows per (tier, plan); a plan without network sends has p2p_stride 0, so none
    p2p_flows = np.where(
        st.p2p_reach > tiers.nodes,
        np.minimum(a.p2p_stride, tiers.nodes) * tiers.rails,
        0.0,
    )
    dp_flows = np.where(a.dp_span > tiers.nodes, tiers.rails, 0.0)  # per rail
    own = _leaf_slowdowns(tiers, np.stack((p2p_flows, dp_flows)), adaptive_routing)
    slowdowns = np.vstack((np.ones_like(st.compute), own))
    both = np.logical_and((p2p_flows > 0).any(axis=0), (dp_flows > 0).any(axis=0))
    leaf = a.leaves[key] = _Leaf(p2p_flows, dp_flows, slowdowns, both)
    return leaf


def _torus_slowdowns(a: PlanArrays, shape: tuple[int, ...]) -> Floats:
    """The slow-down of each network term on a torus of ``shape`` (NetRows rows): a
    pipeline's partners ``p2p_stride`` nodes apart share the most loaded link of the shift,
    max(1, max_i min(delta_i, d_i - delta_i)) (StepModel._torus_term); rings of neighbours
    and the data-parallel rings (dimension-ordered: more steps, the same bytes) 1. Worked out
    once per stride of the plans: the planner's plans share a few."""
    hit = a.tori.get(shape)
    if hit is not None:
        return hit
    if len(a.tori) >= _SHAPES_KEPT:
        a.tori.clear()
    load = {
        stride: float(max(1, *torus_distance(shape, int(stride))))
        for stride in set(a.p2p_stride.tolist())
        if stride > 1
    }
    p2p = np.array([load.get(stride, 1.0) for stride in a.p2p_stride.tolist()])
    slowdowns = a.tori[shape] = np.vstack((np.ones_like(p2p), p2p, np.ones_like(p2p)))
    return slowdowns


def _per_byte(
    a: PlanArrays,
    net: Floats,
    st: _Static,
    c: ClusterSpec,
    fabric: FabricProfile,
    wire: Floats | float,
    cpu: Floats | float,
    per_byte: Floats | float,
    shared: bool,
) -> Floats | float:
    """Seconds per byte of each network term (NetRows rows) on ``c``: ``per_byte``, max(1 /
    wire, cpu), slowed on the leaf uplinks for the pipeline sends and the data-parallel
    rings: ``StepModel.leaf_multipliers`` vectorised (each slowed by its own flows plus,
    when ``shared``, the other's, weighted by the share of the compute, or of its own
    transfer where longer, the other's bytes are busy alone), at the lightest form's bytes
    (``net``): a term's time grows with its bytes and the other's, so no exact one is
    smaller. Without ``shared`` each term's own flows still bound it, for two thirds of the
    operations. On a torus the sends are slowed by their shift's busiest link instead
    (_torus_slowdowns)."""
    if c.topology.direct:
        if not (c.topology.shape and st.p2p_net):
            return per_byte
        return np.maximum(_torus_slowdowns(a, c.topology.shape) / wire, cpu)
    ar = fabric.adaptive_routing
    leaf = _leaf(a, st, c, ar)
    alone = np.maximum(leaf.slowdowns / wire, cpu)
    if not (shared and st.p2p_net and st.dp_net):
        return alone
    p2p_flows, dp_flows = leaf.p2p_flows, leaf.dp_flows
    both = leaf.both & (st.compute > 0)
    if not both.any():
        return alone
    p2p_s, dp_s = net[P2P_ROW:] * alone[P2P_ROW:]
    span = np.where(both, st.compute, 1.0)  # the compute, or the own transfer if longer
    p2p_busy = np.minimum(1.0, p2p_s / np.maximum(span, dp_s))
    dp_busy = np.minimum(1.0, dp_s / np.maximum(span, p2p_s))
    together = np.stack((p2p_flows + dp_busy * dp_flows, dp_flows + p2p_busy * p2p_flows))
    tiers = _tier_columns(c.uplink_tiers)
    shared_per_byte = alone.copy()
    shared_per_byte[P2P_ROW:] = np.where(
        both, np.maximum(_leaf_slowdowns(tiers, together, ar) / wire, cpu), alone[P2P_ROW:]
    )
    return shared_per_byte


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
    Terms none of the plans has are skipped. ``shared``: price the leaf uplinks the
    data-parallel rings share with the pipeline sends (tighter, a third more operations)."""
    ce = sc.collective_efficiency
    st = _static(a, KernelSpeed.of(sc), ce, sc.step_overhead_s)
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
    sharp = c.in_network_reduction and not direct
    net = a.sharp if sharp else a.plain
    a2a = st.a2a_nv
    if st.a2a_net:  # its own uplink slow-down (1 on a direct network, where it is >= 1)
        if direct:
            a2a_per_byte: Floats | float = per_byte
        else:
            leaves = np.ceil(a.a2a_nodes / oversubscribed_block_nodes(c))
            crossing = np.where(leaves > 1, 1.0 - 1.0 / np.maximum(leaves, 1.0), 0.0)
            # estimator.crossing_slowdown, per plan
            a2a_mult = (1.0 - crossing) + crossing / np.minimum(
                1.0, a.a2a_busiest * topo.bisection_ratio
            )
            a2a_per_byte = np.maximum(a2a_mult / wire, cpu)
        a2a = np.maximum(st.a2a_nv, net.a2a * a2a_per_byte)
    terms = st.scale_up  # the tensor, pipeline and data-parallel terms, NetRows rows
    p2p_net: Floats | float = 0.0  # the network parts of the pipeline and DP terms
    dp_net: Floats | float = 0.0
    if st.p2p_net or st.dp_net:
        rows = a.network_bytes[sharp]
        network = rows * _per_byte(a, rows, st, c, fabric, wire, cpu, per_byte, shared)
        terms = terms + network
        p2p_net, dp_net = network[P2P_ROW], network[DP_ROW]
    elif st.tp_net:
        terms = terms + a.network_bytes[sharp] * per_byte
    tp, p2p, dp = terms

    # Each overlapped transfer, a row (_Static.hide_under): its exposed part of
    # estimator.overlapped_s, max(x + slow min(x, y), y) - x, for all rows in one pass.
    slow = fitted.COMPUTE.overlap_compute_slowdown  # the live fitted value, as overlapped_s
    x = st.hide_under
    y = terms[st.transfer_rows]
    y *= st.transfer_share
    hidden = np.minimum(x, y)
    hidden *= slow
    hidden += x
    np.maximum(hidden, y, out=hidden)
    hidden -= x
    # DDP / ZeRO-1/2: the reduction overlaps the last micro-batch's backward; FSDP: per unit
    # max(compute_i, gather_i), the first gather, the last reduce-scatter
    exposed = hidden[0]
    if st.any_fsdp:
        exposed = st.fsdp_units * (exposed + hidden[1]) + st.fsdp_ends * dp
    dp_exposed = exposed
    if st.any_interleaved:  # sends and DP traffic under the compute, once (_communication)
        window = np.where(a.fsdp, st.compute, x[0])
        beside = p2p + np.minimum(window, dp)
        late = slow * np.minimum(st.compute, p2p) * (1.0 - window / np.maximum(st.compute, 1e-300))
        sent = np.maximum(slow * np.minimum(st.compute, beside), p2p_net + dp_net - st.compute)
        exposed = np.where(a.interleaved, np.maximum(exposed + late, sent), exposed + p2p)
    else:
        exposed = exposed + p2p
    # the bubble idles the compute, tensor-parallel and expert terms (StepModel.step_time_s)
    scale_up = tp + a2a if st.any_a2a else tp
    step = st.base + st.stretch * scale_up + exposed
    if st.any_paired:
        # what the schedule pairs (DualPipe: the all-to-all and the sends; Combined 1F1B: the
        # all-to-all) as estimator.paired_exposed_s (non-decreasing in it), the all-to-all
        # once more in the bubble; what it leaves as above
        u = a.unpaired
        x = a2a + p2p if a.pairs_sends else a2a
        under, paired = (1.0 - u) * st.compute, (1.0 - u) * x
        dual = u * x + np.maximum(slow * np.minimum(under, paired), paired - under)
        rest = dp_exposed if a.pairs_sends else exposed
        step = np.where(u > 0, st.base + st.stretch * tp + a.bubble * a2a + rest + dual, step)
    result: Floats = step * (goodput * (1.0 - BOUND_SLACK))
    return result
