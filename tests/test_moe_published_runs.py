"""Mixtures of experts against NVIDIA's published H100 throughputs.

The rows (optimizer/performance/data/moe-unseen-runs.json, each with its source) state the
layout, so the planner is not involved: the estimate of the stated plan against the published
tokens/s a GPU, held to issue 14's bar for runs the project has not seen (20 %). DeepSeek-V3
on 1,024 H100s (force-balanced, HybridEP's node-deduplicated dispatch) and the token-drop run
of Qwen3-30B-A3B meet it. The token-dropless runs of Qwen3-30B-A3B (the same layout, half the
speed) and GPT-OSS 120B do not: the model times them 40-90 % faster than published
(docs/performance-model.md, "Fine-grained MoE"); their tests are strict xfails.
"""

from __future__ import annotations

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance.validation import MoeUnseenRun, moe_unseen_runs

UNSEEN_WORST = 0.20  # issue 14 acceptance: runs the project has not seen, worst error


def _rows() -> list[object]:
    return [
        pytest.param(
            run,
            id=run.id,
            marks=[pytest.mark.xfail(strict=True, reason=run.known_gap)] if run.known_gap else [],
        )
        for run in moe_unseen_runs()
    ]


@pytest.mark.parametrize("run", _rows())
def test_the_stated_layouts_throughput_is_within_the_unseen_runs_bar(run: MoeUnseenRun) -> None:
    response = estimate(ParseDict(run.request, estimate_pb2.EstimateRequest()))
    per_gpu = response.tokens_per_s / response.gpus_used

    assert abs(per_gpu / run.published_tokens_per_s_per_gpu - 1.0) <= UNSEEN_WORST
