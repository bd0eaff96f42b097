"""A calibration profile: its file round-trips, a malformed one is refused naming the field,
and applied in ``scenario_for`` it moves exactly the constants it fitted."""

from __future__ import annotations

import dataclasses

import pytest
from google.protobuf import json_format

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance.calibration import generation
from optimizer.performance.convert import calibration_from_proto, calibration_to_proto
from optimizer.performance.estimator import StepModel, scenario_for
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.options import ModelOptions
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.profile import (
    MIN_RESIDUAL_SPREAD,
    CalibratedFabric,
    CalibrationPoint,
    CalibrationProfile,
)
from optimizer.performance.validation import calibration_cases

SCENARIOS = ("expected", "optimistic", "pessimistic")
PROFILE = CalibrationProfile(
    gpu_generation="H100",
    kernel_efficiency_scale=0.9,
    kernel_efficiency=0.495,
    fabrics=(CalibratedFabric("infiniband", 0.88),),
    collective_efficiency=0.8,
    step_overhead_s=0.25,
    fitted=("fabric_efficiency", "kernel_efficiency", "step_overhead_s"),
    points=(CalibrationPoint("run-16", "step_time_s", 2.0, 2.02, 0.01, 16, 2.02),),
    residual_spread=0.3,  # above MIN_RESIDUAL_SPREAD: the fit's own residual sets the spread
    tool_version="0.1.0",
    notes=("a note",),
    elementwise_scale=0.6,
    fp8_kernel_efficiency_scale=1.1,
)


def _from_json(text: str) -> CalibrationProfile | None:
    return calibration_from_proto(json_format.Parse(text, estimate_pb2.CalibrationProfile()))


def test_profile_file_round_trips() -> None:
    text = json_format.MessageToJson(
        calibration_to_proto(PROFILE), preserving_proto_field_name=True
    )
    assert _from_json(text) == PROFILE


def test_profile_is_hashable_by_value() -> None:
    assert hash(PROFILE) == hash(dataclasses.replace(PROFILE))


def test_an_absent_profile_is_none() -> None:
    assert calibration_from_proto(estimate_pb2.CalibrationProfile()) is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"collective_efficiency": 1.5}, "calibration.collective_efficiency"),
        ({"kernel_efficiency_scale": 0.0}, "calibration.kernel_efficiency_scale"),
        ({"elementwise_scale": 0.0}, "calibration.elementwise_scale"),
        ({"elementwise_scale": 11.0}, "calibration.elementwise_scale"),
        ({"fp8_kernel_efficiency_scale": 0.0}, "calibration.fp8_kernel_efficiency_scale"),
        ({"fp8_kernel_efficiency_scale": 11.0}, "calibration.fp8_kernel_efficiency_scale"),
        ({"kernel_efficiency": 1.5}, "calibration.kernel_efficiency"),  # informational, in range
        ({"gpu_generation": "Z900"}, "calibration.gpu_generation"),
        ({"step_overhead_s": -1.0}, "calibration.step_overhead_s"),
        (
            {"fabrics": [{"fabric": "infiniband", "efficiency": 0.0}]},
            "calibration.fabrics[0].efficiency",
        ),
        ({"fitted": ["magic"]}, "calibration.fitted[0]"),
        ({"points": [{"metric": "tokens", "measured": 1.0}]}, "calibration.points[0].metric"),
        (
            {"points": [{"metric": "step_time_s", "measured": 1.0, "step_time_s": -1.0}]},
            "calibration.points[0].step_time_s",
        ),
        ({"residual_spread": 0.9}, "calibration.residual_spread"),
    ],
)
def test_a_malformed_profile_is_refused_naming_the_field(
    change: dict[str, object], field: str
) -> None:
    msg = json_format.MessageToDict(calibration_to_proto(PROFILE), preserving_proto_field_name=True)
    msg.update(change)
    with pytest.raises(InvalidInput) as e:
        calibration_from_proto(json_format.ParseDict(msg, estimate_pb2.CalibrationProfile()))
    assert e.value.field == field


@pytest.mark.parametrize(
    "scale", ["kernel_efficiency_scale", "elementwise_scale", "fp8_kernel_efficiency_scale"]
)
def test_a_scale_without_its_generation_is_refused(scale: str) -> None:
    msg = estimate_pb2.CalibrationProfile(**{scale: 0.9})
    with pytest.raises(InvalidInput) as e:
        calibration_from_proto(msg)
    assert e.value.field == "calibration.gpu_generation"


