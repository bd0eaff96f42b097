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

    def efficiency(self, scenario: str) -> float:
        return {
            "expected": self.kernel_efficiency,
            "optimistic": self.kernel_efficiency_high,
            "pessimistic": self.kernel_efficiency_low,
        }[scenario]


_A100_SOURCE = "fitted to Megatron-LM SC'21 Table 1 and Table 2 (A100, 32-3072 GPUs)"
_H100_SOURCE = "fitted to MosaicML llm-foundry H100 BF16 multi-node rows (16-512 GPUs)"

GENERATIONS: dict[str, GpuGeneration] = {
    g.name: g
    for g in (
        GpuGeneration("A100", 0.52, 0.59, 0.67, 2.039, _A100_SOURCE),
        GpuGeneration("H100", 0.48, 0.55, 0.64, 3.35, _H100_SOURCE),
        GpuGeneration(
            "H200", 0.48, 0.55, 0.64, 4.8, "no published run here: H100 value (same compute die)"
        ),
        GpuGeneration(
            "B200",
            0.40,
            0.55,
            0.64,
            8.0,
            "no published run here: H100 value, low bound widened (newer software stack)",
        ),
        GpuGeneration(
            "MI300X",
            0.35,
            0.45,
            0.55,
            5.3,
            "no published run here: H100 value lowered (less mature kernels), UNVERIFIED",
        ),
        GpuGeneration(
            "default", 0.40, 0.55, 0.64, 3.35, "unknown GPU: H100 value with a wider low bound"
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
    for name, gen in GENERATIONS.items():
        if name != "default" and name in upper:
            return gen
    return GENERATIONS["default"]
