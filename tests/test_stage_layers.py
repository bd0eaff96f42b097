"""A stated pipeline layout (``parallelism.stage_layers``: Megatron-Core's even default, its
num_layers_in_first/last_pipeline_stage, account_for_embedding/loss_in_pipeline_split or
pipeline_model_parallel_layout) is timed and sized as stated, never replaced by the model's
balanced one; a response states the layout it timed, and says where its own balanced layout
is not what Megatron-Core runs by default."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict
from hypothesis import given
from hypothesis import strategies as st
from service_support import TOKEN_A, Stubs, bearer, invalid_argument_fields, token_stubs

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.api import estimate, optimize
from optimizer.errors import InvalidInput
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for, unseen_runs
from optimizer.workload.memory import held_blocks
from optimizer.workload.pipeline_layout import (
    least_slowest_stage_share,
    megatron_splits,
    pipeline_layout,
)
from optimizer.workload.presets import preset

# NVIDIA's GPT-OSS 120B row (data/unseen-runs.json): PP 4 at its recipe's even split, 9 layers a
# stage, the 201,088-token output layer (4.2 layer-equivalents) beside the last stage's nine.
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
GPT_OSS = next(r for r in unseen_runs() if r.id == "gpt-oss-120b-64xh100-dropless")


def _request(stage_layers: list[int] | None = None, **parallelism: int) -> dict[str, object]:
    request = {**GPT_OSS.request, "parallelism": {**GPT_OSS.request["parallelism"], **parallelism}}
    if stage_layers is None:
        request["parallelism"].pop("stage_layers")
    else:
        request["parallelism"]["stage_layers"] = stage_layers
    return request


def _estimate(request: dict[str, object]) -> estimate_pb2.EstimateResponse:
    return estimate(ParseDict(request, estimate_pb2.EstimateRequest()))


def _refusal(request: dict[str, object]) -> InvalidInput:
    with pytest.raises(InvalidInput) as e:
        _estimate(request)
    return e.value


def test_the_stated_layout_is_the_one_timed_and_answered() -> None:
    response = _estimate(_request([9, 9, 9, 9]))

    assert list(response.parallelism.stage_layers) == [9, 9, 9, 9]
    assert not [n for n in response.notes if n.startswith("pipeline layout")]


def test_left_out_the_model_balances_the_stages_and_answers_its_layout() -> None:
    balanced = _estimate(_request())

    assert list(balanced.parallelism.stage_layers) == [10, 10, 10, 6]
    assert sum(balanced.parallelism.stage_layers) == GPT_OSS.request["workload"]["layers"]


def test_an_even_split_beside_a_heavy_output_layer_is_slower_than_the_balanced_layout() -> None:
    """The recipe's even split puts 9 layers and the output layer on the last stage (13.2
    layer-equivalents), the balanced layout 6 (10.2): the slowest stage sets the pace."""
    even = _estimate(_request([9, 9, 9, 9]))
    balanced = _estimate(_request())

    assert even.breakdown.compute_s / balanced.breakdown.compute_s == pytest.approx(
        (9 + 4.23) / (6 + 4.23), rel=0.005
    )
    assert even.step_time_s > balanced.step_time_s


def test_the_balanced_layout_says_how_megatron_runs_it_and_what_the_even_split_costs() -> None:
    note = next(n for n in _estimate(_request()).notes if n.startswith("pipeline layout"))

    assert "10, 10, 10, 6 layers on the 4 stages" in note
    assert "pipeline_model_parallel_layout" in note
    assert "the even split (9, 9, 9, 9): 13.2 (+29%)" in note


def test_outside_megatron_core_the_note_names_no_split_the_stack_does_not_make() -> None:
    """DeepSpeed's PipelineEngine partitions as its user builds the stages (by parameters,
    by default), not by Megatron-Core's even split: the note says what to build, no more."""
    request = json.loads((EXAMPLES / "estimate-bert-large-ethernet.json").read_text())
    request["workload"]["framework"] = "deepspeed"
    request["parallelism"] = {"pipeline": 4}

    note = next(n for n in _estimate(request).notes if n.startswith("pipeline layout"))

    assert note.endswith("the stages must be built with these layers")
    assert "even split" not in note


def test_where_the_layers_do_not_divide_megatrons_embedding_and_loss_split_is_named() -> None:
    """94 layers (Qwen3-235B-A22B's) on 4 stages: no even split, and (94 + 2) / 4 = 24 a stage
    with the embedding and the loss in a layer's place; on 5 stages neither."""
    w = replace(preset("llama3-8b"), layers=94)

    assert megatron_splits(w, 4) == [
        ("account_for_embedding/loss_in_pipeline_split", (23, 24, 24, 23))
    ]
    assert megatron_splits(w, 5) == []
    assert megatron_splits(preset("llama3-70b"), 8) == [("the even split", (10,) * 8)]


def test_a_stated_layout_fixes_the_pipeline_the_planner_may_choose() -> None:
    request = _request([9, 9, 9, 9])
    request["parallelism"] = {"stage_layers": [12, 12, 12]}

    response = _estimate(request)

    assert response.parallelism.pipeline == 3
    assert list(response.parallelism.stage_layers) == [12, 12, 12]


