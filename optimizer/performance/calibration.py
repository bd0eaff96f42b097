"""Calibrated constants: end-to-end kernel efficiency per GPU generation, and NVLink.

Kernel efficiency is the fraction of dense peak that the compute of a step achieves once
communication and pipeline bubbles are accounted for separately. It is fitted once, for all
points together, by ``benchmarks/estimator_accuracy.py`` (see docs/performance-model.md for the
data and every point's error). The low/high bounds are the expected value divided by
(1 + worst error) and (1 - worst error) of that fit, so the reported range brackets every
calibration point.
"""

from __future__ import annotations

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
# the token count needed to turn it into TFLOP/s (docs/performance-model.md, "New hardware").
# Each is therefore UNVERIFIED with a range wider than the fitted A100/H100 ranges.
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

GENERATIONS: dict[str, GpuGeneration] = {
    g.name: g
    for g in (
        GpuGeneration("A100", 0.52, 0.59, 0.67, 2.039, _A100_SOURCE),
        GpuGeneration("H100", 0.48, 0.55, 0.64, 3.35, _H100_SOURCE),
        GpuGeneration(
            "H200",
            0.48,
            0.55,
            0.64,
            4.8,
            "no published run here: H100 value (same compute die)",
            fitted=False,
        ),
        GpuGeneration(
            "B200",
            0.40,
            0.55,
            0.64,
            8.0,
            "no published run here: H100 value, low bound widened (newer software stack)",
            fitted=False,
        ),
        GpuGeneration(
            "B300",
            0.38,
            0.55,
            0.66,
            8.0,
            _B300_SOURCE,
            fitted=False,
        ),
        # NVL72 racks: the same GPUs as HGX B200/B300 (gpus.csv; catalogs/gen-2026 sources).
        # Their gain is the 72-GPU NVLink domain, which the estimator models as bandwidth, not
        # as kernel efficiency. "GB200" must win over "B200" in generation(): longest name.
        GpuGeneration("GB200", 0.40, 0.55, 0.64, 8.0, _GB200_SOURCE, fitted=False),
        GpuGeneration("GB300", 0.38, 0.55, 0.66, 8.0, _B300_SOURCE, fitted=False),
        GpuGeneration("MI300X", 0.33, 0.45, 0.58, 5.3, _MI300X_SOURCE, fitted=False),
        GpuGeneration("MI325X", 0.33, 0.45, 0.58, 6.0, _MI325X_SOURCE, fitted=False),
        GpuGeneration("MI355X", 0.30, 0.45, 0.60, 8.0, _MI355X_SOURCE, fitted=False),
        GpuGeneration(
            "default",
            0.40,
            0.55,
            0.64,
            3.35,
            "unknown GPU: H100 value with a wider low bound",
            fitted=False,
        ),
    )
}

# HBM bandwidth (hbm_tbytes_per_s): vendor figures as listed in shared/reference/hardware/gpus.csv.

# Memory passes over each activation byte a layer materialises: written in the forward, read
# in the backward, its gradient written (one more forward write under full recomputation).
ELEMENTWISE_PASSES = 3.0

# Delivered / line-rate NVLink bandwidth: 370 GB/s effective ring busbw against 450 GB/s on
# 8x H100 (NCCL maintainer, NVIDIA/nccl-tests #212) = 0.82.
NVLINK_EFFICIENCY = 0.82
# NCCL per-step latency inside a node over NVLink/NVSwitch (modelling default, ~1 us).
NVLINK_ALPHA_S = 1e-6


def set_generation(gen: GpuGeneration) -> None:
    """Replace one generation's constants (the calibration script's fitting loop)."""
    GENERATIONS[gen.name] = gen
    generation.cache_clear()


@lru_cache(maxsize=256)
def generation(gpu_model: str) -> GpuGeneration:
    """The calibrated generation whose name occurs in ``gpu_model`` (e.g. "H100 SXM5 80GB")."""
    upper = gpu_model.upper().replace(" ", "")
    names = [name for name in GENERATIONS if name != "default" and name in upper]
    # The longest name wins: "GB200 NVL72" holds both "GB200" and "B200".
    return GENERATIONS[max(names, key=len)] if names else GENERATIONS["default"]


# --- issue 14 (inputs): the generation from the BF16 peak when gpu_model is missing --------
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


def generations_at_peak(peak_tflops: float) -> tuple[str, ...]:
    """Generations whose dense BF16 peak is within PEAK_TOLERANCE of ``peak_tflops``."""
    return tuple(
        name
        for name, peak in PEAK_BF16_TFLOPS.items()
        if abs(peak_tflops / peak - 1.0) <= PEAK_TOLERANCE
    )


def generation_from_peak(peak_tflops: float) -> str | None:
    """The generation a bare peak identifies: the first listed when all its matches share
    the calibrated kernel efficiency (H100 for H100/H200, whose compute is the same); None
    when the peak matches none, or generations calibrated differently (GB200 and MI355X)."""
    names = generations_at_peak(peak_tflops)
    if not names:
        return None
    efficiencies = {GENERATIONS[n].kernel_efficiency for n in names}
    return names[0] if len(efficiencies) == 1 else None


# Rate of a causal flash-attention kernel relative to the layer GEMMs. FlashAttention-2
# reaches about 35 % of H100 peak (Shah et al. 2024, FlashAttention-3, sec. 1) where dense
# GEMMs reach about 70 %, and on A100 its causal forward+backward runs at roughly 0.6-0.7 of
# the GEMM rate (Dao 2023, FlashAttention-2, fig. 5 against cuBLAS): 0.5 is the H100 figure
# of the fitted MosaicML runs. It keeps their timing where it was when the scores were
# counted in full at the GEMM rate; a shape-aware kernel model should fit it.
CAUSAL_FLASH_ATTENTION_EFFICIENCY = 0.5

# --- end issue 14 (inputs) ------------------------------------------------------------------
