"""What a layer keeps for its backward: in FP8 each linear layer's input as the 1-byte copy it
multiplied (Transformer Engine's Linear, LayerNormLinear and GroupedLinear; DeepSeek-V3 report,
arXiv:2412.19437, sec. 3.3.3), and an MoE router's BF16 input (docs/performance-model.md,
sec. 3, "What a layer keeps beside its tensors")."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.errors import InvalidInput
from optimizer.workload.memory import (
    activation_bytes_per_layer,
    materialised_bytes_per_token_layer,
)
from optimizer.workload.presets import preset, preset_names

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "estimate-deepseek-v3-h800.json"
# How DeepSeek-V3 trained on 80 GB H800s: 16-way pipeline, 64-way expert parallelism over 8
# nodes, ZeRO-1 data parallelism, no tensor parallelism (report sec. 3.2).
DEEPSEEK_OWN_LAYOUT = {"pipeline": 16, "expert": 64, "data": 128, "tensor": 1, "zero_stage": 1}


def _per_token(name: str, precision: str, **overrides: object) -> float:
    w = preset(name, precision=precision, **overrides)
    return activation_bytes_per_layer(w, 1, 1) / w.sequence_length


def test_an_fp8_dense_layer_keeps_its_four_gemm_inputs_at_one_byte() -> None:
    """Llama 3 70B: the QKV input h, the attention output 64 x 128, the FFN input h and the
    SwiGLU output 28,672 (its fc1 outputs, and Q, K and V, stay BF16)."""
    h, value, ffn = 8192, 64 * 128, 28_672

    saved = _per_token("llama3-70b", "bf16") - _per_token("llama3-70b", "fp8")

    assert saved == h + value + h + ffn


def test_an_fp8_moe_layer_keeps_each_routed_copy_at_one_byte() -> None:
    """Mixtral 8x7B, top-2: two experts' inputs and SwiGLU outputs, once each a token."""
    h, ffn, k = 4096, 14_336, 2

    saved = _per_token("mixtral-8x7b", "bf16") - _per_token("mixtral-8x7b", "fp8")

    assert saved == h + h + k * (h + ffn)


def test_an_moe_router_keeps_its_bf16_input_beside_the_experts_copies() -> None:
    w = preset("mixtral-8x7b", precision="bf16")

    kept = activation_bytes_per_layer(w, 1, 1) / w.sequence_length

    assert kept == materialised_bytes_per_token_layer(w, attention_matrix=False) + 2 * 4096


def test_full_recomputation_keeps_the_bf16_layer_input_in_either_precision() -> None:
    assert _per_token("llama3-70b", "fp8", activation_recompute="full") == 2 * 8192
    assert _per_token("llama3-70b", "bf16", activation_recompute="full") == 2 * 8192


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(preset_names()),
    recompute=st.sampled_from(["none", "selective", "full"]),
    micro_batch=st.integers(1, 8),
    tensor=st.sampled_from([1, 2, 4, 8]),
)
def test_fp8_never_keeps_more_than_bf16(
    name: str, recompute: str, micro_batch: int, tensor: int
) -> None:
    w = preset(name, activation_recompute=recompute)
    fp8, bf16 = replace(w, precision="fp8"), replace(w, precision="bf16")

    assert activation_bytes_per_layer(fp8, micro_batch, tensor) <= activation_bytes_per_layer(
        bf16, micro_batch, tensor
    )


def _deepseek_own_layout(precision: str) -> estimate_pb2.EstimateResponse:
    spec = json.loads(EXAMPLE.read_text())
    spec["workload"]["precision"] = precision
    spec["parallelism"] = DEEPSEEK_OWN_LAYOUT
    return estimate(ParseDict(spec, estimate_pb2.EstimateRequest()))


def test_deepseek_v3s_own_layout_fits_its_80_gb_h800s_in_fp8() -> None:
    """DeepSeek trained this layout in FP8 on 80 GB GPUs; charged BF16 activations it needed
    96.9 GB a GPU and was refused."""
    response = _deepseek_own_layout("fp8")

    assert response.memory_per_gpu_gb <= 80 * 1.024**3 * 0.96  # the usable share, sec. 3


def test_the_same_layout_in_bf16_does_not_fit() -> None:
    with pytest.raises(InvalidInput, match="GB per GPU"):
        _deepseek_own_layout("bf16")
