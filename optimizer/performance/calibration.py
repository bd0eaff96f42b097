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


@lru_cache(maxsize=256)
def generation(gpu_model: str) -> GpuGeneration:
    """The calibrated generation whose name occurs in ``gpu_model`` (e.g. "H100 SXM5 80GB")."""
    upper = gpu_model.upper().replace(" ", "")
    names = [name for name in GENERATIONS if name != "default" and name in upper]
    # The longest name wins: "GB200 NVL72" holds both "GB200" and "B200".
    return GENERATIONS[max(names, key=len)] if names else GENERATIONS["default"]
