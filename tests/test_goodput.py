"""Goodput laws (issue 14): failures, checkpoint writes and restarts stretch productive time.

goodput = 1 / (1 + δ/τ + λ (τ/2 + R)) with Young's interval τ* = sqrt(2 δ / λ)
(optimizer/performance/goodput.py; docs/performance-model.md, "Goodput (issue 14)")."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.performance.goodput import (
    CHECKPOINT_BYTES_PER_PARAMETER,
    LLAMA3_FAILURES_PER_GPU_HOUR,
    Reliability,
    checkpoint_bytes,
    checkpoint_write_s,
    goodput_fraction,
    optimal_interval_s,
    run_goodput,
    wall_step_s,
)

LLAMA3_405B_PARAMETERS = 405e9
LLAMA3_GPUS = 16_384
RUN_S = 54 * 24 * 3600.0  # Llama 3's 54-day snapshot

parameters = st.floats(1e8, 2e12)
gpus = st.integers(1, 200_000)
rates = st.floats(1e-7, 1e-3)


def test_the_default_failure_rate_is_llama3s() -> None:
    # 419 unexpected interruptions in 54 days on 16,384 GPUs: one every ~3 hours.
    job_rate_per_hour = LLAMA3_FAILURES_PER_GPU_HOUR * LLAMA3_GPUS
    assert 1 / job_rate_per_hour == pytest.approx(3.09, abs=0.01)


def test_a_checkpoint_holds_weights_and_adam_states_not_gradients() -> None:
    # bf16 weights 2 + fp32 master 4 + Adam moments 4 + 4; weights alone (2) cannot resume.
    assert CHECKPOINT_BYTES_PER_PARAMETER == 14.0
    assert checkpoint_bytes(1e9) == 14e9


def test_llama3_405b_at_16k_gpus_keeps_over_90_percent_effective_training_time() -> None:
    # Llama 3 (sec. 3.3.4): ">90% effective training time" over the 54-day snapshot.
    g = run_goodput(checkpoint_bytes(LLAMA3_405B_PARAMETERS), LLAMA3_GPUS, RUN_S, Reliability())
    assert 0.90 < g.goodput < 0.97
    # and the run sees about as many interruptions as Llama 3 reported (419 in 54 days)
    assert g.expected_interruptions / (RUN_S / g.goodput / 3600) * 54 * 24 == pytest.approx(
        419, rel=0.01
    )


@settings(max_examples=200, deadline=None)
@given(parameters, gpus, rates, st.floats(1.01, 100.0))
def test_more_failures_lower_goodput(p: float, n: int, rate: float, factor: float) -> None:
    base = Reliability(failures_per_gpu_hour=rate)
    worse = replace(base, failures_per_gpu_hour=rate * factor)
    assert (
        run_goodput(checkpoint_bytes(p), n, RUN_S, worse).goodput
        < run_goodput(checkpoint_bytes(p), n, RUN_S, base).goodput
    )


@settings(max_examples=200, deadline=None)
@given(parameters, gpus, rates, st.floats(0.001, 10.0), st.floats(1.01, 100.0))
def test_faster_storage_higher_goodput(
    p: float, n: int, rate: float, gbytes_per_s: float, factor: float
) -> None:
    slow = Reliability(
        failures_per_gpu_hour=rate,
        storage_write_gbytes_per_s_per_gpu=gbytes_per_s,
        storage_read_gbytes_per_s_per_gpu=gbytes_per_s,
    )
    fast = replace(
        slow,
        storage_write_gbytes_per_s_per_gpu=gbytes_per_s * factor,
        storage_read_gbytes_per_s_per_gpu=gbytes_per_s * factor,
    )
    assert (
        run_goodput(checkpoint_bytes(p), n, RUN_S, fast).goodput
        > run_goodput(checkpoint_bytes(p), n, RUN_S, slow).goodput
    )


@settings(max_examples=300, deadline=None)
@given(parameters, gpus, rates, st.floats(1.0, 1e6))
def test_the_optimum_interval_beats_any_other(
    p: float, n: int, rate: float, other_interval_s: float
) -> None:
    best = run_goodput(checkpoint_bytes(p), n, RUN_S, Reliability(failures_per_gpu_hour=rate))
    fixed = Reliability(
        failures_per_gpu_hour=rate, checkpoint_interval_minutes=other_interval_s / 60
    )
    assert run_goodput(checkpoint_bytes(p), n, RUN_S, fixed).goodput <= best.goodput * (1 + 1e-12)


def test_youngs_interval_is_sqrt_two_write_times_mtbf() -> None:
    # δ = 10 s, M = 1/λ = 5 h: τ* = sqrt(2 x 10 x 18,000) = 600 s
    assert optimal_interval_s(10.0, 1 / 18_000) == pytest.approx(600.0)


def test_goodput_is_first_order_in_the_losses() -> None:
    # δ/τ = 10/600, λτ/2 = 300/18,000, λR = 900/18,000
    expected = 1 / (1 + 10 / 600 + 300 / 18_000 + 900 / 18_000)
    assert goodput_fraction(10.0, 600.0, 1 / 18_000, 900.0) == pytest.approx(expected)


def test_goodput_tends_to_one_as_failures_vanish() -> None:
    r = Reliability()
    losses = [
        1
        / run_goodput(
            checkpoint_bytes(LLAMA3_405B_PARAMETERS),
            LLAMA3_GPUS,
            RUN_S,
            replace(r, failures_per_gpu_hour=rate),
        ).goodput
        - 1
        for rate in (1e-5, 1e-7, 1e-9, 1e-11, 1e-13, 0.0)
    ]
    assert losses == sorted(losses, reverse=True) and len(set(losses)) == len(losses)
    # what is left without failures is the one checkpoint at the end of the run
    final_write_s = checkpoint_write_s(checkpoint_bytes(LLAMA3_405B_PARAMETERS), LLAMA3_GPUS, r)
    assert losses[-1] == pytest.approx(final_write_s / RUN_S)
    assert losses[-2] < 1e-5


def test_without_failures_the_run_checkpoints_once() -> None:
    g = run_goodput(checkpoint_bytes(70e9), 1024, RUN_S, Reliability(failures_per_gpu_hour=0.0))
    assert g.checkpoint_interval_s == RUN_S
    assert g.expected_interruptions == 0.0


def test_the_interval_is_never_shorter_than_a_step() -> None:
    # 1 GB/s/GPU of storage, 1,000 failures per GPU-hour: Young says < 1 s
    r = Reliability(failures_per_gpu_hour=1.0, storage_write_gbytes_per_s_per_gpu=1.0)
    assert optimal_interval_s(checkpoint_write_s(checkpoint_bytes(1e9), 64, r), 64 / 3600) < 5.0
    assert run_goodput(checkpoint_bytes(1e9), 64, RUN_S, r, step_s=5.0).checkpoint_interval_s == 5.0


def test_a_fixed_interval_is_used_as_given() -> None:
    g = run_goodput(
        checkpoint_bytes(70e9), 1024, RUN_S, Reliability(checkpoint_interval_minutes=120.0)
    )
    assert g.checkpoint_interval_s == 7200.0
    assert not g.optimal_interval


def test_more_gpus_write_a_checkpoint_faster() -> None:
    # every GPU writes its shard at its share of the storage bandwidth
    r = Reliability()
    assert checkpoint_write_s(checkpoint_bytes(70e9), 2048, r) == pytest.approx(
        checkpoint_write_s(checkpoint_bytes(70e9), 1024, r) / 2
    )


def test_restart_includes_the_reload() -> None:
    r = Reliability(restart_minutes=0.0, storage_read_gbytes_per_s_per_gpu=1.0)
    g = run_goodput(checkpoint_bytes(1e9), 14, RUN_S, r)
    assert g.restart_s == pytest.approx(1.0)  # 14 GB over 14 GPUs at 1 GB/s each


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("failures_per_gpu_hour", -1e-5, "must be >= 0"),
        ("storage_write_gbytes_per_s_per_gpu", 0.0, "must be > 0"),
        ("storage_read_gbytes_per_s_per_gpu", -2.0, "must be > 0"),
        ("restart_minutes", -1.0, "must be >= 0"),
        ("checkpoint_interval_minutes", 0.0, "must be > 0"),
        ("failures_per_gpu_hour", math.nan, "must be a finite number"),
        ("restart_minutes", math.inf, "must be a finite number"),
    ],
)
def test_impossible_figures_are_refused_by_name(field: str, value: float, expected: str) -> None:
    with pytest.raises(InvalidInput) as e:
        Reliability(**{field: value})  # type: ignore[arg-type]
    assert e.value.field == f"reliability.{field}"
    assert expected in str(e.value)


@settings(max_examples=200, deadline=None)
@given(parameters, gpus, rates, st.floats(0.01, 100.0), st.floats(1.0, 1e7))
def test_the_planners_wall_step_time_is_the_step_over_goodput(
    p: float, n: int, rate: float, step_s: float, steps: float
) -> None:
    r = Reliability(failures_per_gpu_hour=rate)
    g = run_goodput(checkpoint_bytes(p), n, steps * step_s, r, step_s)
    assert wall_step_s(checkpoint_bytes(p), n, steps, step_s, r) == pytest.approx(
        step_s / g.goodput, rel=1e-12
    )
