"""An estimate whose step is visibly the expert all-to-all says that the model times it
exposed. Stacks that overlap it with another micro-batch's compute run faster, and the user
must be told by how much at most, and that DeepSeek's DualPipe and Megatron-Core's Combined
1F1B are timed when the request states them (workload.pipeline_schedule; docs/performance-
model.md, "A mixture-of-experts check", "Combined 1F1B")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance.estimator import EXPOSED_ALL_TO_ALL_NOTE_SHARE, exposed_all_to_all_note

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _estimate(example: str) -> estimate_pb2.EstimateResponse:
    spec = json.loads((EXAMPLES / example).read_text())
    return estimate(ParseDict(spec, estimate_pb2.EstimateRequest()))


def _exposure_notes(response: estimate_pb2.EstimateResponse) -> list[str]:
    return [n for n in response.notes if "is timed exposed" in n]


def test_qwen3s_estimate_names_its_all_to_all_share_of_the_step() -> None:
    response = _estimate("estimate-qwen3-235b-a22b.json")
    a2a_s = response.breakdown.all_to_all_s

    (note,) = _exposure_notes(response)
    share = re.search(r"s step, (\d+)%\)", note)
    assert share is not None
    assert int(share.group(1)) == round(100 * a2a_s / response.step_time_s)
    assert "pipeline_schedule dualpipe" in note
    assert "combined_1f1b" in note


def test_under_dualpipe_the_note_says_what_runs_beside_the_compute_instead() -> None:
    response = _estimate("estimate-deepseek-v3-h800.json")  # states DualPipe

    assert _exposure_notes(response) == []
    assert any(n.startswith("DualPipe over") for n in response.notes)


@pytest.mark.parametrize(
    "example", ["estimate-llama3-70b.json", "estimate-gpt3-175b-megatron.json"]
)
def test_a_dense_models_estimate_has_no_such_note(example: str) -> None:
    assert _exposure_notes(_estimate(example)) == []


def test_an_all_to_all_below_the_threshold_share_goes_unremarked() -> None:
    step_s = 10.0
    just_below = EXPOSED_ALL_TO_ALL_NOTE_SHARE * step_s * 0.99

    assert exposed_all_to_all_note(just_below, step_s) is None
    assert exposed_all_to_all_note(EXPOSED_ALL_TO_ALL_NOTE_SHARE * step_s, step_s) is not None
