"""Calibrated constants: the large-GEMM kernel efficiency per GPU generation, the shared
coefficients of the shape-aware compute model (compute.py), and NVLink.

Kernel efficiency is the fraction of dense peak that a large, wave-filling GEMM achieves;
compute.py derates it for each GEMM's shape and adds attention, element-wise work, the
optimizer step, a per-step overhead and a straggler loss. The fitted block below is written
by ``python -m benchmarks.estimator_accuracy --fit --write`` (least squares on every visible
published run; docs/performance-model.md sec. 7). The low/high bounds of a fitted generation
are the narrowest whose pessimistic and optimistic training times hold the measured time of
every run it was fitted on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, eq=False)  # identity hash: generations key the estimator's scenario cache
class GpuGeneration:
    name: str
    kernel_efficiency_low: float
    kernel_efficiency: float
    kernel_efficiency_high: float
    hbm_tbytes_per_s: float
    source: str
    # False: no published training run of this GPU is fitted here, so the efficiency is a
    # guess (its source says UNVERIFIED) and its range is wider than a fitted generation's.
    fitted: bool = True
    # Streaming multiprocessors (AMD: compute units): the wave size of a GEMM (compute.py).
    sm_count: int = 132
    # Flash attention relative to this generation's large-GEMM efficiency where fitted on its
    # own runs (A100: benchmarks/estimator_accuracy._attention_fit); None: the shared
    # COMPUTE.attention_efficiency, fitted on H100's.
    attention_efficiency: float | None = None
    # The fastest published flash-attention speed on this GPU as a share of its dense BF16
    # peak (the optimistic scenario's attention); None: H100's, FLASH_ATTENTION_BEST_SHARE_OF_PEAK.
    attention_best_share: float | None = None
    # Compute capability 9.0 or later (Hopper, Blackwell): where Transformer Engine runs
    # cuDNN's fused attention and CUDNN_ATTENTION_SPEEDUP holds.
    cudnn_attention: bool = False
    # Fused attention's speed-up from faster exponentials (softmax's, on the special function
    # units) over the generation it is written against: BLACKWELL_ULTRA_ATTENTION_SPEEDUP.
    exponential_speedup: float = 1.0

    @property
    def attention(self) -> float:
        """Flash attention's speed relative to this generation's large GEMMs."""
        fitted = self.attention_efficiency or COMPUTE.attention_efficiency
        return fitted * self.exponential_speedup

    @property
    def best_attention_share(self) -> float:
        """The fastest published flash attention on this GPU, as a share of its peak."""
        share = self.attention_best_share or FLASH_ATTENTION_BEST_SHARE_OF_PEAK
        return share * self.exponential_speedup

    def efficiency(self, scenario: str) -> float:
        return {
            "expected": self.kernel_efficiency,
            "optimistic": self.kernel_efficiency_high,
            "pessimistic": self.kernel_efficiency_low,
        }[scenario]


_A100_SOURCE = "fitted to Megatron-LM SC'21 Table 1 and Table 2 (A100, 32-3072 GPUs)"
_H100_SOURCE = "fitted to MosaicML llm-foundry H100 BF16 multi-node rows (16-512 GPUs)"
# Issue 16 generations. No published training throughput of these GPUs is fitted here:
# MLPerf Training publishes time-to-train only (Llama 2 70B LoRA, Llama 3.1 405B), without
# the token count needed to turn it into TFLOP/s; NVIDIA's Megatron-Bridge tables publish
# tokens/s on B200, GB200 and GB300, never-fitted checks in data/unseen-runs.json, on a newer
# stack than the H100 fit's (docs/performance-model.md, "New hardware"). Each is therefore
# UNVERIFIED with a range wider than the fitted A100/H100 ranges.
_B300_SOURCE = (
    "no published run here: B200 value (same dense BF16/FP8 peak per GPU, HGX B300 spec), "
    "range widened both ways (new part, FP4-first software), UNVERIFIED"
)
_GB200_SOURCE = "no published run here: B200 value (the same B200 GPU in an NVL72 rack), UNVERIFIED"
_MI300X_SOURCE = (
    "no published run here: H100 value lowered (less mature ROCm kernels), range widened, "
    "UNVERIFIED; AMD's MLPerf Training v5.0 Llama 2 70B LoRA result is a time-to-train only"
)
_MI325X_SOURCE = (
    "no published run here: MI300X value (same CDNA3 compute die, faster HBM3E; AMD MI325X "
    "platform docs), UNVERIFIED"
)
_MI355X_SOURCE = (
    "no published run here: MI300X value for a new CDNA4 die and ROCm 7 kernels, range "
    "widened further, UNVERIFIED"
)


@dataclass(frozen=True)
class ComputeConstants:
    """The shared coefficients of the shape-aware compute model (compute.py, docs sec. 7)."""

    # Inner GEMM dimension at which a tile's main loop reaches half its speed: each output
    # tile pays a fixed prologue/epilogue (loads, the accumulator's write-back) worth this
    # many elements of K, so efficiency = K / (K + this).
    gemm_inner_overhead_elements: float
    # Attention (fused flash kernels) relative to the large-GEMM efficiency of the generation.
    attention_efficiency: float
    # Strong-scaling loss: compute seconds lost per doubling of the data-parallel group (every
    # step waits for the slowest replica; Llama 3 paper sec. 3.3.4, MegaScale NSDI 2024 sec. 6).
    straggler_per_doubling: float
    # Fixed seconds per optimizer step: data loading, logging, the step's synchronisation.
    step_overhead_s: float
    # issue 14 accuracy: memory passes over each activation byte a layer materialises, forward
    # and backward (compute.py). The fused minimum is ELEMENTWISE_PASSES; eager frameworks
    # run norms, activations, residual adds, dtype casts and layout copies as separate kernels
    # that each read and write the tensor again (Ivanov et al., "Data Movement Is All You
    # Need", MLSys 2021: training is memory-bound in these operators, a negligible share of
    # the FLOPs; fusing them cuts data movement by up to 22.91 % and speeds BERT up 1.30x
    # over PyTorch). Their bytes grow with h, the GEMMs' FLOPs with h^2: what makes small
    # models slower per FLOP than large ones.
    elementwise_passes: float = 3.0
    # issue 14 accuracy: share by which compute slows while a collective overlaps it (NCCL
    # kernels hold SMs and HBM bandwidth; estimator.overlapped_s). Measured on A100, H100,
    # MI250 and MI210 with GPT and Llama layers: 18.9 % on average, up to 40 %
    # ("Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep
    # Learning", arXiv:2507.03114, 2025); an all-gather's 24 blocks beside a one-wave H100
    # GEMM push it into a second wave (wave quantisation, compute.py). Fitted in that range.
    overlap_compute_slowdown: float = 0.10
    # issue 14 (framework): a pipelined stage's compute speed under DeepSpeed's PipelineEngine
    # relative to Megatron-LM's schedules (compute.pipeline_engine_slowdown). Fitted apart from
    # the rest on the visible DeepSpeed-pipeline runs (BLOOM, GPT-NeoX, MT-NLG), which the
    # other constants are not fitted on: benchmarks/estimator_accuracy.py.
    deepspeed_pipeline_efficiency: float = 1.0
    # issue 14 (attention kernel): the FlashAttention-2-class kernels' speed over the Triton
    # kernel that sets attention_efficiency (MPT's, with ALiBi; workload.ATTENTION_KERNELS).
    # Fitted apart from the rest on the visible runs of those kernels (Llama 3's), which the
    # other constants are not fitted on: benchmarks/estimator_accuracy.py. FlashAttention-2
    # reports 1.3-2.5x over FlashAttention in Triton on A100 (Dao, arXiv:2307.08691, sec. 4.1).
    flash_kernel_speedup: float = 1.0
    # issue 14 (FP8): an FP8 layer GEMM's efficiency on the FP8 peak over a BF16 GEMM's on
    # the BF16 peak (compute.compute_s_per_token): 1 would be the whole 2x of the peaks. Fitted
    # apart from the rest on the visible FP8 runs (MosaicML llm-foundry's H100 FP8 table),
    # which the other constants are not fitted on: benchmarks/estimator_accuracy.py. Without
    # such runs, NVIDIA NeMo's 1.3-1.5x end-to-end FP8/BF16 speed-ups on H100 (GPT-3 175B,
    # Llama 2/3; "Faster Training Throughput in FP8 Precision with NVIDIA NeMo", NVIDIA
    # technical blog 2025) put it at 0.80.
    fp8_gemm_efficiency_ratio: float = 0.80


# --- fitted block: written from `python -m benchmarks.estimator_accuracy --fit` -------------
# (kernel_efficiency = large-GEMM efficiency of the generation; low/high = the narrowest
# range whose training times hold every fitted run's measured time.) Do not edit by hand:
# tests/test_compute_fit.py re-runs the fit and compares.
A100_KERNEL_EFFICIENCY = (0.59, 0.666, 0.744)
H100_KERNEL_EFFICIENCY = (0.53, 0.682, 0.732)
A100_ATTENTION_EFFICIENCY = 0.411
COMPUTE = ComputeConstants(
    gemm_inner_overhead_elements=72.0,
    attention_efficiency=0.267,
    straggler_per_doubling=0.0032,
    step_overhead_s=0.02,
    elementwise_passes=10.5,
    overlap_compute_slowdown=0.4,
    deepspeed_pipeline_efficiency=0.848,
    flash_kernel_speedup=1.278,
    fp8_gemm_efficiency_ratio=0.886,
)
# --- end of fitted block ----------------------------------------------------------------


# Each bound of an unfitted generation lies at least this factor beyond the widest fitted
# generation's, relative to the expected value: a guess is never narrower than a fit.
UNFITTED_MARGIN = 1.05


def _like_h100(low: float, expected: float, high: float) -> tuple[float, float, float]:
    """An unfitted generation's guess, written against H100's end-to-end efficiency of 0.55
    (issue 16), rescaled so it keeps its ratio to the fitted H100 value, and each bound moved
    out until it lies UNFITTED_MARGIN beyond the fitted generations' widest on its side. Per
    side, not by the high/low ratio: widened symmetrically, H200's low ended above H100's."""
    scale = H100_KERNEL_EFFICIENCY[1] / 0.55
    fitted = (A100_KERNEL_EFFICIENCY, H100_KERNEL_EFFICIENCY)
    low_share = min(min(lo / e for lo, e, _ in fitted) / UNFITTED_MARGIN, low / expected)
    high_share = max(max(hi / e for _, e, hi in fitted) * UNFITTED_MARGIN, high / expected)
    return low_share * expected * scale, expected * scale, high_share * expected * scale


def attention_speedup_from_exponentials(
    forward_speedup: float, exponential_speedup: float, forward_gemms: int, backward_gemms: int
) -> float:
    """A fused attention's forward and backward speed-up from exponentials ``exponential_
    speedup`` x faster, given its forward's measured ``forward_speedup``: each pass runs its
    GEMMs (of equal size) and then its exponentials (a kernel pipelines them, but the one
    waits for the other: the softmax bottleneck), and the backward recomputes the forward's
    exponentials (P = exp(S - LSE)) beside its own GEMMs. With G forward GEMMs the forward's
    exponentials take x GEMMs' time, (G + x) / (G + x / e) = r, and the backward's B GEMMs
    dilute them more."""
    r, e, g, b = forward_speedup, exponential_speedup, forward_gemms, backward_gemms
    x = g * (r - 1.0) / (1.0 - r / e)
    return (g + b + 2.0 * x) / (g + b + 2.0 * x / e)


# Blackwell Ultra (B300, GB300) doubles its special function units' exponential throughput
# (MUFU.EX2) over Blackwell, and NVIDIA measures DeepSeek-V3's attention forward in FP8 ~35 %
# faster on GB300 than on GB200 ("Making Softmax More Efficient with NVIDIA Blackwell Ultra",
# NVIDIA technical blog, 2026). FlashAttention's forward runs 2 GEMMs (S = QK^T, PV) and its
# backward 5 (S again, dV, dP, dQ, dK; Dao, "FlashAttention-2", arXiv:2307.08691, Algorithm
# 2): the forward and backward together, 1.23x. Not fitted: the tables' B300 rows are
# never-fitted checks (docs/performance-model.md, "New hardware").
BLACKWELL_ULTRA_ATTENTION_SPEEDUP = attention_speedup_from_exponentials(1.35, 2.0, 2, 5)


# FlashAttention-2 reaches 50-73 % of A100's peak (Dao, arXiv:2307.08691, abstract): the
# lower end, as the forward and backward together run slower than the forward alone. Of
# H100's peak it reaches a third (FLASH_ATTENTION_BEST_SHARE_OF_PEAK below): none of
# Hopper's new instructions.
A100_FLASH_ATTENTION_BEST_SHARE_OF_PEAK = 0.50

GENERATIONS: dict[str, GpuGeneration] = {
    g.name: g
    for g in (
        GpuGeneration(
            "A100",
            *A100_KERNEL_EFFICIENCY,
            2.039,
            _A100_SOURCE,
            sm_count=108,
            attention_efficiency=A100_ATTENTION_EFFICIENCY,
            attention_best_share=A100_FLASH_ATTENTION_BEST_SHARE_OF_PEAK,
        ),
        GpuGeneration(
            "H100", *H100_KERNEL_EFFICIENCY, 3.35, _H100_SOURCE, sm_count=132, cudnn_attention=True
        ),
        GpuGeneration(
            "H200",
            *_like_h100(0.48, 0.55, 0.64),
            4.8,
            "no published run here: H100 value (same compute die)",
            fitted=False,
            sm_count=132,
            cudnn_attention=True,
        ),
        GpuGeneration(
            "B200",
            *_like_h100(0.40, 0.55, 0.64),
            8.0,
            "no published run here: H100 value, low bound widened (newer software stack)",
            fitted=False,
            sm_count=148,
            cudnn_attention=True,
        ),
        GpuGeneration(
            "B300",
            *_like_h100(0.38, 0.55, 0.66),
            8.0,
            _B300_SOURCE,
            fitted=False,
            sm_count=160,
            cudnn_attention=True,
            exponential_speedup=BLACKWELL_ULTRA_ATTENTION_SPEEDUP,
        ),
        # NVL72 racks: the same GPUs as HGX B200/B300 (gpus.csv; catalogs/gen-2026 sources).
        # Their gain is the 72-GPU NVLink domain, which the estimator models as bandwidth, not
        # as kernel efficiency. "GB200" must win over "B200" in generation(): longest name.
        GpuGeneration(
            "GB200",
            *_like_h100(0.40, 0.55, 0.64),
            8.0,
            _GB200_SOURCE,
            fitted=False,
            sm_count=148,
            cudnn_attention=True,
        ),
        GpuGeneration(
            "GB300",
            *_like_h100(0.38, 0.55, 0.66),
            8.0,
            _B300_SOURCE,
            fitted=False,
            sm_count=160,
            cudnn_attention=True,
            exponential_speedup=BLACKWELL_ULTRA_ATTENTION_SPEEDUP,
        ),
        GpuGeneration(
            "MI300X", *_like_h100(0.33, 0.45, 0.58), 5.3, _MI300X_SOURCE, fitted=False, sm_count=304
        ),
        GpuGeneration(
            "MI325X", *_like_h100(0.33, 0.45, 0.58), 6.0, _MI325X_SOURCE, fitted=False, sm_count=304
        ),
        GpuGeneration(
            "MI355X", *_like_h100(0.30, 0.45, 0.60), 8.0, _MI355X_SOURCE, fitted=False, sm_count=256
        ),
        GpuGeneration(
            "default",
            *_like_h100(0.40, 0.55, 0.64),
            3.35,
            "unknown GPU: H100 value with a wider low bound",
            fitted=False,
        ),
    )
}

# Flash attention's optimistic speed (issue 14, the range). The fitted attention efficiency is
# one kernel's: the llm-foundry H100 sweeps (MPT's), 18 % of the H100 peak. Published kernels
# run faster: FlashAttention-2 reaches 335 TFLOP/s forward + backward on H100 SXM (989 peak),
# head dimension 128, under the FLOP count the model uses (causal halved, backward 2.5 x the
# forward; Dao, "FlashAttention-2", arXiv:2307.08691, 2023, sec. 4.1 and Fig. 7), without
# Hopper's TMA or its fourth-generation tensor-core instructions. Llama 3 405B's 131K-token run
# needs attention near that speed (docs/performance-model.md sec. 7, "The optimistic attention").
# The optimistic scenario times flash attention at this share of the dense BF16 peak where
# that is faster than the fitted kernel; the expected and pessimistic ones keep the fit.
FLASH_ATTENTION_BEST_SHARE_OF_PEAK = 335.0 / 989.0


# cuDNN's fused attention over FlashAttention-2 on H100 SXM5, BF16, head dim 128, 2K-16K
# tokens: the geometric mean of its eight published speed ratios, causal forward and backward,
# each 1.59-1.63 (Shah et al., "FlashAttention-3", arXiv:2407.08608, figs. 5-6; the figures in
# data/attention-kernel-speeds.csv, checked by tests/test_attention_kernel.py). Transformer
# Engine picks it over FlashAttention on compute capability 9.0 and later ("Disabling
# FlashAttention to give FusedAttention preference on Hopper+ for performance reasons", its
# get_attention_backend). Not fitted: no visible run states it.
CUDNN_ATTENTION_SPEEDUP = 1.61


def kernel_speedup(gen: GpuGeneration, kernel: str) -> float:
    """``kernel``'s attention speed over the FlashAttention-2 class on ``gen``: cuDNN's
    published gain where Transformer Engine runs it (``gen.cudnn_attention``); elsewhere no
    source times it, and it is the FlashAttention-2 class's (the estimate's notes say so)."""
    return CUDNN_ATTENTION_SPEEDUP if kernel == "cudnn" and gen.cudnn_attention else 1.0


# Fused attention's speed at head dims below 128, over its speed at 128 (the head dim of every
# fitted and published speed above): (head dim, causal forward, bidirectional forward,
# backward) for the FlashAttention-2 class and for cuDNN, each the geometric mean of the
# published ratios at 2K-16K tokens on H100 SXM5 (Shah et al., "FlashAttention-3",
# arXiv:2407.08608: fig. 5's causal and non-causal forward panels and fig. 6's backward panels
# of head dims 64 and 128; the figures in data/attention-kernel-speeds.csv, checked by
# tests/test_attention_head_dim.py). A narrow head does less work per score element the kernel
# loads and exponentiates: at 64, cuDNN's forward runs at 71 % of its speed at 128 under a
# causal mask and at 67 % without one (an encoder's), and every kernel of the figures is
# slower there. The backward is published without a mask only; a causal one takes its ratio.
# Above 128 they disagree (FlashAttention-2 and cuDNN slower at 256, FlashAttention-3 faster:
# 642 against 616 TFLOP/s causal forward at 16K; no backward is published at 256): a wider
# head keeps 128's speed. Measured on H100; no source times the head dims on other GPUs, so
# every generation takes these ratios.
HEAD_DIM_SPEEDS: dict[
    str, tuple[tuple[int, float, float, float], tuple[int, float, float, float]]
] = {
    "flash": ((64, 0.887, 0.8742, 0.9034), (128, 1.0, 1.0, 1.0)),
    "cudnn": ((64, 0.7067, 0.6724, 0.8395), (128, 1.0, 1.0, 1.0)),
}


@lru_cache(maxsize=256)
def head_dim_time_factor(
    kernel_class: str, head_dim: float, forward_share: float, causal: bool
) -> float:
    """Fused attention's time at ``head_dim`` over its time at 128 under ``kernel_class``
    (HEAD_DIM_SPEEDS: "cudnn" or the FlashAttention-2 class, "flash"), when ``forward_share``
    of its FLOPs are forward passes, under a ``causal`` mask or none: the speeds interpolated
    in log2 of the head dim between the published ones; below them the narrowest one's, above
    them 128's."""
    low, high = HEAD_DIM_SPEEDS[kernel_class]
    forward_at = 1 if causal else 2
    (h0, f0, b0), (h1, f1, b1) = ((row[0], row[forward_at], row[3]) for row in (low, high))
    a = math.log2(min(max(head_dim, h0), h1) / h0) / math.log2(h1 / h0)
    forward, backward = f0 + a * (f1 - f0), b0 + a * (b1 - b0)
    return forward_share / forward + (1.0 - forward_share) / backward


