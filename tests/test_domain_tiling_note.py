"""A stated plan on scale-up domains of no power-of-two size is told what placing its groups
inside them would save (issue 14, topology in the time; docs/performance-model.md, "Scale-up
domain"): in a note, in the response's ``domain_tiled_step_time_s`` (over the real gRPC
service too) and in a row of ``procure estimate``'s table.

The estimate fills an NVL72 rack's 72 GPUs in turn, so a power-of-two expert group of 32
straddles two racks wherever it starts and its all-to-all crosses the network. NVIDIA runs
Qwen3-235B-A22B on 256 GB200s at EP 32 (Megatron-Bridge, docs/performance-summary.md, NeMo
25.11, DGX-GB200 table: BF16, GBS 8192, MBS 1, PP 8, VP 3, force-balanced, token-dropless,
4,916 tokens/s a GPU), a speed only groups kept inside racks reach: the note re-times the plan
on 64-GPU domains (a scheduler's segments of 16 hosts), and that time, not the straddled one,
is within issue 14's bar of NVIDIA's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict, ParseDict

from client.cli import main
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance.validation import unseen_runs
from tests.service_support import TOKEN_A, Stubs, bearer, token_stubs

PUBLISHED_TOKENS_PER_S_PER_GPU = 4_916  # Megatron-Bridge 25.11, DGX-GB200, Qwen3_235B_a22B
UNSEEN_WORST = 0.20  # issue 14 acceptance: runs the project has not seen, worst error
NOTE = "scale-up domains of"


def _stored(run_id: str) -> dict[str, Any]:
    (run,) = [r for r in unseen_runs() if r.id == run_id]
    return run.request


# Qwen3-235B-A22B's architecture as its H100 rows state it, in BF16 at the GB200 table's batch;
# the GB200 NVL72 system as the table's dense Llama 3 8B row states it.
QWEN = {
    **_stored("qwen3-235b-a22b-256xh100-dropless")["workload"],
    "precision": "bf16",
    "global_batch_size": 8192,
}
GB200 = _stored("llama3-8b-8xgb200-fp8")["cluster"]
PLAN = {
    "tensor": 1,
    "pipeline": 8,
    "virtual_pipeline": 3,
    "expert": 32,
    "data": 32,
    "micro_batch_size": 1,
    "context": 1,
    "zero_stage": 1,
}


def _request(
    scale_up_gpus: int, plan: dict[str, int] | None = None
) -> estimate_pb2.EstimateRequest:
    request = {
        "workload": QWEN,
        "cluster": {**GB200, "gpus": 256, "scale_up_gpus": scale_up_gpus},
        "parallelism": PLAN if plan is None else plan,
    }
    return ParseDict(request, estimate_pb2.EstimateRequest())


def _estimate(
    scale_up_gpus: int, plan: dict[str, int] | None = None
) -> estimate_pb2.EstimateResponse:
    return estimate(_request(scale_up_gpus, plan))


def _tiling_notes(response: estimate_pb2.EstimateResponse) -> list[str]:
    return [n for n in response.notes if n.startswith(NOTE)]


@pytest.fixture(scope="module")
def straddled() -> estimate_pb2.EstimateResponse:
    return _estimate(72)


def test_a_plan_whose_expert_groups_straddle_nvl72_racks_is_told_the_tiled_step(
    straddled: estimate_pb2.EstimateResponse,
) -> None:
    tiled = _estimate(64)  # the same plan re-solved on 64-GPU domains, independently

    (note,) = _tiling_notes(straddled)

    assert "an expert group of 32 keeps 8 of its ranks in one domain" in note
    assert "placed 64 GPUs to a domain (4 domains, 32 of their GPUs idle" in note
    steps = f"{tiled.step_time_s:.2f} s instead of {straddled.step_time_s:.2f} s"
    assert f"the step takes {steps}" in note
    assert "cluster.scale_up_gpus 64 times it so" in note
    assert tiled.step_time_s < straddled.step_time_s


def test_the_tiled_time_not_the_straddled_one_is_within_the_bar_of_nvidias_run(
    straddled: estimate_pb2.EstimateResponse,
) -> None:
    def error(response: estimate_pb2.EstimateResponse) -> float:
        per_gpu = response.tokens_per_s / response.gpus_used
        return abs(per_gpu / PUBLISHED_TOKENS_PER_S_PER_GPU - 1.0)

    assert error(_estimate(64)) <= UNSEEN_WORST < error(straddled)


def test_groups_a_domain_already_holds_get_no_note() -> None:
    """EP 8 keeps every group inside one 72-GPU domain wherever it starts (gcd(8, 72))."""
    plan = {**PLAN, "pipeline": 32, "virtual_pipeline": 1, "expert": 8, "data": 8}

    assert _tiling_notes(_estimate(72, plan)) == []


def test_power_of_two_domains_get_no_note() -> None:
    assert _tiling_notes(_estimate(64)) == []


def test_a_searched_plan_gets_no_note_the_planner_weighed_the_tiling() -> None:
    partial = {"tensor": 1, "expert": 32, "micro_batch_size": 1, "context": 1}

    assert _tiling_notes(_estimate(72, partial)) == []


def test_the_response_carries_the_tiled_step(straddled: estimate_pb2.EstimateResponse) -> None:
    assert straddled.domain_tiled_step_time_s == pytest.approx(_estimate(64).step_time_s)


def test_without_a_saving_the_field_is_zero() -> None:
    assert _estimate(64).domain_tiled_step_time_s == 0.0


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    yield from token_stubs(tmp_path_factory.mktemp("tiling"))


def test_the_field_crosses_the_service(
    stubs: Stubs, straddled: estimate_pb2.EstimateResponse
) -> None:
    reply = stubs.optimizer.Estimate(_request(72), metadata=bearer(TOKEN_A), timeout=60)

    assert reply.domain_tiled_step_time_s == pytest.approx(straddled.domain_tiled_step_time_s)


def test_procure_estimate_prints_the_tiled_step_only_where_it_saves(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, straddled: estimate_pb2.EstimateResponse
) -> None:
    def table(scale_up_gpus: int) -> str:
        path = tmp_path / f"spec-{scale_up_gpus}.json"
        path.write_text(json.dumps(MessageToDict(_request(scale_up_gpus))))
        with pytest.raises(SystemExit) as done:
            main(["estimate", str(path)])
        assert done.value.code in (0, None)
        return capsys.readouterr().out

    row = "step, groups inside power-of-two parts of domains (s)"
    straddled_table = table(72)

    assert row in straddled_table
    assert f"{straddled.domain_tiled_step_time_s:.3f}" in straddled_table
    assert row not in table(64)
