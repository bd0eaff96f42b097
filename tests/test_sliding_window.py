"""Sliding-window attention (issue 14, attention): a windowed layer's query attends to the last
W tokens only (Mistral 7B: every layer, W 4,096; GPT-OSS: 18 of 36 layers, W 128). Flash
kernels compute the window's key tiles alone; the model FLOPs count the keys the window
leaves, the time the tiles the kernel computes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from cli_support import run
from hypothesis import given
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.performance.compute import flash_computed_keys
from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.workload.flops import causal_window_keys, forward_flops_per_token
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
LLAMA8B = preset("llama3-8b", sequence_length=32768, global_batch_size=64)
PLAN = ParallelPlan(tensor=2, pipeline=1, data=32, zero_stage=3)


def _step_s(w: Workload, plan: ParallelPlan = PLAN) -> float:
    return estimate(w, cluster(64), plan).step_time_s


def test_a_query_attends_to_w_minus_w_squared_over_2s_keys_on_average() -> None:
    """Queries 1..s see min(i, W) keys each: the first W fewer than the window."""
    s, window = 4096, 1000
    exact = sum(min(i, window) for i in range(1, s + 1)) / s
    assert causal_window_keys(s, window) == pytest.approx(exact, rel=1e-3)
    assert causal_window_keys(s, s) == s / 2  # the causal half, as without a window


def test_windowed_layers_count_the_keys_their_window_leaves() -> None:
    """GPT-OSS's alternating layers: half the layers at the window's keys, half causal."""
    full = preset("llama3-8b", sequence_length=4096)
    half = replace(full, sliding_window_tokens=128, sliding_window_layers=16)
    causal = forward_flops_per_token(full).attention_scores
    share = causal_window_keys(4096, 128) / 2048
    assert forward_flops_per_token(half).attention_scores == pytest.approx(
        causal * (16 + 16 * share) / 32
    )


def test_a_flash_kernel_computes_whole_key_tiles() -> None:
    """128 x 128 tiles: a causal query computes s / 2 + 64 keys (the diagonal tiles whole), a
    window of 128 two tiles (its first query tile one): twice the keys it needs."""
    assert flash_computed_keys(4096, 4096) == 2048 + 64
    assert flash_computed_keys(4096, 128) == (128 * 128 + 31 * 128 * 256) / 4096


@given(s=st.integers(1, 20_000), window=st.integers(1, 20_000))
def test_a_flash_kernel_computes_at_least_the_keys_a_window_needs(s: int, window: int) -> None:
    assert flash_computed_keys(s, window) >= causal_window_keys(s, window) - 1e-9


@given(s=st.integers(1, 20_000), narrow=st.integers(1, 20_000), wide=st.integers(1, 20_000))
def test_a_wider_window_never_computes_fewer_keys(s: int, narrow: int, wide: int) -> None:
    narrow, wide = sorted((narrow, wide))
    assert flash_computed_keys(s, narrow) <= flash_computed_keys(s, wide)
    assert causal_window_keys(s, narrow) <= causal_window_keys(s, wide)


@given(window=st.integers(1, 70_000))
def test_a_window_never_slows_a_step_and_a_wider_one_never_speeds_it(window: int) -> None:
    """A fixed plan's step is monotone in the window, and at or past the sequence it is the
    step without one."""
    windowed = _step_s(replace(LLAMA8B, sliding_window_tokens=window))
    wider = _step_s(replace(LLAMA8B, sliding_window_tokens=window + 1024))
    assert windowed <= wider + 1e-12
    assert wider <= _step_s(LLAMA8B) + 1e-12


def test_a_window_spanning_the_sequence_is_the_model_without_one() -> None:
    spanning = replace(LLAMA8B, sliding_window_tokens=LLAMA8B.sequence_length)
    assert forward_flops_per_token(spanning) == forward_flops_per_token(LLAMA8B)
    assert _step_s(spanning) == pytest.approx(_step_s(LLAMA8B))


def test_at_32k_tokens_a_4k_window_cuts_the_attention_bound_step() -> None:
    """Mistral-style windows on every layer of an 8B model at 32,768 tokens: attention is
    most of the step without a window, an eighth of it with one."""
    windowed = _step_s(replace(LLAMA8B, sliding_window_tokens=4096))
    assert windowed < 0.75 * _step_s(LLAMA8B)


def test_unfused_attention_computes_the_whole_product_whatever_the_window() -> None:
    """Without flash attention the scores are computed in full and masked (flops.py)."""
    unfused = replace(LLAMA8B, flash_attention=False, sequence_length=4096)
    windowed = replace(unfused, sliding_window_tokens=512)
    assert forward_flops_per_token(windowed) == forward_flops_per_token(unfused)
    assert _step_s(windowed) == pytest.approx(_step_s(unfused))


def test_the_estimate_says_what_the_windowed_layers_compute() -> None:
    """At 32,768 tokens a 4,096-token window touches 33 key tiles of 128 a query tile once
    past the first 4,096 tokens, fewer before: 3,960 keys a query on average."""
    w = replace(LLAMA8B, sliding_window_tokens=4096, sliding_window_layers=16)
    notes = estimate(w, cluster(64), PLAN).notes

    assert any(
        "16 of 32 layers attend to the last 4,096 tokens" in n and "3,960 keys a query" in n
        for n in notes
    )


def test_a_window_unfused_attention_cannot_use_is_said_not_silently_ignored() -> None:
    w = replace(LLAMA8B, flash_attention=False, sequence_length=4096, sliding_window_tokens=512)
    notes = estimate(w, cluster(64), PLAN).notes

    assert any("timed as full attention" in n for n in notes)


def test_context_parallelism_with_a_window_is_refused_naming_the_field() -> None:
    w = replace(LLAMA8B, sliding_window_tokens=4096)
    with pytest.raises(InvalidInput, match="sliding-window") as err:
        estimate(w, cluster(64), ParallelPlan(tensor=1, pipeline=1, data=32, context=2))
    assert err.value.field == "parallelism.context"


def test_the_planner_leaves_context_parallelism_out_for_windowed_attention() -> None:
    """At 32,768 tokens the planner splits sequences over 4 context ranks; with a window it
    cannot (ring attention of the window alone is not modelled) and needs none."""
    assert plan_and_estimate(LLAMA8B, cluster(64)).plan.context > 1
    windowed = plan_and_estimate(replace(LLAMA8B, sliding_window_tokens=4096), cluster(64))
    assert windowed.plan.context == 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"sliding_window_tokens": -1}, "workload.sliding_window_tokens"),
        (
            {"sliding_window_tokens": 128, "sliding_window_layers": 33},
            "workload.sliding_window_layers",
        ),
        ({"sliding_window_layers": 16}, "workload.sliding_window_layers"),
        ({"sliding_window_tokens": 128, "causal": False}, "workload.sliding_window_tokens"),
    ],
)
def test_a_window_the_model_cannot_hold_is_refused_naming_the_field(
    fields: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        preset("llama3-8b", **fields)
    assert err.value.field == field


def test_procure_estimate_reads_the_window_fields(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The request's JSON names the fields as the proto does (workload.sliding_window_*)."""
    spec = json.loads((EXAMPLES / "estimate-llama3-70b.json").read_text())
    spec["workload"] = {"model": "llama3-8b", "sequence_length": 32768, "global_batch_size": 512}
    spec["parallelism"] = {"tensor": 2, "pipeline": 1, "data": 512, "context": 1, "zero_stage": 3}
    steps = []
    for window in ({}, {"sliding_window_tokens": 4096, "sliding_window_layers": 16}):
        spec["workload"] = {**spec["workload"], **window}
        path = tmp_path / "spec.json"
        path.write_text(json.dumps(spec))
        result = run(capsys, "estimate", str(path), "--format", "json")
        assert result.code == 0, result.err
        steps.append(json.loads(result.out)["step_time_s"])
    assert steps[1] < steps[0]
