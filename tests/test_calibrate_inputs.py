"""`procure calibrate` never writes a profile the other commands refuse, names the entry of
every error it finds, and a profile times everything the answer compares.

Found by a randomised hunt over measurement files (session 32): a run measured at 10 TFLOP/s
per A100 gave a kernel scale of 0.058, below the 0.1 `procure estimate` accepts; an unknown GPU
gave a profile of the 'default' generation no command loads; a plan that does not fit, or a
layer count of 2 million, were found while fitting and named `parallelism` or ran out of
memory; an nccl-tests run inside one NVL72 domain was taken for the network; a UTF-16 file
was an internal error; a profile out of range let `procure sweep` exit 0 with every scenario
failed; and the rented run beside a calibrated design was timed without the profile.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_support import SMALL_SCENARIO, run

DATA = Path(__file__).resolve().parent / "data" / "calibrate"
LARGE_RUN = DATA / "gpt-175b-1536.json"


def _entries() -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((DATA / "measurements.json").read_text())
    return entries


def _calibrate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, entries: list[dict[str, Any]], *args: str
) -> Any:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(entries))
    return run(capsys, "calibrate", str(path), *args)


def _step_runs() -> list[dict[str, Any]]:
    return [e for e in _entries() if "measured" in e]


def test_a_very_slow_run_fits_a_scale_at_the_bound_every_command_accepts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    slow = _step_runs()[0]
    slow["measured"] = {"hardware_tflops_per_gpu": 10.0}  # 3 % of an A100's peak
    profile = tmp_path / "p.json"
    result = _calibrate(capsys, tmp_path, [slow], "-o", str(profile))
    assert result.code == 0, result.err
    assert json.loads(profile.read_text())["kernel_efficiency_scale"] == pytest.approx(0.1)
    assert "stopped at its bound" in result.out
    estimated = run(capsys, "estimate", str(LARGE_RUN), "--calibration", str(profile))
    assert estimated.code == 0, estimated.err


def test_an_unknown_gpu_is_refused_naming_the_entry(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = _step_runs()
    runs[1]["request"]["cluster"]["gpu_model"] = "Foo X1"
    runs[1]["request"]["cluster"]["gpu_peak_tflops"] = 500  # no generation's peak either
    result = _calibrate(capsys, tmp_path, runs)
    assert result.code == 3
    assert "measurements[1].request.cluster.gpu_model" in result.err
    assert "Foo X1" in result.err


def test_an_uncalibrated_name_with_a_generations_peak_calibrates_that_generation(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An A800 is an A100 die (cluster.gpu_model inference): its runs calibrate the A100."""
    runs = _step_runs()
    runs[1]["request"]["cluster"]["gpu_model"] = "A800 SXM4 80GB"
    profile = tmp_path / "p.json"
    result = _calibrate(capsys, tmp_path, runs, "-o", str(profile))
    assert result.code == 0, result.err
    assert json.loads(profile.read_text())["gpu_generation"] == "A100"


def test_a_plan_refused_while_fitting_names_the_entry_not_its_label(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = _step_runs()
    runs[1]["label"] = "big run"
    runs[1]["request"]["parallelism"] = {"tensor": 1, "pipeline": 1, "data": 768, "zero_stage": 1}
    result = _calibrate(capsys, tmp_path, runs)
    assert result.code == 3
    assert "error: measurements[1].request." in result.err  # before: "cluster.gpus: ..."
    assert "80 GB" in result.err


def test_an_entry_beyond_the_request_limits_is_refused_before_any_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    runs = _step_runs()
    runs[0]["request"]["workload"]["layers"] = 2_000_000
    result = _calibrate(capsys, tmp_path, runs)
    assert result.code == 3
    assert "measurements[0].request.workload.layers" in result.err


def test_nccl_tests_inside_one_scale_up_domain_are_not_the_network(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    nccl = next(e for e in _entries() if "nccl_tests" in e)
    shutil.copy(DATA / nccl["nccl_tests"], tmp_path / nccl["nccl_tests"])
    cluster = nccl["request"]["cluster"]
    cluster.update(gpus=16, gpus_per_node=4, scale_up_gpus=72)
    result = _calibrate(capsys, tmp_path, [nccl])
    assert result.code == 3
    assert "measurements[0].request.cluster.gpus" in result.err
    assert "scale-up domain of 72" in result.err


def test_a_measurements_file_that_is_not_utf8_exits_3(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_step_runs()), encoding="utf-16")
    result = run(capsys, "calibrate", str(path))
    assert result.code == 3
    assert "not UTF-8 JSON" in result.err


def test_a_profile_out_of_range_stops_a_sweep_before_it_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"gpu_generation": "A100", "kernel_efficiency_scale": 0.05}))
    args = ("sweep", *SMALL_SCENARIO, "--targets", "8,16", "--format", "json")
    result = run(capsys, *args, "--calibration", str(bad))
    assert result.code == 3
    assert "calibration.kernel_efficiency_scale" in result.err


def test_the_rented_run_is_timed_with_the_profile_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    overhead = tmp_path / "overhead.json"
    overhead.write_text(json.dumps({"step_overhead_s": 0.5}))
    args = ("optimize", *SMALL_SCENARIO, "--target-hours", "1000", "--top-k", "1")
    plain = json.loads(run(capsys, *args, "--format", "json").out)
    calibrated = json.loads(
        run(capsys, *args, "--format", "json", "--calibration", str(overhead)).out
    )

    def timed(answer: dict[str, Any]) -> dict[str, float]:
        return {
            q["instance"]: q["training_time_hours"]
            for q in answer["rent_quotes"]
            if "training_time_hours" in q
        }

    assert timed(plain) and timed(plain).keys() == timed(calibrated).keys()
    for instance, hours in timed(plain).items():
        assert timed(calibrated)[instance] > hours