def test_expected_scenario_takes_the_fitted_values() -> None:
    h100, ib = generation("H100"), DEFAULT_FABRICS["infiniband"]
    case = scenario_for(h100, ib, "expected", PROFILE)
    assert case.kernel_efficiency == pytest.approx(h100.kernel_efficiency * 0.9)
    assert case.fabric_efficiency == 0.88
    assert case.collective_efficiency == 0.8
    assert case.step_overhead_s == 0.25
    assert case.elementwise_scale == 0.6


def test_low_and_high_scenarios_widen_the_fitted_efficiency_by_the_spread() -> None:
    h100, ib = generation("H100"), DEFAULT_FABRICS["infiniband"]
    fitted = h100.kernel_efficiency * 0.9
    assert scenario_for(h100, ib, "optimistic", PROFILE).kernel_efficiency == pytest.approx(
        fitted / (1 - 0.3)
    )
    assert scenario_for(h100, ib, "pessimistic", PROFILE).kernel_efficiency == pytest.approx(
        fitted / (1 + 0.3)
    )


def test_a_perfect_fit_still_keeps_the_extrapolation_range() -> None:
    exact = dataclasses.replace(PROFILE, residual_spread=0.0)
    h100, ib = generation("H100"), DEFAULT_FABRICS["infiniband"]
    high = scenario_for(h100, ib, "optimistic", exact).kernel_efficiency
    assert high == pytest.approx(h100.kernel_efficiency * 0.9 / (1 - MIN_RESIDUAL_SPREAD))


def test_the_kernel_scale_leaves_other_generations_alone() -> None:
    a100, ib = generation("A100"), DEFAULT_FABRICS["infiniband"]
    assert scenario_for(a100, ib, "expected", PROFILE).kernel_efficiency == a100.kernel_efficiency


def test_an_fp8_run_takes_the_fp8_scale_on_top_of_the_kernel_scale() -> None:
    h100, ib = generation("H100"), DEFAULT_FABRICS["infiniband"]
    case = scenario_for(h100, ib, "expected", PROFILE, fp8=True)
    assert case.kernel_efficiency == pytest.approx(h100.kernel_efficiency * 0.9 * 1.1)


def test_the_fp8_scale_leaves_bf16_runs_and_other_generations_alone() -> None:
    h100, h200, ib = generation("H100"), generation("H200"), DEFAULT_FABRICS["infiniband"]
    bf16 = scenario_for(h100, ib, "expected", PROFILE, fp8=False)
    assert bf16.kernel_efficiency == pytest.approx(h100.kernel_efficiency * 0.9)
    other = scenario_for(h200, ib, "expected", PROFILE, fp8=True)
    assert other.kernel_efficiency == h200.kernel_efficiency
    assert any("H200 kernel efficiency" in n for n in PROFILE.notes_for(h200, "infiniband", 1.0))


def test_an_fp8_scale_alone_scales_the_built_in_kernel_efficiency() -> None:
    h100, ib = generation("H100"), DEFAULT_FABRICS["infiniband"]
    alone = CalibrationProfile(gpu_generation="H100", fp8_kernel_efficiency_scale=1.2)
    case = scenario_for(h100, ib, "expected", alone, fp8=True)
    assert case.kernel_efficiency == pytest.approx(h100.kernel_efficiency * 1.2)
    assert scenario_for(h100, ib, "expected", alone).kernel_efficiency == h100.kernel_efficiency


def test_the_elementwise_scale_leaves_other_generations_alone_and_says_so() -> None:
    a100, ib = generation("A100"), DEFAULT_FABRICS["infiniband"]
    assert scenario_for(a100, ib, "expected", PROFILE).elementwise_scale == 1.0
    assert any("A100 element-wise work" in n for n in PROFILE.notes_for(a100, "infiniband", 1.0))


def test_the_elementwise_scale_is_the_fitted_one_in_every_scenario() -> None:
    h100, ib = generation("H100"), DEFAULT_FABRICS["infiniband"]
    scales = {scenario_for(h100, ib, s, PROFILE).elementwise_scale for s in SCENARIOS}
    assert scales == {0.6}


def test_the_fabric_efficiency_leaves_other_fabrics_alone() -> None:
    h100, roce = generation("H100"), DEFAULT_FABRICS["roce"]
    assert scenario_for(h100, roce, "expected", PROFILE).fabric_efficiency == roce.efficiency(
        "expected"
    )


