"""The benchmark suite keeps working: CI runs its smallest case (it times nothing worth reading).

One run of ``python -m benchmarks --smallest`` in a subprocess, as a user would start it, is
shared by the checks below.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BENCHMARKS = (
    "optimality",
    "scale",
    "backends",
    "quality",
    "latency",
    "profile_largest",
    "cli_startup",
)
HEADERS = (
    "### MIP vs brute force",
    "### Cluster size sweep",
    "### Catalog size sweep",
    "### Backends on the same instances",
    "### Optimizer vs the rule of thumb",
    "### Median savings",
    "### Estimator throughput",
    "### End-to-end CLI latency",
    "### Where the time goes",
    "### CLI start-up",
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--smallest", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, out


def test_smallest_suite_exits_zero(smoke) -> None:
    done, _ = smoke
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("header", HEADERS)
def test_smallest_suite_prints_each_table(smoke, header: str) -> None:
    done, _ = smoke
    assert header in done.stdout


@pytest.mark.parametrize("name", BENCHMARKS)
def test_smallest_suite_writes_each_benchmark_as_json(smoke, name: str) -> None:
    _, out = smoke
    doc = json.loads((out / f"{name}.json").read_text())
    assert doc["benchmark"] == name
    assert doc["machine"]["nproc"] >= 1
    assert all(table["rows"] for table in doc["tables"])


def test_smallest_suite_finds_the_mip_and_brute_force_agree(smoke) -> None:
    _, out = smoke
    doc = json.loads((out / "optimality.json").read_text())
    assert {row["same optimum"] for row in doc["tables"][0]["rows"]} == {"yes"}
