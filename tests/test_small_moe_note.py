"""What the estimate says to a mixture of experts with few active parameters (issue 14,
honest limits).

NVIDIA's published H100 runs of Qwen3-30B-A3B and GPT-OSS 120B, never fitted, train slower
than the model times their stated plans, by more than issue 14's 20 % bar on three of four
rows; those of Qwen3-235B-A22B and DeepSeek-V3 are within it (docs/performance-model.md,
"Fine-grained MoE"). Until the model has a term for what their stack costs a small model, an
estimate of one says so and points to calibration, with the published figures it rests on."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_support import SMALL_SCENARIO
from cli_support import run as cli
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.estimator import (
    LARGE_MOE_PUBLISHED_ERROR,
    SMALL_MOE_ACTIVE_PARAMETERS,
    SMALL_MOE_PUBLISHED_SPEED_RATIOS,
    small_moe_note,
)
from optimizer.performance.validation import UnseenRun, unseen_runs
from optimizer.workload.presets import preset


def _request(run: UnseenRun) -> estimate_pb2.EstimateRequest:
    return ParseDict(run.request, estimate_pb2.EstimateRequest())


def _moe_runs() -> list[tuple[UnseenRun, float, float]]:
    """(run, active parameters, the model's tokens/s a GPU over the published) of every MoE
    row."""
    found = []
    for run in unseen_runs():
        request = _request(run)
        w = workload_from_proto(request.workload)
        if w.is_moe:
            response = estimate(request)
            speed = response.tokens_per_s / response.gpus_used
            found.append((run, w.active_parameters, speed / run.published_tokens_per_s_per_gpu))
    return found


@pytest.fixture(scope="module")
def moe_runs() -> list[tuple[UnseenRun, float, float]]:
    return _moe_runs()


def test_the_threshold_parts_the_published_moe_runs(
    moe_runs: list[tuple[UnseenRun, float, float]],
) -> None:
    small = [a for _, a, _ in moe_runs if a < SMALL_MOE_ACTIVE_PARAMETERS]
    large = [a for _, a, _ in moe_runs if a >= SMALL_MOE_ACTIVE_PARAMETERS]

    assert len(small) == 4 and len(large) == 4


def test_the_note_gives_the_small_runs_published_speed_ratios(
    moe_runs: list[tuple[UnseenRun, float, float]],
) -> None:
    ratios = [r for _, a, r in moe_runs if a < SMALL_MOE_ACTIVE_PARAMETERS]

    assert (round(min(ratios), 2), round(max(ratios), 2)) == SMALL_MOE_PUBLISHED_SPEED_RATIOS
    assert min(ratios) > 1.0  # every one slower than the model times it


def test_the_note_gives_the_large_runs_worst_error_rounded_up(
    moe_runs: list[tuple[UnseenRun, float, float]],
) -> None:
    worst = max(abs(r - 1.0) for _, a, r in moe_runs if a >= SMALL_MOE_ACTIVE_PARAMETERS)

    assert math.ceil(worst * 100) / 100 == LARGE_MOE_PUBLISHED_ERROR


def test_an_estimate_of_a_small_moe_says_so_and_points_to_calibration() -> None:
    run = next(r for r in unseen_runs() if r.id == "gpt-oss-120b-64xh100-dropless")
    notes = estimate(_request(run)).notes

    (note,) = [n for n in notes if "active parameters a token" in n]
    assert "5.7B active" in note
    assert "1.16-2.31 x slower" in note
    assert "procure calibrate" in note


@pytest.mark.parametrize("model", ["deepseek-v3", "llama3-70b", "mixtral-8x7b"])
def test_no_note_for_dense_models_or_many_active_parameters(model: str) -> None:
    assert small_moe_note(preset(model)) is None


def test_optimize_warns_once_naming_the_ranks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The designs' table shows no estimate's notes: the optimizer says it once, as it says
    what a calibration profile leaves out."""
    run = next(r for r in unseen_runs() if r.id == "qwen3-30b-a3b-16xh100-tokendrop")
    workload = {**run.request["workload"], "training_tokens": 2e9}
    request = tmp_path / "small-moe.json"
    request.write_text(
        json.dumps({"workload": workload, "constraints": {"target_training_hours": 48}, "top_k": 2})
    )
    result = cli(capsys, "optimize", str(request), "--catalog", SMALL_SCENARIO[1])

    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    assert text.count("a mixture of experts with 3.4B active parameters a token") == 1
    assert "warning: ranks 1, 2: a mixture of experts with 3.4B active" in text
