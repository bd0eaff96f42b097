"""Compute time of a training step: shape-aware GEMM efficiency, attention, element-wise
passes, FP8 casts, MoE routing, the optimizer update and the strong-scaling loss.

A GEMM's speed depends on its shape, not only on the GPU (docs/performance-model.md sec. 4):

- Wave quantisation: cuBLAS/CUTLASS tile the M x N output (here 128 x 256 tiles, the H100
  BF16 default of CUTLASS 3) and run the tiles in waves of one tile per SM; a last, partly
  filled wave idles SMs. Efficiency = M N / (waves x SMs x tile area), tile padding included
  (NVIDIA, "Matrix Multiplication Background User's Guide", sec. "Wave quantization").
- Main-loop amortisation: every tile pays a fixed prologue and epilogue (loading the first
  K-slices, writing the accumulator back); K / (K + k0) with k0 fitted.
- Memory: a GEMM never runs faster than its bytes at HBM speed (a hard roofline, Williams
  et al. CACM 2009); a compute-bound GEMM is not derated.

The remaining large-GEMM efficiency (per generation), k0, attention's own efficiency, the
memory passes of the element-wise work, the per-step overhead and the straggler loss are
fitted together by least squares on the visible published runs, with the compute slow-down
under overlapped communication (``python -m benchmarks.estimator_accuracy``; calibration.py);
an FP8 GEMM's share of the BF16 efficiency is fitted apart, on the visible FP8 runs alone.
"""

from __future__ import annotations

import math
from functools import lru_cache

from optimizer.performance import calibration
from optimizer.performance.calibration import GpuGeneration, generation
from optimizer.workload.flops import (
    FLASH_BACKWARD_RECOMPUTE,
    FORWARD_BACKWARD_FACTOR,
    attention_recompute_passes,
    attention_score_flops_per_token_layer,
    causal_window_keys,
)
from optimizer.workload.memory import materialised_bytes_per_token_layer
from optimizer.workload.model import OPTIMIZER_MOMENTS, Projection, Workload

TILE_M, TILE_N = 128, 256  # output tile of one CTA (CUTLASS 3 default for H100 BF16 GEMMs)
GEMM_BYTES = 2.0  # bf16 operands and output

# Bytes an FP8 cast pass moves per element of a GEMM input (Transformer Engine's fused
# cast + transpose with the amax reduction folded in): read bf16 (2), write fp8 (1) and its
# transpose for the weight-gradient GEMM (1). Forward activations and backward gradients.
FP8_CAST_BYTES_PER_ELEMENT = 4.0

# MoE token permutation before the experts and unpermutation after (gather/scatter of k
# copies of each token's hidden vector), forward and backward: 4 passes, each a read and a
# write of bf16 (MegaBlocks, Gale et al., MLSys 2023, sec. 5; Megatron-Core MoE permute).
MOE_PERMUTE_PASSES = 4.0

# Adam's update touches, per parameter of the local shard: read fp32 master weight, fp32
# gradient, both moments (16 B); write master and moments (12 B) and the bf16 copy (2 B)
# (apex/PyTorch fused multi-tensor Adam). Memory-bound: HBM speed. With bf16 moments
# (Workload.optimizer_moments) each moment moves 2 B a read and a write less: 22 B.
OPTIMIZER_STEP_BYTES_PER_PARAMETER = 30.0


