"""The documented "Dask cluster started from the shell" path (docs/batch.md): ``dask
scheduler`` and ``dask worker --nworkers 2 --nthreads 1`` as separate processes, then
``python -m benchmarks.batch --scheduler tcp://...`` measures its all-workers pass there."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from batch_support import scheduler_address
from distributed import Client

ROOT = Path(__file__).resolve().parents[1]
NO_UI = ("--no-dashboard",)
LOOPBACK = ("--host", "127.0.0.1", "--port", "0")  # any free port, this machine only
BENCHMARK = (sys.executable, "-m", "benchmarks.batch")


@pytest.fixture
def shell_cluster(tmp_path: Path) -> Iterator[str]:
    """A scheduler and a two-process worker started as the docs' shell commands do."""
    dask = str(Path(sys.executable).with_name("dask"))
    info = tmp_path / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [
        subprocess.Popen(
            [dask, "scheduler", *LOOPBACK, *NO_UI, "--scheduler-file", str(info)],
            **quiet,
        )
    ]
    try:
        address = scheduler_address(info)
        procs.append(
            subprocess.Popen(
                [dask, "worker", address, "--nworkers", "2", "--nthreads", "1", *NO_UI],
                **quiet,
            )
        )
        with Client(address, timeout="60s") as probe:
            probe.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for p in procs:
            p.kill()
            p.wait()


@pytest.mark.slow
def test_the_benchmark_runs_its_all_workers_pass_on_a_shell_started_cluster(
    shell_cluster: str,
) -> None:
    address = shell_cluster
    got = subprocess.run(
        [*BENCHMARK, "--scenarios", "6", "--one-worker-scenarios", "2", "--scheduler", address],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert got.returncode == 0, got.stderr
    assert f"2 workers (Dask {shell_cluster}): 6 scenarios" in got.stdout
    assert "0 error rows." in got.stdout