def head_dim_class(gen: GpuGeneration, kernel: str) -> str | None:
    """Whose head-dim speeds ``kernel`` takes on ``gen`` (HEAD_DIM_SPEEDS): cuDNN's where its
    gain applies (kernel_speedup), else the FlashAttention-2 class's; None for the Triton
    kernel, timed alike at every head dim. Fig. 5's Triton kernel runs the causal forward at
    head dim 64 as fast as at 128 (342-376 against 323-378 TFLOP/s at 2K-16K tokens), and the
    llm-foundry A100 sweeps of MPT-125M and -350M (head dim 64, Triton) come out 7-8 points
    slower at long sequences under the FlashAttention-2 class's ratios."""
    if kernel == "triton":
        return None
    return "cudnn" if kernel_speedup(gen, kernel) > 1.0 else "flash"


def attention_efficiency(gen: GpuGeneration, kernel: str) -> float:
    """Fused attention's speed relative to ``gen``'s large GEMMs under ``kernel``
    (workload.ATTENTION_KERNELS): the fitted Triton kernel's; the FlashAttention-2-class
    kernels' fitted speed-up over it; cuDNN's published gain over those (kernel_speedup)."""
    if kernel == "triton":
        return gen.attention
    return gen.attention * COMPUTE.flash_kernel_speedup * kernel_speedup(gen, kernel)


