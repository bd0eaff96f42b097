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
    "versus_enumerator",
    "optimality",
    "scale",
    "catalog_ratio",
    "batch_scaling",
    "estimator_speed",
    "backends",
    "cpsat_linearization",
    "quality",
    "latency",
    "profile_largest",
    "cli_startup",
)
HEADERS = (
    "### Optimizer vs the independent enumerator",
    "### MIP vs brute force: the exponential link-split oracle",
    "### Cluster size sweep",
    "### Catalog size sweep",
    "### Large catalog vs bundled (issue 19)",
    "### Batch throughput (issue 19)",
    "### Backends on the same instances",
    "### CP-SAT LP relaxation: level 1 (default) vs level 2 (ours), whole request",
    "### Optimizer vs the rule of thumb",
    "### Median savings",
    "### Estimator throughput and planner rate",
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
        # A hang guard, not a speed check (benchmarks/ measures speed): the suite takes about
        # 40 s on an idle 2-core machine, and more while the other test worker is busy.
        timeout=240,
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


def test_every_table_states_the_machine_load(smoke) -> None:
    """Timings from a shared machine mean little without the load they were taken under."""
    done, _ = smoke
    tables = done.stdout.split("\n### ")[1:]
    assert tables
    for table in tables:
        assert "load average" in table, table.splitlines()[0]


def test_smallest_suite_finds_the_optimizer_and_the_enumerator_agree(smoke) -> None:
    _, out = smoke
    doc = json.loads((out / "versus_enumerator.json").read_text())
    assert {row["same rank-1 objective"] for row in doc["tables"][0]["rows"]} == {"yes"}


def test_smallest_suite_finds_the_mip_and_brute_force_agree(smoke) -> None:
    _, out = smoke
    doc = json.loads((out / "optimality.json").read_text())
    assert {row["same optimum"] for row in doc["tables"][0]["rows"]} == {"yes"}
