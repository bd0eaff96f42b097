"""Errors that are not the input's fault have their own exit status, and scenarios that
fail validation are reported once per cause before anything runs (issue 20, item 5)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from batch_support import FAST_DEFAULTS, scheduler_address, write_spec
from cli_support import run
from distributed import Client

from client.exits import EXIT_ENGINE_UNAVAILABLE, EXIT_INVALID_INPUT
from optimizer.batch import BatchProgress, DaskEngine, plan_batch, read_results, run_batch
from optimizer.batch.engines import EngineUnavailable
from optimizer.batch.runner import ScenariosRejected
from optimizer.batch.spec import spec_from_document
from optimizer.batch.writer import has_results

TYPO = {
    "catalogs": ["infiniband-ndr", "roce-spectrum"],
    "defaults": FAST_DEFAULTS,
    "scenarios": [{}, {"workload": {"model": "bert-larg"}}],
    "grid": {"constraints.target_training_hours": [12.0, 24.0]},
}


def test_the_engine_exit_status_is_documented_and_distinct() -> None:
    assert EngineUnavailable.exit_code == EXIT_ENGINE_UNAVAILABLE == 6
    assert "6 batch engine" in (Path(__file__).parents[1] / "docs" / "cli.md").read_text()


def test_an_unreachable_scheduler_exits_6_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("optimizer.batch.engines.DASK_CONNECT_TIMEOUT_S", 1.0)
    spec = write_spec(tmp_path / "s.json", {**TYPO, "scenarios": [{}]})
    got = run(
        capsys, "batch", str(spec), "--out", str(tmp_path / "o"), "--scheduler", "tcp://127.0.0.1:1"
    )
    assert got.code == EXIT_ENGINE_UNAVAILABLE
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in got.err


def test_a_malformed_scheduler_address_is_invalid_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path / "s.json", {**TYPO, "scenarios": [{}]})
    got = run(capsys, "batch", str(spec), "--out", str(tmp_path / "o"), "--scheduler", "notaurl")
    assert got.code == EXIT_INVALID_INPUT
    assert "--scheduler: got 'notaurl', expected tcp://HOST:PORT" in got.err


@pytest.fixture
def scheduler(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A ``dask scheduler`` and one ``dask worker`` started as a shell would; the scheduler's
    process and address."""
    dask = str(Path(sys.executable).with_name("dask"))
    info = tmp_path / "scheduler.json"
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        address = scheduler_address(info)
        procs.append(
            subprocess.Popen(
                [dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        _wait_for_a_worker(address)
        yield procs[0], address
    finally:
        for p in procs:
            p.kill()
            p.wait()


def _wait_for_a_worker(address: str) -> None:
    """Connect and wait for the worker. A loaded machine can leave distributed's client IO
    loop unstarted past its own 10 s wait (an AssertionError in LoopRunner, seen on a shared
    2-core CI box): try again until a minute has passed."""
    deadline = time.monotonic() + 60
    while True:
        try:
            with Client(address, timeout="60s") as probe:
                probe.wait_for_workers(1, timeout=60)
            return
        except (AssertionError, OSError, TimeoutError):
            if time.monotonic() > deadline:
                raise
        # The failed Client is garbage: finalise it here, outside distributed's locks (its
        # __del__ run inside the next Client's start deadlocks; see DaskEngine.__init__).
        gc.collect()
        time.sleep(1)


def test_a_scheduler_lost_mid_batch_is_engine_unavailable_and_keeps_the_rows(
    tmp_path: Path,
    scheduler: tuple[subprocess.Popen[bytes], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("optimizer.batch.engines.DASK_CONNECT_TIMEOUT_S", 2.0)
    proc, address = scheduler
    plan = plan_batch(spec_from_document({**TYPO, "scenarios": [{}]}))
    seen: list[str] = []

    def lose_the_scheduler(step: BatchProgress) -> None:
        seen.append(step.result.scenario_id)
        if len(seen) == 1:
            proc.kill()
            proc.wait()

    out = tmp_path / "out"
    with (
        DaskEngine(address) as engine,
        pytest.raises(EngineUnavailable, match="lost the Dask scheduler"),
    ):
        run_batch(plan, out, engine=engine, progress=lose_the_scheduler, report=False)
    assert set(seen) <= set(read_results(out)["scenario_id"])


def test_invalid_scenarios_are_one_cause_written_as_rows_and_the_rest_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path / "s.json", TYPO)
    out = tmp_path / "out"
    got = run(capsys, "batch", str(spec), "--out", str(out), "--workers", "1")
    assert got.code == EXIT_INVALID_INPUT
    assert "4 scenario(s) fail validation, 1 cause(s)" in got.err
    assert "4 x workload.model: unknown preset 'bert-larg'" in got.err
    assert got.err.count("bert-larg'") == 1  # once, not once per scenario
    rows = read_results(out)
    assert len(rows) == 8 and (rows["status"] == "ERROR").sum() == 4
    report = (out / "report.md").read_text()
    assert "## Errors by cause" in report
    assert (
        "| 4 | 2 | INVALID_ARGUMENT | InvalidInput: workload.model: unknown preset 'bert-larg'"
        in report
    )


def test_strict_refuses_the_spec_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = write_spec(tmp_path / "s.json", TYPO)
    out = tmp_path / "out"
    got = run(capsys, "batch", str(spec), "--out", str(out), "--strict")
    assert got.code == EXIT_INVALID_INPUT
    assert "nothing ran (strict)" in got.err
    assert not has_results(out)


def test_strict_in_the_library_raises_with_the_causes(tmp_path: Path) -> None:
    with pytest.raises(ScenariosRejected) as refused:
        run_batch(spec_from_document(TYPO), tmp_path, strict=True)
    assert refused.value.invalid.causes == [
        (str(next(iter(refused.value.invalid.errors.values()))), 4)
    ]


def test_the_scheduler_address_is_read_once_the_file_is_written_not_once_it_exists(
    tmp_path: Path,
) -> None:
    """``dask scheduler`` creates its file before it writes it (CI read it empty once)."""
    info = tmp_path / "scheduler.json"
    info.touch()
    writer = threading.Timer(0.5, info.write_text, [json.dumps({"address": "tcp://127.0.0.1:1"})])
    writer.start()
    try:
        assert scheduler_address(info, timeout_s=10) == "tcp://127.0.0.1:1"
    finally:
        writer.join()
