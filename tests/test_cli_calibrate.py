"""`procure calibrate MEASUREMENTS.json -o PROFILE.json`, then `procure estimate|optimize
--calibration PROFILE.json`: the real CLI, embedded and against a real server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_support import SMALL_SCENARIO, run
from service_support import TOKEN_A, serve_with_tokens

from optimizer.performance.validation import UnseenRun, unseen_runs

DATA = Path(__file__).resolve().parent / "data" / "calibrate"
MEASUREMENTS = DATA / "measurements.json"
LARGE_RUN = DATA / "gpt-175b-1536.json"  # Megatron SC'21 Table 2: 141 TFLOP/s measured


@pytest.fixture
def profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    path = tmp_path / "profile.json"
    assert run(capsys, "calibrate", str(MEASUREMENTS), "-o", str(path)).code == 0
    return path


def _tflops(capsys: pytest.CaptureFixture[str], *args: str) -> float:
    result = run(capsys, *args, "--format", "json")
    assert result.code == 0, result.err
    return float(json.loads(result.out)["hardware_tflops_per_gpu"])


def test_calibrate_prints_the_fitted_parameters_and_each_points_residual(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    result = run(capsys, "calibrate", str(MEASUREMENTS), "-o", str(tmp_path / "p.json"))
    assert result.code == 0, result.err
    assert "kernel efficiency (A100)" in result.out
    assert "fabric efficiency (infiniband)" in result.out
    for label in ("gpt-175b-384", "gpt-175b-768"):
        line = next(row for row in result.out.splitlines() if label in row)
        assert "%" in line  # its residual
    assert f"wrote {tmp_path / 'p.json'}" in result.out


def test_calibrate_json_prints_the_profile_it_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "p.json"
    result = run(capsys, "calibrate", str(MEASUREMENTS), "--json", "-o", str(path))
    assert result.code == 0
    printed = json.loads(result.out)
    assert printed == json.loads(path.read_text())
    assert printed["gpu_generation"] == "A100"
    assert [p["gpus"] for p in printed["points"]] == [384, 768]
    assert "kernel_efficiency" in printed["fitted"]


def test_the_profile_moves_the_large_run_to_its_measured_speed(
    capsys: pytest.CaptureFixture[str], profile: Path
) -> None:
    plain = _tflops(capsys, "estimate", str(LARGE_RUN))
    calibrated = _tflops(capsys, "estimate", str(LARGE_RUN), "--calibration", str(profile))
    assert abs(calibrated / 141.0 - 1) < abs(plain / 141.0 - 1)
    assert calibrated == pytest.approx(141.0, rel=0.03)


def test_optimize_times_designs_with_the_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    overhead = tmp_path / "overhead.json"
    overhead.write_text(json.dumps({"step_overhead_s": 0.02}))
    args = ("optimize", *SMALL_SCENARIO, "--target-hours", "8", "--top-k", "1", "--format", "json")
    plain = json.loads(run(capsys, *args).out)["designs"][0]
    calibrated = json.loads(run(capsys, *args, "--calibration", str(overhead)).out)["designs"][0]
    assert (calibrated["server_sku"], calibrated["gpus"]) == (plain["server_sku"], plain["gpus"])
    plain_step = plain["estimate"]["step_time_s"] - plain["estimate"]["breakdown"].get(
        "step_overhead_s", 0.0
    )  # the profile's overhead replaces the built-in one (if the model has one)
    assert calibrated["estimate"]["step_time_s"] == pytest.approx(plain_step + 0.02)


def test_optimize_warns_once_of_what_the_profile_leaves_out_naming_the_ranks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The table shows no estimate's notes: a profile of another generation than the designs'
    was silent there (found with an H100 profile and B200 designs)."""
    a100 = tmp_path / "a100.json"
    a100.write_text(json.dumps({"gpu_generation": "A100", "kernel_efficiency_scale": 1.05}))
    # 7 h: under the profile the 16-A100 design meets 8 h, and it would be a rank it covers
    args = ("optimize", *SMALL_SCENARIO, "--target-hours", "7", "--top-k", "2")
    result = run(capsys, *args, "--calibration", str(a100))
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    assert text.count("calibration profile fitted on A100") == 1
    assert (
        "warning: ranks 1, 2: calibration profile fitted on A100: the H100 kernel efficiency is "
        "the built-in one"
    ) in text
    assert "calibration profile" not in run(capsys, *args).out


def test_no_design_says_how_much_of_the_fastest_step_the_profiles_overhead_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A fixed cost per step no cluster shortens: fitted on long steps, it can make a target
    unreachable, and the diagnosis named only the fastest design's time."""
    overhead = tmp_path / "overhead.json"
    overhead.write_text(json.dumps({"step_overhead_s": 0.3}))
    args = ("optimize", *SMALL_SCENARIO, "--target-hours", "8")
    result = run(capsys, *args, "--calibration", str(overhead))
    assert result.code == 0, result.err
    text = " ".join(result.out.split())
    assert "No design: no design meets the 8 h target" in text
    assert "of its step is the calibration profile's fixed step overhead (0.3 s)" in text


