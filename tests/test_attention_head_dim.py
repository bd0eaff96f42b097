"""Fused attention's speed by head dim (issue 14, "head-dim attention efficiency").

Every fitted and published attention speed the model used was at head dim 128 (Llama 3's,
MPT's), and a workload of narrower heads had its attention timed at that speed per FLOP.
The FlashAttention-3 paper (Shah et al., arXiv:2407.08608, figs. 5-6) times the kernels at
head dims 64, 128 and 256 on H100: at 64, cuDNN's causal forward runs 363 TFLOP/s at 4K
tokens against 518 at 128, and GPT-OSS (64-wide heads) trains on cuDNN; above 128 the
kernels disagree, and a wider head keeps 128's speed."""

from __future__ import annotations

import csv
import json
import math
import statistics
from dataclasses import replace
from pathlib import Path

import pytest
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance import calibration, compute
from optimizer.performance.calibration import HEAD_DIM_SPEEDS, generation
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

ROOT = Path(__file__).resolve().parents[1]
KERNEL_SPEEDS = ROOT / "optimizer/performance/data/attention-kernel-speeds.csv"
H100 = (1, 8, "H100", 989.4, 1978.9)  # micro-batch, tensor degree, GPU, BF16 and FP8 peaks


def _published_ratio(column: str, pass_: str, causal: str, head_dim: int) -> float:
    """The geometric mean over the stored sequence lengths of ``column``'s speed at
    ``head_dim`` over its speed at 128, in ``pass_`` under the ``causal`` mask or none."""
    rows = [
        r
        for r in csv.DictReader(KERNEL_SPEEDS.open())
        if (r["pass"], r["causal"]) == (pass_, causal)
    ]
    at = {(int(r["head_dim"]), int(r["sequence_length"])): float(r[column]) for r in rows}
    return statistics.geometric_mean(at[head_dim, s] / at[128, s] for h, s in at if h == head_dim)


@pytest.mark.parametrize(
    ("kernel_class", "column"), [("flash", "flashattention2_tflops"), ("cudnn", "cudnn_tflops")]
)
@pytest.mark.parametrize(
    ("pass_", "causal", "index"),
    [("forward", "true", 1), ("forward", "false", 2), ("backward", "false", 3)],
)
def test_the_head_dim_speeds_are_the_published_ratios(
    kernel_class: str, column: str, pass_: str, causal: str, index: int
) -> None:
    """Figs. 5 (forward, causal and not) and 6 (backward) at head dims 64 and 128, 2K-16K
    tokens."""
    for row in HEAD_DIM_SPEEDS[kernel_class]:
        head_dim, published = row[0], row[index]
        assert published == pytest.approx(
            _published_ratio(column, pass_, causal, head_dim), abs=0.001
        )


def _heads_of(width: int, head_dim: int, **fields: object) -> Workload:
    """Llama 3 70B at 8K tokens with its 8,192-wide attention cut into heads of ``head_dim``:
    the same attention FLOPs whatever the head dim."""
    heads = width // head_dim
    return preset(
        "llama3-70b",
        sequence_length=8192,
        attention_heads=heads,
        kv_heads=heads,
        head_dim=head_dim,
        **fields,
    )


def _attention_s(w: Workload) -> float:
    tensor_core_s, _ = compute.compute_s_per_token(w, *H100)
    return compute.attention_share(w, *H100) * tensor_core_s


def test_narrow_heads_time_the_same_attention_flops_slower_on_cudnn() -> None:
    """On H100 cuDNN at head dim 64: the forward at 0.707 and the backward (2.5 forwards) at
    0.840 of their speeds at 128."""
    wide, narrow = (
        _heads_of(8192, 128, attention_kernel="cudnn"),
        _heads_of(8192, 64, attention_kernel="cudnn"),
    )
    expected = (1 / 0.7067 + 2.5 / 0.8395) / 3.5

    assert _attention_s(narrow) / _attention_s(wide) == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(1.255, abs=0.001)


def test_an_encoders_narrow_heads_take_the_non_causal_forward_ratio() -> None:
    """Without a mask (BERT's), cuDNN's forward at head dim 64 runs at 0.672 of its speed at
    128 (fig. 5's non-causal panels: 395-413 against 595-617 TFLOP/s), below the causal 0.707;
    the backward's ratio is the same panel's for both."""
    wide, narrow = (
        _heads_of(8192, 128, attention_kernel="cudnn", causal=False),
        _heads_of(8192, 64, attention_kernel="cudnn", causal=False),
    )
    expected = (1 / 0.6724 + 2.5 / 0.8395) / 3.5

    assert _attention_s(narrow) / _attention_s(wide) == pytest.approx(expected, rel=1e-6)
    assert compute.head_dim_time_factor(narrow, generation("H100")) > compute.head_dim_time_factor(
        replace(narrow, causal=True), generation("H100")
    )


def test_at_head_dim_128_every_kernel_keeps_its_fitted_speed() -> None:
    for kernel in ("flash", "triton", "cudnn"):
        w = _heads_of(8192, 128, attention_kernel=kernel)
        assert compute.head_dim_time_factor(w, generation("H100")) == 1.0


