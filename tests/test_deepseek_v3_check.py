"""A mixture of experts the visible published set lacks (every run there is dense).

DeepSeek-V3's pre-training, 14.8T tokens on 2,048 H800 GPUs in 2,664K GPU hours (DeepSeek-AI,
"DeepSeek-V3 Technical Report", arXiv:2412.19437, Table 1 and sec. 3.1; sec. 1: 180K GPU
hours per trillion tokens, 3.7 days on the cluster), estimated uncalibrated on that cluster
(examples/estimate-deepseek-v3-h800.json, FP8, its node-deduplicated dispatch and 4-node
routing, its DualPipe schedule (sec. 3.2.1), the planner's plan; NVIDIA's benchmark of it on
1,024 H100s, a stated layout under Megatron-Core's 1F1B, is a row of
tests/test_unseen_published_runs.py). Issue 14's bar for large runs the project has not seen
is 20 %: docs/performance-model.md, "A mixture-of-experts check"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "estimate-deepseek-v3-h800.json"
PUBLISHED_GPU_HOURS = 2_664_000.0  # pre-training, Table 1
GPUS = 2_048
UNSEEN_WORST = 0.20  # issue 14 acceptance: runs the project has not seen, worst error


@pytest.fixture(scope="module")
def response() -> estimate_pb2.EstimateResponse:
    request = ParseDict(json.loads(EXAMPLE.read_text()), estimate_pb2.EstimateRequest())
    return estimate(request)


def test_the_example_is_deepseek_v3s_published_cluster(
    response: estimate_pb2.EstimateResponse,
) -> None:
    spec = json.loads(EXAMPLE.read_text())

    assert spec["cluster"]["gpus"] == GPUS
    assert response.gpus_used == GPUS


def test_its_training_time_is_within_the_unseen_runs_bar_of_the_published_gpu_hours(
    response: estimate_pb2.EstimateResponse,
) -> None:
    published_hours = PUBLISHED_GPU_HOURS / GPUS

    assert abs(response.training_time_hours / published_hours - 1.0) <= UNSEEN_WORST


def test_the_published_time_lies_in_the_estimated_range(
    response: estimate_pb2.EstimateResponse,
) -> None:
    published_hours = PUBLISHED_GPU_HOURS / GPUS

    assert response.training_time_hours_low <= published_hours <= response.training_time_hours_high


def test_the_published_time_is_no_faster_than_the_estimated_compute_alone(
    response: estimate_pb2.EstimateResponse,
) -> None:
    """What overlapping every collective could reach: the step's compute and bubble, no
    communication exposed. Overlap hides communication, never compute."""
    published_hours = PUBLISHED_GPU_HOURS / GPUS
    b = response.breakdown
    compute_share = (b.compute_s + b.pipeline_bubble_s) / response.step_time_s

    assert response.training_time_hours * compute_share <= published_hours
