"""FP8 GEMMs' efficiency is fitted on the visible FP8 runs (issue 14, FP8 defect 8).

An FP8 layer GEMM runs on the doubled FP8 peak at ``fp8_gemm_efficiency_ratio`` of a BF16
GEMM's efficiency. It was a prior, 0.80, read off NVIDIA NeMo's 1.3-1.5x end-to-end FP8/BF16
speed-ups; MosaicML's llm-foundry H100 FP8 table (MPT-1B and 3B on one 8-GPU node, sequences
512 to 32,768) was stored but read by no fit. It now fits this one constant, apart from the
rest, as Llama 3's runs fit the flash kernels' speed-up: 0.886 (1.77x per GEMM). At 0.80 the
table's short-sequence rows, where the GEMMs weigh most, came out 6-8 % slow.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from benchmarks.estimator_accuracy import (
    FIT_PARAMETERS,
    FP8,
    fit_cases,
    fp8_sweep_cases,
    is_apart,
    is_fp8_case,
    relative_error,
)
from optimizer.performance import calibration, compute
from optimizer.workload.presets import preset

FP8_ROWS = fp8_sweep_cases()


@pytest.fixture
def ratio_at_prior() -> Iterator[None]:
    """The model with the FP8 ratio at its NeMo prior (0.80), restored afterwards."""
    saved = calibration.COMPUTE
    calibration.set_compute_constants(replace(saved, fp8_gemm_efficiency_ratio=0.80))
    compute.clear_caches()
    try:
        yield
    finally:
        calibration.set_compute_constants(saved)
        compute.clear_caches()


def test_the_fp8_rows_are_llm_foundrys_h100_fp8_table() -> None:
    assert len(FP8_ROWS) == 7
    assert all(c.id.startswith("llmfoundry-H100_80GB_FP8") for c in FP8_ROWS)
    assert all(c.workload.precision == "fp8" for c in FP8_ROWS)
    assert {c.workload.sequence_length for c in FP8_ROWS} == {512, 2048, 8192, 32768}


def test_the_fp8_rows_fit_the_ratio_and_nothing_else() -> None:
    """They are out of the main fit (is_apart) and are the only FP8 runs the fit reads."""
    fitted = fit_cases()
    fp8 = [c for c in fitted if is_fp8_case(c)]

    assert {c.id for c in fp8} == {c.id for c in FP8_ROWS}
    assert all(is_apart(c) for c in fp8)
    assert FIT_PARAMETERS[FP8].name == "fp8_gemm_efficiency_ratio"


def test_fp8_gemms_gain_less_than_the_doubled_peak_and_more_than_nemos_prior() -> None:
    ratio = calibration.COMPUTE.fp8_gemm_efficiency_ratio
    assert FIT_PARAMETERS[FP8].start == 0.80
    assert 0.80 < ratio < 1.0


def test_the_fp8_rows_meet_the_visible_bar() -> None:
    """Issue 14's bar for visible runs, median <= 5 %, worst <= 12 %, on the FP8 table."""
    errors = [abs(relative_error(c)) for c in FP8_ROWS]
    assert statistics.median(errors) <= 0.05
    assert max(errors) <= 0.12


def test_at_the_prior_the_short_sequence_fp8_rows_are_slow(ratio_at_prior: None) -> None:
    """What the fit corrects: at 0.80 the GEMM-heavy 512-token rows (MPT-1B: 70,315 tokens/s
    a GPU published) come out over 5 % slow."""
    short = [c for c in FP8_ROWS if c.workload.sequence_length == 512]
    assert short and all(relative_error(c) < -0.05 for c in short)


def test_fp8_errors_do_not_trend_with_sequence_length() -> None:
    """Within 2 points per doubling of the sequence (512 to 32,768): attention, which stays in
    BF16, and the FP8 GEMMs are told apart."""
    doublings = [math.log2(c.workload.sequence_length) for c in FP8_ROWS]
    errors = [relative_error(c) for c in FP8_ROWS]
    assert abs(float(np.polyfit(doublings, errors, 1)[0])) <= 0.02


def test_the_ratio_moves_fp8_workloads_only(ratio_at_prior: None) -> None:
    bf16 = preset("llama3-8b")
    fp8 = replace(bf16, precision="fp8")
    args = (1, 1, "H100", 989.4, 1978.9)
    at_prior = (compute.compute_s_per_token(bf16, *args), compute.compute_s_per_token(fp8, *args))
    calibration.set_compute_constants(replace(calibration.COMPUTE, fp8_gemm_efficiency_ratio=0.95))
    compute.clear_caches()

    assert compute.compute_s_per_token(bf16, *args) == at_prior[0]
    assert compute.compute_s_per_token(fp8, *args)[0] < at_prior[1][0]
