"""Uneven pipelines (issue 14, defect 2): layers need not split evenly over the stages; the
slowest stage sets the pace and interleaving may go as deep as a layer per chunk, the end
stages giving a chunk each to the embedding and the output layer."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.performance.estimator import StepModel, estimate
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import candidate_plans
from optimizer.workload.model import Workload
from optimizer.workload.pipeline_layout import (
    deepest_interleaving,
    least_slowest_stage_share,
    output_layer_equivalents,
    pipeline_layout,
)
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster, qwen3_30b

LLAMA405 = preset("llama3-405b")
LLAMA405_FULL = preset("llama3-405b", activation_recompute="full")  # fits 80 GB at p = 16


def test_126_layers_over_16_stages_put_one_layer_less_on_the_first_and_last() -> None:
    """Llama 3 405B's layout (Dubey et al. 2024 sec. 3.3.2)."""
    layout = pipeline_layout(LLAMA405, 16)
    assert layout.layers == (7, *[8] * 14, 7)
    assert layout.slowest_stage_load == 8


def test_the_output_layer_counts_on_the_last_stage() -> None:
    x = output_layer_equivalents(LLAMA405)
    assert 0.5 < x < 0.7  # 2 h V against a 405B layer's weights and attention
    # 32 layers over 2 stages: 16 + 16 would make the last stage 16 + 1.7 layers.
    layout = pipeline_layout(preset("llama3-8b"), 2)
    assert layout.layers == (17, 15)


def test_the_step_computes_at_the_slowest_stages_pace() -> None:
    c = cluster(2048)
    fabric = DEFAULT_FABRICS[c.fabric]
    piped = StepModel(LLAMA405, c, ParallelPlan(8, 16, 16), fabric)
    flat = StepModel(LLAMA405, c, ParallelPlan(8, 1, 256), fabric)
    share = pipeline_layout(LLAMA405, 16).slowest_stage_share
    assert share == pytest.approx(16 * 8 / (126 + output_layer_equivalents(LLAMA405)))
    assert piped.tensor_core_s == pytest.approx(flat.tensor_core_s * share)


@pytest.mark.parametrize("v", [2, 3, 5, 7])
def test_interleaving_is_accepted_when_chunks_are_uneven(v: int) -> None:
    est = estimate(LLAMA405_FULL, cluster(2048), ParallelPlan(8, 16, 16, virtual_pipeline=v))
    assert est.plan.virtual_pipeline == v


def test_uneven_chunks_stretch_the_bubble_to_the_largest_chunk() -> None:
    """7 chunks of 8 layers: one chunk holds 2 layers, so the fill and drain pass 2-layer
    chunks, not 8 / 7 of a layer."""
    c = cluster(2048)
    plan = ParallelPlan(8, 16, 16, virtual_pipeline=7)
    b = estimate(LLAMA405_FULL, c, plan).breakdown
    m = 2048 // 16
    assert pipeline_layout(LLAMA405_FULL, 16, 7).chunk_imbalance == pytest.approx(2 * 7 / 8)
    assert b.pipeline_bubble_s == pytest.approx(
        15 / (7 * m) * (2 * 7 / 8) * (b.compute_s + b.tensor_parallel_s + b.all_to_all_s)
    )


def test_the_planner_tries_pipeline_degrees_that_do_not_divide_the_layers() -> None:
    plans = candidate_plans(LLAMA405, cluster(1536), PartialPlan(tensor=8))
    assert any(LLAMA405.layers % p.pipeline for p in plans)


def test_the_planner_interleaves_deeper_than_four_when_the_bubble_pays_for_it() -> None:
    w = preset("gpt3-175b")  # 96 layers: 12 per stage on 8 stages
    plans = candidate_plans(w, cluster(1024), PartialPlan(tensor=8, pipeline=8))
    assert max(p.virtual_pipeline for p in plans) > 4


def test_more_chunks_than_layers_name_the_virtual_pipeline_field() -> None:
    with pytest.raises(InvalidInput, match=r"parallelism.virtual_pipeline.*at most 8"):
        estimate(LLAMA405_FULL, cluster(2048), ParallelPlan(8, 16, 16, virtual_pipeline=9))


def test_126_layers_interleave_a_layer_per_chunk_with_the_ends_holding_embedding_and_output() -> (
    None
):
    """ "The first model chunk on the first stage has only the embedding, and the last model
    chunk on the last stage has only output projection and loss calculation" (Dubey et al.
    2024, sec. 3.3.2): 16 stages of 8 chunks hold 126 layers, every chunk alike, so the fill
    and drain pass one-layer chunks. Refused before (at most 7), where the largest chunk
    held 2 layers and the bubble was 1.75x as long."""
    layout = pipeline_layout(LLAMA405_FULL, 16, 8)
    assert layout.layers == (7, *[8] * 14, 7)
    assert layout.chunk_imbalance == 1.0
    b = estimate(LLAMA405_FULL, cluster(2048), ParallelPlan(8, 16, 16, virtual_pipeline=8))
    m = 2048 // 16
    assert b.breakdown.pipeline_bubble_s == pytest.approx(
        15 / (8 * m) * (b.breakdown.compute_s + b.breakdown.tensor_parallel_s)
    )


def test_layers_that_fill_every_chunk_keep_a_layer_in_each() -> None:
    """The end stages give a chunk away only where the layers cannot fill them all."""
    assert pipeline_layout(preset("llama3-8b"), 4, 8).layers == (8, 8, 8, 8)


