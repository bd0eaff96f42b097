"""How a workload's layers sit on the stages of a pipeline, and what the slowest stage costs.

Layers need not divide evenly: Llama 3 405B trained 126 layers over 16 stages, with one layer
fewer on the first stage (it holds the input embedding) and on the last (it holds the output
layer, logits and loss) (Dubey et al., "The Llama 3 Herd of Models", 2024, sec. 3.3.2). The
step runs at the pace of the slowest stage, so the layout minimises the largest stage load,
counting the output layer in layer-equivalents of hardware FLOPs; the input embedding is a
row gather (no GEMM) and counts for memory only. Layers a balanced layout can spare come off
the first stage (it holds the most activations in flight), then the last.

Interleaved, every chunk holds a layer except two: "the first model chunk on the first stage
has only the embedding, and the last model chunk on the last stage has only output projection
and loss calculation" (Llama 3, sec. 3.3.2), so 126 layers interleave 8 deep on 16 stages,
one layer per chunk: p v <= layers + 2 (``deepest_interleaving``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import groupby

from optimizer.workload.flops import forward_flops_per_token, hardware_flops_per_step
from optimizer.workload.model import Workload, parameter_count

_EPS = 1e-9
# The layout note (layout_note) is left out where a split Megatron-Core makes by itself is at
# most this much slower on the slowest stage: the balanced layout is then a detail.
LAYOUT_NOTE_SHARE = 0.01


@dataclass(frozen=True)
class PipelineLayout:
    """Layers per stage (first to last) and the loads, in layer-equivalents of FLOPs."""

    layers: tuple[int, ...]
    virtual_pipeline: int
    output_layer_equivalents: float
    slowest_stage_load: float  # under DualPipe, the slowest rank's: its two stages' mean

    @cached_property
    def average_stage_load(self) -> float:
        return (sum(self.layers) + self.output_layer_equivalents) / len(self.layers)

    @cached_property
    def slowest_stage_share(self) -> float:
        """Slowest stage's work over the average stage's: the factor by which the step's
        compute (spread evenly over all GPUs) stretches on the critical path; 1 without a
        pipeline."""
        return self.slowest_stage_load / self.average_stage_load

    @cached_property
    def chunk_imbalance(self) -> float:
        """Largest chunk over 1/v of the largest stage, in layers: 1 when each stage's layers
        split into v equal chunks. The interleaved fill and drain pass (p - 1) chunks, so
        chunks of ceil(layers / v) stretch the bubble beyond (p - 1) / v of a stage."""
        v = self.virtual_pipeline
        largest = max(self.layers)
        return -(-largest // v) * v / largest  # ceil(k / v) grows with k


def bubble_fraction(
    pipeline: int,
    virtual_pipeline: int,
    micro_batches: int,
    chunk_imbalance: float = 1.0,
    dualpipe: bool = False,
) -> float:
    """Idle time of a stage over its busy time m v chunk passes: the fill and drain's p - 1
    slots of the largest chunk, (p - 1) / (v m) x imbalance (Narayanan et al. SC'21 sec.
    2.2); (p - 1) / m stages' time with fewer micro-batches than stages, which only a
    one-chunk pipeline runs (``deepest_depth``).

    DualPipe (``dualpipe``, one chunk a stage): (p/2 - 1)(F&B + B - 3W) against m (F + B)
    busy (DeepSeek-V3 report, arXiv:2412.19437, Table 2), with a backward twice the forward
    (B = 2F), its weight half W = F, and a paired forward and backward taking their sum
    (F&B = F + B: the pairing hides communication, not compute): (p - 2) / (3 m)."""
    p, v, m = pipeline, virtual_pipeline, micro_batches
    if dualpipe:
        return (p - 2) * chunk_imbalance / (3 * m)
    return (p - 1) * chunk_imbalance / (v * m)


def dualpipe_pipeline_refusal(pipeline: int) -> str:
    """Why DualPipe will not run ``pipeline`` ranks, whatever the micro-batches ("" when it
    may): its step asserts an even rank count (dualpipe_refusal)."""
    if pipeline < 2 or pipeline % 2:
        return (
            f"DualPipe runs an even number of pipeline ranks, at least 2 (a rank holds stage r "
            f"and stage p - 1 - r); got pipeline {pipeline}"
        )
    return ""


def dualpipe_refusal(pipeline: int, micro_batches: int) -> str:
    """Why DualPipe will not run ``pipeline`` ranks over ``micro_batches`` a step ("" when it
    will): its step asserts an even rank count and an even number of micro-batches of at
    least twice the ranks (github.com/deepseek-ai/DualPipe, dualpipe/dualpipe.py, DualPipe.
    step: ``num_ranks % 2 == 0``, ``num_chunks % 2 == 0 and num_chunks >= num_ranks * 2``)."""
    if why := dualpipe_pipeline_refusal(pipeline):
        return why
    if micro_batches % 2 or micro_batches < 2 * pipeline:
        return (
            f"DualPipe feeds half the micro-batches from each end and needs an even number of "
            f"them, at least 2 x pipeline = {2 * pipeline}; got {micro_batches} "
            "(global_batch_size / (data x micro_batch_size))"
        )
    return ""


def dualpipe_unpaired_share(pipeline: int, micro_batches: int) -> float:
    """Share of a DualPipe rank's chunks that run unpaired (their all-to-all and sends
    exposed): the end ranks, which have the most, pair 2 (m/2 - p + 1) of their m forward
    chunks in the main step (DualPipe.step's step 4, ``half_num_chunks - num_ranks +
    half_rank + 1`` iterations of two pairs, half_rank 0), so 2 (p - 1) run alone."""
    return min(1.0, 2 * (pipeline - 1) / micro_batches)


def combined_1f1b_refusal(pipeline: int, virtual_pipeline: int) -> str:
    """Why Megatron-Core's Combined 1F1B will not run ``pipeline`` stages of
    ``virtual_pipeline`` chunks ("" when it will): across stages only in the interleaved
    schedule (transformer_config.py asserts virtual_pipeline_model_parallel_size is set when
    pipeline_model_parallel_size > 1; arguments.py unsets a size of 1)."""
    if pipeline > 1 and virtual_pipeline < 2:
        return (
            f"Megatron-Core runs Combined 1F1B over {pipeline} pipeline stages only in its "
            "interleaved schedule: expected virtual_pipeline >= 2"
        )
    return ""


def combined_1f1b_unpaired_share(pipeline: int, virtual_pipeline: int, micro_batches: int) -> float:
    """Share of a Combined 1F1B rank's chunks that run unpaired (their all-to-all exposed):
    the warm-up forwards and the cool-down backwards. The first rank, which has the most,
    warms up with 2 (p - 1) + (v - 1) p chunks plus the one more that keeps each pair's
    forward and backward independent (Megatron-LM pipeline_parallel/schedules.py,
    get_pp_rank_microbatches, overlap_moe_expert_parallel_comm); without a pipeline, the first
    forward and the last backward run alone (combined_1f1b_schedule_for_no_pipelining)."""
    p, v, m = pipeline, virtual_pipeline, micro_batches
    warmup = 1 if p == 1 else 2 * (p - 1) + (v - 1) * p + 1
    return min(1.0, warmup / (m * v))


def unpaired_share(w: Workload, pipeline: int, virtual_pipeline: int, micro_batches: int) -> float:
    """The unpaired share of the chunks of ``w``'s schedule where it pairs them (DualPipe,
    Combined 1F1B: estimator.paired_exposed_s); 0 for one that pairs none."""
    if w.dualpipe:
        return dualpipe_unpaired_share(pipeline, micro_batches)
    if w.combined_1f1b:
        return combined_1f1b_unpaired_share(pipeline, virtual_pipeline, micro_batches)
    return 0.0


def deepest_interleaving(layers: int, pipeline: int) -> int:
    """The largest virtual_pipeline ``layers`` fill on ``pipeline`` stages: a layer per chunk,
    but for the first stage's embedding-only and the last stage's output-only chunks."""
    if pipeline <= 1:
        return layers
    return (layers + 2) // pipeline


def deepest_layout_interleaving(w: Workload, pipeline: int) -> int:
    """deepest_interleaving of ``w``'s own layout: the stated one's (Workload.stage_layers)
    fills as many chunks as its smallest middle stage holds layers, an end stage one more
    (its embedding-only or output-only chunk)."""
    stated = w.stage_layers
    if not stated or len(stated) != pipeline or pipeline == 1:
        return deepest_interleaving(w.layers, pipeline)
    return min(stated[0] + 1, stated[-1] + 1, *stated[1:-1])


def deepest_depth(w: Workload, pipeline: int, micro_batches: int) -> int:
    """The largest virtual_pipeline the planner may give ``w`` with ``micro_batches`` per
    step: deepest_interleaving, or 1 where nothing interleaves: one stage (chunks interleave
    across stages; estimator.check_plan refuses more), DeepSpeed's PipelineEngine (its 1F1B
    has no virtual stages), DualPipe (its two stages a rank are its chunks), and
    Megatron-LM's interleaved schedule unless the micro-batches are a multiple of the stages
    (``interleaving_refusal``)."""
    if (
        pipeline == 1
        or w.framework == "deepspeed"
        or w.dualpipe
        or interleaving_refusal(pipeline, micro_batches)
    ):
        return 1
    return deepest_layout_interleaving(w, pipeline)


def interleaving_refusal(pipeline: int, micro_batches: int) -> str:
    """Why Megatron-LM will not interleave ``pipeline`` stages over ``micro_batches`` per
    step ("" when it will). Its interleaved schedule runs the micro-batches through each
    virtual stage in groups of p and raises unless the last group is whole (megatron/core/
    pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving): "number
    of microbatches is not divisible by pipeline-model-parallel-size when using interleaved
    schedule" since the schedule's introduction (Narayanan et al. SC'21); newer releases
    name the group size (``microbatch_group_size_per_vp_stage``, default p) and refuse a
    remainder below p."""
    if micro_batches % pipeline == 0:
        return ""
    return (
        f"Megatron-LM's interleaved schedule runs the micro-batches in groups of pipeline = "
        f"{pipeline}, and {micro_batches} per step (global_batch_size / (data x "
        f"micro_batch_size)) is not a multiple of it"
    )


def output_layer_equivalents(w: Workload) -> float:
    """Hardware FLOPs of the last stage's work beside its decoder layers in transformer
    layers: the output layer (logits forward and backward) and the MTP modules (each a block,
    counted as the mean block, its projection and the output layer once more: forward_flops_
    per_token's logits include them; Megatron-Core places them on the last stage)."""
    f = forward_flops_per_token(w)
    extra = 3.0 * (f.logits + 2.0 * w.mtp_projection_parameters)
    per_block = (hardware_flops_per_step(w) / w.tokens_per_step - extra) / w.transformer_blocks
    return extra / per_block + w.mtp_layers


def mtp_note(w: Workload, layout: PipelineLayout) -> str:
    """What a workload's MTP modules add (the estimate's notes): the parameters beside the
    main model's, which a stated count is checked against, their share of a token's FLOPs
    (each block as the mean block), and where they sit in the plan's pipeline."""
    f = forward_flops_per_token(w)
    projections = 2.0 * w.mtp_projection_parameters
    block = (f.layers - projections) / w.transformer_blocks
    share = (w.mtp_layers * (block + f.logits / (1 + w.mtp_layers)) + projections) / f.total
    modules = f"{w.mtp_layers} module{'s' if w.mtp_layers > 1 else ''}"
    where = (
        f"on the last of {len(layout.layers)} pipeline stages, beside {layout.layers[-1]} of "
        f"the {w.layers} layers (the other stages hold up to {max(layout.layers[:-1])})"
        if len(layout.layers) > 1
        else "beside the output layer"
    )
    return (
        f"multi-token prediction: {modules} (each a block, its 2h x h projection and the "
        f"output layer once more) {where}; "
        f"{parameter_count(w.parameters - w.main_model_parameters)} parameters beside the main "
        f"model's {parameter_count(w.main_model_parameters)}, {share:.1%} of a token's FLOPs"
    )


_Kind = tuple[int, float, int]  # (least layers, extra load, how many stages)


def _stage_kinds(n: int, p: int, v: int, x_out: float) -> list[_Kind]:
    """Stages are of three kinds: the first, the last (it holds the output layer) and the
    p - 2 between them, alike; the layout works per kind, not per stage (a 65,536-layer
    request lays out thousands of stages). v chunks of a layer each on every stage; only
    where the layers do not fill them (p v > layers) do the end stages give one chunk to the
    embedding or the output layer."""
    short = 1 if p * v > n else 0
    kinds: list[_Kind] = (
        [(v - 2 * short, x_out, 1)] if p == 1 else [(v - short, 0.0, 1), (v - short, x_out, 1)]
    )
    if p > 2:
        kinds.append((v, 0.0, p - 2))
    return kinds


def _smallest_largest_load(n: int, p: int, kinds: list[_Kind]) -> float:
    """The smallest largest load T that holds ``n`` layers: a stage takes floor(T - extra)
    layers, at least its least.

    T is k + x for a stage whose load is the largest (k its layers, x its extra): at least
    the mean load, at most ceil(n / p) layers plus the largest extra (every stage holding
    ceil(n / p) fits), so each extra's k spans that window. A heavy output layer leaves its
    stage far fewer layers than n / p (Qwen3-30B-A3B on 4 stages: 9 + 4.1 against 13)."""
    least = min(lo for lo, _, _ in kinds)
    shifts = {x for _, x, _ in kinds}
    mean = (n + sum(x * count for _, x, count in kinds)) / p
    most = math.ceil(n / p) + max(shifts)
    candidates = sorted(
        {
            k + x
            for x in shifts
            for k in range(max(least, math.floor(mean - x) - 1), math.floor(most - x) + 2)
        }
    )
    return next(
        t
        for t in candidates
        if all(t + _EPS >= lo + x for lo, x, _ in kinds)
        and sum(count * math.floor(t - x + _EPS) for _, x, count in kinds) >= n
    )


def least_slowest_stage_share(w: Workload, pipeline: int) -> float:
    """The least PipelineLayout.slowest_stage_share of ``pipeline`` stages at any depth, one
    chunk a stage's (a deeper layout only raises the layers each stage must hold), in time
    independent of the stages: the planner bounds every size by it before building its
    candidates. Under DualPipe 1, the mean: a rank's two stages average out."""
    if w.dualpipe:  # a rank's two stages average out below any one stage: bound at even
        return 1.0
    if len(w.stage_layers) == pipeline:  # the stated layout's, at every depth
        return pipeline_layout(w, pipeline).slowest_stage_share
    n, x_out = w.layers, output_layer_equivalents(w)
    slowest = _smallest_largest_load(n, pipeline, _stage_kinds(n, pipeline, 1, x_out))
    return slowest / ((n + x_out) / pipeline)


@lru_cache(maxsize=16384)
def pipeline_layout(w: Workload, pipeline: int, virtual_pipeline: int = 1) -> PipelineLayout:
    """The layout of ``w`` over ``pipeline`` stages of ``virtual_pipeline`` chunks each
    (every chunk holds at least one layer but the embedding's and the output layer's:
    virtual_pipeline <= deepest_layout_interleaving): the stated one (Workload.stage_layers),
    else the balanced one."""
    p, v, n = pipeline, virtual_pipeline, w.layers
    if w.stage_layers and len(w.stage_layers) != p:
        msg = f"the stated layout has {len(w.stage_layers)} stages, not pipeline {p}"
        raise ValueError(msg)
    if p < 1 or v < 1 or v > deepest_layout_interleaving(w, p):
        msg = f"{n} layers cannot fill pipeline x virtual_pipeline = {p} x {v} chunks"
        raise ValueError(msg)
    x_out = output_layer_equivalents(w)
    if w.stage_layers:
        stated = w.stage_layers
        return PipelineLayout(stated, v, x_out, _slowest_load(stated, x_out, w.dualpipe))
    kinds = _stage_kinds(n, p, v, x_out)
    target = _smallest_largest_load(n, p, kinds)
    held = [math.floor(target - x + _EPS) for _, x, _ in kinds]
    surplus = sum(k * count for k, (_, _, count) in zip(held, kinds, strict=True)) - n
    # The spare layers come off the first stage, then the last, then the middle ones in turn
    # (each down to its least: the target leaves every stage at least that).
    for i in range(min(2, p)):
        take = min(surplus, held[i] - kinds[i][0])
        held[i] -= take
        surplus -= take
    middle: list[int] = []
    if p > 2:
        k, spare = held[2], held[2] - v
        emptied, rest = divmod(surplus, spare) if surplus else (0, 0)
        middle = [k - spare] * emptied + [k - rest] * (1 if rest else 0)
        middle += [k] * (p - 2 - len(middle))
    ends = held[:2]  # the first and the last stage (one stage: itself)
    layers = [ends[0], *middle, ends[1]] if p > 1 else ends
    loads = [k + x for k, (_, x, _) in zip(ends, kinds, strict=False)]
    if middle:
        loads.append(float(max(middle)))
    if w.dualpipe and p > 1:
        return PipelineLayout(tuple(layers), v, x_out, _slowest_load(layers, x_out, True))
    return PipelineLayout(tuple(layers), v, x_out, max(loads))


def _slowest_load(layers: Sequence[int], x_out: float, dualpipe: bool) -> float:
    """The slowest stage's load, the output layer's on the last; the slowest DualPipe
    rank's when ``dualpipe``: rank r runs half the micro-batches through stage r and half
    through stage p - 1 - r, so its work is the two stages' mean (the output layer on the
    last stage pairs with the first stage's layers)."""
    p = len(layers)
    loads = [*layers[:-1], layers[-1] + x_out]
    if not dualpipe or p == 1:
        return max(loads)
    return max((loads[r] + loads[p - 1 - r]) / 2 for r in range(p // 2))


def layers_text(layers: Sequence[int]) -> str:
    """A layout as a person reads it: runs of more than four equal stages counted
    ("15, 6 x 16, 15"; "9, 9, 9, 9")."""
    runs = [(k, len(list(run))) for k, run in groupby(layers)]
    return ", ".join(
        f"{count} x {k}" if count > 4 else ", ".join([str(k)] * count) for k, count in runs
    )


def megatron_splits(w: Workload, pipeline: int) -> list[tuple[str, tuple[int, ...]]]:
    """The layouts Megatron-Core makes of ``w`` on ``pipeline`` stages without a layout of the
    user's: its default even split where the layers divide, and the split of
    account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split (the
    embedding and the loss each in a layer's place: (L + 2) / p a stage, one fewer on each
    end) where L + 2 divides (megatron/core/transformer/transformer_config.py)."""
    n, p = w.layers, pipeline
    splits: list[tuple[str, tuple[int, ...]]] = []
    if n % p == 0:
        splits.append(("the even split", (n // p,) * p))
    k = (n + 2) // p
    if p > 1 and (n + 2) % p == 0 and k > 1:
        splits.append(
            ("account_for_embedding/loss_in_pipeline_split", (k - 1, *(k,) * (p - 2), k - 1))
        )
    return splits


def layout_note(w: Workload, layout: PipelineLayout) -> str | None:
    """Where the estimate puts the layers when the request leaves it to the model (no
    Workload.stage_layers): a run gets that time only with the layout configured. Under
    Megatron-Core's 1F1B the note is left out where a split it makes by itself
    (megatron_splits) loads the slowest stage at most LAYOUT_NOTE_SHARE more, and otherwise
    names those splits' slowest stages; DeepSpeed's PipelineEngine and DualPipe lay the
    layers out as their user builds the stages, so the note says only what to build."""
    p, x_out = len(layout.layers), layout.output_layer_equivalents
    if w.stage_layers or p == 1:
        return None
    slowest = layout.slowest_stage_load
    megatron = w.framework == "megatron" and not w.dualpipe
    splits = [
        (name, split, _slowest_load(split, x_out, dualpipe=False))
        for name, split in (megatron_splits(w, p) if megatron else [])
    ]
    if splits and min(load for _, _, load in splits) < slowest * (1 + LAYOUT_NOTE_SHARE):
        return None
    how = (
        "Megatron-Core runs it with pipeline_model_parallel_layout (or num_layers_in_first/"
        "last_pipeline_stage where the middle stages are alike)"
        if megatron
        else "the stages must be built with these layers"
    )
    text = (
        f"pipeline layout: {layers_text(layout.layers)} layers on the {p} stages (the "
        f"response's parallelism.stage_layers), balanced beside the output layer's {x_out:.1f} "
        f"layer-equivalents on the last: the slowest {'rank' if w.dualpipe else 'stage'} "
        f"{slowest:.1f}; {how}"
    )
    if not megatron:
        return text
    if not splits:
        return (
            f"{text}. Megatron-Core makes neither an even split nor an account-for-embedding-"
            f"and-loss split of {w.layers} layers on {p} stages by itself"
        )
    others = "; ".join(
        f"{name} ({layers_text(split)}): {load:.1f} ({load / slowest - 1:+.0%})"
        for name, split, load in splits
    )
    return (
        f"{text}. What the stack lays out by itself loads its slowest stage more (layer-"
        f"equivalents, and the compute on the step's critical path): {others}; state "
        "parallelism.stage_layers to time the layout you run"
    )
