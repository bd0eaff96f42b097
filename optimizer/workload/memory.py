"""GPU memory per rank for a workload under a parallel plan.

Model states follow ZeRO (Rajbhandari et al., SC'20): mixed-precision Adam keeps 2 bytes of
bf16 weights, 2 of bf16 gradients and 12 of fp32 master weights, momentum and variance per
parameter (16 B/param); stage 1/2/3 shard the optimizer states / gradients / weights over the
data-parallel group. Activations follow Korthikanti et al. (2022, "Reducing Activation
Recomputation in Large Transformer Models", sec. 4), with sequence parallelism so every term is
divided by the tensor-parallel degree, generalised to grouped-query attention, gated FFNs and
top-k experts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from optimizer.performance.plan import ParallelPlan
from optimizer.workload.model import Workload
from optimizer.workload.pipeline_layout import pipeline_layout

WEIGHT_BYTES = 2.0
GRADIENT_BYTES = 2.0
# issue 14 (framework): DeepSpeed's ZeRO-3 gathers parameters module by module and releases
# them once more than stage3_max_live_parameters are resident (DeepSpeed configuration docs,
# "ZeRO optimizations": default 1e9), where FSDP gathers a whole unit (layer) at a time.
DEEPSPEED_MAX_LIVE_PARAMETERS = 1e9
LOGIT_BYTES = 2.0  # bf16 logits into a fused, vocabulary-parallel cross-entropy (Megatron-LM)


class MemoryBreakdown(NamedTuple):
    """A rank's memory by kind (a tuple: the planner builds two per candidate it checks)."""

    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float

    @property
    def total_gb(self) -> float:
        return self.weights_gb + self.gradients_gb + self.optimizer_gb + self.activations_gb


def memory_text(m: MemoryBreakdown, w: Workload) -> str:
    """A rank's memory and where it goes, the larger part first, for a refusal: the
    activations name the request fields that set them."""
    states_gb = m.weights_gb + m.gradients_gb + m.optimizer_gb
    activations = (
        f"activations {m.activations_gb:,.1f} GB (workload.sequence_length "
        f"{w.sequence_length:,}, activation_recompute {w.activation_recompute})"
    )
    states = (
        f"weights {m.weights_gb:,.1f}, gradients {m.gradients_gb:,.1f} and optimizer states "
        f"{m.optimizer_gb:,.1f} GB"
    )
    parts = (activations, states) if m.activations_gb >= states_gb else (states, activations)
    return f"{m.total_gb:,.1f} GB per GPU: {parts[0]}; {parts[1]}"


def activation_bytes_per_layer(
    w: Workload, micro_batch: int, tensor: int, context: int = 1
) -> float:
    """Bytes one layer stores for one micro-batch (Korthikanti et al. 2022, eq. 1-2).

    Per token: attention 2h (QKV input) + 2h (Q) + 4h*r (K, V) + 2h (AV output) + h (dropout
    mask) = (7 + 4r)h; FFN 2h input + (2 or 3) x 2f intermediates + h mask, times k experts
    (and once more at its width for a shared expert; a dense layer's at its width, as the
    layers' mean);
    2 layer norms 4h; without recomputation the softmax and its dropout add 5 a s bytes per
    token. Selective recomputation drops exactly that 5as term (and so does flash attention),
    and under MLA every head's Q, K and V (its up-projections are recomputed);
    full recomputation keeps only the layer input (2h). Without dropout (``w.dropout`` False:
    Llama, MPT, Mixtral) the two h masks and the softmax dropout's 3as are absent.
    """
    # issue 14 (context): context parallelism splits each sequence over ``context`` ranks.
    tokens_per_rank = micro_batch * w.sequence_length / (tensor * context)
    if w.activation_recompute == "full":
        return 2.0 * w.hidden_size * tokens_per_rank
    keeps_scores = w.activation_recompute == "none" and not w.flash_attention
    stored = materialised_bytes_per_token_layer(w, attention_matrix=keeps_scores)
    if w.recomputes_up_projections:  # every head's Q, K and V, recomputed from the latents
        stored -= 2 * w.qkv_width
    stored += kept_beside_bytes_per_token_layer(w)
    return stored * tokens_per_rank