def test_with_one_micro_batch_the_stages_idle_p_minus_1_stages_time() -> None:
    """One micro-batch crosses the p stages in turn: each idles (p - 1) stages' time."""
    w = preset("llama3-70b", global_batch_size=64)
    plain = estimate(w, cluster(2048), ParallelPlan(8, 4, 64, virtual_pipeline=1)).breakdown
    assert plain.pipeline_bubble_s == pytest.approx(
        3 * (plain.compute_s + plain.tensor_parallel_s + plain.all_to_all_s)
    )


def test_interleaving_micro_batches_that_are_not_a_multiple_of_the_stages_is_refused() -> None:
    """Megatron-LM's interleaved schedule raises unless the micro-batches per step are a
    multiple of the stages (megatron/core/pipeline_parallel/schedules.py). One micro-batch
    on 4 stages at v = 4 used to be timed (as the bubble of v = 1); it cannot run."""
    w = preset("llama3-70b", global_batch_size=64)
    with pytest.raises(InvalidInput, match=r"parallelism.virtual_pipeline.*groups of pipeline"):
        estimate(w, cluster(2048), ParallelPlan(8, 4, 64, virtual_pipeline=4))


def _per_stage_layout(n: int, p: int, v: int, x_out: float) -> tuple[tuple[int, ...], float]:
    """The layout worked out stage by stage (as pipeline_layout did before it worked per kind
    of stage): the smallest largest load T over every stage's floor(T - extra) layers, each
    stage's every possible load tried, then the spare layers off the first stage, the last,
    and the middle ones in turn."""
    eps = 1e-9
    extra = [0.0] * p
    extra[-1] += x_out
    least = [v] * p
    if p * v > n:
        least[0] -= 1
        least[-1] -= 1
    # every load a stage can have (k layers and its extra), not only those near n / p
    candidates = sorted({k + x for k in range(n + 1) for x in set(extra)})
    target = next(
        t
        for t in candidates
        if all(t + eps >= lo + x for lo, x in zip(least, extra, strict=True))
        and sum(math.floor(t - x + eps) for x in extra) >= n
    )
    layers = [math.floor(target - x + eps) for x in extra]
    surplus = sum(layers) - n
    for i in (0, p - 1, *range(1, p - 1)):
        take = min(surplus, layers[i] - least[i])
        layers[i] -= take
        surplus -= take
    return tuple(layers), max(k + x for k, x in zip(layers, extra, strict=True))


def test_a_heavy_output_layer_leaves_its_stage_fewer_layers_than_the_rest() -> None:
    """Qwen3-30B-A3B (48 layers, a 151,936-token vocabulary on h 2,048) over 4 stages: the
    output layer weighs 4.1 layers, so 13, 13, 13 and 9 + 4.1 (the slowest 13.1); the search
    once tried only loads near 48 / 4 for the last stage and laid out 7, 15, 15 and 11 + 4.1
    (15.1), a slowest stage 15 % heavier."""
    w = qwen3_30b()
    assert output_layer_equivalents(w) == pytest.approx(4.07, abs=0.01)
    layout = pipeline_layout(w, 4)
    assert layout.layers == (13, 13, 13, 9)
    assert layout.slowest_stage_load == pytest.approx(9 + output_layer_equivalents(w))


@st.composite
def layouts(draw: st.DrawFn) -> tuple[Workload, int, int]:
    """(workload, pipeline, depth): up to 3,000 layers over any stages and depth they fill,
    output layers from a fraction of a layer to dozens (a vocabulary up to 2M tokens)."""
    name = draw(st.sampled_from(["llama3-405b", "llama3-8b", "bert-large", "gpt3-175b"]))
    vocab = draw(st.sampled_from([preset(name).vocab_size, 256_000, 2_000_000]))
    n = draw(st.integers(1, 3000))
    p = 1 + round(draw(st.floats(0.0, 1.0)) * (min(n + 2, 400) - 1))
    v = 1 + round(draw(st.floats(0.0, 1.0)) * (deepest_interleaving(n, p) - 1))
    return preset(name, layers=n, vocab_size=vocab), p, v


@settings(max_examples=300, deadline=None)
@given(layout=layouts())
def test_the_layout_per_kind_of_stage_is_the_layout_stage_by_stage(
    layout: tuple[Workload, int, int],
) -> None:
    """Thousands of stages are laid out per kind (first, last, the alike ones between), in
    time independent of the stages; the layers and the slowest load are those of the
    stage-by-stage rule, for any depth the layers allow."""
    w, p, v = layout
    laid = pipeline_layout(w, p, v)
    assert (laid.layers, laid.slowest_stage_load) == _per_stage_layout(
        w.layers, p, v, output_layer_equivalents(w)
    )


@settings(max_examples=300, deadline=None)
@given(layout=layouts())
def test_no_depth_paces_a_pipeline_faster_than_one_chunk_a_stage(
    layout: tuple[Workload, int, int],
) -> None:
    """The planner bounds a size by its most even pipeline's slowest stage before building its
    candidates (planner._least_share): the one-chunk layout's, worked out without laying out
    the stages; deeper interleaving only raises the layers each chunk must hold, so no
    depth's slowest stage is lighter."""
    w, p, v = layout
    least = least_slowest_stage_share(w, p)
    assert least == pipeline_layout(w, p).slowest_stage_share
    assert pipeline_layout(w, p, v).slowest_stage_share >= least