def published_best_share(gen: GpuGeneration, kernel: str) -> float:
    """The fastest published speed of ``kernel``'s class on ``gen``, as a share of its peak:
    FlashAttention-2's (the Triton kernel's class), cuDNN's gain over it on Hopper+."""
    return gen.best_attention_share * kernel_speedup(gen, kernel)


def optimistic_attention_factor(
    gen: GpuGeneration, kernel_efficiency: float, kernel: str = "flash"
) -> float:
    """Flash attention's time in the optimistic scenario over its time at ``gen``'s fitted
    attention efficiency for ``kernel``, both at ``kernel_efficiency`` (the scenario's): at
    most 1."""
    fitted_share = attention_efficiency(gen, kernel) * kernel_efficiency
    return min(1.0, fitted_share / published_best_share(gen, kernel))


# HBM bandwidth (hbm_tbytes_per_s): vendor figures as listed in shared/reference/hardware/gpus.csv.

# Memory passes over each activation byte a layer materialises, at the least (fully fused
# kernels): written in the forward, read in the backward, its gradient written. The fitted
# COMPUTE.elementwise_passes is what frameworks achieve; this is the fit's lower bound.
ELEMENTWISE_PASSES = 3.0

# Delivered / line-rate NVLink bandwidth: 370 GB/s effective ring busbw against 450 GB/s on
# 8x H100 (NCCL maintainer, NVIDIA/nccl-tests #212) = 0.82.
NVLINK_EFFICIENCY = 0.82
# NCCL per-step latency inside a node over NVLink/NVSwitch (modelling default, ~1 us).
NVLINK_ALPHA_S = 1e-6