def kept_beside_bytes_per_token_layer(w: Workload) -> float:
    """What one token's layer keeps for the backward beyond one copy of each tensor it writes
    at 2 bytes (materialised_bytes_per_token_layer), in bytes (negative: less).

    An MoE layer's router keeps its BF16 input, the norm's output (2h: Megatron-Core's
    TopKRouter, a linear whose weight gradient reads it), besides the k copies its experts
    take. In FP8, each linear layer keeps the FP8 copy of its input it multiplied, 1 byte,
    and not the 2-byte input (Transformer Engine's Linear, LayerNormLinear and GroupedLinear
    save the quantised input for the weight-gradient GEMM, its row-wise copy discarded;
    DeepSeek-V3 report, arXiv:2412.19437, sec. 3.3.3, caches FP8 activations likewise):
    the QKV projection's input h and the output projection's (the attention output), each
    FFN's input h and its second GEMM's input (the activation's output, its width). MLA's
    latents and the attention's Q, K and V stay in BF16 (the normalisation and the attention
    kernel read them), as do the FFN's first GEMM outputs (the activation's backward)."""
    h = w.hidden_size
    router = 2.0 * h * w.expert_layers / w.transformer_blocks if w.is_moe else 0.0
    if w.precision != "fp8":
        return router

    def ffn(width: int) -> float:
        """An FFN's two GEMM inputs, at 1 byte a value instead of 2; none at width 0."""
        return float(h + width) if width else 0.0

    return router - (h + w.value_width) - _blocks_ffns(w, ffn)


def _blocks_ffns(w: Workload, ffn: Callable[[int], float]) -> float:
    """``ffn`` (bytes of one FFN of a width) over a token's FFNs in a block: k routed
    experts' (and a shared expert's, at its width, for every token), or a dense layer's, the
    blocks' mean (an MTP module's block is an expert block)."""
    routed = w.experts_per_token * w.expert_token_share  # the copies the capacity leaves
    moe = routed * ffn(w.ffn_hidden_size) + ffn(w.shared_expert_ffn_hidden_size)
    return (
        w.expert_layers * moe + w.dense_layers * ffn(w.dense_ffn_hidden_size)
    ) / w.transformer_blocks


@lru_cache(maxsize=1024)
def materialised_bytes_per_token_layer(w: Workload, attention_matrix: bool) -> float:
    """Activation bytes one token creates in one layer (Korthikanti et al. 2022 sec. 4.1):
    what the forward writes to GPU memory, whether or not it is kept for the backward."""
    h = w.hidden_size
    # issue 14 (dropout): the 1-byte masks of the attention-output and FFN-output dropouts
    # (h each) and, with the score matrix kept, the softmax dropout's mask and output (3 of
    # the 5 a s bytes: softmax output 2, mask 1, dropout output 2) exist only with dropout.
    mask = 1.0 if w.dropout else 0.0

    def ffn(width: int) -> float:
        """An FFN's input, intermediates and dropout mask; none at width 0."""
        return (2 + mask) * h + (3 if w.gated_ffn else 2) * 2.0 * width if width else 0.0

    # The attention's input (2h), MLA's latents, Q, K and V (heads x their head widths, K and V
    # x kv_ratio), the attention output and its dropout mask: (7 + 4r)h for the usual heads.
    attention = 2 * (h + w.attention_latent_width + w.qkv_width + w.value_width) + mask * h
    per_token = attention + _blocks_ffns(w, ffn) + 4 * h
    if attention_matrix:
        per_token += (2.0 + 3.0 * mask) * w.attention_heads * w.sequence_length
    return per_token


def memory_per_gpu(w: Workload, plan: ParallelPlan) -> MemoryBreakdown:
    """Peak memory of the fullest pipeline stage (FamilyLoads.stages): the first (the most
    micro-batches in flight, the input embedding), the last (the output layer and its
    logits) or a middle one (an uneven layout gives it the layers the first spares).

    Not cached itself: the planner's candidate lists are, per workload and hardware."""
    family = FamilyLoads(w, *plan.family)
    stages = family.stages(plan.virtual_pipeline)
    return max(  # the first of equals
        (s.memory(plan.zero_stage, plan.reshard_after_forward) for s in stages),
        key=lambda m: m.total_gb,
    )