def test_an_fp8_scale_speeds_an_fp8_estimate_and_not_its_bf16_twin() -> None:
    """The estimate passes the workload's precision to its scenarios: under a profile scaling
    FP8 runs' kernel efficiency by 1.25 the FP8 run's tensor-core seconds shrink by 1/1.25 and
    nothing else moves; the same run in BF16 keeps the built-in compute."""
    case = next(c for c in calibration_cases() if c.cluster.gpu_model == "H100")
    scale = 1.25
    faster = ModelOptions(
        CalibrationProfile(gpu_generation="H100", fp8_kernel_efficiency_scale=scale)
    )
    cluster = dataclasses.replace(
        case.cluster, gpu_peak_fp8_tflops=2 * case.cluster.gpu_peak_tflops
    )
    fp8 = dataclasses.replace(case.workload, precision="fp8")
    efficiency = generation("H100").efficiency("expected")
    base = plan_and_estimate(fp8, cluster, case.fixed)
    calibrated = plan_and_estimate(fp8, cluster, case.fixed, options=faster)
    model = StepModel(fp8, cluster, base.plan, DEFAULT_FABRICS[cluster.fabric])
    saved = model.tensor_core_s / efficiency * (1 - 1 / scale) * (1 + model.straggler)
    assert calibrated.plan == base.plan
    assert calibrated.breakdown.compute_s == pytest.approx(base.breakdown.compute_s - saved)
    bf16 = plan_and_estimate(case.workload, cluster, case.fixed, options=faster)
    assert bf16 == plan_and_estimate(case.workload, cluster, case.fixed)


def test_a_lower_kernel_efficiency_slows_the_estimate() -> None:
    case = next(c for c in calibration_cases() if c.cluster.gpu_model == "H100")
    slower = CalibrationProfile(gpu_generation="H100", kernel_efficiency_scale=0.5)
    base = plan_and_estimate(case.workload, case.cluster, case.fixed)
    calibrated = plan_and_estimate(
        case.workload, case.cluster, case.fixed, options=ModelOptions(slower)
    )
    assert calibrated.breakdown.compute_s > 1.5 * base.breakdown.compute_s


def test_an_elementwise_scale_moves_only_the_elementwise_part_of_the_compute() -> None:
    """Under a profile scaling the element-wise work by 1/2 the step's compute loses half of
    its element-wise seconds (StepModel's tensor-core and element-wise parts, at the
    straggler's stretch) and nothing else."""
    case = next(c for c in calibration_cases() if c.cluster.gpu_model == "H100")
    half = CalibrationProfile(gpu_generation="H100", elementwise_scale=0.5)
    base = plan_and_estimate(case.workload, case.cluster, case.fixed)
    calibrated = plan_and_estimate(
        case.workload, case.cluster, case.fixed, options=ModelOptions(half)
    )
    model = StepModel(case.workload, case.cluster, base.plan, DEFAULT_FABRICS[case.cluster.fabric])
    saved = 0.5 * model.elementwise_s * (1 + model.straggler)
    assert calibrated.plan == base.plan
    assert calibrated.breakdown.compute_s == pytest.approx(base.breakdown.compute_s - saved)


def test_a_step_overhead_adds_to_every_step() -> None:
    case = next(c for c in calibration_cases() if c.cluster.gpu_model == "H100")
    overhead = CalibrationProfile(step_overhead_s=1.5)
    base = plan_and_estimate(case.workload, case.cluster, case.fixed)
    calibrated = plan_and_estimate(
        case.workload, case.cluster, case.fixed, options=ModelOptions(overhead)
    )
    # the profile's overhead replaces the built-in one (if the model has one)
    assert calibrated.step_time_s == pytest.approx(
        base.step_time_s - base.breakdown.step_overhead_s + 1.5
    )
    assert calibrated.breakdown.step_overhead_s == 1.5


def test_an_estimate_on_another_generation_says_the_kernel_scale_was_not_used() -> None:
    case = next(c for c in calibration_cases() if c.cluster.gpu_model == "A100")
    est = plan_and_estimate(case.workload, case.cluster, case.fixed, options=ModelOptions(PROFILE))
    assert any("fitted on H100" in note for note in est.notes)


def test_an_estimate_on_another_fabric_says_the_fabric_efficiency_was_not_used() -> None:
    case = next(c for c in calibration_cases() if c.cluster.gpu_model == "H100")
    roce = dataclasses.replace(case.cluster, fabric="roce")
    est = plan_and_estimate(case.workload, roce, case.fixed, options=ModelOptions(PROFILE))
    assert any("not roce" in note for note in est.notes)