# --- issue 14, pipeline (per-micro-batch overhead) -------------------------------------------
# Seconds each pass (forward or backward) of one micro-batch through one model chunk pays
# outside its kernels: the schedule's stream synchronisation, the p2p post and wait and the
# launches that cannot run ahead of it. A CUDA launch costs ~5 us of host time and a
# synchronised hand-off several (NVIDIA CUDA C++ Best Practices Guide, "Kernel launch
# overhead"); Narayanan et al. SC'21 sec. 4.2 note the interleaved schedule's extra
# per-chunk communication and synchronisation, and Megatron-LM/NeMo Nsight profiles show
# gaps of the order of 10-50 us between consecutive chunk passes on one stage. 25 us is a
# modelling value inside that range, not fitted: it makes thousands of tiny micro-batch
# chunks (deep pipelines, deep interleaving, micro-batches of one) cost what they cost.
CHUNK_PASS_OVERHEAD_S = 25e-6
# --- end issue 14, pipeline ------------------------------------------------------------------


def set_generation(gen: GpuGeneration) -> None:
    """Replace one generation's constants (the calibration script's fitting loop)."""
    GENERATIONS[gen.name] = gen
    generation.cache_clear()


def set_compute_constants(constants: ComputeConstants) -> None:
    """Replace the shared compute coefficients (the calibration script's fitting loop); the
    caller clears the caches that depend on them (compute.clear_caches)."""
    global COMPUTE
    COMPUTE = constants


