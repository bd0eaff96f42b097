"""Fitting a profile: it recovers known parameters from synthetic measurements, reproduces
its own points within their residuals, fits only what the points identify, and reads the
standard nccl-tests table for the fabric."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from optimizer.errors import InvalidInput
from optimizer.performance import calibration
from optimizer.performance.fit import (
    Measurement,
    NcclMeasurement,
    fabric_efficiency,
    fit_profile,
    load_measurements,
    parse_nccl_tests,
)
from optimizer.performance.profile import CalibrationProfile
from optimizer.performance.validation import PublishedCase, calibration_cases

DATA = Path(__file__).resolve().parent / "data" / "calibrate"


def _case(case_id: str) -> PublishedCase:
    return next(c for c in calibration_cases() if c.id == case_id)


def _synthetic(case: PublishedCase, truth: CalibrationProfile, metric: str) -> Measurement:
    """What the model itself predicts under ``truth``, as a measurement."""
    probe = Measurement(case.id, case.workload, case.cluster, case.fixed, metric, 1.0)
    return dataclasses.replace(probe, measured=probe.predict(truth))


# Megatron SC'21 Table 2, GPT 174.6B on 384 and 768 A100: the same global batch (strong
# scaling), so a fixed per-step overhead weighs twice as much at 768 GPUs.
STRONG = ("megatron-sc21-t2-PTD-P-174.6B-384", "megatron-sc21-t2-PTD-P-174.6B-768")


def test_one_point_recovers_a_known_kernel_efficiency() -> None:
    truth = CalibrationProfile(gpu_generation="H100", kernel_efficiency_scale=0.8)
    case = _case("llmfoundry-H100_80GB_BF16-7b-s2048-g128-amp_bf16")
    profile = fit_profile([_synthetic(case, truth, "step_time_s")])
    assert profile.fitted == ("kernel_efficiency",)
    assert profile.kernel_efficiency_scale == pytest.approx(0.8, rel=1e-3)


def test_two_scales_recover_a_known_kernel_efficiency_and_step_overhead() -> None:
    truth = CalibrationProfile(
        gpu_generation="A100", kernel_efficiency_scale=1.1, step_overhead_s=2.0
    )
    points = [_synthetic(_case(i), truth, "hardware_tflops_per_gpu") for i in STRONG]
    profile = fit_profile(points)
    assert "step_overhead_s" in profile.fitted
    assert profile.kernel_efficiency_scale == pytest.approx(1.1, rel=0.01)
    assert profile.step_overhead_s == pytest.approx(2.0, rel=0.05)


# MosaicML H100 rows on 64 GPUs: MPT-1B (hidden 2048) spends a larger share of its step on
# element-wise work than MPT-13B (hidden 5120), whose bytes per FLOP go as 1 / hidden.
TWO_MODELS = (
    "llmfoundry-H100_80GB_BF16-1b-s2048-g64-amp_bf16",
    "llmfoundry-H100_80GB_BF16-13b-s2048-g64-amp_bf16",
)


def test_two_models_at_one_scale_recover_a_known_kernel_efficiency_and_elementwise_scale() -> None:
    truth = CalibrationProfile(
        gpu_generation="H100", kernel_efficiency_scale=1.2, elementwise_scale=0.5
    )
    points = [_synthetic(_case(i), truth, "step_time_s") for i in TWO_MODELS]
    profile = fit_profile(points)
    assert profile.fitted == ("kernel_efficiency", "elementwise_scale")
    assert profile.kernel_efficiency_scale == pytest.approx(1.2, rel=0.01)
    assert profile.elementwise_scale == pytest.approx(0.5, rel=0.02)


def test_the_elementwise_scale_stops_at_the_fully_fused_passes() -> None:
    """No fit takes the element-wise work below 3 passes over each activation byte."""
    truth = CalibrationProfile(
        gpu_generation="H100", kernel_efficiency_scale=1.0, elementwise_scale=0.1
    )
    points = [_synthetic(_case(i), truth, "step_time_s") for i in TWO_MODELS]
    profile = fit_profile(points)
    floor = calibration.ELEMENTWISE_PASSES / calibration.COMPUTE.elementwise_passes
    assert profile.elementwise_scale == pytest.approx(floor)
    assert any(n.startswith("elementwise_scale stopped at its bound") for n in profile.notes)


def test_a_fitted_profile_reproduces_its_points_within_their_residuals() -> None:
    cases = [_case(i) for i in STRONG]
    points = [
        Measurement(c.id, c.workload, c.cluster, c.fixed, "hardware_tflops_per_gpu", m)
        for c, m in zip(cases, (150.0, 140.0), strict=True)
    ]
    profile = fit_profile(points)
    for point, fitted in zip(points, profile.points, strict=True):
        predicted = point.predict(profile)
        assert predicted == pytest.approx(fitted.predicted)
        assert predicted / point.measured - 1 == pytest.approx(fitted.residual)
        assert abs(fitted.residual) <= profile.residual_spread + 1e-12


def test_points_at_one_scale_identify_only_the_kernel_efficiency() -> None:
    case = _case("llmfoundry-H100_80GB_BF16-7b-s2048-g128-amp_bf16")
    points = [
        Measurement("a", case.workload, case.cluster, case.fixed, "hardware_tflops_per_gpu", 450.0),
        Measurement("b", case.workload, case.cluster, case.fixed, "step_time_s", 1.2),
    ]
    profile = fit_profile(points)
    assert profile.fitted == ("kernel_efficiency",)
    assert profile.step_overhead_s is None and profile.collective_efficiency is None
    assert any("one scale" in note for note in profile.notes)


def test_runs_of_two_gpu_generations_are_refused() -> None:
    h100 = _case("llmfoundry-H100_80GB_BF16-7b-s2048-g128-amp_bf16")
    a100 = _case(STRONG[0])
    points = [
        Measurement(f"measurements[{i}]", c.workload, c.cluster, c.fixed, "step_time_s", 1.0)
        for i, c in enumerate((h100, a100))
    ]
    with pytest.raises(InvalidInput, match="several GPU generations"):
        fit_profile(points)


def test_nccl_tests_table_is_parsed_row_by_row() -> None:
    rows = parse_nccl_tests((DATA / "all_reduce_2nodes.txt").read_text(), "nccl")
    assert len(rows) == 14  # 1 MiB to 8 GiB, doubling
    last = rows[-1]
    assert (last.size_bytes, last.count, last.dtype, last.redop, last.root) == (
        8589934592,
        2147483648,
        "float",
        "sum",
        -1,
    )
    assert last.out_of_place_busbw_gbytes_per_s == 22.20
    assert last.in_place_busbw_gbytes_per_s == 22.13


def test_nccl_tests_rows_without_a_root_column_parse() -> None:
    old = (  # nccl-tests before 2.12: no root column, errors printed as floats
        "    33554432       8388608   float     sum    1520.1   22.07   41.39  0e+00"
        "    1519.3   22.09   41.41  0e+00\n"
    )
    (row,) = parse_nccl_tests(old, "nccl")
    assert (row.root, row.out_of_place_busbw_gbytes_per_s, row.in_place_busbw_gbytes_per_s) == (
        -1,
        41.39,
        41.41,
    )


def test_a_broken_nccl_row_is_refused_naming_its_line() -> None:
    text = "# header\n  1048576  262144  float  sum  -1  85.2  12.3\n"
    with pytest.raises(InvalidInput, match="line 2") as e:
        parse_nccl_tests(text, "measurements[2].nccl_tests")
    assert e.value.field == "measurements[2].nccl_tests"


@pytest.mark.parametrize("value", ["nan", "inf", "-22.2"])
def test_an_nccl_row_with_a_bandwidth_no_run_measures_is_refused(value: str) -> None:
    """Before, bus bandwidths of "nan" on the large messages gave a fabric efficiency of 1
    (min(1, nan)) without a word."""
    row = f"8589934592 2147483648 float sum -1 725541.2 11.84 {value} 0 727717.9 11.80 22.13 0"
    with pytest.raises(InvalidInput, match=r"line 1: .* finite numbers >= 0"):
        parse_nccl_tests(row, "measurements[2].nccl_tests")


def test_fabric_efficiency_is_large_message_busbw_over_line_rate_per_gpu() -> None:
    rows = parse_nccl_tests((DATA / "all_reduce_2nodes.txt").read_text(), "nccl")
    cluster = dataclasses.replace(_case(STRONG[0]).cluster, gpus=16)  # 8 x 200 Gb/s per node
    efficiency, notes = fabric_efficiency(NcclMeasurement("nccl", rows, cluster), "nccl")
    assert efficiency == pytest.approx(22.2 / 25.0, abs=0.002)
    assert notes == []


def test_nccl_tests_inside_one_node_are_refused() -> None:
    rows = parse_nccl_tests((DATA / "all_reduce_2nodes.txt").read_text(), "nccl")
    cluster = dataclasses.replace(_case(STRONG[0]).cluster, gpus=8)
    with pytest.raises(InvalidInput) as e:
        fabric_efficiency(NcclMeasurement("nccl", rows, cluster), "measurements[0]")
    assert e.value.field == "measurements[0].request.cluster.gpus"


def test_the_measurements_file_gives_runs_and_nccl_tests() -> None:
    data = load_measurements(DATA / "measurements.json")
    assert [p.cluster.gpus for p in data.points] == [384, 768]
    assert [m.cluster.gpus for m in data.nccl] == [16]
    profile = fit_profile(data.points, data.nccl, data.notes)
    assert profile.fabric_efficiency("infiniband") == pytest.approx(0.888, abs=0.002)
    assert "fabric_efficiency" in profile.fitted


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"measured": {"step_time_s": 1.0}}, "measurements[1].request"),
        (
            {"request": {}, "measured": {"step_time_s": -1.0}},
            "measurements[1].measured.step_time_s",
        ),
        ({"request": {}, "measured": {"tokens": 1.0}}, "measurements[1].measured"),
        ({"request": {}}, "measurements[1]"),
        (
            {"request": {"workload": {"layerz": 2}}, "measured": {"step_time_s": 1.0}},
            "measurements[1].request",
        ),
        # a label names one row of the residual table: not another entry's, and a string
        (
            {"request": {}, "measured": {"step_time_s": 1.0}, "label": "gpt-175b-384"},
            "measurements[1].label",
        ),
        ({"request": {}, "measured": {"step_time_s": 1.0}, "label": 42}, "measurements[1].label"),
    ],
)
def test_a_bad_entry_is_refused_naming_its_index_and_field(
    tmp_path: Path, entry: dict[str, object], field: str
) -> None:
    good = json.loads((DATA / "measurements.json").read_text())[0]
    if entry.get("request") == {}:
        entry = {**entry, "request": good["request"]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps([good, entry]))
    with pytest.raises(InvalidInput) as e:
        load_measurements(path)
    assert e.value.field == field


@pytest.mark.parametrize(
    ("measured", "why"),
    [
        ({"hardware_tflops_per_gpu": 1.53e14}, "above the GPU's 312 TFLOP/s BF16 peak"),
        ({"model_tflops_per_gpu": 313.0}, "expected TFLOP/s (1e12 FLOP/s) per GPU"),
        ({"step_time_s": 0.0295}, "shorter than the model's FLOPs per step take"),
        ({"hardware_tflops_per_gpu": 0.153}, "below the 0.001 any training run reaches"),
        ({"step_time_s": 29_500.0}, "below the 0.001 any training run reaches"),
    ],
    ids=[
        "flop-per-s-for-tflop-per-s",
        "above-peak",
        "a-thousandth-of-the-step",
        "pflop-per-s-for-tflop-per-s",
        "milliseconds-for-seconds",
    ],
)
def test_a_measurement_no_gpu_reaches_is_refused(
    tmp_path: Path, measured: dict[str, float], why: str
) -> None:
    """GPT 175B on 384 A100s (312 TFLOP/s each) cannot run above peak, nor a step in less
    than its 28.3 s of model FLOPs at peak, nor as slowly as a thousandth of either. Before,
    such a point was fitted silently: a unit slip drove the kernel efficiency to its bound,
    overflowed the fit (1e-300 TFLOP/s: a residual of 1e302 and the fit left at its start)
    or was outweighed and ignored."""
    good = json.loads((DATA / "measurements.json").read_text())[0]
    path = tmp_path / "m.json"
    path.write_text(json.dumps([{**good, "measured": measured}]))
    with pytest.raises(InvalidInput) as e:
        load_measurements(path)
    assert e.value.field == f"measurements[0].measured.{next(iter(measured))}"
    assert why in str(e.value)


def test_a_measurement_at_the_peak_is_read(tmp_path: Path) -> None:
    good = json.loads((DATA / "measurements.json").read_text())[0]
    path = tmp_path / "m.json"
    path.write_text(json.dumps([{**good, "measured": {"hardware_tflops_per_gpu": 312}}]))
    assert [p.measured for p in load_measurements(path).points] == [312.0]


def test_a_bad_request_field_is_named_inside_its_entry(tmp_path: Path) -> None:
    good = json.loads((DATA / "measurements.json").read_text())[0]
    bad = json.loads(json.dumps(good))
    bad["request"]["cluster"]["fabric"] = "carrier-pigeon"
    bad["label"] = "gpt-175b-384 on another fabric"
    path = tmp_path / "m.json"
    path.write_text(json.dumps([good, bad]))
    with pytest.raises(InvalidInput) as e:
        load_measurements(path)
    assert e.value.field == "measurements[1].request.cluster.fabric"


def test_a_run_on_a_catalog_server_is_read_from_the_catalog(tmp_path: Path) -> None:
    entry = json.loads((DATA / "measurements.json").read_text())[0]
    cluster = entry["request"]["cluster"]
    for name in ("gpu_model", "gpu_peak_tflops", "gpu_memory_gb", "intra_node_gbytes_per_s"):
        del cluster[name]
    cluster["server_sku"] = "SRV-A100"
    entry["request"]["catalog"] = str(DATA.parent / "catalog_small")
    path = tmp_path / "m.json"
    path.write_text(json.dumps([entry]))
    (point,) = load_measurements(path).points
    assert (point.cluster.gpu_model, point.cluster.gpu_peak_tflops) == ("A100", 312)


def _fp8(case: PublishedCase) -> PublishedCase:
    return dataclasses.replace(case, workload=dataclasses.replace(case.workload, precision="fp8"))


def test_a_profile_of_fp8_runs_alone_says_its_kernel_scale_carries_their_fp8_gemms() -> None:
    """One kernel efficiency scale times every GEMM: fitted on FP8 runs alone it holds their
    FP8 GEMMs' speed, which a BF16 estimate under the profile then assumes too."""
    truth = CalibrationProfile(gpu_generation="H100", kernel_efficiency_scale=1.2)
    case = _fp8(_case("llmfoundry-H100_80GB_BF16-7b-s2048-g128-amp_bf16"))
    profile = fit_profile([_synthetic(case, truth, "step_time_s")])

    assert profile.fp8_kernel_efficiency_scale is None
    assert any(n.startswith("every point runs FP8") for n in profile.notes)


