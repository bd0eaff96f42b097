"""The estimator against published measured runs (bundled published-runs.json).

Each parameter is one record, named by its id; the failure message cites its source. One set
of constants (optimizer/performance/calibration.py) serves every point: no per-point tuning.
Targets (the issue's acceptance): median |error| of hardware TFLOP/s per GPU <= 10%, worst
<= 20%; the training-time estimates of Megatron-LM sec. 5.1 within 20%.
"""

from __future__ import annotations

import statistics

import pytest

from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import (
    PublishedCase,
    TimeToTrainPoint,
    calibration_cases,
    load_records,
    time_ratio_error,
    time_to_train_points,
)

CASES = calibration_cases()


def _error(case: PublishedCase) -> float:
    est = plan_and_estimate(case.workload, case.cluster, case.fixed)
    return est.hardware_tflops_per_gpu / case.measured_hardware_tflops_per_gpu - 1


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hardware_tflops_within_20_percent(case: PublishedCase) -> None:
    err = _error(case)
    assert abs(err) <= 0.20, f"{case.source}: error {err:+.1%}"


def test_median_error_at_most_10_percent_with_one_set_of_constants() -> None:
    errors = [abs(_error(c)) for c in CASES]
    assert statistics.median(errors) <= 0.10
    assert max(errors) <= 0.20


def test_megatron_table1_is_all_there() -> None:
    """Narayanan et al. SC'21 Table 1 has ten rows, 1.7B to 1T."""
    assert sum(c.id.startswith("megatron-sc21-t1-") for c in CASES) == 10


TRAINING_TIME = [c for c in CASES if c.measured_training_days is not None]


@pytest.mark.parametrize("case", TRAINING_TIME, ids=[c.id for c in TRAINING_TIME])
def test_megatron_training_time_estimates_within_20_percent(case: PublishedCase) -> None:
    """Narayanan et al. SC'21 sec. 5.1: GPT-3 175B, 300B tokens on 1024 A100: 34 days;
    1T, 450B tokens on 3072 A100: 84 days."""
    est = plan_and_estimate(case.workload, case.cluster, case.fixed)
    # issue 14: the paper's days are 8TP/(nX), failure-free: compare the productive time
    # (training_time_hours now also counts failures, checkpoints and restarts).
    days = est.productive_training_time_hours / 24
    assert case.measured_training_days is not None
    assert days == pytest.approx(case.measured_training_days, rel=0.20), case.source


# Issue 16: MLPerf Training time-to-train on the new hardware (published-runs.md sec. 7).
POINTS = {p.id: p for p in time_to_train_points(load_records())}


def test_new_hardware_points_cover_b200_blackwell_nvl72_and_amd() -> None:
    models = {p.gpu_model for p in POINTS.values()}
    assert {"B200", "Blackwell", "MI300X", "MI355X"} <= models


@pytest.mark.parametrize("point", list(POINTS.values()), ids=list(POINTS))
def test_each_time_to_train_point_states_its_source_and_system_size(
    point: TimeToTrainPoint,
) -> None:
    assert point.source.strip() and point.gpu_count >= 8
    assert point.time_to_train_minutes > 0 and "MLPerf Training" in point.benchmark


def test_no_time_to_train_point_is_a_calibration_case() -> None:
    """No stored source states the tokens an MLPerf run trains, so none becomes TFLOP/s."""
    assert not {c.id for c in CASES} & set(POINTS)


def test_mi355x_against_b200_time_ratio_within_15_percent() -> None:
    """MLPerf v5.1 Llama 2 70B LoRA FP8 on 8 GPUs: MI355X 10.18 min, B200 9.85 min (AMD's
    average of NVIDIA partner results). The MI355X and B200 calibrations are UNVERIFIED;
    this ratio is the one published check on them."""
    err = time_ratio_error(
        POINTS["mlperf-v5.1-llama2-70b-lora-mi355x-8"],
        POINTS["mlperf-v5.1-llama2-70b-lora-b200-8-avg"],
    )
    assert abs(err) <= 0.15, f"model's MI355X/B200 time ratio off by {err:+.1%}"
