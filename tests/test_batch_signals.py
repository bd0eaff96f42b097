"""A batch driver that is killed takes its workers with it, and SIGTERM stops a batch the
way Ctrl-C does: what arrived is committed, the workers stop, the user is told to resume
(issue 20, item 2)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from batch_support import alive, fast_spec, pool_workers, write_spec
from cli_support import ROOT, run

from optimizer.batch import read_results
from optimizer.batch.writer import ResultWriter

ORPHAN_DEADLINE_S = 15.0


def _wait_for(predicate: object, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def _driver(tmp_path: Path, targets: int) -> subprocess.Popen[bytes]:
    spec = write_spec(tmp_path / "spec.json", fast_spec([float(t) for t in range(1, targets + 1)]))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "client.cli",
            "batch",
            str(spec),
            "--out",
            str(tmp_path / "out"),
            "--workers",
            "2",
            "--quiet",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_workers_exit_when_the_driver_is_killed(tmp_path: Path) -> None:
    proc = _driver(tmp_path, targets=200)
    try:
        driver = psutil.Process(proc.pid)
        assert _wait_for(lambda: len(pool_workers(driver)) == 2, 60), "pool never started"
        workers = pool_workers(driver)
        trackers = [c for c in driver.children() if c not in workers]
        proc.kill()
        proc.wait(10)
        assert _wait_for(lambda: not any(alive(w) for w in workers + trackers), ORPHAN_DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in pool_workers(psutil.Process()):
            w.kill()


def test_sigterm_of_a_driver_process_stops_its_workers_and_says_resume(tmp_path: Path) -> None:
    proc = _driver(tmp_path, targets=200)
    try:
        driver = psutil.Process(proc.pid)
        assert _wait_for(lambda: len(pool_workers(driver)) == 2, 60), "pool never started"
        workers = pool_workers(driver)
        time.sleep(1.0)  # let some results arrive
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)  # returns: no orphan holds the pipes
        assert proc.returncode == 1
        assert "run again with --resume" in err.decode()
        assert not any(alive(w) for w in workers)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_commits_the_rows_received_so_far(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two results are buffered (not yet committed: flushes come every 200 rows) when
    SIGTERM arrives; both are committed before the driver exits."""
    spec = write_spec(tmp_path / "spec.json", fast_spec([6.0, 12.0, 24.0, 48.0, 96.0]))
    received: list[str] = []
    add = ResultWriter.add

    def add_then_sigterm_after_two(self: ResultWriter, result: object) -> bool:
        added = add(self, result)  # type: ignore[arg-type]
        received.append(result.scenario_id)  # type: ignore[attr-defined]
        if len(received) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1.0)  # the handler runs at the next bytecode; never reached
        return added

    monkeypatch.setattr(ResultWriter, "add", add_then_sigterm_after_two)
    previous = signal.getsignal(signal.SIGTERM)
    result = run(capsys, "batch", str(spec), "--out", str(tmp_path / "out"), "--workers", "1")
    assert result.code == 1
    assert "terminated; results so far are in" in result.err and "--resume" in result.err
    assert sorted(read_results(tmp_path / "out")["scenario_id"]) == sorted(received)
    assert signal.getsignal(signal.SIGTERM) == previous  # the handler is the command's only
    assert not any(alive(w) for w in pool_workers(psutil.Process()))


def test_a_second_sigterm_during_the_commit_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write_spec(tmp_path / "spec.json", fast_spec([6.0, 12.0, 24.0]))
    add, flush = ResultWriter.add, ResultWriter.flush
    received: list[str] = []

    def add_then_sigterm(self: ResultWriter, result: object) -> bool:
        added = add(self, result)  # type: ignore[arg-type]
        received.append(result.scenario_id)  # type: ignore[attr-defined]
        if len(received) == 1:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1.0)
        return added

    def flush_under_a_second_sigterm(self: ResultWriter) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # ignored: the commit goes on
        flush(self)

    monkeypatch.setattr(ResultWriter, "add", add_then_sigterm)
    monkeypatch.setattr(ResultWriter, "flush", flush_under_a_second_sigterm)
    result = run(capsys, "batch", str(spec), "--out", str(tmp_path / "out"), "--workers", "1")
    assert result.code == 1 and "terminated" in result.err
    assert list(read_results(tmp_path / "out")["scenario_id"]) == received
