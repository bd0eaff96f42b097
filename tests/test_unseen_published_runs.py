"""Published throughputs the model is never fitted on, at their stated layouts.

The rows (optimizer/performance/data/unseen-runs.json, each with its source) state the layout,
so the planner is not involved: the estimate of the stated plan against the published tokens/s
a GPU, held to issue 14's bar for runs the project has not seen (20 %). Two NVIDIA tables:
Megatron-Bridge's (NeMo 25.09-26.02.01; H100, and dense Llama 3 on B200, GB200 and GB300)
and, whole, NeMo 24.07's FP8 pre-training table (GPT-3, Llama 2, Nemotron and Llama 3 on 8 to
512 H100s). Every row runs Transformer Engine, whose cuDNN attention the rows state
(``attention_kernel: cudnn``). Rows that miss the bar say why in ``known_gap`` and are strict
xfails: NVIDIA's token-dropless runs of small fine-grained MoE models (the model is 27-132 %
fast); docs/performance-model.md, "NVIDIA's recipes", "Fine-grained MoE" and "New hardware".
Every row with a pipeline states the layers of each stage as its recipe lays them out
(``parallelism.stage_layers``; "Stated pipeline layouts"), and every row the ZeRO stage its
table publishes (FSDP 0: Megatron's distributed optimizer, zero_stage 1). A series of these
rows (one stack and precision at growing scale) is also calibrated on its two smallest runs
and its others predicted, the bar after calibration.
"""

from __future__ import annotations

import statistics

import pytest
from google.protobuf.json_format import ParseDict

from benchmarks.estimator_accuracy import same_stack_speedups, unseen_series_predictions
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance.validation import UnseenRun, unseen_runs

UNSEEN_WORST = 0.20  # issue 14 acceptance: runs the project has not seen, worst error
UNSEEN_MEDIAN = 0.08  # and their median error
# A GPU generation's speed-up over H100 on one stack, as the MLPerf time ratios are held
# (tests/test_published_runs.py): within 15 %.
SPEEDUP_TOLERANCE = 0.15


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


def _median_error(runs: list[UnseenRun]) -> float:
    errors = []
    for run in runs:
        response = estimate(ParseDict(run.request, estimate_pb2.EstimateRequest()))
        per_gpu = response.tokens_per_s / response.gpus_used
        errors.append(abs(per_gpu / run.published_tokens_per_s_per_gpu - 1.0))
    return statistics.median(errors)


def _on_h100(run: UnseenRun) -> bool:
    return "H100" in run.request["cluster"]["gpu_model"]


def test_the_never_fitted_runs_median_error_meets_the_bar() -> None:
    """issue 14: median |error| <= 8 % on runs the project has not seen, every row counted
    (the known gaps too): 7.6 % over the 29 rows since they state their recipes' pipeline
    layouts and the ZeRO stage their tables publish (FSDP 0: Megatron's distributed optimizer);
    9.1 % with the layouts alone, 7.2 % at the model's balanced layouts with the planner's ZeRO
    stages, 11.2 % with every row's attention timed at the FlashAttention-2 class's speed,
    before the rows stated cuDNN's."""
    assert _median_error(unseen_runs()) <= UNSEEN_MEDIAN


def test_the_never_fitted_h100_runs_median_error_meets_the_bar() -> None:
    """The 24 rows on H100, the generation the model is fitted on: 7.2 % (7.9 % with the
    stated layouts alone, 7.0 % at the model's balanced ones; 8.3 % before cuDNN's
    attention)."""
    assert _median_error([run for run in unseen_runs() if _on_h100(run)]) <= UNSEEN_MEDIAN


def test_on_one_stack_the_models_blackwell_speed_ups_over_h100_are_nvidias() -> None:
    """What a procurement choice between generations rests on, free of the stack: NVIDIA's
    25.11 Llama 3 8B FP8 rows run 2.12x (B200), 2.18x (GB200) and 2.60x (GB300) the H100
    row's tokens/s a GPU; the model's 2.29x, 2.49x and 2.50x (+8, +14, -4 %), its Blackwell
    kernel efficiency the H100 value (calibration.py, never fitted)."""
    speedups = same_stack_speedups()

    assert {s.run.request["cluster"]["gpu_model"] for s in speedups} == {"B200", "GB200", "GB300"}
    for s in speedups:
        assert abs(s.model / s.published - 1.0) <= SPEEDUP_TOLERANCE, s.run.id


def test_calibrated_on_its_two_smallest_runs_a_series_predicts_its_others_within_the_bar() -> None:
    """issue 14's bar after calibration, on runs the project has not seen: each series of three
    runs or more, calibrated on its two smallest (``procure calibrate``'s fit of their
    published steps), predicts the others at median 6.1 %, worst 8.0 %. NeMo 24.07's GPT-3
    (5B and 20B on 64 GPUs -> 175B at 128 and 512) and Nemotron (8B and 22B -> 340B) fit the
    kernel efficiency and the element-wise work (two models at one scale): +6.2, +1.0 and
    -6.0 %; its Llama 2 (7B, 13B -> 70B) fits the collective efficiency too: -1.9 %. NVIDIA's
    2025-26 dense Llama 3 (8B, 70B -> 405B) fits the kernel and collective efficiencies and
    predicts its 405B runs at +7.2 and +8.0 % (uncalibrated +4.0, +7.6 %; +7.6 and +10.1 %
    before the rows stated their layouts and ZeRO stage, 2026-12-07)
    (docs/performance-model.md, "NVIDIA's recipes")."""
    predictions = unseen_series_predictions()

    assert {p.run.id for p in predictions} == {
        "llama3.1-405b-1024xh100-fp8-gbs512",
        "llama3.1-405b-1024xh100-fp8-gbs1536",
        "gpt3-175b-128xh100-fp8-nemo24.07",
        "gpt3-175b-512xh100-fp8-nemo24.07",
        "llama2-70b-64xh100-fp8-nemo24.07",
        "nemotron-340b-128xh100-fp8-nemo24.07",
    }
    errors = [abs(p.calibrated_error) for p in predictions]
    assert max(errors) <= UNSEEN_WORST
    assert statistics.median(errors) <= UNSEEN_MEDIAN
