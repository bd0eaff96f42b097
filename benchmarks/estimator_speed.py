"""Estimates per second on one core: 10,000 (workload, cluster) pairs, with and without the
planner (targets: >= 500/s with, >= 20,000/s without; docs/performance-model.md).

The planner pass runs once, first, on cold caches; its plans are then re-timed by
``estimate`` alone, best of three passes (as ``timeit`` does: the minimum is the least
disturbed by other processes on a shared machine). Run: python -m benchmarks.estimator_speed
[--pairs N]; in the suite (``run``) it runs as its own process at a level-sized pair count,
so no cache warmed by another benchmark flatters it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.measure import run_command
from benchmarks.report import Table, publish
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import Estimate, estimate
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, SELENE, cluster_for
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

WORKLOADS = (
    "bert-large",
    "llama3-8b",
    "mpt-7b",
    "megatron-18.4b",
    "mpt-30b",
    "llama3-70b",
    "gpt3-175b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "llama3-405b",
)
GPU_COUNTS = (64, 128, 256, 512, 1024, 2048, 4096)
FABRICS = ("infiniband", "roce", "ethernet")
TOPOLOGIES = (
    ("fat_tree", 1.0),
    ("fat_tree", 3.0),
    ("rail_optimized", 1.0),
    ("rail_optimized", 2.0),
    ("dragonfly", 1.0),
)
SYSTEMS = (SELENE, HGX_H100)
# (workload, cluster) pairs per run level of the suite.
PAIRS = {"smallest": 200, "quick": 2_000, "full": 10_000}
RATE = re.compile(r"^(with planner|without planner):\s+([\d,]+) estimates/s", re.MULTILINE)
INFEASIBLE = re.compile(r"\((\d+) infeasible")


def pairs(n: int) -> list[tuple[Workload, ClusterSpec]]:
    """``n`` pairs cycling over workloads x systems x sizes x fabrics x topologies."""
    workloads = [preset(name) for name in WORKLOADS]
    clusters = [
        cluster_for(s, g, t, f, o)
        for s, g, f, (t, o) in itertools.product(SYSTEMS, GPU_COUNTS, FABRICS, TOPOLOGIES)
    ]
    grid = list(itertools.product(workloads, clusters))
    return [grid[i % len(grid)] for i in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=10_000)
    args = parser.parse_args()
    work = pairs(args.pairs)

    start = time.perf_counter()
    planned: list[tuple[Workload, ClusterSpec, Estimate]] = []
    infeasible = 0
    for w, c in work:
        try:
            est = plan_and_estimate(w, c)
            # The plan may leave GPUs idle: re-time it on the GPUs it occupies.
            planned.append((w, replace(c, gpus=est.gpus_used), est))
        except PlanInfeasible:
            infeasible += 1
    with_planner_s = time.perf_counter() - start

    without_planner_s = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for w, c, est in planned:
            estimate(w, c, est.plan)
        without_planner_s = min(without_planner_s, time.perf_counter() - start)

    print(f"{len(work)} pairs ({infeasible} infeasible: the planner proved no plan fits)")
    print(f"with planner:    {len(work) / with_planner_s:,.0f} estimates/s")
    print(f"without planner: {len(planned) / without_planner_s:,.0f} estimates/s")


def rates(level: str) -> Table:
    """The planner's and the estimator's rates, from this module run as a fresh process."""
    pairs_n = PAIRS[level]
    ran = run_command([sys.executable, "-m", "benchmarks.estimator_speed", "--pairs", str(pairs_n)])
    load = os.getloadavg()[0]
    table = Table(
        "Estimator throughput and planner rate (one core; benchmarks.estimator_speed)",
        ("mode", "estimates per second", "pairs", "load avg 1 min"),
    )
    names = {"with planner": "planner + estimator", "without planner": "estimator alone"}
    for mode, rate in RATE.findall(ran.stdout):
        table.add(names[mode], int(rate.replace(",", "")), pairs_n, load)
    if ran.returncode != 0:
        last = ran.stdout.strip().splitlines()[-1] if ran.stdout.strip() else "no output"
        table.add("FAILED", None, pairs_n, load)
        table.notes.append(f"benchmarks.estimator_speed exited {ran.returncode}: {last}")
    if infeasible := INFEASIBLE.search(ran.stdout):
        table.notes.append(f"{infeasible.group(1)} pairs have no plan (the planner proved it).")
    table.notes.append(
        "Targets (docs/performance-model.md): >= 500/s with the planner, >= 20,000/s without."
    )
    return table


def run(level: str, out: Path) -> list[Table]:
    tables = [rates(level)]
    publish("estimator_speed", tables, out, {"level": level, "pairs": PAIRS[level]})
    return tables


if __name__ == "__main__":
    main()