def split_k(m: float, n: float, k: float, sms: int, batch: float = 1.0) -> int:
    """K-slices a GEMM with fewer output tiles than SMs is split into (cuBLAS split-K: the
    slices fill the idle SMs and a reduction adds them), each slice at least one 256-deep
    main loop; 1 when the tiles already fill a wave."""
    tiles = batch * math.ceil(m / TILE_M) * math.ceil(n / TILE_N)
    if tiles >= sms:
        return 1
    return max(1, min(int(sms // tiles), int(k // 256)))


def wave_efficiency(m: float, n: float, sms: int, batch: float = 1.0, splits: int = 1) -> float:
    """Useful share of the SM-slots ``batch`` M x N outputs (each in ``splits`` K-slices)
    occupy: tile padding and the idle SMs of the last wave."""
    # A side thinner than the tile gets a thinner tile (cuBLAS picks among tile shapes;
    # multiples of 16, the tensor-core MMA granule), so a router's 8 columns are not padded
    # to 256.
    tile_m = min(TILE_M, 16 * math.ceil(m / 16))
    tile_n = min(TILE_N, 16 * math.ceil(n / 16))
    tiles = batch * math.ceil(m / tile_m) * math.ceil(n / tile_n) * splits
    waves = math.ceil(tiles / sms)
    return (batch * m * n * splits) / (waves * sms * tile_m * tile_n)


def gemm_seconds(
    m: float,
    n: float,
    k: float,
    peak_flops: float,
    hbm_bytes_per_s: float,
    sms: int,
    batch: float = 1.0,
) -> float:
    """Seconds of ``batch`` M x K by K x N GEMMs at large-GEMM efficiency 1 (the
    generation's kernel efficiency divides it later): wave quantisation (split-K when the
    tiles leave SMs idle; its partial sums are reduced through L2, as serial split-K and
    stream-K kernels do), main-loop amortisation of each K-slice, and never faster than their
    bytes at HBM speed."""
    k0 = calibration.COMPUTE.gemm_inner_overhead_elements
    splits = split_k(m, n, k, sms, batch)
    k_slice = k / splits
    eff = wave_efficiency(m, n, sms, batch, splits) * k_slice / (k_slice + k0)
    flops_s = 2.0 * batch * m * n * k / (peak_flops * eff)
    bytes_s = batch * GEMM_BYTES * (m * k + k * n + m * n) / hbm_bytes_per_s
    return max(flops_s, bytes_s)


def training_gemm_seconds(
    m: float,
    n: float,
    k: float,
    peak_flops: float,
    hbm_bytes_per_s: float,
    sms: int,
    batch: float = 1.0,
) -> float:
    """Forward (M x N output, inner K), input gradient (M x K, inner N) and weight gradient
    (K x N, inner M) GEMMs of one weight."""
    return (
        gemm_seconds(m, n, k, peak_flops, hbm_bytes_per_s, sms, batch)
        + gemm_seconds(m, k, n, peak_flops, hbm_bytes_per_s, sms, batch)
        + gemm_seconds(k, n, m, peak_flops, hbm_bytes_per_s, sms, batch)
    )


# Unfused attention's a x s score matrix per token moves through dedicated kernels, not the
# framework's generic element-wise operators (whose fitted passes scale the h-sized tensors):
# Megatron-LM's fused scale-mask-softmax reads the scores and writes the probabilities forward
# (2 + 2 bytes per element) and reads the probabilities and their gradient and writes the
# scores' gradient backward (2 + 2 + 2); a softmax dropout reads its input and writes its
# 1-byte mask and its output forward (2 + 1 + 2) and reads the gradient and the mask and
# writes the input's gradient backward (2 + 1 + 2) (megatron/fused_kernels,
# scaled_upper_triang_masked_softmax; the tensors as Korthikanti et al. 2022 sec. 4.1 count
# them). The QK^T and AV GEMMs' own reads and writes are in their roofline.
SOFTMAX_BYTES = (4.0, 6.0)  # forward, backward, per score element
SOFTMAX_DROPOUT_BYTES = (5.0, 5.0)


def _score_matrix_bytes_per_token(w: Workload) -> float:
    """HBM bytes the unfused softmax (and its dropout) move per token of a step, all layers:
    the forward again for each recomputed pass of the core attention."""
    if w.flash_attention:
        return 0.0
    forward, backward = SOFTMAX_BYTES
    if w.dropout:
        forward += SOFTMAX_DROPOUT_BYTES[0]
        backward += SOFTMAX_DROPOUT_BYTES[1]
    forwards = 1.0 + attention_recompute_passes(w)
    blocks = w.transformer_blocks
    return (forwards * forward + backward) * w.attention_heads * w.sequence_length * blocks


@lru_cache(maxsize=8192)
def compute_s_per_token(
    w: Workload,
    micro_batch: int,
    tensor: int,
    gpu_model: str,
    peak_tflops: float,
    peak_fp8_tflops: float | None,
    expert: int = 1,
    expert_tensor: int = 0,
) -> tuple[float, float]:
    """(tensor-core seconds at large-GEMM efficiency 1, element-wise seconds) per token of
    the step on one GPU's share (multiply by tokens per step / GPUs).

    GEMMs are timed per tensor-parallel rank at their shapes (M = micro_batch x s tokens,
    per expert for MoE, over the rank's sequence shard for MLA's down-projections; the split
    dimension / t; an expert's / ``expert_tensor``, 0: t; an MoE model's dense layers at
    their FFN's width), forward, input- and weight-gradient, plus one more forward under full
    recomputation (and MLA's up-projections under selective); the logits GEMM likewise. FP8
    runs put the layer GEMMs on the FP8 peak at a lower efficiency and pay cast passes; the
    logits and attention stay in BF16 (Transformer Engine keeps the output layer and
    attention in higher precision). Attention: fused flash kernels at the
    fitted attention efficiency; unfused, the batched QK^T and AV GEMMs of each head.
    Element-wise work is memory-bound.
    """
    gen = generation(gpu_model)
    sms, hbm = gen.sm_count, gen.hbm_tbytes_per_s * 1e12
    full = w.activation_recompute == "full"
    passes_gemm = 4.0 / 3.0 if full else 1.0  # the recomputed forward is one GEMM of three
    fp8 = w.precision == "fp8" and peak_fp8_tflops is not None
    peak_bf16 = 1e12 * peak_tflops
    peak_layer = (
        1e12 * peak_fp8_tflops * calibration.COMPUTE.fp8_gemm_efficiency_ratio
        if fp8 and peak_fp8_tflops
        else peak_bf16
    )
    m = micro_batch * w.sequence_length
    tokens_mb = float(m)
    h, t = w.hidden_size, tensor

    def seconds(shapes: list[tuple[float, float, float]]) -> float:
        return sum(training_gemm_seconds(a, b, c, peak_layer, hbm, sms) for a, b, c in shapes)

    def ffn(width: int, tokens: float, split: int) -> list[tuple[float, float, float]]:
        """FFN-in (and the gate) and FFN-out; none at width 0."""
        gates = 2 if w.gated_ffn else 1
        return [(tokens, gates * width / split, h), (tokens, h, width / split)] if width else []

    # The GEMMs of one layer, (M, N, K) per rank: the attention's projections, MLA's
    # up-projections once more forward under selective recomputation (a full recomputation's
    # second forward is passes_gemm's)
    up_passes = 4.0 / 3.0 if w.recomputes_up_projections else 1.0
    attention = [_projection_gemm(p, m, t) for p in w.attention_projections if not p.up]
    up = [_projection_gemm(p, m, t) for p in w.attention_projections if p.up]
    attention_layer_s = seconds(attention) + up_passes * seconds(up)
    if w.is_moe:
        # the router (not split) and a shared expert (every token, split like a dense FFN)
        dense = [(m, w.experts, h), *ffn(w.shared_expert_ffn_hidden_size, m, t)]
        # An expert rank serves the tokens of ``expert`` ranks' shards: a micro-batch each
        # gathered over the tensor group (expert_tensor t), or each tensor rank's sequence
        # shard, 1/t of it, folded (expert_tensor 1: plan.ParallelPlan).
        et = expert_tensor or t
        m_expert = m * w.experts_per_token * expert * et / (t * w.experts)
        experts_per_rank = w.experts / expert
        expert_s = experts_per_rank * seconds(ffn(w.ffn_hidden_size, m_expert, et))
        ffn_layer_s = expert_s * w.busiest_expert_load(expert) + seconds(dense)
    else:
        ffn_layer_s = seconds(ffn(w.ffn_hidden_size, m, t))
    dense_layer_s = seconds(ffn(w.dense_ffn_hidden_size, m, t))
    mtp_s = seconds([_projection_gemm(w.mtp_projection, m, t)])
    layers_s = (
        attention_layer_s * w.transformer_blocks
        + ffn_layer_s * w.expert_layers
        + dense_layer_s * w.dense_layers
        + mtp_s * w.mtp_layers
    )
    # the output head, once more per MTP module
    logits_s = training_gemm_seconds(m, w.vocab_size / t, h, peak_bf16, hbm, sms) * (
        1 + w.mtp_layers
    )
    # Seconds per micro-batch on one rank; per token of the rank's share = / (tokens / t).
    gemm_s = (passes_gemm * layers_s + logits_s) * t / tokens_mb

    attention_s = _attention_s_per_token(w, micro_batch, tensor, peak_bf16, gen)

    # issue 14 accuracy: the fitted passes cover forward and backward; a full recomputation
    # repeats the forward's share (1 of the 3 minimal passes).
    elementwise_passes = calibration.COMPUTE.elementwise_passes * (4.0 / 3.0 if full else 1.0)
    per_token = materialised_bytes_per_token_layer(w, attention_matrix=False)
    elementwise_bytes = (
        elementwise_passes * per_token * w.transformer_blocks + _score_matrix_bytes_per_token(w)
    )
    if fp8:
        elementwise_bytes += FP8_CAST_BYTES_PER_ELEMENT * _fp8_cast_elements_per_token(w, full)
    if w.is_moe:
        elementwise_bytes += (
            MOE_PERMUTE_PASSES
            * 2
            * GEMM_BYTES
            * w.experts_per_token
            * w.expert_token_share
            * h
            * w.expert_layers
        )
    return gemm_s + attention_s, elementwise_bytes / hbm


def _projection_gemm(p: Projection, tokens: int, tensor: int) -> tuple[float, float, float]:
    """(M, N, K) of an attention projection on one tensor rank: its output columns split, its
    input rows split, or whole over the rank's sequence shard (duplicated)."""
    if p.split == "column":
        return tokens, p.out_width / tensor, p.in_width
    if p.split == "row":
        return tokens, p.out_width, p.in_width / tensor
    return tokens / tensor, p.out_width, p.in_width


def attention_share(
    w: Workload,
    micro_batch: int,
    tensor: int,
    gpu_model: str,
    peak_tflops: float,
    peak_fp8_tflops: float | None,
    expert: int = 1,
    expert_tensor: int = 0,
) -> float:
    """Share of the tensor-core time of ``compute_s_per_token`` spent in attention scores
    (what hides ring attention's sends under context parallelism)."""
    gen = generation(gpu_model)
    total, _ = compute_s_per_token(
        w, micro_batch, tensor, gpu_model, peak_tflops, peak_fp8_tflops, expert, expert_tensor
    )
    attention = _attention_s_per_token(w, micro_batch, tensor, 1e12 * peak_tflops, gen)
    return attention / total if total > 0 else 0.0


# A flash kernel computes every key tile a query tile touches whole; only tiles wholly outside
# the mask or the window are skipped (FlashAttention-2, Dao 2023, sec. 3.1.1). 128 queries x
# 128 keys: FlashAttention-3's Hopper tile for head dims 65-128, causal or local
# (Dao-AILab/flash-attention, hopper/tile_size.h), a modelling value for every head dim (at 64
# a windowed kernel tiles 192 x 160, more keys still). The fitted attention efficiency is that of
# full causal layers, their diagonal tiles' waste included; a window of 128 computes about
# twice the keys it needs.
FLASH_TILE_QUERIES = 128
FLASH_TILE_KEYS = 128


@lru_cache(maxsize=256)
def flash_computed_keys(sequence: int, window: int) -> float:
    """Keys a flash kernel computes per query, on average, under a causal mask limited to
    the last ``window`` tokens (a window >= the sequence: the causal mask alone)."""
    total = 0
    for start in range(0, sequence, FLASH_TILE_QUERIES):
        end = min(start + FLASH_TILE_QUERIES, sequence)
        first_key = max(0, start - window + 1)
        tiles = (end - 1) // FLASH_TILE_KEYS - first_key // FLASH_TILE_KEYS + 1
        total += (end - start) * tiles * FLASH_TILE_KEYS
    return total / sequence


def sliding_window_note(w: Workload) -> str:
    """What a windowed workload's attention is timed at (the estimate's notes): never a window
    silently ignored."""
    s, window = w.sequence_length, w.sliding_window_tokens
    where = f"{w.windowed_layers} of {w.layers} layers attend to the last {window:,} tokens"
    if not w.flash_attention:
        return (
            f"sliding-window attention: {where}, but unfused attention (flash_attention false) "
            "computes the whole score matrix and masks it: timed as full attention"
        )
    return (
        f"sliding-window attention: {where}; their flash kernel computes "
        f"{flash_computed_keys(s, window):,.0f} keys a query in {FLASH_TILE_QUERIES} x "
        f"{FLASH_TILE_KEYS} tiles for the {causal_window_keys(s, window):,.0f} it needs "
        f"(a causal layer: {flash_computed_keys(s, s):,.0f})"
    )


def _flash_layers(w: Workload) -> float:
    """The blocks' flash-attention work in full causal layers: a windowed layer
    (``w.windowed_layers``) counts as the keys its kernel computes over those of a full
    causal layer (flash_computed_keys); an MTP block as a full one."""
    if not w.windowed_layers:
        return float(w.transformer_blocks)
    s = w.sequence_length
    share = flash_computed_keys(s, w.sliding_window_tokens) / flash_computed_keys(s, s)
    return w.transformer_blocks - w.windowed_layers + w.windowed_layers * share


# A fused kernel's backward, in forward passes: its two gradients' GEMMs and the scores it
# recomputes (attention_recompute_passes), the FlashAttention-3 figures' 2.5 x the forward.
_FLASH_BACKWARD_PASSES = FORWARD_BACKWARD_FACTOR - 1 + FLASH_BACKWARD_RECOMPUTE


def kernel_head_dim(w: Workload) -> float:
    """The head dim a fused kernel's speed is read at: the mean of the query/key and the value
    head widths, whose sum sets its work per score element (the published panels' heads are
    as wide in both; MLA's 192 and 128 in DeepSeek-V3: 160)."""
    return (w.query_width + w.value_width) / (2 * w.attention_heads)


def head_dim_time_factor(w: Workload, gen: GpuGeneration) -> float:
    """Fused attention's time at ``w``'s head dim (kernel_head_dim) over its time at 128, the
    head dim its fitted speed is of (calibration.HEAD_DIM_SPEEDS): its forward passes (a full
    recomputation's too) at the forward's published ratio under its mask (causal or an
    encoder's none), its backward at the backward's."""
    kernel_class = calibration.head_dim_class(gen, w.attention_kernel)
    if kernel_class is None:
        return 1.0
    passes = FORWARD_BACKWARD_FACTOR + attention_recompute_passes(w)
    return calibration.head_dim_time_factor(
        kernel_class, kernel_head_dim(w), (passes - _FLASH_BACKWARD_PASSES) / passes, w.causal
    )


def _attention_s_per_token(
    w: Workload, micro_batch: int, tensor: int, peak_bf16: float, gen: GpuGeneration
) -> float:
    """Attention-score seconds per token (QK^T and AV: forward, backward, and what is
    recomputed: ``attention_recompute_passes``).

    Fused (flash attention): its FLOPs at ``gen``'s fitted attention efficiency for the
    workload's kernel, a windowed layer's at the keys its kernel computes (_flash_layers).
    Unfused: the batched GEMMs of the rank's heads, QK^T (s x s output, inner the query/key
    head width) and AV (s x the value head width output, inner s), each at its own shape,
    whatever the window."""
    passes = FORWARD_BACKWARD_FACTOR + attention_recompute_passes(w)
    if w.flash_attention:
        flops = passes * attention_score_flops_per_token_layer(w) * _flash_layers(w)
        speed = peak_bf16 * calibration.attention_efficiency(gen, w.attention_kernel)
        return flops * head_dim_time_factor(w, gen) / speed
    s = w.sequence_length
    hbm, sms = gen.hbm_tbytes_per_s * 1e12, gen.sm_count
    query_dim = w.query_width / w.attention_heads
    value_dim = w.value_width / w.attention_heads
    heads = micro_batch * w.attention_heads / tensor  # one rank's batch of heads
    per_mb = training_gemm_seconds(
        s, s, query_dim, peak_bf16, hbm, sms, heads
    ) + training_gemm_seconds(s, value_dim, s, peak_bf16, hbm, sms, heads)
    # Per micro-batch on one rank, all layers; per token of the rank's share = x t / tokens.
    return passes / 3.0 * per_mb * w.transformer_blocks * tensor / (micro_batch * s)


def _fp8_cast_elements_per_token(w: Workload, full: bool) -> float:
    """Elements of GEMM inputs cast to FP8 per token (all layers): the activations entering
    the attention's projections (QKV and the attention output; MLA's down- and
    up-projections), FFN-in and FFN-out (of each routed expert and the shared one; a dense
    layer's) in the forward (again when recomputed), and the output gradients entering their
    backward GEMMs."""
    h, gates = w.hidden_size, 2 if w.gated_ffn else 1

    def ffn(width: int) -> tuple[int, int]:
        """(forward, backward) elements of an FFN of ``width``; none at width 0."""
        return (h + width, gates * width + h) if width else (0, 0)

    projections = w.attention_projections
    routed = ffn(w.ffn_hidden_size)
    shared = ffn(w.shared_expert_ffn_hidden_size)
    dense = ffn(w.dense_ffn_hidden_size)
    k = w.experts_per_token
    blocks, mtp = w.transformer_blocks, w.mtp_layers
    forward = (
        sum(p.in_width for p in projections) * blocks
        + (k * routed[0] + shared[0]) * w.expert_layers
        + dense[0] * w.dense_layers
        + w.mtp_projection.in_width * mtp
    )
    backward = (
        sum(p.out_width for p in projections) * blocks
        + (k * routed[1] + shared[1]) * w.expert_layers
        + dense[1] * w.dense_layers
        + w.mtp_projection.out_width * mtp
    )
    return (2 if full else 1) * forward + backward


def optimizer_step_bytes(
    w: Workload,
    tensor: int,
    pipeline: int,
    data: int,
    expert: int,
    context: int,
    sharded: bool,
    expert_tensor: int = 0,
) -> float:
    """The HBM bytes of Adam's update on one GPU (the same on every GPU model; at HBM speed
    it is the optimizer step): the local parameters (/ t p), the experts split over expert x
    ``expert_tensor`` ranks (0: the tensor degree), sharded over the data and context ranks
    when ``sharded`` (ZeRO >= 1, as memory.FamilyLoads), for each stage a rank holds
    (Workload.stages_per_rank). Degrees, not a plan: the planner prices candidate lists of
    degrees (plan.Degrees)."""
    et = expert_tensor or tensor
    dense = (w.parameters - w.expert_parameters) / (tensor * pipeline)
    experts = w.expert_parameters / (et * pipeline * expert)
    if sharded:
        replicas = data * context
        dense /= replicas
        experts /= max(1, tensor * replicas // (et * expert))
    narrower_moments = 2 * 2 * (OPTIMIZER_MOMENTS["fp32"] - w.adam_moment_bytes)
    per_parameter = OPTIMIZER_STEP_BYTES_PER_PARAMETER - narrower_moments
    return (dense + experts) * per_parameter * w.stages_per_rank  # DualPipe: both stages


def straggler_fraction(data_parallel: int) -> float:
    """Share of compute lost waiting for the slowest of ``data_parallel`` replicas each step:
    grows with log2 of the group (the maximum of many ranks' jitter; Llama 3 paper sec.
    3.3.4, MegaScale NSDI 2024 sec. 6), fitted per doubling."""
    return calibration.COMPUTE.straggler_per_doubling * math.log2(max(1, data_parallel))


def pipeline_engine_slowdown(w: Workload, pipeline: int) -> float:
    """Factor on a pipelined stage's compute under DeepSpeed's PipelineEngine (1 otherwise).

    The engine interprets its 1F1B schedule one instruction at a time, and each send and
    receive is a blocking collective of the two neighbouring stages, so the stages run in
    lock-step: every micro-batch waits for the slower neighbour and for the host. On the
    same Selene nodes and the same 530B shape, MT-NLG's engine reached 126 TFLOP/s per GPU
    where Megatron-LM's reached 159-163 (Smith et al. 2022 sec. 2.4; Narayanan et al. SC'21
    Tables 1-2). The share is fitted on the visible DeepSpeed-pipeline runs
    (benchmarks/estimator_accuracy.py, calibration.ComputeConstants)."""
    if w.framework != "deepspeed" or pipeline == 1:
        return 1.0
    return 1.0 / calibration.COMPUTE.deepspeed_pipeline_efficiency


def timed_tokens_per_gpu(
    w: Workload, gpus: int, pipeline: int, slowest_stage_share: float
) -> float:
    """Tokens whose compute one GPU's step takes: its share of the step's tokens at the pace
    of the slowest pipeline stage (pipeline_layout), stretched by the pipeline engine."""
    return w.tokens_per_step / gpus * slowest_stage_share * pipeline_engine_slowdown(w, pipeline)


def clear_caches() -> None:
    """Forget every cached result that depends on the fitted constants (the fit's loop)."""
    compute_s_per_token.cache_clear()
