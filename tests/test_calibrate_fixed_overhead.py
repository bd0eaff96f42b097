"""A step overhead fitted on two scales is extrapolated as a fixed cost, which two runs cannot
tell from a loss that grows with the scale: an estimate of a much shorter step says so, and
its range holds the other reading (the built-in overhead). Found as a user would: Llama 3 8B
calibrated on 16 and 64 H100s (420 and 400 model TFLOP/s) fitted 0.40 s per step, and the 1,024-GPU
estimate (0.98 s steps, 41 % overhead) had a range of 842-1,079 h, which left out the 621 h of
the uncalibrated model and every time without that fixed cost."""

from __future__ import annotations

import dataclasses

import pytest

from optimizer.performance import calibration
from optimizer.performance.calibration import generation
from optimizer.performance.estimator import Estimate, scenario_for
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.fit import Measurement, fit_profile
from optimizer.performance.options import ModelOptions
from optimizer.performance.plan import PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.profile import CalibrationProfile
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.presets import preset

WORKLOAD = preset("llama3-8b")
NETWORK = ("fat_tree", "roce", 1.0)  # HGX H100s, 8 x 400G RoCE NICs each, non-blocking
MEASURED_TFLOPS = {16: 420.0, 64: 400.0}  # model TFLOP/s per GPU, the same global batch


def _measurement(gpus: int, tflops: float) -> Measurement:
    cluster = cluster_for(HGX_H100, gpus, *NETWORK)
    return Measurement(
        f"8b-{gpus}", WORKLOAD, cluster, PartialPlan(), "model_tflops_per_gpu", tflops
    )


@pytest.fixture(scope="module")
def profile() -> CalibrationProfile:
    return fit_profile([_measurement(g, t) for g, t in MEASURED_TFLOPS.items()])


def _estimate(gpus: int, profile: CalibrationProfile | None) -> Estimate:
    cluster = cluster_for(HGX_H100, gpus, *NETWORK)
    return plan_and_estimate(WORKLOAD, cluster, options=ModelOptions(profile))


def test_two_scales_of_one_batch_fit_a_fixed_overhead(profile: CalibrationProfile) -> None:
    assert "step_overhead_s" in profile.fitted
    assert profile.step_overhead_s is not None
    assert profile.step_overhead_s > 10 * calibration.COMPUTE.step_overhead_s


def test_each_point_records_its_calibrated_step(profile: CalibrationProfile) -> None:
    for point, gpus in zip(profile.points, MEASURED_TFLOPS, strict=True):
        assert point.step_time_s == pytest.approx(_estimate(gpus, profile).step_time_s)


def test_the_fit_says_what_share_of_its_steps_the_overhead_is(
    profile: CalibrationProfile,
) -> None:
    shortest, longest = profile.calibrated_steps_s or (0.0, 0.0)
    overhead = profile.step_overhead_s or 0.0
    assert any(
        note.startswith(f"step_overhead_s {overhead:.3g} s is {overhead / longest:.1%}-")
        and f"({shortest:.3g}-{longest:.3g} s)" in note
        for note in profile.notes
    )


def test_a_much_shorter_step_keeps_the_reading_without_the_fixed_cost_in_its_range(
    profile: CalibrationProfile,
) -> None:
    with_overhead = _estimate(1024, profile)
    without = _estimate(1024, dataclasses.replace(profile, step_overhead_s=None))
    assert with_overhead.step_time_s * 2 <= (profile.calibrated_steps_s or (0.0, 0.0))[0]
    assert with_overhead.training_time_hours_low <= without.training_time_hours
    assert without.training_time_hours < with_overhead.training_time_hours


def test_a_much_shorter_step_says_its_overhead_is_extrapolated(
    profile: CalibrationProfile,
) -> None:
    notes = _estimate(1024, profile).notes
    assert any(n.startswith("calibration profile: its fitted step overhead") for n in notes)


def test_a_step_like_the_calibrated_ones_has_no_such_note(profile: CalibrationProfile) -> None:
    notes = _estimate(64, profile).notes
    assert not any("fitted step overhead" in n for n in notes)


def test_the_range_spans_a_fitted_overhead_below_the_built_in_one() -> None:
    builtin = calibration.COMPUTE.step_overhead_s
    low = CalibrationProfile(step_overhead_s=0.0, fitted=("step_overhead_s",))
    h100, ib = generation("H100"), DEFAULT_FABRICS["infiniband"]
    assert scenario_for(h100, ib, "expected", low).step_overhead_s == 0.0
    assert scenario_for(h100, ib, "optimistic", low).step_overhead_s == 0.0
    assert scenario_for(h100, ib, "pessimistic", low).step_overhead_s == builtin


def test_an_overhead_not_fitted_names_the_parameters_it_cannot_be_told_from() -> None:
    """At 16, 64 and 256 GPUs of one batch the overhead and the collective efficiency both
    grow with the GPUs: the fit takes one, and the note blamed the kernel efficiency."""
    runs = {**MEASURED_TFLOPS, 256: 370.0}
    profile = fit_profile([_measurement(g, t) for g, t in runs.items()])
    assert profile.fitted == ("kernel_efficiency", "collective_efficiency")
    assert (
        "step_overhead_s: not fitted, at these 3 scales its effect is nil or cannot be told "
        "apart from that of kernel_efficiency, collective_efficiency"
    ) in profile.notes