@pytest.mark.parametrize(
    ("stage_layers", "field", "says"),
    [
        ([9, 9, 9, 10], "parallelism.stage_layers", "add up to workload.layers = 36"),
        ([12, 12, 12], "parallelism.stage_layers", "3 stages, but parallelism.pipeline is 4"),
        ([18, 0, 9, 9], "parallelism.stage_layers", "every stage holds a layer"),
    ],
)
def test_a_layout_that_cannot_be_laid_out_is_refused_naming_the_field(
    stage_layers: list[int], field: str, says: str
) -> None:
    error = _refusal(_request(stage_layers))

    assert error.field == field
    assert says in str(error)


def test_dualpipe_refuses_an_odd_stated_layout_naming_it() -> None:
    """DualPipe pairs stage r with stage p - 1 - r: three stated stages cannot pair."""
    request = _request([12, 12, 12])
    request["parallelism"] = {"stage_layers": [12, 12, 12]}
    request["workload"] = {**request["workload"], "pipeline_schedule": "dualpipe"}

    error = _refusal(request)

    assert error.field == "parallelism.stage_layers"
    assert "even number of pipeline ranks" in str(error)


def test_more_chunks_than_the_stated_layout_fills_is_refused() -> None:
    """A middle stage of 2 layers fills 2 chunks, an end stage of 1 layer 2 (its embedding's
    or its output layer's chunk beside its layer)."""
    error = _refusal(_request([16, 2, 2, 16], virtual_pipeline=3))

    assert error.field == "parallelism.virtual_pipeline"
    assert "expected at most 2" in str(error)


def _optimize(stage_layers: list[int]) -> optimize_pb2.OptimizeResponse:
    return optimize(
        optimize_pb2.OptimizeRequest(
            catalog="infiniband-ndr",
            workload=estimate_pb2.Workload(model="llama3-8b", training_tokens=2e11),
            constraints=optimize_pb2.Constraints(target_training_hours=200),
            parallelism=estimate_pb2.Parallelism(stage_layers=stage_layers),
        )
    )


def test_an_optimize_request_times_every_design_at_the_stated_layout() -> None:
    """As a fixed degree is every design's, so is a stated layout: each design's plan has
    its stages, and its estimate says so."""
    response = _optimize([10, 8, 8, 6])

    assert response.designs
    for design in response.designs:
        assert design.estimate.parallelism.pipeline == 4
        assert list(design.estimate.parallelism.stage_layers) == [10, 8, 8, 6]


def test_an_optimize_request_refuses_a_layout_of_other_layers_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as e:
        _optimize([16, 8])
    assert e.value.field == "parallelism.stage_layers"


def test_whoever_searches_a_workload_with_a_stated_layout_gets_its_stage_count() -> None:
    """The planner takes the pipeline degree from the layout itself when the caller fixes
    none (a portfolio's other workloads, the rented run beside a design)."""
    w = replace(preset("llama3-8b"), stage_layers=(10, 8, 8, 6))
    c = cluster_for(HGX_H100, 64, "fat_tree", "infiniband", 1.0)

    plan = plan_and_estimate(w, c, why=False).plan

    assert plan.pipeline == 4


def test_the_memory_of_the_fullest_stage_reads_the_stated_layout() -> None:
    w = replace(preset("llama3-70b"), stage_layers=(26, 18, 18, 18))

    assert held_blocks(w, 4, 1) == (26, 18, 18, 18)
    assert pipeline_layout(w, 4).layers == (26, 18, 18, 18)


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[int, ...]:
    p = draw(st.integers(2, 8))
    cuts = sorted(draw(st.lists(st.integers(1, 79), min_size=p - 1, max_size=p - 1, unique=True)))
    return tuple(b - a for a, b in zip([0, *cuts], [*cuts, 80], strict=True))


@given(_layouts())
def test_no_stated_layout_has_a_lighter_slowest_stage_than_the_balanced_one(
    layout: tuple[int, ...],
) -> None:
    """The planner bounds a pipeline by least_slowest_stage_share before it builds its
    candidates: the balanced layout's share is the least any layout of those stages has, and
    a stated layout's bound is its own share."""
    balanced = preset("llama3-70b")
    stated = replace(balanced, stage_layers=layout)
    p = len(layout)

    share = pipeline_layout(stated, p).slowest_stage_share
    assert share >= least_slowest_stage_share(balanced, p) - 1e-9
    assert least_slowest_stage_share(stated, p) == share


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    yield from token_stubs(tmp_path_factory.mktemp("server"))


def test_over_grpc_a_bad_layout_is_invalid_argument_naming_the_field(stubs: Stubs) -> None:
    request = ParseDict(_request([9, 9, 9, 10]), estimate_pb2.EstimateRequest())

    fields = invalid_argument_fields(
        lambda: stubs.optimizer.Estimate(request, metadata=bearer(TOKEN_A), timeout=30)
    )

    assert fields == ["parallelism.stage_layers"]


def test_over_grpc_the_response_states_the_layout_it_timed(stubs: Stubs) -> None:
    request = ParseDict(_request([9, 9, 9, 9]), estimate_pb2.EstimateRequest())
    response = stubs.optimizer.Estimate(request, metadata=bearer(TOKEN_A), timeout=30)
    assert list(response.parallelism.stage_layers) == [9, 9, 9, 9]
