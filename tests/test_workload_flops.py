"""FLOP counts: the general per-token formula against Narayanan et al. SC'21 eq. (3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optimizer.workload.flops import (
    hardware_flops_per_step,
    megatron_eq3_flops,
    model_flops_per_step,
    six_nd_flops,
)
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset, preset_names

MEGATRON = [n for n in preset_names() if n.startswith("megatron-")]


@pytest.mark.parametrize("name", MEGATRON)
def test_hardware_flops_equal_megatron_eq3(name: str) -> None:
    """Source: Narayanan et al. SC'21 eq. (3), full recomputation, Table 1 shapes.

    SC'21 predates flash attention: its GPUs computed the full s x s product and masked it,
    which eq. (3) counts (issue 14: causal flash attention computes half)."""
    w = preset(name, flash_attention=False)
    assert hardware_flops_per_step(w) == pytest.approx(
        megatron_eq3_flops(w, w.global_batch_size), rel=1e-9
    )


@given(
    layers=st.integers(1, 96),
    heads=st.integers(1, 64),
    head_dim=st.sampled_from([64, 128]),
    seq=st.sampled_from([512, 2048, 8192]),
    vocab=st.integers(1000, 200_000),
)
def test_eq3_holds_for_every_gpt_shape(
    layers: int, heads: int, head_dim: int, seq: int, vocab: int
) -> None:
    h = heads * head_dim
    w = Workload(
        name="gpt",
        layers=layers,
        hidden_size=h,
        ffn_hidden_size=4 * h,
        attention_heads=heads,
        kv_heads=heads,
        sequence_length=seq,
        vocab_size=vocab,
        training_tokens=1e9,
        global_batch_size=4,
        activation_recompute="full",
        flash_attention=False,
    )
    assert hardware_flops_per_step(w) == pytest.approx(megatron_eq3_flops(w, 4), rel=1e-9)


def test_model_flops_are_three_quarters_of_full_recompute_for_the_layers() -> None:
    """Unfused attention, as SC'21 ran it; flash attention's backward recomputes half a pass
    of the scores on top (tests/test_flash_attention_passes.py)."""
    w = preset("megatron-1t", flash_attention=False)
    logits = 6 * w.hidden_size * w.vocab_size * w.tokens_per_step
    hw, model = hardware_flops_per_step(w), model_flops_per_step(w)
    assert (model - logits) / (hw - logits) == pytest.approx(0.75)


@pytest.mark.parametrize("name", ["gpt3-175b", "llama3-70b", "megatron-1t"])
def test_model_flops_agree_with_6nd_to_first_order(name: str) -> None:
    """Kaplan et al. 2020: 6 N D; attention adds s/6h, so within ~15% for these shapes."""
    w = preset(name)
    assert model_flops_per_step(w) == pytest.approx(
        six_nd_flops(w.parameters, w.tokens_per_step), rel=0.15
    )


def test_recomputation_only_adds_flops() -> None:
    base = preset("llama3-8b", flash_attention=False)
    counts = [
        hardware_flops_per_step(
            preset("llama3-8b", flash_attention=False, activation_recompute=mode)
        )
        for mode in ("none", "selective", "full")
    ]
    assert model_flops_per_step(base) == counts[0] < counts[1] < counts[2]


def test_moe_flops_follow_active_not_total_parameters() -> None:
    w = preset("mixtral-8x7b")
    assert model_flops_per_step(w) < six_nd_flops(w.parameters, w.tokens_per_step) / 2
