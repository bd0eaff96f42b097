"""Published H100 throughputs the model is never fitted on, at their stated layouts.

The rows (optimizer/performance/data/unseen-runs.json, each with its source) state the layout,
so the planner is not involved: the estimate of the stated plan against the published tokens/s
a GPU, held to issue 14's bar for runs the project has not seen (20 %). Rows that miss it say
why in ``known_gap`` and are strict xfails: NVIDIA's 2025-26 FP8 recipe for dense Llama 3 8B
(the model is 25 % slow) and its token-dropless runs of small fine-grained MoE models (the
model is 50-106 % fast); docs/performance-model.md, "NVIDIA's recipes" and
"Fine-grained MoE". A series of these rows (one stack and precision at growing scale) is also
calibrated on its two smallest runs and its others predicted, the bar after calibration.
"""

from __future__ import annotations

import pytest
from google.protobuf.json_format import ParseDict

from benchmarks.estimator_accuracy import unseen_series_predictions
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance.validation import UnseenRun, unseen_runs

UNSEEN_WORST = 0.20  # issue 14 acceptance: runs the project has not seen, worst error


def _rows() -> list[object]:
    return [
        pytest.param(
            run,
            id=run.id,
            marks=[pytest.mark.xfail(strict=True, reason=run.known_gap)] if run.known_gap else [],
        )
        for run in unseen_runs()
    ]


@pytest.mark.parametrize("run", _rows())
def test_the_stated_layouts_throughput_is_within_the_unseen_runs_bar(run: UnseenRun) -> None:
    response = estimate(ParseDict(run.request, estimate_pb2.EstimateRequest()))
    per_gpu = response.tokens_per_s / response.gpus_used

    assert abs(per_gpu / run.published_tokens_per_s_per_gpu - 1.0) <= UNSEEN_WORST


def test_calibrated_on_its_two_smallest_runs_a_series_predicts_its_others_within_the_bar() -> None:
    """issue 14's bar after calibration, on runs the project has not seen: NVIDIA's dense Llama
    3 FP8 series (8 -> 64 -> 1,024 H100s), calibrated on its 8B and 70B runs (both fitted to
    0.0 %: kernel efficiency 0.986, x1.45 the built-in, and collective efficiency 0.384),
    predicts its two 405B runs at +11.4 and +12.4 %: within 20 % but not the 8 % median, and
    further off than uncalibrated (-1.8, +2.5 %): the small runs' faster stack (attention,
    fused kernels) goes into the kernel efficiency, which then speeds the GEMM-bound 405B
    step too much (docs/performance-model.md, "NVIDIA's recipes")."""
    predictions = unseen_series_predictions()

    assert {p.run.id for p in predictions} == {
        "llama3.1-405b-1024xh100-fp8-gbs512",
        "llama3.1-405b-1024xh100-fp8-gbs1536",
    }
    assert max(abs(p.calibrated_error) for p in predictions) <= UNSEEN_WORST