def test_estimate_shows_the_fixed_per_step_overhead(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    overhead = tmp_path / "overhead.json"
    overhead.write_text(json.dumps({"step_overhead_s": 0.4}))
    result = run(capsys, "estimate", str(LARGE_RUN), "--calibration", str(overhead))
    assert result.code == 0, result.err
    row = next(line for line in result.out.splitlines() if "fixed per-step overhead" in line)
    assert row.split()[-2] == "0.400"


def test_a_bad_measurement_exits_3_naming_the_entry_and_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    entries = json.loads(MEASUREMENTS.read_text())
    entries[1]["measured"] = {"step_time_s": "fast"}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(entries))
    result = run(capsys, "calibrate", str(path))
    assert result.code == 3
    assert "measurements[1].measured.step_time_s" in result.err


def test_a_malformed_profile_exits_3_naming_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"collective_efficiency": 2.0}))
    result = run(capsys, "estimate", str(LARGE_RUN), "--calibration", str(bad))
    assert result.code == 3
    assert "calibration.collective_efficiency" in result.err


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from serve_with_tokens(tmp_path_factory.mktemp("server"))


def test_the_profile_travels_to_a_server(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    server: str,
    profile: Path,
) -> None:
    monkeypatch.setenv("PROCURE_TOKEN", TOKEN_A)
    args = ("estimate", str(LARGE_RUN), "--calibration", str(profile))
    embedded = _tflops(capsys, *args)
    remote = _tflops(capsys, "--server", server, *args)
    assert remote == pytest.approx(embedded)
    assert remote != pytest.approx(_tflops(capsys, "--server", server, "estimate", str(LARGE_RUN)))


def test_sweep_times_every_scenario_with_the_profile(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    overhead = tmp_path / "overhead.json"
    overhead.write_text(json.dumps({"step_overhead_s": 0.05}))
    args = ("sweep", *SMALL_SCENARIO, "--targets", "8,16", "--format", "json")
    result = run(capsys, *args, "--calibration", str(overhead))
    assert result.code == 0, result.err
    scenarios = json.loads(result.out)["scenarios"]
    assert len(scenarios) == 2
    for scenario in scenarios:
        assert scenario["request"]["calibration"]["step_overhead_s"] == 0.05
        breakdown = scenario["response"]["designs"][0]["estimate"]["breakdown"]
        assert breakdown["step_overhead_s"] == pytest.approx(0.05)


def _calibrated(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, entries: list[dict[str, Any]]
) -> tuple[str, dict[str, Any]]:
    """`procure calibrate` of ``entries`` to ``tmp_path``/p.json: its output and the profile."""
    measurements, path = tmp_path / "m.json", tmp_path / "p.json"
    measurements.write_text(json.dumps(entries))
    result = run(capsys, "calibrate", str(measurements), "-o", str(path))
    assert result.code == 0, result.err
    return result.out, json.loads(path.read_text())


def _published_step_s(r: UnseenRun) -> float:
    """A never-fitted run's published tokens/s a GPU as its step time."""
    workload, gpus = r.request["workload"], r.request["cluster"]["gpus"]
    tokens = workload["global_batch_size"] * workload["sequence_length"]
    return float(tokens / (gpus * r.published_tokens_per_s_per_gpu))


def test_two_models_on_one_scale_calibrate_the_elementwise_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """NeMo 24.07's GPT-3 5B and 20B on 64 H100s (never-fitted rows, their published step
    times): two models at one scale fit the kernel efficiency and the element-wise work,
    which the table prints and the profile carries."""
    runs = {r.id: r for r in unseen_runs()}
    entries = []
    for run_id in ("gpt3-5b-64xh100-fp8-nemo24.07", "gpt3-20b-64xh100-fp8-nemo24.07"):
        r = runs[run_id]
        entries.append({"request": r.request, "measured": {"step_time_s": _published_step_s(r)}})

    out, profile = _calibrated(capsys, tmp_path, entries)

    assert "element-wise work (H100)" in out
    assert profile["fitted"] == ["kernel_efficiency", "elementwise_scale"]
    assert 0.28 < profile["elementwise_scale"] < 1.0


def test_a_bf16_and_an_fp8_run_calibrate_each_precisions_kernel_scale(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """NeMo 24.07's Llama 2 7B on 8 H100s in FP8 (its published step) and the same run in
    BF16, 1.35 x slower (inside NVIDIA's 1.3-1.5 x FP8 speed-ups, calibration.py): the profile
    carries the FP8 runs' own scale, and `procure estimate` with it gives each run its step."""
    r = next(r for r in unseen_runs() if r.id == "llama2-7b-8xh100-fp8-nemo24.07")
    fp8_step_s = _published_step_s(r)
    bf16 = json.loads(json.dumps(r.request))
    bf16["workload"]["precision"] = "bf16"
    steps = {"fp8": fp8_step_s, "bf16": 1.35 * fp8_step_s}
    requests = {"fp8": r.request, "bf16": bf16}
    entries = [
        {"label": p, "request": requests[p], "measured": {"step_time_s": steps[p]}}
        for p in ("bf16", "fp8")
    ]

    out, profile = _calibrated(capsys, tmp_path, entries)

    assert "FP8 runs' kernel efficiency (H100)" in out
    assert profile["fitted"] == ["kernel_efficiency", "fp8_kernel_efficiency"]
    for precision, request in requests.items():
        spec = tmp_path / f"{precision}.json"
        spec.write_text(json.dumps(request))
        estimate = run(
            capsys,
            "estimate",
            str(spec),
            "--calibration",
            str(tmp_path / "p.json"),
            "--format",
            "json",
        )
        assert estimate.code == 0, estimate.err
        step_s = json.loads(estimate.out)["step_time_s"]
        assert step_s == pytest.approx(steps[precision], rel=1e-3)
