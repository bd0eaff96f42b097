"""Causal attention computes half the s x s scores (issue 14, "What to add").

FlashAttention-2 (Dao 2023) skips the masked blocks of a decoder's causal mask, so QK^T and AV
cost 2 x s x h FLOPs per token and layer instead of 4 x s x h. Encoders (BERT) attend both ways,
and attention without flash computes the full product and masks it, which is what Megatron
SC'21 eq. (3) counts.
"""

from __future__ import annotations

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2 as pb
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.validation import calibration_cases, load_records, megatron_cases
from optimizer.workload.flops import (
    forward_flops_per_token,
    hardware_flops_per_step,
    megatron_eq3_flops,
    model_flops_per_step,
)
from optimizer.workload.presets import preset


def test_a_causal_decoder_with_flash_attention_computes_half_the_scores() -> None:
    w = preset("llama3-70b")

    scores = forward_flops_per_token(w).attention_scores

    assert scores == pytest.approx(2 * w.sequence_length * w.hidden_size * w.layers)


def test_an_encoder_computes_the_full_product() -> None:
    w = preset("bert-large")

    assert w.causal is False
    assert forward_flops_per_token(w).attention_scores == pytest.approx(
        4 * w.sequence_length * w.hidden_size * w.layers
    )


def test_without_flash_attention_the_masked_half_is_computed_too() -> None:
    w = preset("llama3-70b", flash_attention=False)

    assert forward_flops_per_token(w).attention_scores == pytest.approx(
        4 * w.sequence_length * w.hidden_size * w.layers
    )


def test_model_flops_drop_by_exactly_the_masked_half() -> None:
    causal, full = preset("llama3-8b"), preset("llama3-8b", causal=False)
    s, h, layers = causal.sequence_length, causal.hidden_size, causal.layers

    saved = model_flops_per_step(full) - model_flops_per_step(causal)

    assert saved == pytest.approx(3 * 2 * s * h * layers * causal.tokens_per_step)


def test_megatron_validation_cases_keep_the_eq3_convention() -> None:
    cases = megatron_cases(load_records())

    assert cases
    for case in cases:
        w = case.workload
        assert hardware_flops_per_step(w) == pytest.approx(
            megatron_eq3_flops(w, w.global_batch_size), rel=1e-9
        ), case.id


def test_every_calibration_case_is_a_decoder() -> None:
    assert all(case.workload.causal for case in calibration_cases())


def test_the_request_may_say_the_model_is_not_causal() -> None:
    msg = ParseDict({"model": "llama3-8b", "causal": False}, pb.Workload())

    assert workload_from_proto(msg).causal is False