def test_a_bf16_and_an_fp8_run_recover_the_fp8_runs_own_kernel_scale() -> None:
    """What sets an FP8 run apart from its BF16 twin is its FP8 layer GEMMs' speed: a point in
    each precision fits the FP8 runs' own scale, on top of the kernel scale both take."""
    truth = CalibrationProfile(
        gpu_generation="H100", kernel_efficiency_scale=0.9, fp8_kernel_efficiency_scale=1.15
    )
    bf16 = _case("llmfoundry-H100_80GB_BF16-7b-s2048-g128-amp_bf16")
    points = [_synthetic(bf16, truth, "step_time_s"), _synthetic(_fp8(bf16), truth, "step_time_s")]
    profile = fit_profile(points)

    assert profile.fitted == ("kernel_efficiency", "fp8_kernel_efficiency")
    assert profile.kernel_efficiency_scale == pytest.approx(0.9, rel=1e-3)
    assert profile.fp8_kernel_efficiency_scale == pytest.approx(1.15, rel=1e-3)
    assert any(n.startswith("fp8_kernel_efficiency: fitted, 1 of 2") for n in profile.notes)


def test_the_fp8_scale_comes_before_the_elementwise_scale() -> None:
    """Two models at one scale identify the element-wise scale (TWO_MODELS); one of them in
    FP8 instead, the second parameter the two points identify is the FP8 runs' scale."""
    truth = CalibrationProfile(gpu_generation="H100", elementwise_scale=0.5)
    small, large = (_case(i) for i in TWO_MODELS)
    points = [
        _synthetic(small, truth, "step_time_s"),
        _synthetic(_fp8(large), truth, "step_time_s"),
    ]
    assert fit_profile(points).fitted == ("kernel_efficiency", "fp8_kernel_efficiency")


