"""Blackwell Ultra's attention: B300 and GB300 double the exponential throughput of their
special function units over B200 and GB200, and NVIDIA measures DeepSeek-V3's attention
forward in FP8 ~35 % faster on GB300 than on GB200 ("Making Softmax More Efficient with NVIDIA
Blackwell Ultra", NVIDIA technical blog). The model derives the forward and backward's gain
from that figure (calibration.attention_speedup_from_exponentials)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optimizer.performance.calibration import (
    BLACKWELL_ULTRA_ATTENTION_SPEEDUP,
    attention_efficiency,
    attention_speedup_from_exponentials,
    generation,
    published_best_share,
)

PUBLISHED_FORWARD_SPEEDUP = 1.35  # NVIDIA's GB300 over GB200, attention forward, FP8
SFU_SPEEDUP = 2.0  # MUFU.EX2 throughput, Blackwell Ultra over Blackwell


def test_a_backward_like_the_forward_speeds_up_as_the_published_forward() -> None:
    assert attention_speedup_from_exponentials(
        PUBLISHED_FORWARD_SPEEDUP, SFU_SPEEDUP, 2, 2
    ) == pytest.approx(PUBLISHED_FORWARD_SPEEDUP)


def test_flash_attentions_backward_of_five_gemms_dilutes_the_gain() -> None:
    derived = attention_speedup_from_exponentials(PUBLISHED_FORWARD_SPEEDUP, SFU_SPEEDUP, 2, 5)

    assert 1.0 < derived < PUBLISHED_FORWARD_SPEEDUP
    assert derived == pytest.approx(BLACKWELL_ULTRA_ATTENTION_SPEEDUP)


@given(
    forward=st.floats(1.01, 1.9),
    gemms=st.integers(1, 4),
    more=st.integers(1, 8),
)
def test_more_backward_gemms_never_gain_more(forward: float, gemms: int, more: int) -> None:
    fewer = attention_speedup_from_exponentials(forward, SFU_SPEEDUP, gemms, gemms)
    diluted = attention_speedup_from_exponentials(forward, SFU_SPEEDUP, gemms, gemms + more)

    assert 1.0 < diluted <= fewer + 1e-12


@pytest.mark.parametrize(("ultra", "base"), [("B300", "B200"), ("GB300", "GB200")])
@pytest.mark.parametrize("kernel", ["flash", "triton", "cudnn"])
def test_blackwell_ultra_runs_every_attention_kernel_faster_by_the_derived_gain(
    ultra: str, base: str, kernel: str
) -> None:
    speed = attention_efficiency(generation(ultra), kernel)

    assert speed / attention_efficiency(generation(base), kernel) == pytest.approx(
        BLACKWELL_ULTRA_ATTENTION_SPEEDUP
    )
    assert published_best_share(generation(ultra), kernel) / published_best_share(
        generation(base), kernel
    ) == pytest.approx(BLACKWELL_ULTRA_ATTENTION_SPEEDUP)


@pytest.mark.parametrize("name", ["H100", "H200", "B200", "GB200", "A100"])
def test_other_generations_attention_is_unchanged(name: str) -> None:
    assert generation(name).exponential_speedup == 1.0
