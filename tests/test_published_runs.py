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
from optimizer.performance.validation import PublishedCase, calibration_cases

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
    days = est.training_time_hours / 24
    assert case.measured_training_days is not None
    assert days == pytest.approx(case.measured_training_days, rel=0.20), case.source