def in_flight_chunks(pipeline: int, virtual_pipeline: int, micro_batches: int, rank: int) -> int:
    """Micro-batch chunks whose activations pipeline rank ``rank`` holds at its peak.

    The warm-up forwards plus the one running (Megatron-LM core, pipeline_parallel/
    schedules.py): 1F1B runs p - rank - 1 warm-up micro-batches; the interleaved schedule
    2 (p - rank - 1) + (v - 1) p chunks, so rank 0 holds (v + 1) p - 1 chunks of L / (p v)
    layers, L (1 + (p - 1) / (p v)) layers (Korthikanti et al. 2022 sec. 4.2.3). Neither
    exceeds the chunks of the step (m v). At v = 1 both schedules agree only on the last
    rank; Megatron runs 1F1B there, and so does this count. Combined 1F1B holds as many
    (FamilyLoads._load: one layer more).
    """
    p, v, r = pipeline, virtual_pipeline, rank
    warmup = p - r - 1 if v == 1 else 2 * (p - r - 1) + (v - 1) * p
    return min(micro_batches * v, warmup + 1)


class StageLoad(NamedTuple):
    """What a pipeline rank holds whatever the ZeRO stage: its parameters (bytes per
    parameter aside) whole and sharded over the data-parallel ranks, one unsharded layer
    (FSDP gathers one at a time), its activation bytes and its optimizer states' bytes a
    parameter."""

    params: float
    sharded_params: float
    layer_params: float
    activations: float
    optimizer_bytes: float

    def states(self, zero_stage: int, reshard_after_forward: bool) -> tuple[float, float, float]:
        """Bytes of weights, gradients and optimizer states under ZeRO stage ``zero_stage``:
        1 shards the optimizer states, 2 also the gradients, 3 also the weights."""
        whole, sharded = self.params, self.sharded_params
        weights = WEIGHT_BYTES * (sharded if zero_stage >= 3 else whole)
        if zero_stage == 3:
            if reshard_after_forward:
                # FSDP gathers one layer (unit) at a time and prefetches the next (Zhao et
                # al., PyTorch FSDP, VLDB 2023, sec. 3.3): two unsharded layers at the peak.
                weights += 2 * WEIGHT_BYTES * self.layer_params
            else:  # gathered once per step and kept: the whole (t, p) shard at the peak
                weights = WEIGHT_BYTES * whole
        gradients = GRADIENT_BYTES * (sharded if zero_stage >= 2 else whole)
        return weights, gradients, self.optimizer_bytes * (sharded if zero_stage >= 1 else whole)

    def memory(self, zero_stage: int, reshard_after_forward: bool) -> MemoryBreakdown:
        weights, gradients, optimizer = self.states(zero_stage, reshard_after_forward)
        return MemoryBreakdown(
            weights / 1e9, gradients / 1e9, optimizer / 1e9, self.activations / 1e9
        )

    def total_gb(self, zero_stage: int, reshard_after_forward: bool) -> float:
        """``memory(...).total_gb`` without the breakdown (the planner asks it of every
        candidate), summed in the same order."""
        weights, gradients, optimizer = self.states(zero_stage, reshard_after_forward)
        return weights / 1e9 + gradients / 1e9 + optimizer / 1e9 + self.activations / 1e9


