"""Batch throughput per worker and scaling efficiency at a size that fits the run level:
8 scenarios (smallest: CI's smoke case must finish within 60 s), 300 (quick) or 10,000
(full) over the three bundled catalogs, on one local worker and on two.

Scaling efficiency = (scenarios/s on W workers) / (W x scenarios/s on one worker); 1.0 is
perfect. The one-worker pass runs an evenly spread sample when the batch is large (so the
baseline does not take as long as the whole batch on one core). The grid is
benchmarks/batch.py's (its workloads, fabrics and budgets), widened to 10,000 scenarios
for the full level by more budgets and targets. When benchmarks.batch grows
``batch_scaling(level)`` (issue 19), the suite runs that instead.
Run: python -m benchmarks.batch_scaling [--level full]
"""

from __future__ import annotations

import os
import random
import tempfile
from dataclasses import replace
from pathlib import Path

from benchmarks import batch
from benchmarks.report import Table, module_main, publish
from optimizer.batch import BatchPlan, LocalEngine, plan_batch, run_batch
from optimizer.batch.spec import spec_from_document

SCENARIOS = {"smallest": 8, "quick": 300, "full": 10_000}
ONE_WORKER_SCENARIOS = {"smallest": 8, "quick": 150, "full": 1_000}
WORKERS = 2  # this machine's cores (the "2 workers")


def _geometric(low: float, high: float, n: int) -> list[float]:
    return [low * (high / low) ** (i / (n - 1)) for i in range(n)]


def scaling_plan(n: int) -> BatchPlan:
    """The first ``n`` scenarios of benchmarks/batch.py's grid (1,008 of them), or of the same
    workloads over 10 budgets x 28 targets (10,080) when more are asked for."""
    if n <= 1008:
        return batch.benchmark_plan(n)
    plan = plan_batch(
        spec_from_document(
            {
                "catalogs": batch.CATALOGS,
                "defaults": {"top_k": 1, "solver": {"time_limit_s": 30}},
                "scenarios": [
                    {"workload": {"model": m, "training_tokens": t}} for m, t in batch.WORKLOADS
                ],
                "grid": {
                    "constraints.budget_usd": [round(b) for b in _geometric(3e5, 5e6, 10)],
                    "constraints.target_training_hours": [
                        round(h, 2) for h in _geometric(4.0, 400.0, 28)
                    ],
                },
            }
        )
    )
    return replace(plan, scenarios=plan.scenarios[:n])


def _pass(plan: BatchPlan, workers: int) -> tuple[float, int]:
    """(scenarios/s, error rows) of ``plan`` on a local pool of ``workers`` processes."""
    with LocalEngine(workers) as engine, tempfile.TemporaryDirectory() as out:
        done = run_batch(plan, out, engine=engine, report=False)
    return done.scenarios_per_s, done.errors


def scaling(level: str) -> Table:
    plan = scaling_plan(SCENARIOS[level])
    n = len(plan.scenarios)
    sample = min(ONE_WORKER_SCENARIOS[level], n)
    picked = sorted(random.Random(0).sample(range(n), sample))
    one_plan = replace(plan, scenarios=tuple(plan.scenarios[i] for i in picked))
    table = Table(
        "Batch throughput per worker and scaling efficiency (local pool)",
        (
            "workers",
            "scenarios",
            "scenarios per s",
            "scenarios per s per worker",
            "scaling efficiency",
            "error rows",
            "load avg 1 min",
        ),
    )
    one_rate, one_errors = _pass(one_plan, 1)
    table.add(1, sample, one_rate, one_rate, 1.0, one_errors, os.getloadavg()[0])
    many_rate, many_errors = _pass(plan, WORKERS)
    efficiency = many_rate / (WORKERS * one_rate) if one_rate > 0 else float("nan")
    table.add(
        WORKERS,
        n,
        many_rate,
        many_rate / WORKERS,
        efficiency,
        many_errors,
        os.getloadavg()[0],
    )
    table.notes.append(
        f"{n:,} scenarios at {many_rate:.2f}/s take {n / many_rate / 60:.1f} min on "
        f"{WORKERS} workers; 10,000 would take {10_000 / many_rate / 60:.1f} min "
        "(target: <= 10 min, efficiency >= 85%)."
        if many_rate > 0
        else "The two-worker pass wrote no scenario."
    )
    return table


def run(level: str, out: Path) -> list[Table]:
    theirs = getattr(batch, "batch_scaling", None)  # issue 19 (batch), once merged
    tables = list(theirs(level)) if callable(theirs) else [scaling(level)]
    publish(
        "batch_scaling",
        tables,
        out,
        {"level": level, "scenarios": SCENARIOS[level], "workers": WORKERS},
    )
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