@pytest.mark.parametrize("head_dim", [32, 64, 96, 192, 256, 512])
def test_the_triton_kernel_is_timed_alike_at_every_head_dim(head_dim: int) -> None:
    """Fig. 5's Triton kernel runs head dim 64 as fast as 128; MPT's sweeps at 64 agree."""
    w = _heads_of(8192, head_dim, attention_kernel="triton")

    assert compute.head_dim_time_factor(w, generation("H100")) == 1.0


def _factor(kernel_class: str, head_dim: float) -> float:
    return calibration.head_dim_time_factor(kernel_class, head_dim, 1 / 3.5, True)


@pytest.mark.parametrize("kernel_class", ["flash", "cudnn"])
def test_between_published_head_dims_the_time_is_interpolated(kernel_class: str) -> None:
    assert _factor(kernel_class, 128) < _factor(kernel_class, 96) < _factor(kernel_class, 64)
    # halfway in log2 of the head dim: the speeds' midpoints
    _, forward, _, backward = HEAD_DIM_SPEEDS[kernel_class][0]
    middle = (1 / ((forward + 1) / 2) + 2.5 / ((backward + 1) / 2)) / 3.5
    assert _factor(kernel_class, 64 * math.sqrt(2)) == pytest.approx(middle)


@pytest.mark.parametrize("kernel_class", ["flash", "cudnn"])
def test_below_64_the_narrowest_published_head_dim_is_taken(kernel_class: str) -> None:
    assert _factor(kernel_class, 32) == _factor(kernel_class, 64) > 1.0


@pytest.mark.parametrize("head_dim", [160, 192, 256, 512])
@pytest.mark.parametrize("kernel_class", ["flash", "cudnn"])
def test_a_head_wider_than_128_keeps_128s_speed(kernel_class: str, head_dim: int) -> None:
    """Above 128 the published kernels disagree: FlashAttention-2 and cuDNN run head dim 256
    slower, FlashAttention-3 faster (fig. 5: 642 against 616 TFLOP/s causal forward at 16K)."""
    assert _factor(kernel_class, head_dim) == 1.0


def test_mla_reads_the_kernel_at_the_mean_of_its_query_key_and_value_head_dims() -> None:
    """DeepSeek-V3's 192-wide query/key and 128-wide value heads: 160."""
    assert compute.kernel_head_dim(preset("deepseek-v3")) == 160


def test_a_full_recomputation_weights_the_forward_ratio_more() -> None:
    """Recomputed, the scores' forward runs twice: 2 of 4.5 passes at the forward's ratio."""
    w = _heads_of(8192, 64, attention_kernel="cudnn")
    recomputed = replace(w, activation_recompute="full")
    expected = (2 / 0.7067 + 2.5 / 0.8395) / 4.5

    assert compute.head_dim_time_factor(recomputed, generation("H100")) == pytest.approx(expected)
    assert compute.head_dim_time_factor(recomputed, generation("H100")) > (
        compute.head_dim_time_factor(w, generation("H100"))
    )


def test_where_cudnn_gains_nothing_it_takes_the_flashattention2_ratios() -> None:
    """On A100 cuDNN is timed as the FlashAttention-2 class (calibration.kernel_speedup)."""
    w = _heads_of(8192, 64, attention_kernel="cudnn")

    assert compute.head_dim_time_factor(w, generation("A100")) == pytest.approx(
        _factor("flash", 64)
    )


def test_an_attention_bound_note_gives_the_speed_at_the_head_dim() -> None:
    spec = json.loads((ROOT / "examples" / "estimate-llama3-70b.json").read_text())
    spec["workload"].update(
        {
            "sequence_length": 131072,
            "attention_kernel": "cudnn",
            "attention_heads": 128,
            "kv_heads": 8,
            "head_dim": 64,
        }
    )
    notes = estimate(json_format.ParseDict(spec, estimate_pb2.EstimateRequest())).notes

    assert any("at head dim 64 (1.26 x the time at 128" in n for n in notes)


@given(
    narrow=st.floats(min_value=16, max_value=512),
    wider=st.floats(min_value=16, max_value=512),
    forward_share=st.floats(min_value=0.0, max_value=1.0),
    kernel_class=st.sampled_from(["flash", "cudnn"]),
    causal=st.booleans(),
)
def test_a_narrower_head_is_never_timed_faster_at_the_same_flops(
    narrow: float, wider: float, forward_share: float, kernel_class: str, causal: bool
) -> None:
    """Every published kernel of the figures is slower at 64 than at 128, forward (causal or
    not) and backward; between them and beyond, no head dim is timed faster than a wider one."""
    narrow, wider = min(narrow, wider), max(narrow, wider)
    slow = calibration.head_dim_time_factor(kernel_class, narrow, forward_share, causal)
    fast = calibration.head_dim_time_factor(kernel_class, wider, forward_share, causal)

    assert slow >= fast >= 1.0