class FamilyLoads:
    """The stages' loads of one (tensor, pipeline, data, expert, micro-batch, context,
    expert tensor) at any interleaving depth: what no depth changes is worked out once, since
    the planner tries several depths of each family. The ZeRO stage is not read. The experts
    split over expert x expert_tensor ranks (0: the tensor degree; 1 folded,
    plan.ParallelPlan) and shard over the rest of the tensor x data x context GPUs."""

    __slots__ = (
        "act_layer",
        "end_params",
        "expert_split",
        "layer_dense",
        "layer_expert",
        "layer_params",
        "logits",
        "micro_batches",
        "p",
        "shard",
        "shard_expert",
        "t",
        "w",
    )

    def __init__(
        self, w: Workload, t: int, p: int, d: int, e: int, mb: int, cp: int, et: int = 0
    ) -> None:
        self.w, self.t, self.p = w, t, p
        et = et or t
        self.expert_split = et * e
        embedding = w.vocab_size * w.hidden_size
        blocks = w.transformer_blocks  # an MTP projection's weights spread over the blocks
        layer_dense = (w.parameters - w.expert_parameters - w.embedding_parameters) / blocks
        layer_expert = w.expert_parameters / blocks
        self.layer_dense, self.layer_expert = layer_dense, layer_expert
        # The embedding on the first stage, the output layer on the last: Megatron keeps a
        # copy of a tied output layer there.
        self.end_params = w.embedding_parameters if p == 1 else float(embedding)
        self.micro_batches = w.global_batch_size // (d * mb)
        self.act_layer = activation_bytes_per_layer(w, mb, t, cp)
        # the output layer's logits, once more per MTP module
        self.logits = (
            LOGIT_BYTES * mb * w.sequence_length * w.vocab_size / (t * cp) * (1 + w.mtp_layers)
        )
        # issue 14 (context): context ranks hold the same weights; ZeRO shards over data x
        # context (Megatron's distributed optimizer over the dp-cp group).
        self.shard, self.shard_expert = d * cp, t * d * cp // (et * e)
        self.layer_params = layer_dense / t + layer_expert / (et * e)
        if w.framework == "deepspeed":  # the two gathered units hold at most the live cap
            self.layer_params = min(self.layer_params, DEEPSPEED_MAX_LIVE_PARAMETERS / 2)

    def stages(self, v: int) -> tuple[StageLoad, ...]:
        """The loads at depth ``v`` of the ranks one of which is the fullest: the first, the
        last and, of the middle ranks holding each layer count, the lowest (ranks further on
        hold fewer micro-batches in flight: ``in_flight_chunks``)."""
        ranks, layers = fullest_candidates(self.w, self.p, v)
        return tuple(self._load(rank, k, v) for rank, k in zip(ranks, layers, strict=True))

    def stage(self, rank: int, v: int) -> StageLoad:
        """The load of pipeline rank ``rank`` at depth ``v``."""
        return self._load(rank, held_blocks(self.w, self.p, v)[rank], v)

    def _load(self, rank: int, layers: int, v: int) -> StageLoad:
        """The load of pipeline rank ``rank`` holding ``layers`` transformer blocks."""
        t, p = self.t, self.p
        dual = self.w.dualpipe
        # DualPipe: p + 1 chunks of one of its two stages (DeepSeek-V3 report Table 2), and
        # the end ranks hold both ends (stage 0 and stage p - 1)
        chunks = (p + 1) / 2 if dual else in_flight_chunks(p, v, self.micro_batches, rank)
        # Combined 1F1B warms up one chunk more and then runs each forward chunk beside a
        # backward chunk layer by layer (combined_1f1b.py; Megatron's schedule plan), one
        # layer's activations stored before the other's are freed: 1F1B's chunks and a layer
        activations = (chunks * layers / v + self.w.combined_1f1b) * self.act_layer
        if rank == p - 1 or (dual and rank == 0):
            activations += self.logits
        ends = (2 if dual else 1) * self.end_params if rank in (0, p - 1) else 0.0
        dense_params = (self.layer_dense * layers + ends) / t
        expert_params = self.layer_expert * layers / self.expert_split
        return StageLoad(
            params=dense_params + expert_params,
            sharded_params=dense_params / self.shard + expert_params / self.shard_expert,
            layer_params=self.layer_params,
            activations=activations,
            optimizer_bytes=self.w.optimizer_state_bytes_per_parameter,
        )


