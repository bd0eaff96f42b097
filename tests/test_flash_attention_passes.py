"""What attention work a step executes, by kernel and recomputation (issue 14 accuracy).

FlashAttention's backward recomputes the scores S = QK^T (one of its five GEMMs, half the
forward's two): its forward and backward are 3.5 forward passes, not 4 (Dao 2023,
FlashAttention-2, Algorithm 2; benchmarks/benchmark_flash_attention.py in the flash-attention
repository counts the backward as 2.5 x the forward). A full recomputation adds a whole forward
on top; selective recomputation adds nothing to a flash kernel, whose s x s activations are
never stored (Megatron-LM checkpoints the core attention only on its unfused path). Before this
rule every flash or selective configuration was counted as 4 passes: a full recomputation with
flash attention (MPT's sequence sweeps) ran faster than its kernels do, and Llama 3's selective
one slower.
"""

from __future__ import annotations

import pytest

from optimizer.performance import calibration
from optimizer.performance.calibration import generation
from optimizer.performance.compute import _attention_s_per_token
from optimizer.workload.flops import (
    attention_recompute_passes,
    forward_flops_per_token,
    hardware_flops_per_step,
    model_flops_per_step,
)
from optimizer.workload.presets import preset

H100 = generation("H100")
PEAK = 989e12


def _recomputed_share(w_name: str, **over: object) -> float:
    """Hardware minus model FLOPs of the attention scores, in forward passes of them."""
    w = preset(w_name, **over)
    layers = forward_flops_per_token(w).layer_matmul if w.activation_recompute == "full" else 0
    extra = (hardware_flops_per_step(w) - model_flops_per_step(w)) / w.tokens_per_step - layers
    return extra / forward_flops_per_token(w).attention_scores


def test_flash_attention_recomputes_half_a_forward_of_the_scores_in_its_backward() -> None:
    assert _recomputed_share("llama3-70b", activation_recompute="none") == pytest.approx(0.5)


def test_selective_recomputation_adds_nothing_to_flash_attention() -> None:
    assert _recomputed_share("llama3-70b", activation_recompute="selective") == pytest.approx(0.5)


def test_full_recomputation_with_flash_attention_repeats_the_whole_forward_too() -> None:
    assert _recomputed_share("llama3-70b", activation_recompute="full") == pytest.approx(1.5)


def test_unfused_attention_recomputes_the_scores_only_when_told_to() -> None:
    shares = [
        _recomputed_share("llama3-70b", flash_attention=False, activation_recompute=mode)
        for mode in ("none", "selective", "full")
    ]

    assert shares == pytest.approx([0.0, 1.0, 1.0])


@pytest.mark.parametrize(("mode", "passes"), [("none", 3.5), ("selective", 3.5), ("full", 4.5)])
def test_flash_attention_time_is_its_passes_at_the_attention_efficiency(
    mode: str, passes: float
) -> None:
    w = preset("mpt-7b", sequence_length=32768, activation_recompute=mode)

    seconds = _attention_s_per_token(w, 1, 1, PEAK, H100)

    flops = passes * forward_flops_per_token(w).attention_scores
    assert attention_recompute_passes(w) == passes - 3
    efficiency = calibration.attention_efficiency(H100, w.attention_kernel)
    assert seconds == pytest.approx(flops / (PEAK * efficiency))