# The generations a GPU can be named by (every one but "default"), for the messages that list them.
CALIBRATED_GENERATIONS = tuple(sorted(name for name in GENERATIONS if name != "default"))


@lru_cache(maxsize=256)
def generation(gpu_model: str) -> GpuGeneration:
    """The calibrated generation whose name occurs in ``gpu_model`` (e.g. "H100 SXM5 80GB")."""
    upper = gpu_model.upper().replace(" ", "")
    names = [name for name in GENERATIONS if name != "default" and name in upper]
    # The longest name wins: "GB200 NVL72" holds both "GB200" and "B200".
    return GENERATIONS[max(names, key=len)] if names else GENERATIONS["default"]


# --- issue 14 (inputs): the generation from the BF16 peak and memory when gpu_model is missing
# Dense BF16 peaks per GPU (TFLOP/s) as the bundled catalogs (catalogs/*/servers.csv) and
# shared/reference/hardware/gpus.csv list them. A request that states gpu_peak_tflops but no
# gpu_model gets the generation whose peak this is, instead of the "default" one.
PEAK_BF16_TFLOPS: dict[str, float] = {
    "A100": 312.0,
    "H100": 989.4,
    "H200": 989.4,  # the H100 compute die with more HBM
    "B200": 2250.0,
    "B300": 2250.0,
    "GB200": 2500.0,  # GB200 NVL72 runs its B200s at a higher clock
    "GB300": 2500.0,
    "MI300X": 1307.4,
    "MI325X": 1307.4,  # the MI300X compute die
    "MI355X": 2500.0,
}
# Vendors round their peaks differently (989 vs 989.4; 1307 vs 1307.4): 3 % separates every
# pair of distinct peaks above (the closest, 2250 and 2500, are 11 % apart).
PEAK_TOLERANCE = 0.03
# HBM per GPU (GB), which tells apart generations of one peak (an H200 is an H100 with 141 GB,
# and 4.8 TB/s instead of 3.35). A100, H100, H200, B200, MI300X: shared/reference/hardware/
# gpus.csv (mem_gb_per_gpu); B300 288 (acecloud.ai 2026-02-23), GB200 186 (13.4 TB HBM per
# 72-GPU rack, aiwiki.ai), GB300 288 (serversimply.com, Supermicro GB300 NVL72), MI325X 256
# (awesomeagents.ai), MI355X 288 (theregister.com 2025-06-12): the sources of the gen-2026
# catalog's rows (catalogs/gen-2026/servers.csv). A100 also comes with 40 GB: alone at its
# peak, it needs no memory to be told apart.
MEMORY_GB: dict[str, float] = {
    "A100": 80.0,
    "H100": 80.0,
    "H200": 141.0,
    "B200": 180.0,
    "B300": 288.0,
    "GB200": 186.0,
    "GB300": 288.0,
    "MI300X": 192.0,
    "MI325X": 256.0,
    "MI355X": 288.0,
}
# Capacities are stated usable or raw, or as first announced (H200 141 GB of six 24 GB stacks,
# 144; B200 and GB200 announced with 192 GB: UNVERIFIED, not in shared/reference): up to 7 %
# apart. 10 % takes either while every pair sharing a peak stays apart (the closest, MI300X
# 192 and MI325X 256 GB, are 25 % apart).
MEMORY_TOLERANCE = 0.10