def test_a_profile_of_bf16_runs_says_nothing_of_fp8() -> None:
    truth = CalibrationProfile(gpu_generation="H100", kernel_efficiency_scale=0.9)
    case = _case("llmfoundry-H100_80GB_BF16-7b-s2048-g128-amp_bf16")
    profile = fit_profile([_synthetic(case, truth, "step_time_s")])

    assert not any("FP8" in n for n in profile.notes)


def test_a_dense_runs_plan_without_an_expert_degree_leaves_nothing_to_the_planner(
    tmp_path: Path,
) -> None:
    """A dense model's expert degree is 1 whatever the request says: leaving it out is no
    choice left open, and no note says the planner's choice was assumed. Leaving out the
    data degree is one."""
    good = json.loads((DATA / "measurements.json").read_text())[0]
    plan = {k: v for k, v in good["request"]["parallelism"].items() if k != "expert"}
    open_plan = {k: v for k, v in plan.items() if k != "data"}
    path = tmp_path / "m.json"
    for parallelism, noted in ((plan, False), (open_plan, True)):
        path.write_text(
            json.dumps([{**good, "request": {**good["request"], "parallelism": parallelism}}])
        )
        notes = load_measurements(path).notes
        assert any("leaves part of the plan open" in n for n in notes) is noted
