"""Memory per GPU: ZeRO model states (Rajbhandari et al. 2020) and activations (Korthikanti
et al. 2022)."""

from __future__ import annotations

import pytest

from optimizer.performance.plan import ParallelPlan
from optimizer.workload.memory import memory_per_gpu
from optimizer.workload.pipeline_layout import pipeline_layout
from optimizer.workload.presets import preset


def test_replicated_mixed_precision_adam_costs_16_bytes_per_parameter() -> None:
    w = preset("llama3-8b")
    m = memory_per_gpu(w, ParallelPlan(1, 1, 8, zero_stage=0))
    states = m.weights_gb + m.gradients_gb + m.optimizer_gb
    assert states == pytest.approx(16 * w.parameters / 1e9)


def test_each_zero_stage_shards_more_state() -> None:
    w = preset("llama3-8b")
    totals = [
        memory_per_gpu(w, ParallelPlan(1, 1, 64, zero_stage=z)).total_gb for z in (0, 1, 2, 3)
    ]
    assert totals == sorted(totals, reverse=True) and len(set(totals)) == 4


def test_tensor_and_pipeline_split_the_weights() -> None:
    w = preset("llama3-70b")
    one = memory_per_gpu(w, ParallelPlan(1, 1, 64)).weights_gb
    split = memory_per_gpu(w, ParallelPlan(8, 4, 2)).weights_gb
    # issue 14: the output layer (about one layer of FLOPs) makes the stages 19, 21, 21, 19
    # layers; the first holds the input embedding, the last the output layer, each whole.
    assert pipeline_layout(w, 4).layers == (19, 21, 21, 19)
    layer = (w.parameters - w.embedding_parameters) / w.layers
    embedding = w.vocab_size * w.hidden_size
    assert one == pytest.approx(2 * w.parameters / 1e9)
    assert split == pytest.approx(2 * (19 * layer + embedding) / 8 / 1e9)


def test_recomputation_shrinks_activations() -> None:
    acts = [
        memory_per_gpu(
            preset("gpt3-175b", activation_recompute=mode, flash_attention=False),
            ParallelPlan(8, 8, 16),
        ).activations_gb
        for mode in ("none", "selective", "full")
    ]
    assert acts[0] > acts[1] > acts[2]


def test_korthikanti_full_recompute_keeps_2sbh_per_layer() -> None:
    """Korthikanti et al. 2022 sec. 4.2: full recomputation stores only each layer's input."""
    w = preset("megatron-1t")
    plan = ParallelPlan(8, 64, 6)
    m = memory_per_gpu(w, plan)
    layer_inputs = 2 * w.sequence_length * w.hidden_size / 8 * w.layers  # L/p layers x p in flight
    # issue 14: the logits sit on the last stage, which holds one micro-batch; the first stage
    # (p micro-batches in flight) is the fuller one.
    assert m.activations_gb == pytest.approx(layer_inputs / 1e9)
