"""Goodput: the share of wall-clock time a training run makes progress (issue 14).

Owned by the goodput work of issue 14: failures per GPU-hour, checkpoint writes, the
checkpoint interval that minimises lost work, restarts.
"""

from __future__ import annotations

from dataclasses import dataclass

# Llama 3 (Dubey et al., "The Llama 3 Herd of Models", 2024, sec. 3.3.4): 419 unexpected
# interruptions in a 54-day snapshot of pre-training on 16,384 H100 GPUs.
LLAMA3_FAILURES_PER_GPU_HOUR = 419 / (54 * 24 * 16_384)


@dataclass(frozen=True)
class Reliability:
    """What the request says (or the sourced defaults) about failures and checkpoints."""

    failures_per_gpu_hour: float = LLAMA3_FAILURES_PER_GPU_HOUR
