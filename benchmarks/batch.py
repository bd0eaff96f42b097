"""Batch throughput: a grid over the 3 bundled catalogs on one worker and on every core,
the scaling efficiency, and the wall time for the whole grid (docs/batch.md).

Scaling efficiency = (scenarios/s on W workers) / (W x scenarios/s on one worker); 1.0 is
perfect. Both passes include starting their worker processes and shipping the catalogs,
as a user's batch does. The one-worker pass may run a seeded random sample of the same list
(``--one-worker-scenarios``) so that a slow machine can measure the baseline on a
representative subset. Each local pass also reports its workers' CPU seconds per scenario,
which a shared machine disturbs far less than wall time, and the load average when it
started. Peak resident memory of the driver and of the largest worker shows whether memory
stays flat.

``--ranking-only`` sets the request field ``ranking_only`` on every scenario: the optimizer
ranks without the explanation re-solves, as an analyst screening thousands of scenarios would
run it (docs/batch.md, "Ranking only").

Run: python -m benchmarks.batch [--scenarios 10000] [--ranking-only]
[--scheduler tcp://127.0.0.1:8786]
``batch_scaling(level)`` is the same measurement for ``python -m benchmarks`` (smallest: 36
scenarios, quick: 1,000, full: 10,000 ranking only).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import random
import resource
import tempfile
import time
from dataclasses import dataclass, replace
from typing import Any

from benchmarks.report import Table
from optimizer.batch import (
    BatchPlan,
    DaskEngine,
    Engine,
    LocalEngine,
    make_engine,
    plan_batch,
    read_results,
    run_batch,
)
from optimizer.batch.spec import spec_from_document

CATALOGS = ["infiniband-ndr", "roce-spectrum", "ethernet-budget"]
# Small models and token counts keep each solve well under a second (a few 8-64 GPU
# designs); the grid still spans every fabric, several topologies and binding budgets.
WORKLOADS = (
    [("bert-large", t) for t in (1e9, 2e9, 5e9, 1e10, 2e10, 4e10, 8e10)]
    + [("mpt-125m", t) for t in (1e10, 5e10)]
    + [("llama3-8b", t) for t in (2.5e9, 5e9, 1e10)]
)
BUDGETS_USD = [4e5, 1e6, 2e6, 4e6]
TARGET_HOURS = [6, 12, 24, 48, 96, 192, 384]
# The base grid: 3 catalogs x 12 workloads x 4 budgets x 7 targets.
BASE_GRID_SCENARIOS = len(CATALOGS) * len(WORKLOADS) * len(BUDGETS_USD) * len(TARGET_HOURS)
# (all scenarios, one-worker sample) per benchmark level.
LEVEL_SIZES = {"smallest": (8, 8), "quick": (1000, 200), "full": (10_000, 1000)}
# Levels whose scenarios rank only (the 10,000-scenario screening the issue asks for).
RANKING_ONLY_LEVELS = frozenset({"full"})


def _geometric(low: float, high: float, n: int) -> list[float]:
    """``n`` values from ``low`` to ``high``, evenly spaced on a log scale, 3 significant
    digits (readable in the results table)."""
    if n == 1:
        return [low]
    return [float(f"{low * (high / low) ** (i / (n - 1)):.3g}") for i in range(n)]


def grid_axes(n: int) -> tuple[list[float], list[float]]:
    """Budgets and targets of a grid of at least ``n`` scenarios: the base axes up to
    1,008 scenarios, else finer axes over the same ranges (about 4 budgets to 7 targets)."""
    if n <= BASE_GRID_SCENARIOS:
        return BUDGETS_USD, [float(t) for t in TARGET_HOURS]
    cells = math.ceil(n / (len(CATALOGS) * len(WORKLOADS)))  # budgets x targets needed
    budgets = math.ceil(math.sqrt(cells * len(BUDGETS_USD) / len(TARGET_HOURS)))
    targets = math.ceil(cells / budgets)
    return (
        _geometric(BUDGETS_USD[0], BUDGETS_USD[-1], budgets),
        _geometric(TARGET_HOURS[0], TARGET_HOURS[-1], targets),
    )


def benchmark_plan(n: int, *, ranking_only: bool = False) -> BatchPlan:
    """``n`` scenarios: the first ``n`` of the base grid (up to its 1,008), or ``n`` evenly
    spaced over a finer grid, so that every catalog and workload has its share.
    ``ranking_only`` is the request field, set in the spec's defaults."""
    budgets, targets = grid_axes(n)
    defaults: dict[str, Any] = {"top_k": 1, "solver": {"time_limit_s": 30}}
    if ranking_only:
        defaults["ranking_only"] = True
    plan = plan_batch(
        spec_from_document(
            {
                "catalogs": CATALOGS,
                "defaults": defaults,
                "scenarios": [
                    {"workload": {"model": m, "training_tokens": t}} for m, t in WORKLOADS
                ],
                "grid": {
                    "constraints.budget_usd": budgets,
                    "constraints.target_training_hours": targets,
                },
            }
        )
    )
    total = len(plan.scenarios)
    if n <= BASE_GRID_SCENARIOS:
        return replace(plan, scenarios=plan.scenarios[:n])
    return _subset(plan, {i * total // n for i in range(n)})


def _subset(plan: BatchPlan, indices: set[int]) -> BatchPlan:
    """The plan's scenarios at ``indices``, in plan order; one pass (a plan makes its
    scenarios on demand, so indexing would rebuild them from the start each time)."""
    kept = tuple(s for i, s in enumerate(plan.scenarios) if i in indices)
    return replace(plan, scenarios=kept)


def sample_plan(plan: BatchPlan, n: int) -> BatchPlan:
    """A seeded random sample of ``n`` of the plan's scenarios, in plan order."""
    n = min(n, len(plan.scenarios))
    return _subset(plan, set(random.Random(0).sample(range(len(plan.scenarios)), n)))


@dataclass(frozen=True)
class Pass:
    """One run of a plan on one engine."""

    label: str
    workers: int
    scenarios: int
    wall_s: float
    errors: int
    load_average_1min: float
    worker_cpu_s: float | None  # the local pool's CPU seconds; None on Dask

    @property
    def scenarios_per_s(self) -> float:
        return self.scenarios / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def worker_cpu_ms_per_scenario(self) -> float:
        if self.worker_cpu_s is None or not self.scenarios:
            return math.nan
        return 1000 * self.worker_cpu_s / self.scenarios


def _join_children(timeout_s: float = 30.0) -> None:
    """Wait until the pool's worker processes have exited (and been joined)."""
    deadline = time.monotonic() + timeout_s
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # finished (joined) children
    return usage.ru_utime + usage.ru_stime


def measure(plan: BatchPlan, engine: Engine, label: str, *, verbose: bool = True) -> Pass:
    """Run ``plan`` on ``engine`` into a scratch directory and time it (no report)."""
    load = os.getloadavg()[0]
    cpu_before = _children_cpu_s()
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        s = run_batch(plan, out, engine=engine, report=False)
        wall = time.perf_counter() - start
        errors = read_results(out, ["status", "error"]).query("status == 'ERROR'")
    local = not isinstance(engine, DaskEngine)
    if local:
        _join_children()  # a finished worker's CPU time is counted once it is joined
    result = Pass(
        label=label,
        workers=engine.workers,
        scenarios=s.written,
        wall_s=wall,
        errors=s.errors,
        load_average_1min=load,
        worker_cpu_s=_children_cpu_s() - cpu_before if local else None,
    )
    if verbose:
        cpu = result.worker_cpu_ms_per_scenario
        print(
            f"{label}: {s.written:,} scenarios in {wall:,.1f} s = "
            f"{result.scenarios_per_s:.2f} scenarios/s"
            + ("" if math.isnan(cpu) else f", {cpu:,.0f} ms worker CPU per scenario")
            + f" ({s.errors} error rows; load average {load:.2f} at start)",
            flush=True,
        )
        for error, count in errors["error"].value_counts().head(3).items():
            print(f"  {count} x {error[:160]}")
    return result


def peak_rss_mib(engine: Engine | None = None) -> tuple[float, float]:
    """Peak resident MiB of this driver and of its largest worker: the local pool's joined
    children, or the Dask cluster's worker processes when ``engine`` is a DaskEngine."""
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    if isinstance(engine, DaskEngine):
        peaks: dict[str, Any] = engine.client.run(_own_peak_rss_mib)
        return driver, max(peaks.values(), default=math.nan)
    return driver, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _own_peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def scaling_table(
    n: int,
    one_worker_n: int,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    ranking_only: bool = False,
    verbose: bool = True,
) -> Table:
    """One-worker and all-workers passes over ``n`` scenarios (the one-worker pass over a
    seeded sample of ``one_worker_n``), as a table; ``ranking_only`` skips the explanation
    re-solves in every scenario (and says so in the title)."""
    plan = benchmark_plan(n, ranking_only=ranking_only)
    one_plan = sample_plan(plan, one_worker_n)
    budgets, targets = grid_axes(n)
    grid = (
        f"{len(CATALOGS)} catalogs x {len(WORKLOADS)} workloads x {len(budgets)} budgets x "
        f"{len(targets)} targets"
    )
    if verbose:
        print(
            f"{len(plan.scenarios):,} scenarios ({grid}); one-worker pass: "
            f"{len(one_plan.scenarios):,}",
            flush=True,
        )
    with LocalEngine(1) as one_engine:
        one = measure(one_plan, one_engine, "1 worker (local pool)", verbose=verbose)
    with make_engine(scheduler, workers) as many_engine:
        where = f"Dask {scheduler}" if scheduler else "local pool"
        label = f"{many_engine.workers} workers ({where})"
        many = measure(plan, many_engine, label, verbose=verbose)
        driver_mib, worker_mib = peak_rss_mib(many_engine)
    efficiency = many.scenarios_per_s / (one.scenarios_per_s * many.workers)
    table = Table(
        title="Batch throughput (issue 19)"
        + (", ranking only (no explanation re-solves)" if ranking_only else ""),
        columns=(
            "pass",
            "workers",
            "scenarios",
            "wall_s",
            "scenarios_per_s",
            "scenarios_per_s_per_worker",
            "worker_cpu_ms_per_scenario",
            "load_average_1min",
        ),
    )
    for p in (one, many):
        table.add(
            p.label,
            p.workers,
            p.scenarios,
            p.wall_s,
            p.scenarios_per_s,
            p.scenarios_per_s / p.workers,
            p.worker_cpu_ms_per_scenario,
            p.load_average_1min,
        )
    table.notes.append(
        f"Grid: {grid} (python -m benchmarks.batch --scenarios {n} "
        f"--one-worker-scenarios {one_worker_n}"
        + (" --ranking-only" if ranking_only else "")
        + (f" --scheduler {scheduler}" if scheduler else "")
        + f"). Speed-up {many.scenarios_per_s / one.scenarios_per_s:.2f}x on {many.workers} "
        f"workers, scaling efficiency {efficiency:.0%}; wall time for all "
        f"{many.scenarios:,} scenarios {many.wall_s:,.0f} s. Peak RSS: driver "
        f"{driver_mib:.0f} MiB, largest worker {worker_mib:.0f} MiB. "
        f"{one.errors + many.errors} error rows."
    )
    if verbose:
        print(table.notes[-1], flush=True)
    return table


def batch_scaling(level: str) -> list[Table]:
    """The scaling table at a benchmark level (benchmarks.report.LEVELS), local pool of
    every CPU: smallest 8 scenarios, quick 1,000 (200 on one worker), full 10,000 (1,000)
    ranking only, the screening run the issue's 10-minute target is about."""
    n, one_worker_n = LEVEL_SIZES[level]
    return [scaling_table(n, one_worker_n, ranking_only=level in RANKING_ONLY_LEVELS)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--scenarios",
        type=int,
        default=1000,
        help="scenarios in the all-workers pass (over 1,008: a finer grid) [default: 1000]",
    )
    parser.add_argument(
        "--one-worker-scenarios",
        type=int,
        default=None,
        help="scenarios in the one-worker pass (a seeded random sample) [default: all]",
    )
    parser.add_argument(
        "--scheduler", default=None, help="run the all-workers pass on this Dask scheduler"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local workers of the all-workers pass [default: all CPUs]",
    )
    parser.add_argument(
        "--ranking-only",
        action="store_true",
        help="every scenario ranks only: no explanation re-solves (request field ranking_only)",
    )
    args = parser.parse_args()
    if args.scenarios < 1:
        parser.error(f"--scenarios: got {args.scenarios}, expected at least 1")
    table = scaling_table(
        args.scenarios,
        args.one_worker_scenarios or args.scenarios,
        scheduler=args.scheduler,
        workers=args.workers,
        ranking_only=args.ranking_only,
    )
    print()
    print(table.render())


if __name__ == "__main__":
    main()
