"""Fine-grained mixtures of experts against NVIDIA's published H100 throughputs.

The rows (tests/data/moe_published/megatron_bridge_h100.json, each with its source) state
the layout, so the planner is not involved: the estimate of the stated plan against the
published tokens/s a GPU, held to issue 14's bar for runs the project has not seen (20 %).
NVIDIA's token-drop run of Qwen3-30B-A3B meets it. Its token-dropless, force-balanced runs
of Qwen3-30B-A3B (the same layout, half the speed) and GPT-OSS 120B do not: the model times
them 40-90 % faster than published (docs/performance-model.md, "Fine-grained MoE").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate

ROWS = Path(__file__).resolve().parent / "data" / "moe_published" / "megatron_bridge_h100.json"
UNSEEN_WORST = 0.20  # issue 14 acceptance: runs the project has not seen, worst error
DROPLESS_GAP = (
    "issue 14, not met: NVIDIA's token-dropless MoE runs at half its token-drop speed on the "
    "same layout (Qwen3-30B-A3B: 5,275 against 10,494 tokens/s a GPU); the model has no term "
    "for what dropless costs a small model there (DeepSeek-V3's dropless row is within 12.5 %)"
)


def _rows() -> list[Any]:
    rows = json.loads(ROWS.read_text())["rows"]
    return [
        pytest.param(
            row,
            id=row["id"],
            marks=[pytest.mark.xfail(strict=True, reason=DROPLESS_GAP)] if row["dropless"] else [],
        )
        for row in rows
    ]


@pytest.mark.parametrize("row", _rows())
def test_the_stated_layouts_throughput_is_within_the_unseen_runs_bar(row: dict) -> None:
    request = ParseDict(row["request"], estimate_pb2.EstimateRequest())
    response = estimate(request)
    per_gpu = response.tokens_per_s / response.gpus_used

    assert abs(per_gpu / row["published_tokens_per_s_per_gpu"] - 1.0) <= UNSEEN_WORST
