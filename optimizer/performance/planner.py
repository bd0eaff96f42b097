"""Choose the fastest parallel plan that fits in memory, then estimate it.

The search is small on purpose (the optimizer calls it for thousands of candidate clusters):
tensor degrees are divisors of the scale-up domain (tensor parallelism stays on NVLink,
Narayanan et al. SC'21 sec. 3.3 takeaway #1; beyond the host at most MAX_TENSOR_IN_DOMAIN),
expert degrees any divisor of data and experts (the estimator keeps those that fit the domain on
its fabric), pipeline degrees are divisors of what remains, memory is checked before any time
is computed, only the smallest ZeRO stage that fits is kept, with v = 1 and the interleaving
depth of the least bubble and chunk overhead that fits. Candidates are then timed in order of
a lower bound on their wall-clock step, priced for all the candidates of a band of sizes at
once with NumPy (plan_pricing), and the search stops once the next bound is no
faster than the best exact estimate: branch and bound that times a few plans exactly and
returns the plan an exhaustive loop would (tests/test_planner_exact.py).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import lru_cache, partial
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from optimizer.errors import InvalidInput
from optimizer.performance import calibration as fitted
from optimizer.performance.calibration import CHUNK_PASS_OVERHEAD_S, generation
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.errors import PlanInfeasible, SearchStopped
from optimizer.performance.estimator import (
    Estimate,
    EstimateCase,
    KernelSpeed,
    StepModel,
    check_combined_1f1b,
    check_degrees,
    check_pipeline_engine,
    check_plan,
    compute_s_per_token,
    context_refusal,
    estimate,
    estimate_from_step,
    expert_tensor_refusal,
    nvlink_bytes_per_s,
    reshard_refusal,
    scenario,
    usable_memory_gb,
    zero_refusal,
)
from optimizer.performance.fabrics import (
    DEFAULT_FABRICS,
    FabricProfile,
    FabricTable,
    fabric_profile,
)
from optimizer.performance.goodput import Reliability, wall_step_s
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.performance.plan import Degrees, ParallelPlan, PartialPlan, plan_text
from optimizer.performance.plan_pricing import (
    BOUND_SLACK,
    Floats,
    PlanArrays,
    RowHardware,
    RowParts,
    concatenated,
    goodput_factor,
    network_free_terms,
    plan_arrays,
    row_hardware,
    shares_uplinks,
    wall_step_lower_bounds_s,
)
from optimizer.workload.flops import hardware_flops_per_step
from optimizer.workload.memory import FamilyLoads, memory_per_gpu, memory_text, peaks_gb
from optimizer.workload.model import Workload, parameter_count
from optimizer.workload.pipeline_layout import (
    bubble_fraction,
    combined_1f1b_refusal,
    deepest_depth,
    dualpipe_pipeline_refusal,
    dualpipe_refusal,
    least_slowest_stage_share,
    pipeline_layout,
)

MICRO_BATCH_CHOICES = (1, 2, 4)
# Tensor degrees the search tries beyond the host inside a larger scale-up domain (NVL72):
# every tensor rank's GEMMs shrink by 1/t and each layer adds 4-6 all-reduces whose latency
# does not shrink; published Megatron/NeMo recipes stop at TP 8 on H100 and TP 16 is the
# largest in NVIDIA's GB200 NVL72 guidance, so the search stops at 16 (a request may still fix
# a larger degree). docs/performance-model.md, "Scale-up domain".
MAX_TENSOR_IN_DOMAIN = 16


@lru_cache(maxsize=4096)
def _divisors(n: int) -> tuple[int, ...]:
    small = [k for k in range(1, math.isqrt(n) + 1) if n % k == 0]
    return tuple(sorted({*small, *(n // k for k in small)}))


def _options(fixed: int | None, candidates: tuple[int, ...] | list[int]) -> tuple[int, ...]:
    return (fixed,) if fixed is not None else tuple(candidates)


def _pipelines(
    w: Workload, fixed: PartialPlan, candidates: tuple[int, ...] | list[int]
) -> tuple[int, ...]:
    """The pipeline degrees a plan may take: the request's, or its stated layout's stage
    count (Workload.stage_layers, whoever calls the search), else ``candidates``."""
    stated = len(w.stage_layers) if w.stage_layers else None
    return _options(fixed.pipeline if fixed.pipeline is not None else stated, candidates)


def candidate_plans(w: Workload, c: ClusterSpec, fixed: PartialPlan) -> list[ParallelPlan]:
    """Plans worth timing on all of ``c``'s GPUs that fit in memory, each ZeRO stage that
    fits (cheapest communication first)."""
    return [
        ParallelPlan(*degrees)
        for degrees in _candidate_plans(
            w, c.gpus, c.gpus_per_node, usable_memory_gb(c), fixed, c.scale_up_domain_gpus
        )
    ]


def tensor_degrees(w: Workload, gpus: int, gpus_per_node: int, domain_gpus: int) -> list[int]:
    """Tensor degrees worth trying: divisors of the scale-up domain that split the K/V heads
    and the FFN evenly (``Workload.tensor_split``); past the host only up to
    MAX_TENSOR_IN_DOMAIN (with domain = host: the divisors of the node)."""
    gpn = min(gpus, gpus_per_node)
    dom = min(gpus, domain_gpus)
    return [
        t
        for t in _divisors(dom)
        if w.tensor_split % t == 0 and (t <= gpn or t <= MAX_TENSOR_IN_DOMAIN)
    ]


# --- issue 14 (context): context degrees ------------------------------------------------------
# Sequences from this length on are long enough for every context degree to be worth a try
# (Llama 3 trains its 131,072-token stage with context 16; Megatron-LM recommends it from 32K
# tokens on).
CONTEXT_FROM_SEQUENCE = 32_768
CONTEXT_CHOICES = (1, 2, 4, 8, 16, 32)
# Shorter sequences are tried at the degrees that leave each context rank at least this many
# tokens: NVIDIA NeMo's Llama 3 70B pre-training recipe runs 8,192-token sequences at context
# 2 (nemo/collections/llm/recipes/llama3_70b.py, trainer(): tensor 4, pipeline 4, virtual 5,
# context 2), where context halves each rank's activations and lets a batch too small for
# more data-parallel replicas fill more GPUs. Shorter chunks are not modelled: ring steps of
# a few hundred tokens leave the attention kernel too little work to hide each send behind.
MIN_CONTEXT_RANK_TOKENS = 4_096


def searched_contexts(w: Workload) -> tuple[int, ...]:
    """The context degrees a free search tries for ``w`` (before the GPU count and the
    framework's rules): every choice for long sequences, else those that leave each rank
    MIN_CONTEXT_RANK_TOKENS tokens (1 and 2 at 8,192 tokens; 1 alone below 8,192)."""
    if w.sequence_length >= CONTEXT_FROM_SEQUENCE:
        return CONTEXT_CHOICES
    return tuple(
        cp for cp in CONTEXT_CHOICES if cp == 1 or w.sequence_length >= cp * MIN_CONTEXT_RANK_TOKENS
    )


def context_degrees(w: Workload, gpus: int, fixed: PartialPlan) -> tuple[int, ...]:
    """The request's context degree, else each of ``searched_contexts`` that divides the GPUs
    and that the framework runs with some tensor degree (context_refusal at tensor 1)."""
    if fixed.context is not None:
        return (fixed.context,)
    return tuple(
        cp for cp in searched_contexts(w) if gpus % cp == 0 and not context_refusal(w, 1, cp)[0]
    )


# --- issue 14, pipeline: ZeRO stages and interleaving depth ---------------------------------
# (zero_stage, reshard_after_forward) the planner tries with data parallelism, cheapest
# communication first: ZeRO-1 and ZeRO-2 reduce gradients once per step, FSDP without
# re-sharding gathers weights once per step, ZeRO-3 twice per micro-batch; the heavier ones
# only hold less memory. Within each family (weights replicated: 1, 2; weights sharded:
# FSDP without, then with re-sharding) the lightest stage that fits is kept, since the next
# one only adds traffic; across the two families the timing decides (FSDP's gather and
# reduce-scatter hide under the whole step's compute, ZeRO-1's all-reduce under the
# backward of the last micro-batch), the replicated family winning ties.
ZERO_CHOICES = ((1, True), (2, True), (3, False), (3, True))


def _zero_choices(d: int, fixed: PartialPlan) -> list[tuple[int, bool]]:
    """(zero_stage, reshard_after_forward) pairs to try over ``d`` replicas sharing the
    states (data x context: ZeRO shards over both, memory.FamilyLoads), cheapest
    communication first; a fixed reshard_after_forward False asks for FSDP without
    re-sharding."""
    choices: list[tuple[int, bool]] = list(ZERO_CHOICES) if d > 1 else [(0, True)]
    if fixed.zero_stage is not None:
        choices = [(z, r) for z, r in ZERO_CHOICES if z == fixed.zero_stage] or [
            (fixed.zero_stage, True)
        ]
    if fixed.reshard_after_forward is False:  # FSDP without re-sharding, if the stage agrees
        choices = [(3, False)] if fixed.zero_stage in (None, 3) else []
    elif fixed.reshard_after_forward:
        choices = [(z, r) for z, r in choices if r]
    return choices


class _DepthCost(NamedTuple):
    """What interleaving depth v costs a pipeline of p stages and m micro-batches: the bubble
    (p - 1) / (v m) x (chunk imbalance) x compute plus 2 (m v + p - 1) CHUNK_PASS_OVERHEAD_S
    (``cost``), a lower bound that ignores the imbalance (``bound``: convex in v, least at
    ``centre``), and the deepest depth the layers allow."""

    w: Workload
    p: int
    m: int
    step_compute_s: float
    centre: int
    deepest: int

    def cost(self, v: int) -> float:
        imbalance = pipeline_layout(self.w, self.p, v).chunk_imbalance
        bubble = bubble_fraction(self.p, v, self.m, imbalance) * self.step_compute_s
        return bubble + 2 * (self.m * v + self.p - 1) * CHUNK_PASS_OVERHEAD_S

    def bound(self, v: int) -> float:
        p, m = self.p, self.m
        balanced = (p - 1) / (v * m) * self.step_compute_s
        return (balanced + 2 * (m * v + p - 1) * CHUNK_PASS_OVERHEAD_S) * (1 - 1e-12)


def _depth_cost(
    w: Workload, p: int, m: int, step_compute_s: float, deepest: int | None = None
) -> _DepthCost:
    # The chunk imbalance is >= 1, so cost(v) >= a / v + b v + const (the balanced bubble
    # and the overhead): convex in v with its minimum at sqrt(a / b).
    a = (p - 1) / m * step_compute_s
    b = 2 * m * CHUNK_PASS_OVERHEAD_S
    if deepest is None:
        deepest = deepest_depth(w, p, m)
    centre = min(deepest, max(1, round(math.sqrt(a / b))))
    return _DepthCost(w, p, m, step_compute_s, centre, deepest)


def _best_depth(
    w: Workload,
    p: int,
    m: int,
    step_compute_s: float,
    fixed: int | None,
    deepest: int | None = None,
) -> int:
    """The interleaving depth v <= ``deepest`` (default: deepest_depth) with the
    smallest bubble plus chunk overhead (_DepthCost.cost)."""
    if fixed is not None:
        return fixed
    if p == 1:
        return 1
    # Start at the bound's minimum and widen while the bound can still beat the best,
    # instead of laying out every depth up to layers / p (65,536-layer requests: a minute).
    dc = _depth_cost(w, p, m, step_compute_s, deepest)
    best_v, best = dc.centre, dc.cost(dc.centre)
    for side in (range(dc.centre - 1, 0, -1), range(dc.centre + 1, dc.deepest + 1)):
        for v in side:
            if dc.bound(v) > best:
                break
            c = dc.cost(v)
            if c < best or (c == best and v < best_v):
                best_v, best = v, c
    return best_v


# Depths a family offers around the proxy's best, at most this ratio apart (see depth_ladder).
DEPTH_RATIO = 1.5


def depth_ladder(deep: int, deepest: int) -> list[int]:
    """The interleaving depths a family offers: ``deep`` (the proxy's best, _best_depth), 1
    (the least activation memory), a ladder between them, each at most DEPTH_RATIO times the
    one below, and two rungs above it on the same ladder (``deepest``: the most the layers
    allow).

    The proxy leaves the sends out, and they grow with the depth: on a slow network the best
    depth lies below it (MPT-7B on 256 H100s over Ethernet: v = 2 steps 17 % faster than the
    v = 1 and v = 4 alone offered before). It times the bubble at a nominal 400 TFLOP/s and
    leaves out the tensor-parallel time the bubble idles too: on a slower GPU the best depth
    lies above it (BERT-Large on 24 A100s: v = 2 steps 2.5 % faster than the proxy's v = 1),
    about sqrt(2) times deeper for a GPU at half the nominal speed. For a cost
    a / v + b v a ladder r apart holds a depth within (sqrt(r) + 1 / sqrt(r)) / 2 - 1 of the
    best one's (2.1 % at 1.5). Every depth up to the proxy's would take 1.6 times these
    candidates for at most 1.5 % on the benchmark's pairs (docs/performance-model.md,
    session 15)."""
    ladder, v = [1], 1
    while v < deep:
        v = min(deep, max(v + 1, math.floor(v * DEPTH_RATIO)))
        ladder.append(v)
    above: list[int] = []
    v = deep
    for _ in range(2):
        v = min(deepest, max(v + 1, math.floor(v * DEPTH_RATIO)))
        if v > (above[-1] if above else deep):
            above.append(v)
    # the proxy's best first, as before, then from v = 1 up
    return [deep, *ladder[:-1], *above]


def _deeper_fitting_depth(
    w: Workload, p: int, m: int, step_compute_s: float, deep: int, fits: Callable[[int], object]
) -> int | None:
    """The cheapest depth deeper than ``deep`` (the best, which does not fit in memory) that
    fits (``fits(v)`` is truthy: the plans of depth v that fit) and beats v = 1, or None.

    Interleaving's first stage holds (v + 1) p - 1 chunks of L / (p v) layers
    (memory.in_flight_chunks): L (1 + (p - 1) / (p v)) layers, less as v grows. So a depth
    beyond the bubble's optimum can fit where the optimum does not: Llama 3 405B on 16
    stages of 8,192 H100s (FSDP without re-sharding) needs 103 GB per GPU at v = 2, 89.1 at
    v = 4 and 82.2 at v = 8 (82.5 usable), and v = 8 steps 26 % faster than v = 1."""
    dc = _depth_cost(w, p, m, step_compute_s)
    ceiling = dc.cost(1)
    # Depths that can still beat v = 1 form an interval above ``deep`` (the bound is convex
    # and bound(v) <= cost(deep) <= ceiling up to its minimum): find its end by bisection.
    lo, hi = deep, dc.deepest
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if dc.bound(mid) <= ceiling:
            lo = mid
        else:
            hi = mid - 1
    if lo == deep or not fits(lo):  # the lightest depth in reach does not fit either
        return None
    best_v, best = None, ceiling
    for v in range(deep + 1, lo + 1):
        if dc.bound(v) > best:
            break
        c = dc.cost(v)
        if c < best and fits(v):
            best_v, best = v, c
    return best_v


# --- end issue 14, pipeline -------------------------------------------------------------------


@lru_cache(maxsize=8192)
def _candidate_plans(
    w: Workload,
    gpus: int,
    gpus_per_node: int,
    limit_gb: float,
    fixed: PartialPlan,
    domain_gpus: int | None = None,
) -> tuple[Degrees, ...]:
    """The plans (their degrees) depend only on these, not on the network: cached across
    the optimizer's candidate clusters. Each context degree leaves gpus / context for the
    other degrees; a fixed one that does not divide ``gpus`` has no plans here (a smaller size
    it divides may, else _explain_infeasible names it)."""
    return tuple(
        plan
        for cp in context_degrees(w, gpus, fixed)
        if gpus % cp == 0
        for plan in _candidate_plans_at(
            w, gpus // cp, gpus_per_node, limit_gb, fixed, domain_gpus, cp
        )
    )


# --- end issue 14 (context) ---------------------------------------------------------------------


_Zeros = tuple[tuple[int, bool], ...]  # (zero_stage, reshard_after_forward) choices
_Family = tuple[tuple[int, int, int, int, int, int, int], _Zeros, int, tuple[int, ...]]
"""One (tensor, pipeline, data, expert, micro-batch, context, expert tensor) of a size, with
the ZeRO choices it may take, its proxy's best depth (_Depths.deep) and the depths whose
memory is checked.
Plain tuples of numbers: _families caches thousands, and the garbage collector stops walking
exact tuples once it has seen they hold no containers (kept as objects with their loads and
lists, its passes cost the speed benchmark's cold pass about 0.1 s of 3.5)."""


class _SizeFamilies(NamedTuple):
    """A size's families with the peak memory of each checked depth under each
    ZeRO form (``peaks``: forms x rows, memory.peaks_gb), none of which reads the memory
    limit: GPUs of another memory reuse them (gen-2026's seven GPU models search the same
    sizes, 912 distinct for 2,334 candidate lists in a DeepSeek-V3 optimization). An entry
    holds 0.3-0.7 MB for a DeepSeek-V3 size of 1,024 to 4,096 GPUs (_families keeps 1,024)."""

    families: tuple[_Family, ...]
    forms: _Zeros  # every ZeRO choice any family may take, in one order
    peaks: npt.NDArray[np.float64]
    work_s: float


def _candidate_plans_at(
    w: Workload,
    gpus: int,
    gpus_per_node: int,
    limit_gb: float,
    fixed: PartialPlan,
    domain_gpus: int | None,
    context: int,
) -> list[Degrees]:
    """Plans (their degrees) over ``gpus`` (the GPUs per context rank) with the given context
    degree that fit in memory.

    Pipeline degrees need not divide the layers (the slowest stage is timed); each
    (tensor, pipeline, data, micro-batch) comes with v = 1 (the least activation memory)
    and the interleaving depth that minimises its bubble plus chunk overheads
    (_best_depth, at a nominal GPU speed) or, when that one does not fit, the cheapest deeper
    one that does (_deeper_fitting_depth), whichever fit; the timing decides. Every family's
    depths are checked for memory in one NumPy pass (memory.peaks_gb, _families)."""
    sized = _families(w, gpus, gpus_per_node, fixed, domain_gpus, context)
    forms, work_s = sized.forms, sized.work_s
    # each checked depth's fits under every form as the bits of one number: a size's
    # thousands of rows take a few patterns, each family's choice is looked up by its pattern
    bits = np.left_shift(1, np.arange(len(forms), dtype=np.int64))
    masks = iter((bits @ (sized.peaks <= limit_gb)).tolist())
    plans: list[Degrees] = []
    columns_of: dict[int, list[int]] = {}  # by the zeros tuple, which families share
    chosen_of: dict[tuple[int, int], _Zeros] = {}  # by the zeros tuple and the pattern
    for degrees, zeros, deep, checked in sized.families:
        columns = columns_of.get(id(zeros))
        if columns is None:
            columns = columns_of[id(zeros)] = [forms.index(z) for z in zeros]
        found: dict[int, list[Degrees]] = {}
        for v in checked:
            mask = next(masks)
            chosen = chosen_of.get((id(zeros), mask))
            if chosen is None:
                fits = [bool(mask >> i & 1) for i in columns]
                chosen = chosen_of[id(zeros), mask] = _lightest_fitting(zeros, fits)
            found[v] = _plans_at(degrees, v, chosen)
        if fixed.virtual_pipeline is not None:
            plans.extend(found.get(deep, []))
            continue
        if deep > 1 and not found[deep] and found[min(found)]:  # the lightest depth fits
            loads = FamilyLoads(w, *degrees)
            at = partial(_fitting_depth, loads, degrees, zeros, limit_gb)
            deeper = _deeper_fitting_depth(w, loads.p, loads.micro_batches, work_s, deep, at)
            if deeper is not None:
                found[deep] = at(deeper)
        for v_plans in found.values():
            plans.extend(v_plans)
    return plans


@lru_cache(maxsize=1024)
def _families(
    w: Workload,
    gpus: int,
    gpus_per_node: int,
    fixed: PartialPlan,
    domain_gpus: int | None,
    context: int,
) -> _SizeFamilies:
    """The families of _candidate_plans_at's size, in candidate order, with the depths each
    is offered: a fixed depth if the schedule allows it, else depth_ladder's and the best
    depth of full chunks (_Depths), and the peak memory of each (_SizeFamilies). Tensor
    degrees the framework will not run with this context degree have none
    (context_refusal)."""
    work_s = _relative_work_s(w, gpus * context)
    tensors = tensor_degrees(w, gpus, gpus_per_node, domain_gpus or gpus_per_node)
    # The depth choice reads only (pipeline, micro-batches): every family here does the same
    # work per GPU (t p d = gpus, ``work_s``), so each pair's depths are worked out once.
    depths: dict[tuple[int, int], _Depths] = {}
    zero_lists: dict[tuple[bool, bool], _Zeros] = {}
    micro_lists: dict[int, list[int]] = {}
    families: list[_Family] = []
    rows: list[tuple[FamilyLoads, int]] = []  # each checked depth of each family
    for t in _options(fixed.tensor, tensors):
        if gpus % t or context_refusal(w, t, context)[0]:
            continue
        pipelines = [p for p in _divisors(gpus // t) if p <= w.layers]
        if w.dualpipe:  # no micro-batch count makes up for an odd pipeline
            pipelines = [p for p in pipelines if not dualpipe_pipeline_refusal(p)]
        for p in _pipelines(w, fixed, pipelines):
            if gpus % (t * p) or p > w.layers:
                continue
            d = gpus // (t * p)
            if fixed.data is not None and fixed.data != d:
                continue
            experts = _expert_layouts(w, t, d, fixed)
            if w.combined_1f1b:  # it overlaps the expert all-to-all: check_combined_1f1b
                experts = [(e, et) for e, et in experts if e > 1]
            micro = micro_lists.get(d)
            if micro is None:
                micro = micro_lists[d] = [
                    m for m in MICRO_BATCH_CHOICES if w.global_batch_size % (d * m) == 0
                ]
            # the ZeRO choices read only whether the states are shared and the stages are many
            zero_key = (d * context > 1, p > 1)
            zeros = zero_lists.get(zero_key)
            if zeros is None:
                zeros = zero_lists[zero_key] = tuple(
                    z for z in _zero_choices(d * context, fixed) if not zero_refusal(w, p, z[0])
                )
            if not zeros:  # no ZeRO stage this pipeline can take: no plan
                continue
            for e, et in experts:
                for mb in _options(fixed.micro_batch_size, micro):
                    if w.global_batch_size % (d * mb):  # a fixed micro-batch this d cannot take
                        continue
                    m = w.global_batch_size // (d * mb)
                    if w.dualpipe and dualpipe_refusal(p, m):
                        continue
                    ds = depths.get((p, m))
                    if ds is None:
                        ds = depths[p, m] = _depths(w, p, m, work_s, fixed.virtual_pipeline)
                    if fixed.virtual_pipeline is not None:
                        checked: tuple[int, ...] = (ds.deep,) if ds.fits else ()
                    else:
                        checked = ds.ladder
                        if ds.full is not None and ds.full not in checked:
                            checked = (*checked, ds.full)
                    if w.combined_1f1b:  # the depths it runs across stages
                        checked = tuple(v for v in checked if not combined_1f1b_refusal(p, v))
                        if not checked:
                            continue
                    degrees = (t, p, d, e, mb, context, et)
                    families.append((degrees, zeros, ds.deep, checked))
                    loads = FamilyLoads(w, *degrees)
                    rows.extend((loads, v) for v in checked)
    forms = tuple(dict.fromkeys(z for _, zeros, _, _ in families for z in zeros))
    peaks = peaks_gb(rows, forms) if rows else np.empty((len(forms), 0))
    return _SizeFamilies(tuple(families), forms, peaks, work_s)


def _expert_layouts(w: Workload, t: int, d: int, fixed: PartialPlan) -> list[tuple[int, int]]:
    """The (expert, expert tensor) degrees a family of ``t`` tensor and ``d`` data ranks may
    take: the experts over the data ranks at the tensor degree (Megatron's default) and,
    folded (plan.ParallelPlan), whole over ranks of tensor x data. ``fixed``'s degrees only,
    where the request gives them."""
    if not w.is_moe:
        return [(1, 0)] if fixed.expert in (None, 1) and fixed.expert_tensor in (None, t) else []
    layouts = []
    for et in _options(fixed.expert_tensor, _expert_tensors(w, t)):
        if expert_tensor_refusal(w, t, et):
            continue
        ranks = d if et == t else t * d // et
        for e in _options(fixed.expert, _divisors(ranks)):
            if ranks % e == 0 and w.experts % e == 0:
                layouts.append((e, 0 if et == t else et))  # ParallelPlan's one form
    return layouts


def _fitting_depth(
    loads: FamilyLoads, degrees: tuple[int, ...], zeros: _Zeros, limit_gb: float, v: int
) -> list[Degrees]:
    """The plans of a family (its ``degrees``, ZeRO choices and ``loads``) at depth ``v``
    that fit in ``limit_gb`` (one depth checked alone: _deeper_fitting_depth's search)."""
    fits = (peaks_gb([(loads, v)], zeros)[:, 0] <= limit_gb).tolist()
    return _plans_at(degrees, v, _lightest_fitting(zeros, fits))


def _lightest_fitting(zeros: _Zeros, fits: list[bool]) -> _Zeros:
    """Of the ZeRO choices ``zeros`` that fit in memory (``fits``, one per choice), the
    lightest of each family (weights sharded or not): a heavier stage of a fitting family
    only adds traffic."""
    chosen: list[tuple[int, bool]] = []
    replicated = sharded = False  # families (weights sharded or not) that fit
    for (z, reshard), ok in zip(zeros, fits, strict=True):
        if ok:
            if z == 3:
                if not sharded:
                    chosen.append((z, reshard))
                    sharded = True
            elif not replicated:
                chosen.append((z, reshard))
                replicated = True
    return tuple(chosen)


def _plans_at(degrees: tuple[int, ...], v: int, chosen: _Zeros) -> list[Degrees]:
    """The plans of a family (its ``degrees``) at depth ``v`` under each ``chosen`` ZeRO
    choice."""
    t, p, d, e, mb, cp, et = degrees
    return [(t, p, d, e, v, z, mb, cp, reshard, et) for z, reshard in chosen]


# Seconds a GPU spends per FLOP at a round 400 TFLOP/s: only the ratio of bubble to chunk
# overhead picks the interleaving depth, so a generation-independent speed is enough here.
_NOMINAL_S_PER_FLOP = 1 / 400e12


def _relative_work_s(w: Workload, gpus: int) -> float:
    """The step's compute on one of ``gpus`` GPUs at a nominal 400 TFLOP/s (for the depth
    choice only)."""
    return hardware_flops_per_step(w) / gpus * _NOMINAL_S_PER_FLOP


class _Depths(NamedTuple):
    """The depths a family of ``p`` stages and ``m`` micro-batches is offered: ``deep`` (the
    proxy's best, or the request's), ``fits`` (a requested depth the schedule allows),
    ``ladder`` (depth_ladder) and ``full``: with end chunks holding the embedding and the
    output layer at ``deep``, the best depth of full chunks (else None)."""

    deep: int
    fits: bool
    ladder: tuple[int, ...]
    full: int | None


def _depths(w: Workload, p: int, m: int, work_s: float, fixed_v: int | None) -> _Depths:
    deepest = deepest_depth(w, p, m)
    deep = _best_depth(w, p, m, work_s, fixed_v, deepest)
    if fixed_v is not None:
        return _Depths(deep, deep <= deepest, (deep,), None)
    # The depth whose end chunks hold the embedding and the output layer saves bubble but
    # sends more per step, which a slow network may not hide: the best depth of full chunks
    # competes too, so an extra depth never makes the plan found slower.
    full = _best_depth(w, p, m, work_s, None, w.layers // p) if p * deep > w.layers else None
    return _Depths(deep, True, tuple(depth_ladder(deep, deepest)), full)


class _Hardware(NamedTuple):
    """What the plans and their lower bounds depend on: GPUs and the scale-up fabric, never
    the network, so one cached plan list serves every network of the optimizer's search."""

    gpus: int
    gpus_per_node: int
    domain_gpus: int
    gpu_model: str
    peak_tflops: float
    peak_fp8_tflops: float | None
    nvlink_bytes_per_s: float


def _hardware(c: ClusterSpec, gpus: int) -> _Hardware:
    return _Hardware(
        gpus,
        c.gpus_per_node,
        c.scale_up_domain_gpus,
        c.gpu_model,
        c.gpu_peak_tflops,
        c.gpu_peak_fp8_tflops,
        nvlink_bytes_per_s(c),
    )


def _compute_s(
    w: Workload,
    hw: _Hardware,
    micro_batch: int,
    tensor: int,
    speed: KernelSpeed,
    expert: int = 1,
    expert_tensor: int = 0,
) -> float:
    """Seconds of one step's compute at kernel speed, spread evenly over ``hw.gpus``."""
    tensor_core_s, elementwise_s = compute_s_per_token(
        w,
        micro_batch,
        tensor,
        hw.gpu_model,
        hw.peak_tflops,
        hw.peak_fp8_tflops,
        expert,
        expert_tensor,
    )
    return speed.kernel_s(tensor_core_s, elementwise_s) * w.tokens_per_step / hw.gpus


class _SizePlans:
    """The candidates (their degrees) on one hardware size, smallest network-free step first
    (compute with straggler and bubble, optimizer step, per-micro-batch overheads:
    ``free_s``), with their index in candidate order; the arrays their network bounds are
    priced from are built when a search prices the size, for the candidates it needs
    (``arrays``)."""

    __slots__ = ("_arrays", "_timed", "c", "columns", "free_s", "indices", "plans", "w")

    def __init__(
        self,
        w: Workload,
        c: ClusterSpec,
        plans: tuple[Degrees, ...],
        free_s: Floats,
        columns: Floats,
    ) -> None:
        order = np.argsort(free_s, kind="stable")  # ties: candidate order
        self.w, self.c = w, c
        self.free_s: list[float] = free_s[order].tolist()
        self.indices: list[int] = order.tolist()
        self.plans = tuple([plans[i] for i in self.indices])
        self.columns = columns[:, order]  # network_free_terms' columns, a row each
        self._arrays: PlanArrays | None = None
        self._timed: dict[int, ParallelPlan] = {}  # the candidates timed so far, by position

    def plan(self, position: int) -> ParallelPlan:
        """The candidate at ``position`` as a plan, kept: the estimator's caches hash it
        (once per plan), and the next network's search mostly times the same few."""
        plan = self._timed.get(position)
        if plan is None:
            plan = self._timed[position] = ParallelPlan(*self.plans[position])
        return plan

    def arrays(self, count: int) -> PlanArrays:
        """The arrays of the first ``count`` candidates at least (one at the least), in one:
        what is built is kept and grows at least twofold, so the next network's search
        mostly finds it. A band priced once the search has timed a step needs only the
        candidates whose network-free bound beats that step, and building the rows was a
        third of a search on new hardware (docs/performance-model.md, sec. 9, session 30)."""
        built = self._arrays
        have = 0 if built is None else len(built.plans)
        if built is None or count > have:
            end = min(len(self.plans), max(count, 2 * have, 1))
            more = plan_arrays(
                self.w,
                self.c,
                self.plans[have:end],
                self.columns[:, have:end],
                _row_parts(self.w, self.c),
            )
            built = self._arrays = more if built is None else concatenated([built, more])
        return built

    def below(self, step_s: float, overhead_s: float, goodput: float) -> int:
        """How many candidates' network-free bound (_free_bound_s) is below ``step_s``."""
        return bisect.bisect_left(
            self.free_s, step_s, key=lambda free_s: _free_bound_s(free_s, overhead_s, goodput)
        )


def _free_bound_s(free_s: float, overhead_s: float, goodput: float) -> float:
    """A lower bound on the wall-clock step of a candidate whose network-free step is
    ``free_s``: a size's bound in the search (its best candidate's), and what decides which
    candidates a band priced after a step builds (_SizePlans.below)."""
    return (free_s + overhead_s) * goodput * (1.0 - BOUND_SLACK)


# Sizes whose candidates a search prices in one NumPy pass: the first size alone (a best
# step soon), then bands twice as wide up to MAX_BAND, of sizes whose bound beats the best step
# so far. A pass costs tens of microseconds whatever its length, so one per size cost more
# than the rest of a search on a network-bound job (BERT-Large visits dozens of sizes).
MAX_BAND = 32


class _Size(NamedTuple):
    """One size of a search: its candidates, goodput factor, root (index) and GPUs used."""

    order: int
    sized: _SizePlans
    goodput: float
    root: int
    used: int


class _Unpriced(NamedTuple):
    """A band of sizes whose candidates are not priced on this network yet."""

    sizes: tuple[_Size, ...]


class _Pass:
    """One pricing pass of a band without the uplinks rings and sends share; ``superseded``
    once a search re-priced it with them (see _price_band)."""

    __slots__ = ("superseded", "work")

    def __init__(self, work: _Unpriced) -> None:
        self.work, self.superseded = work, False


class _Priced:
    """A size's candidates priced on one network: their wall-step bounds (``least``, the
    smallest) and each one's position in the size's list, ranked smallest first when the
    search first times one of them (``rank``): most sizes of a band are pruned whole, unranked;
    ``cheap``: the pass that priced them, if it left out the uplinks rings and sends share."""

    __slots__ = ("bounds", "cheap", "least", "ranked", "ranking", "size")

    def __init__(
        self,
        size: _Size,
        bounds: Floats,
        positions: npt.NDArray[np.intp],
        least: float,
        cheap: _Pass | None,
    ) -> None:
        self.size, self.bounds, self.ranking, self.least = size, bounds, positions, least
        self.cheap, self.ranked = cheap, False

    def rank(self) -> None:
        if not self.ranked:  # ties need no order: the exact step decides
            order = self.bounds.argsort()
            self.bounds, self.ranking = self.bounds[order], self.ranking[order]
            self.ranked = True


_SIZE_CACHE_SIZE = 16_384
_size_cache: dict[tuple[object, ...], tuple[_SizePlans, object, object]] = {}
# The depth-free rows of each workload's families and their parts, by the hardware they read
# (plan_pricing.row_hardware): a family's degrees name its size, and its row is the same for
# every memory limit and GPU model of that hardware (B200 and B300 servers, 180 and 288 GB),
# which were built apart once per size (565,000 rows for 408,000 distinct in a DeepSeek-V3
# optimization on gen-2026). It holds at most a row per candidate _size_cache counts.
_row_parts_cache: dict[tuple[Workload, RowHardware], RowParts] = {}


def _row_parts(w: Workload, c: ClusterSpec) -> RowParts:
    key = (w, row_hardware(c))
    parts = _row_parts_cache.get(key)
    if parts is None:
        parts = _row_parts_cache[key] = RowParts()
    return parts


# Candidate rows each of the planner's two caches may hold at once (each size's candidates;
# the bands of several sizes, copies of their rows: about a kilobyte a row): bounding the
# entries alone let a long-lived process (the service, a test worker) grow past 16 GB once
# context 2 doubled the 8,192-token workloads' candidates (an xdist worker was killed for
# memory). The optimizer's searches reuse a few hundred thousand rows; past the limit that
# cache starts again.
_CACHED_ROWS_LIMIT = 2_000_000


class _RowBudget:
    """Rows held by _size_cache (``sizes``) and by _pending_cache's bands (``bands``).

    The two are emptied apart: a band is a concatenation of sizes' rows, cheap to build
    again, and a search over many networks forms thousands of them, while a size's rows took
    the enumeration, the memory check and the traffic terms. One count for both emptied the
    sizes whenever the bands filled it: a DeepSeek-V3 optimization on gen-2026 counted 16.5
    million band rows against 1.2 million candidates, emptied every cache 11 times and built
    the sizes 2.5 times over (docs/performance-model.md, sec. 9)."""

    sizes = 0
    bands = 0

    @classmethod
    def add_size(cls, rows: int) -> None:
        cls.sizes += rows
        if cls.sizes > _CACHED_ROWS_LIMIT:
            _size_cache.clear()
            _row_parts_cache.clear()
            _pending_cache.clear()  # its orders hold the sizes, and the bands of them
            cls.sizes, cls.bands = rows, 0

    @classmethod
    def add_band(cls, rows: int, dropped: int) -> None:
        """Count a band of ``rows`` about to be kept in place of bands of ``dropped`` rows
        (emptying every order's bands first if it crosses the limit)."""
        cls.bands += rows - dropped
        if cls.bands > _CACHED_ROWS_LIMIT // 2:  # a band's row costs less to build again
            for order in _pending_cache.values():
                order.bands.clear()
            cls.bands = rows


def _size_plans(
    w: Workload,
    hw: _Hardware,
    limit_gb: float,
    fixed: PartialPlan,
    speed: KernelSpeed,
    root: ClusterSpec,
    used: int,
) -> _SizePlans:
    """The candidates of one size, cached per workload and hardware (``root`` cut to
    ``used`` GPUs has that hardware; its network is not read): the optimizer searches the
    same sizes on many networks. An entry computed under other fitted constants (the
    calibration's fitting loop) is redone."""
    key = (w, hw, limit_gb, fixed, speed)
    gen = generation(hw.gpu_model)
    hit = _size_cache.get(key)
    if hit is not None and hit[1] is gen and hit[2] is fitted.COMPUTE:
        return hit[0]
    if len(_size_cache) >= _SIZE_CACHE_SIZE:
        _size_cache.clear()
        _row_parts_cache.clear()
    sub = root if used == root.gpus else replace(root, gpus=used)
    sized = _price_free(w, sub, hw, limit_gb, fixed, speed)
    _RowBudget.add_size(len(sized.plans))
    _size_cache[key] = (sized, gen, fitted.COMPUTE)
    return sized


def _price_free(
    w: Workload,
    c: ClusterSpec,
    hw: _Hardware,
    limit_gb: float,
    fixed: PartialPlan,
    speed: KernelSpeed,
) -> _SizePlans:
    plans = _candidate_plans(w, hw.gpus, hw.gpus_per_node, limit_gb, fixed, hw.domain_gpus)
    free_s, columns = network_free_terms(w, c, plans, speed, _row_parts(w, c))
    return _SizePlans(w, c, plans, free_s, columns)


class _Band(NamedTuple):
    """The candidates of a band of sizes as one set of arrays, with what each plan's bound is
    priced at (its size's GPUs and goodput factor) and ranked within (its size, and its
    position in that size's list); ``lengths``: how many of each size's candidates it holds."""

    arrays: PlanArrays
    used: int | Floats  # plain numbers for a band of one size: a pass costs less with them
    goodput: float | Floats
    size: npt.NDArray[np.intp]
    position: npt.NDArray[np.intp]
    lengths: tuple[int, ...]


_BANDS_PER_ORDER = 1_024  # bands kept per search order (a few per network in practice)


def _band(work: _Unpriced, bands: dict[tuple[int, ...], _Band], counts: list[int]) -> _Band:
    """``work``'s sizes as one band, each with at least its first ``counts`` candidates, cached
    per search order and sizes (``bands``): the next network's search mostly prices the same
    bands. A size's built candidates only grow, so a band built on fewer of them is never
    priced again: it is replaced, not kept beside the new one (kept, such bands held 16.5
    million of the 17.7 million rows the caches counted in one DeepSeek-V3 optimization on
    gen-2026, and emptying the caches at _CACHED_ROWS_LIMIT threw the sizes' candidates away
    with them, to be built again, docs/performance-model.md, sec. 9)."""
    parts = [size.sized.arrays(n) for size, n in zip(work.sizes, counts, strict=True)]
    one = len(parts) == 1
    # A band of several sizes holds only the candidates their bounds let in, not every one
    # built (a size's arrays grow twofold): in a DeepSeek-V3 optimization on gen-2026 the
    # rest were a third of the rows its passes priced (57.8 million for 39.1 million).
    lengths = (len(parts[0].plans),) if one else tuple(counts)
    key = tuple(size.order for size in work.sizes)
    hit = bands.get(key)
    if hit is None or hit.lengths != lengths:
        dropped = [hit] if hit is not None else []
        if hit is None and len(bands) >= _BANDS_PER_ORDER:
            dropped = list(bands.values())
            bands.clear()
        # a band of one size is that size's arrays, counted with the size
        _RowBudget.add_band(0 if one else sum(lengths), sum(_band_rows(b) for b in dropped))
        hit = bands[key] = _Band(
            arrays=parts[0] if one else concatenated(parts, lengths),
            used=work.sizes[0].used
            if one
            else np.repeat(np.array([size.used for size in work.sizes], dtype=np.float64), lengths),
            goodput=work.sizes[0].goodput
            if one
            else np.repeat(np.array([size.goodput for size in work.sizes]), lengths),
            size=np.repeat(np.arange(len(parts), dtype=np.intp), lengths),
            position=np.concatenate([np.arange(n, dtype=np.intp) for n in lengths]),
            lengths=lengths,
        )
    return hit


def _band_rows(band: _Band) -> int:
    """The rows ``band`` counts in _RowBudget (none for one size's: its size's arrays)."""
    return sum(band.lengths) if len(band.lengths) > 1 else 0


def _price_band(
    work: _Unpriced,
    c: ClusterSpec,
    fabric: FabricProfile,
    expected: EstimateCase,
    bands: dict[tuple[int, ...], _Band],
    shared: bool,
    best_s: float,
) -> list[_Priced]:
    """The candidates of ``work``'s sizes priced on ``c``'s network in one NumPy pass (a
    domain tiling of ``c`` has its network), per size (each ranked when first timed).

    ``shared``: with the uplinks the data-parallel rings share with the pipeline sends. That
    tighter bound costs a third more per pass, and a search prunes most bands whole on a
    looser one, so a band is first priced without it, and again with it only once one of its
    candidates is about to be timed exactly (plan_and_estimate); the first band, whose best
    candidate is timed next, with it at once.

    Only candidates whose bound is below ``best_s`` (the best wall-clock step the search has
    timed) are kept: the others can never be timed, as the best step only falls. A size none
    of whose candidates is left is not returned, nor is a candidate built whose size bound
    (_SizePlans.below) is not below ``best_s``."""
    overhead_s = expected.step_overhead_s
    counts = [
        len(size.sized.plans)
        if best_s == math.inf
        else size.sized.below(best_s, overhead_s, size.goodput)
        for size in work.sizes
    ]
    band = _band(work, bands, counts)
    bounds = wall_step_lower_bounds_s(
        band.arrays, c, band.used, fabric, expected, band.goodput, shared
    )
    cheap = None if shared else _Pass(work)
    position, owner = band.position, band.size
    if best_s < math.inf:
        left = np.flatnonzero(bounds < best_s)
        bounds, position, owner = bounds[left], position[left], owner[left]
    # The band's plans are its sizes' in turn: each size's a slice (arrays, not lists: most
    # sizes are pruned after their first few candidates), its least bound one pass.
    cuts = np.searchsorted(owner, np.arange(len(work.sizes) + 1)).tolist()
    kept = [
        (size, start, end)
        for size, start, end in zip(work.sizes, cuts[:-1], cuts[1:], strict=True)
        if end > start
    ]
    if not kept:
        return []
    least = np.minimum.reduceat(bounds, [start for _, start, _ in kept]).tolist()
    return [
        _Priced(size, bounds[start:end], position[start:end], low, cheap)
        for (size, start, end), low in zip(kept, least, strict=True)
    ]


def _shares_uplinks(size: _Size, c: ClusterSpec) -> bool:
    return shares_uplinks(size.sized.arrays(1), c)  # what is built: what was priced, or more


def reprice(
    w: Workload,
    c: ClusterSpec,
    plan: ParallelPlan,
    fabric: FabricProfile,
    expected: EstimateCase,
    reliability: Reliability,
) -> tuple[StepModel, float]:
    """A candidate plan timed exactly on a network: its step model and wall-clock seconds
    per step in the expected scenario. This is the search's inner loop (issue 14's "a plan
    re-priced on another network"); the full ``Estimate`` (range, breakdown, notes) is built
    once per search, for the winner. Ranked on wall-clock time (issue 14, goodput): more
    GPUs fail more often."""
    step = StepModel(w, c, plan, fabric)
    seconds = wall_step_s(
        w.checkpoint_size_bytes, plan.gpus, w.steps, step.step_time_s(expected), reliability
    )
    return step, seconds


def plan_and_estimate(
    w: Workload,
    c: ClusterSpec,
    fixed: PartialPlan | None = None,
    fabrics: FabricTable = DEFAULT_FABRICS,
    options: ModelOptions = DEFAULT_OPTIONS,
    stop: Callable[[], bool] | None = None,
    why: bool = True,
) -> Estimate:
    """The estimate under the fastest feasible plan that agrees with ``fixed``.

    Every plan of every smaller whole-node size is a candidate too (the job may leave GPUs
    idle), so more GPUs are never slower by construction. Branch and bound: a size joins
    once its bound (its fastest compute plus the per-step overhead, then, once its candidates
    are known, their smallest network-free step) is below the next bound in the heap; its
    candidates are priced on this network in bands of sizes (plan_pricing.wall_step_lower_bounds_s),
    and timed exactly in the order of those bounds until the next bound is no faster than the
    best wall-clock step. Ties go to the first plan in the order of an exhaustive loop
    (sizes as _idle_sizes lists them, candidates as _candidate_plans does).

    ``stop`` (the optimizer's clock) is asked before each step of the search: one search can
    outlast a request's whole time limit (a 65,536-layer model visits thousands of sizes).
    ``why``: a refusal for memory says what the lightest plan needs (memory_refusal); the
    optimizer, which meets thousands of such sizes, asks only for the one it reports.

    Raises
    ------
    PlanInfeasible
        No plan fits the workload in the cluster's GPU memory.
    InvalidInput
        A fixed degree is impossible for this cluster or model (the field is named).
    SearchStopped
        ``stop()`` held before the search ended.
    """
    fixed = fixed or PartialPlan()
    complete = fixed.complete()
    if complete is not None:
        return estimate(w, c, complete, fabrics, options)
    fabric = fabric_profile(fabrics, c.fabric)
    expected = scenario(c, fabric, "expected", options, precision=w.precision)
    # the candidates' network-free steps take the scale-up terms at 1 (plan_pricing._collective_s)
    assert expected.collective_efficiency <= 1.0, "collective efficiency above 1"
    speed = KernelSpeed.of(expected)
    limit_gb = usable_memory_gb(c)
    roots = [c, *_domain_tilings(c)]
    reliability = options.reliability
    sizes = _pending_sizes(
        w, _hardware(c, c.gpus), limit_gb, fixed, speed, expected.step_overhead_s, reliability, c
    )
    pending = sizes.entries
    refined: dict[int, float] = {}  # tighter bounds of the sizes looked at, by order
    overhead_s = expected.step_overhead_s
    # Branch and bound over (bound, order, position, tie, work): position -1 is a band of
    # sizes not priced on this network yet, i >= 0 a priced size's i-th cheapest candidate.
    heap: list[tuple[float, int, int, int, _Unpriced | _Priced]] = []
    tie = itertools.count()
    subs: dict[int, ClusterSpec] = {}  # the cluster cut to each size timed, by order
    best: StepModel | None = None
    best_s = float("inf")
    best_key = (len(pending), 0)  # ties: the first in the exhaustive order (sizes, candidates)
    checked = False
    first = True  # no pass priced yet
    lead = False  # the first pass's best candidate is next
    nxt = 0
    width = 1
    while True:
        while not lead and nxt < len(pending) and (not heap or pending[nxt][0] < heap[0][0]):
            band: list[_Size] = []
            band_bound = math.inf
            while (
                nxt < len(pending) and len(band) < width and (not band or pending[nxt][0] < best_s)
            ):
                _, order, r, used = pending[nxt]
                nxt += 1
                known = sizes.sized.get(order)
                if known is None:
                    if stop is not None and stop():
                        raise SearchStopped
                    root = roots[r]
                    known = sizes.sized[order] = (
                        _size_plans(w, _hardware(root, used), limit_gb, fixed, speed, root, used),
                        goodput_factor(w.checkpoint_size_bytes, used, reliability),
                    )
                sized, gp = known
                bound = math.inf
                if sized.plans:
                    bound = _free_bound_s(sized.free_s[0], overhead_s, gp)
                    band.append(_Size(order, sized, gp, r, used))
                    band_bound = min(band_bound, bound)
                refined[order] = bound
            if band:
                width = min(2 * width, MAX_BAND)
                heapq.heappush(
                    heap, (band_bound, band[0].order, -1, next(tie), _Unpriced(tuple(band)))
                )
        lead = False
        if not heap or heap[0][0] >= best_s:
            break
        if stop is not None and stop():
            raise SearchStopped
        _, order, i, _, work = heapq.heappop(heap)
        if isinstance(work, _Unpriced):
            # The first band's best candidate is timed next, almost always: priced with the
            # uplinks rings and sends share at once, not twice.
            for priced in _price_band(work, c, fabric, expected, sizes.bands, first, best_s):
                heapq.heappush(heap, (priced.least, priced.size.order, 0, next(tie), priced))
            # Its best candidate is timed before any other band is priced: the step it sets
            # spares those bands the rows of candidates that cannot beat it (_price_band).
            lead, first = first, False
            continue
        cheap = work.cheap
        if cheap is not None and i == 0 and _shares_uplinks(work.size, c):
            if cheap.superseded:  # its band was re-priced with the shared uplinks
                continue
            # A candidate of a band priced without the uplinks rings and sends share is
            # next to be timed exactly: the band's sizes where both cross them, with them.
            cheap.superseded = True
            sharing = _Unpriced(tuple(s for s in cheap.work.sizes if _shares_uplinks(s, c)))
            for priced in _price_band(sharing, c, fabric, expected, sizes.bands, True, best_s):
                heapq.heappush(heap, (priced.least, priced.size.order, 0, next(tie), priced))
            continue
        size = work.size
        work.rank()
        if i + 1 < len(work.bounds):
            heapq.heappush(heap, (float(work.bounds[i + 1]), order, i + 1, next(tie), work))
        position = int(work.ranking[i])
        plan = size.sized.plan(position)
        index = size.sized.indices[position]
        sub = subs.get(order)
        if sub is None:
            root = roots[size.root]
            sub = subs[order] = root if size.used == root.gpus else replace(root, gpus=size.used)
        if not checked:  # what every candidate shares (e.g. fp8 support)
            check_plan(w, sub, plan)
            checked = True
        step, seconds = reprice(w, sub, plan, fabric, expected, reliability)
        if seconds < best_s or (seconds == best_s and (order, index) < best_key):
            best, best_s, best_key = step, seconds, (order, index)
    sizes.refine(refined)
    if best is None:
        _explain_infeasible(w, c, fixed, why)
    assert best is not None
    return estimate_from_step(best, fabric, options, planned_on=c)


_Sizes = tuple[tuple[float, int, int, int], ...]  # (bound, order, root, GPUs used)


class _SizeOrder:
    """The sizes of one search, smallest bound first. A search that looked at a size's
    candidates knows a tighter bound for it (their smallest network-free step, infinite when
    none fits): it writes it back, so the next network's search skips what cannot win."""

    __slots__ = ("bands", "constants", "entries", "generation", "known", "sized")

    def __init__(self, entries: _Sizes, gen: object) -> None:
        self.entries = entries
        self.constants = fitted.COMPUTE
        self.generation = gen
        # each size's candidates and goodput factor once a search has looked, by order
        self.sized: dict[int, tuple[_SizePlans, float]] = {}
        self.known: set[int] = set()  # orders whose bound is already the tighter one
        self.bands: dict[tuple[int, ...], _Band] = {}  # _band's, by sizes

    def refine(self, refined: dict[int, float]) -> None:
        if not refined.keys() - self.known:
            return
        self.known |= refined.keys()
        self.entries = tuple(
            sorted(
                (refined.get(order, bound), order, r, used)
                for bound, order, r, used in self.entries
                if refined.get(order, bound) < math.inf
            )
        )


_pending_cache: dict[tuple[object, ...], _SizeOrder] = {}


def _pending_sizes(
    w: Workload,
    hw: _Hardware,
    limit_gb: float,
    fixed: PartialPlan,
    speed: KernelSpeed,
    step_overhead_s: float,
    reliability: Reliability,
    c: ClusterSpec,
) -> _SizeOrder:
    """Every size a job on ``c`` may use as (bound, order, root, GPUs used), smallest bound
    first: root 0 is ``c`` (all its GPUs, then fewer), the others its domain tilings. The
    bound is the size's fastest compute plus the per-step overhead, at its goodput, until a
    search refines it. Cached per workload and hardware: ``c`` is only read for its hardware
    (``hw``)."""
    key = (w, hw, limit_gb, fixed, speed, step_overhead_s, reliability)
    hit = _pending_cache.get(key)
    gen = generation(hw.gpu_model)
    if hit is not None and hit.constants is fitted.COMPUTE and hit.generation is gen:
        return hit
    if len(_pending_cache) >= _SIZE_CACHE_SIZE:
        _pending_cache.clear()
        _RowBudget.bands = 0  # the bands went with their orders
    sizes = _sizes_by_bound(w, hw, fixed, speed, step_overhead_s, reliability, c)
    order = _SizeOrder(sizes, gen)
    _pending_cache[key] = order
    return order


def _sizes_by_bound(
    w: Workload,
    hw: _Hardware,
    fixed: PartialPlan,
    speed: KernelSpeed,
    step_overhead_s: float,
    reliability: Reliability,
    c: ClusterSpec,
) -> _Sizes:
    keep = 1.0 - BOUND_SLACK
    out: list[tuple[float, int, int, int]] = []
    for r, (root, sizes) in enumerate(root_sizes(w, c, fixed)):
        work_s = _fastest_compute_s(w, _hardware(root, root.gpus), speed, fixed)
        for used in sizes:
            gp = goodput_factor(w.checkpoint_size_bytes, used, reliability)
            compute_s = work_s * root.gpus / used * _least_share(w, fixed, used)
            bound = (compute_s + step_overhead_s) * gp * keep
            out.append((bound, len(out), r, used))
    return tuple(sorted(out))


def _fastest_compute_s(w: Workload, hw: _Hardware, speed: KernelSpeed, fixed: PartialPlan) -> float:
    """The step's compute on ``hw.gpus`` at kernel speed with the fastest tensor degree and
    micro-batch that agree with ``fixed``: no candidate on these GPUs, nor (scaled by gpus /
    used) on fewer of them, is faster (smaller sizes offer no other tensor degree). Not
    cached itself: _pending_sizes caches the sizes' bounds and redoes them under new fitted
    constants (the calibration fit's loop, where every published run fixes its degrees)."""
    experts = _divisors(w.experts) if w.is_moe else (1,)  # every expert degree any size has
    tensors = tensor_degrees(w, hw.gpus, hw.gpus_per_node, hw.domain_gpus)
    # A fixed degree no candidate can take leaves no candidate: the search says why.
    if fixed.tensor in tensors:
        tensors = [fixed.tensor]
    if fixed.expert in experts:
        experts = (fixed.expert,)
    micro = (fixed.micro_batch_size,) if fixed.micro_batch_size else MICRO_BATCH_CHOICES
    layouts = [(t, et) for t in tensors for et in _expert_tensors(w, t)]
    if any(et == fixed.expert_tensor for _, et in layouts):
        layouts = [(t, et) for t, et in layouts if et == fixed.expert_tensor]
    return min(
        _compute_s(w, hw, mb, t, speed, e, et) for t, et in layouts for mb in micro for e in experts
    )


def _expert_tensors(w: Workload, t: int) -> tuple[int, ...]:
    """The expert layers' tensor degrees a plan of tensor degree ``t`` may take: ``t`` and,
    folded (plan.ParallelPlan), 1 where the workload's framework folds."""
    return (t, 1) if t > 1 and not expert_tensor_refusal(w, t, 1) else (t,)


def _domain_tilings(c: ClusterSpec) -> list[ClusterSpec]:
    """The cluster with each scale-up domain cut to ClusterSpec.domain_tile_gpus (64 of an
    NVL72's 72 GPUs), the rest idle. Nothing when the domain is the host or already a power of
    two, or the cluster fills no domain."""
    dom, tile = c.scale_up_domain_gpus, c.domain_tile_gpus
    if tile is None or c.gpus < dom:
        return []
    return [replace(c, gpus=c.gpus // dom * tile, scale_up_gpus=tile)]


def root_sizes(
    w: Workload, c: ClusterSpec, fixed: PartialPlan
) -> list[tuple[ClusterSpec, list[int]]]:
    """Each root a job on ``c`` may run on (``c`` itself, then its domain tilings) with the
    GPU counts it may use there, largest first."""
    return [
        (c, _idle_sizes(w, c, fixed)),
        *((t, _tile_sizes(w, t, fixed)) for t in _domain_tilings(c)),
    ]


def _tile_sizes(w: Workload, tile: ClusterSpec, fixed: PartialPlan) -> list[int]:
    """A domain tiling's GPU counts, largest first: all its domains, then every smaller
    count of whole domains that some plan fills. Without them a rack-scale cluster lost its
    tiled plans one domain past the size they fill (Llama 3 405B: 43,008 GPUs of 672 NVL72
    racks, 592 h, but 764 h on 673 to 1,820 racks)."""
    dom = tile.scale_up_domain_gpus
    return _fillable_of(w, fixed, tile.gpus, range(tile.gpus - dom, 0, -dom))


def _idle_sizes(w: Workload, c: ClusterSpec, fixed: PartialPlan) -> list[int]:
    """The GPU counts a job on ``c`` may use, largest first: all of them, then every smaller
    count of whole nodes (and the divisors of one node below it) that some plan fills."""
    gpn = c.gpus_per_node
    whole = range(c.gpus - c.gpus % gpn if c.gpus > gpn else 0, 0, -gpn)
    small = [k for k in reversed(_divisors(gpn)) if k < min(c.gpus, gpn)]
    return _fillable_of(w, fixed, c.gpus, (*whole, *small))


def _fillable_of(w: Workload, fixed: PartialPlan, full: int, smaller: Iterable[int]) -> list[int]:
    """``full``, then the ``smaller`` counts some plan fills, without repeats (a fixed data
    degree among them: tensor 8, pipeline 1, data 8 runs on 64 of 128 GPUs, where it was
    pinned to all of them and refused as not fitting in memory)."""
    fillable = _fillable_sizes(w, fixed)
    return list(dict.fromkeys([full, *(k for k in smaller if k in fillable)]))


@lru_cache(maxsize=1024)
def _fillable_sizes(w: Workload, fixed: PartialPlan) -> frozenset[int]:
    """Every GPU count that tensor x pipeline x data x context can equal: a
    superset of the sizes with a candidate (tensor degrees divide tensor_split, pipelines hold
    at least a layer each, data degrees divide the global batch), so skipping the others
    loses no plan and spares the search building empty candidate lists (about 7 in 8
    whole-node sizes of a 2,048-node cluster for Llama 3 70B)."""
    pipelines = _pipelines(w, fixed, tuple(range(1, w.layers + 1)))
    others = _other_products(w, fixed)
    return frozenset(p * other for p in pipelines for other in others)


@lru_cache(maxsize=1024)
def _other_products(w: Workload, fixed: PartialPlan) -> frozenset[int]:
    """Every tensor x data x context a plan may take (_fillable_sizes)."""
    tensors = _options(fixed.tensor, _divisors(w.tensor_split))
    datas = _options(fixed.data, _divisors(w.global_batch_size))
    contexts = (fixed.context,) if fixed.context is not None else searched_contexts(w)
    return frozenset(t * cp * d for t in tensors for cp in contexts for d in datas)


@lru_cache(maxsize=65_536)
def _least_share(w: Workload, fixed: PartialPlan, used: int) -> float:
    """The least slowest stage's share (least_slowest_stage_share) of any pipeline a plan on
    ``used`` GPUs may take (_fillable_sizes' degrees): every candidate of that size computes
    at least that much slower than an even split, which its bound in the search
    (_sizes_by_bound) says before its candidates are built. Llama 3 70B on 504 GPUs can only
    pipeline 63 stages, 2.1 layer-equivalents on the slowest where the average is 1.3: its
    candidates were built by every search on 512 GPUs, to be pruned."""
    others = _other_products(w, fixed)
    pipelines = [
        p
        for p in _pipelines(w, fixed, _divisors(used))
        if p <= w.layers and used % p == 0 and used // p in others
    ]
    return min((least_slowest_stage_share(w, p) for p in pipelines), default=1.0)


def _explain_infeasible(w: Workload, c: ClusterSpec, fixed: PartialPlan, why: bool) -> None:
    """Raise the most useful error when no candidate survived: a bad fixed degree names its
    field, otherwise the model does not fit (``why``: with what the lightest plan needs)."""
    check_pipeline_engine(
        w, fixed.pipeline or 1, fixed.virtual_pipeline or 1, fixed.zero_stage or 0
    )
    check_combined_1f1b(w, fixed.pipeline or 1, fixed.virtual_pipeline, fixed.expert)
    # Degrees no size can take, whatever the others: not a memory problem.
    if fixed.zero_stage is not None and fixed.reshard_after_forward is not None:
        refused = reshard_refusal(fixed.zero_stage, fixed.reshard_after_forward)
        if refused:
            raise InvalidInput(refused, field="parallelism.reshard_after_forward")
    if fixed.expert is not None and w.experts % fixed.expert:
        refused = (
            f"does not divide the {w.experts} experts of {w.name} (each expert rank holds "
            "whole experts)"
            if w.is_moe
            else f"needs a mixture of experts; {w.name} is dense (expected 1)"
        )
        raise InvalidInput(f"expert {fixed.expert} {refused}", field="parallelism.expert")
    if fixed.micro_batch_size is not None and w.global_batch_size % fixed.micro_batch_size:
        raise InvalidInput(
            f"micro_batch_size {fixed.micro_batch_size} does not divide global_batch_size "
            f"{w.global_batch_size}: no data degree runs it",
            field="parallelism.micro_batch_size",
        )
    if any(d is not None for d in (fixed.tensor, fixed.pipeline, fixed.data, fixed.context)):
        t, p, cp = fixed.tensor or 1, fixed.pipeline or 1, fixed.context or 1
        # an open data degree: the widest the batch takes, so only fixed degrees are judged
        per_micro_batch = w.global_batch_size // (fixed.micro_batch_size or 1)
        room = max(1, c.gpus // (t * p * cp))
        data = fixed.data or max(k for k in range(1, room + 1) if per_micro_batch % k == 0)
        plan = ParallelPlan(
            t,
            p,
            data,
            fixed.expert or 1,
            fixed.virtual_pipeline or 1,
            1 if fixed.zero_stage is None else fixed.zero_stage,
            fixed.micro_batch_size or 1,
            context=cp,  # issue 14 (context)
            # with the tensor degree open, one equal to a fixed expert tensor degree is there
            expert_tensor=(fixed.expert_tensor or 0) if fixed.tensor is not None else 0,
        )
        # The job may leave GPUs idle, so only more GPUs than the cluster has is the
        # product's fault; else the degree the model refuses is named (tensor 3 of 8 K/V
        # heads), not the product.
        if plan.gpus > c.gpus:
            check_plan(w, c, plan)
        check_degrees(w, c, plan)
    if why:
        raise memory_refusal(w, c, fixed)
    raise PlanInfeasible(_too_heavy(w, c), field="cluster.gpus")


def _too_heavy(w: Workload, c: ClusterSpec) -> str:
    return (
        f"no parallel plan fits {w.name} ({parameter_count(w.parameters)} parameters) in "
        f"{c.gpus} GPUs of {c.gpu_memory_gb:g} GB ({usable_memory_gb(c):.1f} GB usable)"
    )


def memory_refusal(w: Workload, c: ClusterSpec, fixed: PartialPlan) -> PlanInfeasible:
    """The refusal of a cluster no plan of ``w`` fits: with what the lightest plan needs and
    where that memory goes (a 10M-token sequence was refused naming only the parameter
    count)."""
    lightest = _lightest(w, c, fixed)
    detail = "" if lightest is None else f": the lightest plan using all of them, {lightest}"
    return PlanInfeasible(_too_heavy(w, c) + detail, field="cluster.gpus")


def _lightest(w: Workload, c: ClusterSpec, fixed: PartialPlan) -> str | None:
    """The plan over all of ``c``'s GPUs (with ``fixed``'s degrees) that needs the least
    memory per GPU, and what it needs; None when no plan of ``c``'s GPUs is allowed at all."""
    best: tuple[float, Degrees] | None = None
    domain = c.scale_up_domain_gpus
    for cp in context_degrees(w, c.gpus, fixed):
        families = [
            f
            for f in _families(w, c.gpus // cp, c.gpus_per_node, fixed, domain, cp).families
            if f[3]  # a requested depth the schedule refuses is not a memory problem
        ]
        if not families:
            continue
        forms = list(dict.fromkeys(z for _, zeros, _, _ in families for z in zeros))
        # the shallowest depth (1 but under Combined 1F1B) holds the fewest layers'
        # activations in flight (in_flight_chunks)
        depths = [
            deep if fixed.virtual_pipeline is not None else min(checked)
            for _, _, deep, checked in families
        ]
        peaks = peaks_gb(
            [(FamilyLoads(w, *f[0]), v) for f, v in zip(families, depths, strict=True)], forms
        )
        for row, ((degrees, zeros, _, _), v) in enumerate(zip(families, depths, strict=True)):
            for z in zeros:
                gb = float(peaks[forms.index(z), row])
                if best is None or gb < best[0]:
                    t, p, d, e, mb, context, et = degrees
                    best = (gb, (t, p, d, e, v, z[0], mb, context, z[1], et))
    if best is None:
        return None
    plan = ParallelPlan(*best[1])
    return f"{plan_text(plan)}, needs {memory_text(memory_per_gpu(w, plan), w)}"