def generations_at_peak(peak_tflops: float) -> tuple[str, ...]:
    """Generations whose dense BF16 peak is within PEAK_TOLERANCE of ``peak_tflops``."""
    return tuple(
        name
        for name, peak in PEAK_BF16_TFLOPS.items()
        if abs(peak_tflops / peak - 1.0) <= PEAK_TOLERANCE
    )


def generations_at(peak_tflops: float, memory_gb: float) -> tuple[str, ...]:
    """The generations at ``peak_tflops`` whose memory is within MEMORY_TOLERANCE of
    ``memory_gb`` (H200, not H100, at 989 TFLOP/s and 141 GB); all those at the peak when the
    memory matches none of them."""
    at_peak = generations_at_peak(peak_tflops)
    by_memory = tuple(n for n in at_peak if abs(memory_gb / MEMORY_GB[n] - 1.0) <= MEMORY_TOLERANCE)
    return by_memory or at_peak


def timed_gpu_model(gpu_model: str, peak_tflops: float, memory_gb: float) -> str:
    """The GPU model the estimator times: ``gpu_model`` where it names a calibrated
    generation (``generation``), else with the generation its dense BF16 peak and memory
    identify (``generation_from_hardware``) appended, "H800 SXM5 80GB (as H100)": an A800
    or an H800, export versions with the A100's and the H100's compute die and a slower
    NVLink, which the cluster states apart; the name stays in every message. A missing
    model is that generation; one none identifies stays as given (the default generation)."""
    if gpu_model and generation(gpu_model).name != "default":
        return gpu_model
    inferred = generation_from_hardware(peak_tflops, memory_gb)
    if inferred is None:
        return gpu_model
    return f"{gpu_model} (as {inferred})" if gpu_model else inferred


def generation_from_hardware(peak_tflops: float, memory_gb: float) -> str | None:
    """The generation a peak and a memory size identify (``generations_at``): the first
    listed when all its matches share the calibrated kernel efficiency (H100 for H100/H200
    when the memory is neither's); None when they match none, or generations calibrated
    differently (GB300 and MI355X, both 2500 TFLOP/s and 288 GB)."""
    names = generations_at(peak_tflops, memory_gb)
    if not names:
        return None
    efficiencies = {GENERATIONS[n].kernel_efficiency for n in names}
    return names[0] if len(efficiencies) == 1 else None


# --- end issue 14 (inputs) ------------------------------------------------------------------
