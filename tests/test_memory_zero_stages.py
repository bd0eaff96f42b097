"""Memory per GPU under every ZeRO stage, FSDP without re-sharding, interleaving and uneven
stages (issue 14, defect 3), and the planner's ZeRO choices."""

from __future__ import annotations

import pytest

from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import candidate_plans
from optimizer.workload.memory import (
    LOGIT_BYTES,
    FamilyLoads,
    activation_bytes_per_layer,
    in_flight_chunks,
    memory_per_gpu,
)
from optimizer.workload.pipeline_layout import pipeline_layout
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

LLAMA70 = preset("llama3-70b", activation_recompute="full")


def _plan(zero: int, reshard: bool = True) -> ParallelPlan:
    return ParallelPlan(4, 1, 16, zero_stage=zero, reshard_after_forward=reshard)


def test_zero_2_shards_the_gradients_over_the_data_parallel_group() -> None:
    one, two = memory_per_gpu(LLAMA70, _plan(1)), memory_per_gpu(LLAMA70, _plan(2))
    assert two.gradients_gb == pytest.approx(one.gradients_gb / 16)
    assert (two.weights_gb, two.optimizer_gb) == (one.weights_gb, one.optimizer_gb)


def test_fsdp_without_resharding_keeps_the_whole_shard_of_weights_at_its_peak() -> None:
    kept, three = (
        memory_per_gpu(LLAMA70, _plan(3, reshard=False)),
        memory_per_gpu(LLAMA70, _plan(3)),
    )
    assert kept.weights_gb == pytest.approx(memory_per_gpu(LLAMA70, _plan(1)).weights_gb)
    assert (kept.gradients_gb, kept.optimizer_gb) == (three.gradients_gb, three.optimizer_gb)


def test_zero_3_holds_its_weight_shard_plus_two_gathered_layers() -> None:
    w = LLAMA70
    layer_params = (w.parameters - w.embedding_parameters) / w.layers
    shard = memory_per_gpu(w, _plan(1)).weights_gb / 16
    assert memory_per_gpu(w, _plan(3)).weights_gb == pytest.approx(
        shard + 2 * 2 * layer_params / 4 / 1e9
    )


def test_megatron_warmup_sets_the_chunks_the_first_stage_holds() -> None:
    assert in_flight_chunks(4, 1, 100, rank=0) == 4  # 1F1B: p micro-batches
    assert in_flight_chunks(4, 2, 100, rank=0) == 2 * 3 + 4 + 1  # (v + 1) p - 1
    assert in_flight_chunks(4, 2, 100, rank=3) == 4 + 1
    assert in_flight_chunks(4, 2, 2, rank=0) == 4  # never more than the step's m v chunks


def test_interleaving_holds_no_more_than_the_micro_batches_of_the_step() -> None:
    """With 2 micro-batches a stage never holds more than their activations through its
    layers, however it is cut into chunks (the old factor 1 + (p - 1) / (p v) applied
    regardless); the last stage adds the logits."""
    w = preset("llama3-8b", global_batch_size=16)
    interleaved = memory_per_gpu(w, ParallelPlan(1, 8, 8, virtual_pipeline=2))
    layers = pipeline_layout(w, 8, 2).layers
    logits = LOGIT_BYTES * w.sequence_length * w.vocab_size
    per_layer = activation_bytes_per_layer(w, 1, 1)
    expected = max(2 * k * per_layer + (logits if r == 7 else 0) for r, k in enumerate(layers))
    assert interleaved.activations_gb == pytest.approx(expected / 1e9)


def test_the_first_of_uneven_stages_holds_its_layers_and_the_embedding() -> None:
    w = preset("llama3-405b", activation_recompute="full")
    layer = (w.parameters - w.embedding_parameters) / w.layers
    first = FamilyLoads(w, 8, 16, 16, 1, 1, 1).stage(0, 1)
    got = first.memory(0, True).weights_gb
    assert got == pytest.approx((7 * layer + w.vocab_size * w.hidden_size) / 8 * 2 / 1e9)


def test_the_planner_keeps_the_lightest_fitting_stage_of_each_family() -> None:
    """ZeRO-1 does not fit 70B on t = 4 x 16 ranks; ZeRO-2 (replicated weights) and FSDP
    without re-sharding (sharded weights) do, so ZeRO-3 with re-sharding only adds traffic."""
    plans = candidate_plans(LLAMA70, cluster(64), PartialPlan(tensor=4, pipeline=1))
    stages = {(p.zero_stage, p.reshard_after_forward) for p in plans}
    assert stages == {(2, True), (3, False)}