def held_blocks(w: Workload, p: int, v: int) -> tuple[int, ...]:
    """The transformer blocks each pipeline rank holds at depth ``v``: its decoder layers
    (pipeline_layout), and on the last the MTP modules' blocks; under DualPipe, rank r holds
    stages r and p - 1 - r."""
    layers = pipeline_layout(w, p, v).layers
    stages = (*layers[:-1], layers[-1] + w.mtp_layers)
    if w.dualpipe:
        return tuple(k + stages[p - 1 - r] for r, k in enumerate(stages))
    return stages


@lru_cache(maxsize=16384)
def fullest_candidates(w: Workload, p: int, v: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The pipeline ranks one of which is the fullest at depth ``v`` (FamilyLoads.stages), in
    order, and the blocks each holds."""
    layers = held_blocks(w, p, v)
    ranks = {0, p - 1}
    ranks.update(layers.index(k, 1) for k in set(layers[1:-1]))
    if w.dualpipe:  # rank p - 1 - r holds what rank r holds
        ranks = {min(r, p - 1 - r) for r in ranks}
    ordered = tuple(sorted(ranks))
    return ordered, tuple(layers[rank] for rank in ordered)


def peaks_gb(
    rows: Sequence[tuple[FamilyLoads, int]], forms: Sequence[tuple[int, bool]]
) -> npt.NDArray[np.float64]:
    """memory_per_gpu's total for each (family, depth) of ``rows`` under each (zero_stage,
    reshard_after_forward) of ``forms``, as a (forms, rows) array: the planner checks
    thousands of candidates per search, so FamilyLoads._load's arithmetic runs here on
    arrays of every row's stages (the same operations in the same order: the same floats),
    and StageLoad.total_gb on a StageLoad of arrays."""
    ranks: list[int] = []
    layers: list[int] = []
    starts: list[int] = []
    for f, depth in rows:
        starts.append(len(ranks))
        r, k = fullest_candidates(f.w, f.p, depth)
        ranks += r
        layers += k
    counts = np.diff(np.array([*starts, len(ranks)]))
    # Every row's family figures as one table repeated over its stages (small integers are
    # exact as floats, so the arithmetic gives FamilyLoads._load's floats).
    table = np.array(
        [
            (
                f.p,
                f.t,
                f.expert_split,
                depth,
                f.micro_batches,
                f.act_layer,
                f.logits,
                f.end_params,
                f.layer_dense,
                f.layer_expert,
                f.shard,
                f.shard_expert,
                f.layer_params,
                f.w.optimizer_state_bytes_per_parameter,
                f.w.dualpipe,
                f.w.combined_1f1b,
            )
            for f, depth in rows
        ],
        dtype=np.float64,
    )
    (p, t, expert_split, v, m, act_layer, logits, end_params, layer_dense, layer_expert, shard,
     shard_expert, layer_params, optimizer_bytes,
     dual, combined) = np.repeat(table, counts, axis=0).T  # fmt: skip
    rank, held = np.array(ranks, dtype=np.float64), np.array(layers, dtype=np.float64)
    last = rank == p - 1
    dual_end = (dual == 1) & (rank == 0)
    # in_flight_chunks (DualPipe: p + 1 of a stage; Combined 1F1B: a layer more;
    # FamilyLoads._load)
    warmup = np.where(v == 1, p - rank - 1, 2 * (p - rank - 1) + (v - 1) * p)
    chunks = np.where(dual == 1, (p + 1) / 2, np.minimum(m * v, warmup + 1))
    activations = (chunks * held / v + combined) * act_layer + np.where(
        last | dual_end, logits, 0.0
    )
    ends = np.where((rank == 0) | last, (dual + 1) * end_params, 0.0)
    dense_params = (layer_dense * held + ends) / t
    expert_params = layer_expert * held / expert_split
    load = StageLoad(
        params=dense_params + expert_params,
        sharded_params=dense_params / shard + expert_params / shard_expert,
        layer_params=layer_params,
        activations=activations,
        optimizer_bytes=optimizer_bytes,
    )
    totals = np.array([load.total_gb(z, reshard) for z, reshard in forms])
    peaks: npt.NDArray[np.float64] = np.maximum.reduceat(totals, starts, axis=1)
    return peaks
