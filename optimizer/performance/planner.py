"""Choose the fastest parallel plan that fits in memory, then estimate it.

The search is small on purpose (the optimizer calls it for thousands of candidate clusters):
tensor degrees are divisors of the scale-up domain (tensor parallelism stays on NVLink,
Narayanan et al. SC'21 sec. 3.3 takeaway #1; beyond the host at most MAX_TENSOR_IN_DOMAIN),
expert degrees any divisor of data and experts (the estimator keeps those that fit the domain on
its fabric), pipeline degrees are divisors of what remains, memory is
checked before any time is computed, only the smallest ZeRO stage that fits is kept, with the
deepest interleaving the layer count allows. Candidates are then timed in order of a lower
bound (compute plus pipeline bubble, which no communication can shorten) and the search stops
once that bound exceeds the best full estimate: branch and bound over a few dozen plans.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

from optimizer.performance.calibration import NVLINK_ALPHA_S
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import (
    Estimate,
    StepModel,
    check_plan,
    compute_s_per_token,
    estimate,
    estimate_from_step,
    nvlink_bytes_per_s,
    scenario,
    tensor_parallel_cost,
    usable_memory_gb,
)
from optimizer.performance.fabrics import DEFAULT_FABRICS, FabricTable, fabric_profile
from optimizer.performance.goodput import wall_step_s
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.workload.memory import memory_per_gpu
from optimizer.workload.model import Workload

MICRO_BATCH_CHOICES = (1, 2, 4)
MAX_VIRTUAL_PIPELINE = 4
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


def candidate_plans(w: Workload, c: ClusterSpec, fixed: PartialPlan) -> list[ParallelPlan]:
    """Plans worth timing that fit in memory, each with the lightest ZeRO stage that fits."""
    return list(
        _candidate_plans(
            w, c.gpus, c.gpus_per_node, usable_memory_gb(c), fixed, c.scale_up_domain_gpus
        )
    )


def tensor_degrees(w: Workload, gpus: int, gpus_per_node: int, domain_gpus: int) -> list[int]:
    """Tensor degrees worth trying: divisors of the scale-up domain that divide the heads; past
    the host only up to MAX_TENSOR_IN_DOMAIN (with domain = host: the divisors of the node)."""
    gpn = min(gpus, gpus_per_node)
    dom = min(gpus, domain_gpus)
    return [
        t
        for t in _divisors(dom)
        if w.attention_heads % t == 0 and (t <= gpn or t <= MAX_TENSOR_IN_DOMAIN)
    ]


# --- issue 14 (context): context degrees ------------------------------------------------------
# Sequences from this length on are long enough for context parallelism to pay (Llama 3 trains
# its 131,072-token stage with context 16; Megatron-LM recommends it from 32K tokens on).
CONTEXT_FROM_SEQUENCE = 32_768
CONTEXT_CHOICES = (1, 2, 4, 8, 16, 32)


def context_degrees(w: Workload, gpus: int, fixed: PartialPlan) -> tuple[int, ...]:
    """The request's context degree, else 1 and, for long sequences, each power of two that
    divides the GPUs and cuts the sequence into 2 x context equal chunks."""
    if fixed.context is not None:
        return (fixed.context,)
    if w.sequence_length < CONTEXT_FROM_SEQUENCE:
        return (1,)
    return tuple(
        cp for cp in CONTEXT_CHOICES if gpus % cp == 0 and w.sequence_length % (2 * cp) == 0
    )


@lru_cache(maxsize=8192)
def _candidate_plans(
    w: Workload,
    gpus: int,
    gpus_per_node: int,
    limit_gb: float,
    fixed: PartialPlan,
    domain_gpus: int | None = None,
) -> tuple[ParallelPlan, ...]:
    """The plans depend only on these, not on the network: cached across the optimizer's
    candidate clusters. Each context degree leaves gpus / context for the other degrees."""
    return tuple(
        plan
        for cp in context_degrees(w, gpus, fixed)
        for plan in _candidate_plans_at(
            w, gpus // cp, gpus_per_node, limit_gb, fixed, domain_gpus, cp
        )
        # sequence parallelism (check_context); a fixed degree is left to check_plan's error
        if fixed.context is not None or (w.sequence_length // cp) % plan.tensor == 0
    )


# --- end issue 14 (context) ---------------------------------------------------------------------


def _candidate_plans_at(
    w: Workload,
    gpus: int,
    gpus_per_node: int,
    limit_gb: float,
    fixed: PartialPlan,
    domain_gpus: int | None,
    context: int,
) -> list[ParallelPlan]:
    """Plans over ``gpus`` (the GPUs per context rank) with the given context degree."""
    plans: list[ParallelPlan] = []
    tensors = tensor_degrees(w, gpus, gpus_per_node, domain_gpus or gpus_per_node)
    for t in _options(fixed.tensor, tensors):
        if gpus % t:
            continue
        # Megatron-LM splits the layers evenly over the stages (num_layers % pipeline == 0).
        pipelines = [p for p in _divisors(gpus // t) if w.layers % p == 0]
        for p in _options(fixed.pipeline, pipelines):
            if gpus % (t * p):
                continue
            d = gpus // (t * p)
            if fixed.data is not None and fixed.data != d:
                continue
            experts = [e for e in _divisors(d) if w.experts % e == 0] if w.is_moe else [1]
            vps = (
                [v for v in range(MAX_VIRTUAL_PIPELINE, 0, -1) if w.layers % (p * v) == 0]
                if p > 1
                else [1]
            )
            vp = fixed.virtual_pipeline or (vps[0] if vps else 1)
            micro = [m for m in MICRO_BATCH_CHOICES if w.global_batch_size % (d * m) == 0]
            zeros = (1, 3) if d > 1 else (0,)
            for e in _options(fixed.expert, experts):
                if d % e or w.experts % e:
                    continue
                for mb in _options(fixed.micro_batch_size, micro):
                    if w.global_batch_size % (d * mb):  # a fixed micro-batch this d cannot take
                        continue
                    for z in _options(fixed.zero_stage, zeros):
                        plan = ParallelPlan(t, p, d, e, vp, z, mb, context=context)
                        if memory_per_gpu(w, plan).total_gb <= limit_gb:
                            plans.append(plan)
                            break  # a higher ZeRO stage only adds traffic
    return plans


def _lower_bound_s(w: Workload, c: ClusterSpec, plan: ParallelPlan, kernel_eff: float) -> float:
    """Compute, NVLink tensor parallelism and the pipeline bubble: the step with a free
    scale-out network, which no network term can shorten."""
    tensor_core_s, elementwise_s = compute_s_per_token(
        w, plan.micro_batch_size, plan.tensor, c.gpu_model, c.gpu_peak_tflops, c.gpu_peak_fp8_tflops
    )
    work = (tensor_core_s / kernel_eff + elementwise_s) * w.tokens_per_step / c.gpus
    if 1 < plan.tensor <= min(c.gpus, c.scale_up_domain_gpus):
        work += tensor_parallel_cost(w, plan).seconds(nvlink_bytes_per_s(c), NVLINK_ALPHA_S)
    m = w.global_batch_size // (plan.data * plan.micro_batch_size)
    return work * (1 + (plan.pipeline - 1) / (plan.virtual_pipeline * m))


def plan_and_estimate(
    w: Workload,
    c: ClusterSpec,
    fixed: PartialPlan | None = None,
    fabrics: FabricTable = DEFAULT_FABRICS,
    options: ModelOptions = DEFAULT_OPTIONS,
) -> Estimate:
    """The estimate under the fastest feasible plan that agrees with ``fixed``.

    Raises
    ------
    PlanInfeasible
        No plan fits the workload in the cluster's GPU memory.
    InvalidInput
        A fixed degree is impossible for this cluster or model (the field is named).
    """
    fixed = fixed or PartialPlan()
    complete = fixed.complete()
    if complete is not None:
        return estimate(w, c, complete, fabrics, options)
    fabric = fabric_profile(fabrics, c.fabric)
    expected = scenario(c, fabric, "expected", options)
    clusters = [
        c,
        *(replace(c, gpus=used) for used in _idle_gpu_counts(w, c, fixed)),
        *_domain_tilings(c),
    ]
    ranked = sorted(
        (_lower_bound_s(w, sub, plan, expected.kernel_efficiency), i, j, plan, sub)
        for j, sub in enumerate(clusters)
        for i, plan in enumerate(candidate_plans(w, sub, fixed))
    )
    if not ranked:
        _explain_infeasible(w, c, fixed)
    check_plan(w, ranked[0][4], ranked[0][3])  # what every candidate shares (e.g. fp8 support)
    best: StepModel | None = None
    best_s = float("inf")
    for bound, _, _, plan, sub in ranked:
        if bound >= best_s:
            break
        step = StepModel(w, sub, plan, fabric)
        # issue 14 (goodput): rank on wall-clock time (more GPUs fail more often); goodput
        # <= 1, so the step-time bound above still bounds it from below.
        seconds = wall_step_s(
            w.parameters, plan.gpus, w.steps, step.step_time_s(expected), options.reliability
        )
        if seconds < best_s:
            best, best_s = step, seconds
    assert best is not None
    result = estimate_from_step(best, fabric, options)
    if best.c.scale_up_domain_gpus != c.scale_up_domain_gpus:
        note = (
            f"the plan uses {best.c.scale_up_domain_gpus} of the {c.scale_up_domain_gpus} GPUs "
            f"of each scale-up domain ({best.c.gpus:,} of {c.gpus:,}): its groups tile "
            f"{best.c.scale_up_domain_gpus} GPUs and none straddles two domains"
        )
        result = replace(result, notes=(*result.notes, note))
    elif best.c.gpus < c.gpus:
        note = (
            f"the plan uses {best.c.gpus:,} of the {c.gpus:,} GPUs: no faster plan divides "
            f"the global batch over all of them"
        )
        result = replace(result, notes=(*result.notes, note))
    return replace(result, scale_up_gpus=c.scale_up_domain_gpus)


def _domain_tilings(c: ClusterSpec) -> list[ClusterSpec]:
    """The cluster with each scale-up domain cut to its largest power-of-two number of whole
    hosts (64 of an NVL72's 72 GPUs), the rest idle: power-of-two expert and tensor groups then
    tile the domain instead of straddling two (docs/performance-model.md, "Scale-up domain").
    Nothing when the domain is the host or already a power of two."""
    dom, gpn = c.scale_up_domain_gpus, c.gpus_per_node
    if dom <= gpn or c.gpus < dom or dom & (dom - 1) == 0:
        return []
    tile = 1 << (dom.bit_length() - 1)
    if tile % gpn or tile <= gpn:
        return []
    return [replace(c, gpus=c.gpus // dom * tile, scale_up_gpus=tile)]


# Sub-cluster sizes tried besides the whole cluster: a job may leave GPUs idle when no plan
# divides the global batch over all of them, so a larger cluster is never modelled slower
# than a smaller one that fits inside it.
IDLE_SIZES = 3


def _idle_gpu_counts(w: Workload, c: ClusterSpec, fixed: PartialPlan) -> list[int]:
    """The largest GPU counts below ``c.gpus`` that a (tensor, pipeline, data) plan fills.

    Data degrees divide the global batch, pipeline degrees the layers, tensor degrees the node
    and the heads.
    """
    if fixed.data is not None:
        return []
    gpn = min(c.gpus, c.gpus_per_node)
    tensors = _options(
        fixed.tensor, tensor_degrees(w, c.gpus, c.gpus_per_node, c.scale_up_domain_gpus)
    )
    pipelines = _options(fixed.pipeline, _divisors(w.layers))
    datas = _divisors(w.global_batch_size)
    counts = set()
    for t in tensors:
        for p in pipelines:
            room = c.gpus // (t * p)
            fitting = [d for d in datas if d <= room]
            used = t * p * fitting[-1] if fitting else 0
            if 0 < used < c.gpus and (used <= gpn or used % gpn == 0):  # whole nodes
                counts.add(used)
    return sorted(counts, reverse=True)[:IDLE_SIZES]


def _explain_infeasible(w: Workload, c: ClusterSpec, fixed: PartialPlan) -> None:
    """Raise the most useful error when no candidate survived: a bad fixed degree names its
    field, otherwise the model does not fit."""
    if fixed.tensor is not None or fixed.pipeline is not None or fixed.data is not None:
        t, p = fixed.tensor or 1, fixed.pipeline or 1
        plan = ParallelPlan(
            t,
            p,
            fixed.data or max(1, c.gpus // (t * p * (fixed.context or 1))),
            fixed.expert or 1,
            fixed.virtual_pipeline or 1,
            1 if fixed.zero_stage is None else fixed.zero_stage,
            fixed.micro_batch_size or 1,
            context=fixed.context or 1,  # issue 14 (context)
        )
        check_plan(w, c, plan)
    raise PlanInfeasible(
        f"no parallel plan fits {w.name} ({w.parameters / 1e9:.1f}B parameters) in "
        f"{c.gpus} GPUs of {c.gpu_memory_gb:g} GB",
        field="cluster.gpus",
    )
