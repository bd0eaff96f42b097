"""End-to-end latency of the README's main jobs, as a user runs them (the estimator's and
planner's rates are benchmarks.estimator_speed's own suite entry).

Latency is the `procure` CLI from process start to exit, interpreter start-up and catalog loading
included: `procure catalog show` (the README's main job) and `procure optimize` on a bundled
catalog (4,096 GPUs' worth of Llama 3 70B, top 3). Run: python -m benchmarks.latency
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

from benchmarks.measure import Ran, run_command
from benchmarks.report import Table, module_main, publish
from benchmarks.scenarios import scenario

REPEATS = {"smallest": 1, "quick": 3, "full": 5}
OPTIMIZE_GPUS = 4096
CATALOG = "infiniband-ndr"


def jobs(level: str) -> dict[str, list[str]]:
    """The CLI invocations timed, by name."""
    cli = [sys.executable, "-m", "client.cli"]
    sc = scenario(CATALOG, OPTIMIZE_GPUS)
    out = {"procure catalog show": [*cli, "catalog", "show", f"catalogs/{CATALOG}"]}
    if level != "smallest":
        out[f"procure optimize ({sc.name}, top 3)"] = [
            *cli,
            "optimize",
            "--catalog",
            CATALOG,
            "--workload",
            sc.workload.name,
            "--target-hours",
            f"{sc.target_hours:.1f}",
            "--top-k",
            "3",
        ]
    return out


def latency(level: str) -> Table:
    table = Table(
        "End-to-end CLI latency (process start to exit)",
        ("job", "runs", "exit code", "median wall s", "median CPU s", "best wall s"),
    )
    for name, argv in jobs(level).items():
        runs: list[Ran] = [run_command(argv, timeout_s=600) for _ in range(REPEATS[level])]
        table.add(
            name,
            len(runs),
            max(r.returncode for r in runs),
            statistics.median(r.wall_s for r in runs),
            statistics.median(r.cpu_s for r in runs),
            min(r.wall_s for r in runs),
        )
    return table


def run(level: str, out: Path) -> list[Table]:
    tables = [latency(level)]
    publish("latency", tables, out, {"level": level, "repeats": REPEATS[level]})
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
