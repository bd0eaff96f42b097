"""Batch throughput: 1,000 scenarios (3 bundled catalogs x budgets x targets x workloads)
on one worker and on every core, and the scaling efficiency (docs/batch.md).

Scaling efficiency = (scenarios/s on W workers) / (W x scenarios/s on one worker); 1.0 is
perfect. Both passes include starting their worker processes and shipping the catalogs,
as a user's batch does. The one-worker pass may run a seeded random sample of the same list
(``--one-worker-scenarios``, default all of them) so that a slow machine can measure the
baseline on a representative subset. Peak resident memory of the driver and of the largest
worker shows whether memory stays flat.

Run: python -m benchmarks.batch [--scenarios 1000] [--scheduler tcp://HOST:8786]
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
from dataclasses import replace

from optimizer.batch import (
    BatchPlan,
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


def benchmark_plan(n: int) -> BatchPlan:
    """The first ``n`` of the 3 x 12 x 4 x 7 = 1,008 scenarios."""
    plan = plan_batch(
        spec_from_document(
            {
                "catalogs": CATALOGS,
                "defaults": {"top_k": 1, "solver": {"time_limit_s": 30}},
                "scenarios": [
                    {"workload": {"model": m, "training_tokens": t}} for m, t in WORKLOADS
                ],
                "grid": {
                    "constraints.budget_usd": BUDGETS_USD,
                    "constraints.target_training_hours": TARGET_HOURS,
                },
            }
        )
    )
    return replace(plan, scenarios=plan.scenarios[:n])


def _rate(plan: BatchPlan, engine: Engine, label: str) -> float:
    """Scenarios per second of ``plan`` on ``engine``; prints the rate and any error rows."""
    with tempfile.TemporaryDirectory() as out:
        s = run_batch(plan, out, engine=engine, report=False)
        errors = read_results(out, ["status", "error"]).query("status == 'ERROR'")
    print(f"{label}: {s.scenarios_per_s:.2f} scenarios/s ({s.errors} error rows)")
    for error, count in errors["error"].value_counts().head(3).items():
        print(f"  {count} x {error[:160]}")
    return s.scenarios_per_s


def _peak_rss_mib(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024  # Linux reports KiB


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument(
        "--one-worker-scenarios",
        type=int,
        default=None,
        help="scenarios in the one-worker pass (an evenly spaced sample)",
    )
    parser.add_argument(
        "--scheduler", default=None, help="run the all-cores pass on this Dask scheduler"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local workers of the all-cores pass [default: all CPUs]",
    )
    args = parser.parse_args()

    plan = benchmark_plan(args.scenarios)
    sample = min(args.one_worker_scenarios or len(plan.scenarios), len(plan.scenarios))
    picked = sorted(random.Random(0).sample(range(len(plan.scenarios)), sample))
    one_plan = replace(plan, scenarios=tuple(plan.scenarios[i] for i in picked))
    print(
        f"{len(plan.scenarios)} scenarios ({len(CATALOGS)} catalogs x "
        f"{len(BUDGETS_USD)} budgets x {len(TARGET_HOURS)} targets x "
        f"{len(WORKLOADS)} workloads); one-worker pass: {len(one_plan.scenarios)}"
    )

    with LocalEngine(1) as one:
        one_rate = _rate(one_plan, one, "1 worker")
    with make_engine(args.scheduler, args.workers) as many:
        workers = many.workers
        many_rate = _rate(plan, many, f"{workers} workers ({args.scheduler or 'local pool'})")
    print(
        f"speed-up {many_rate / one_rate:.2f}x; scaling efficiency "
        f"{many_rate / (one_rate * workers):.0%}"
    )
    print(
        f"peak RSS: driver {_peak_rss_mib(resource.RUSAGE_SELF):.0f} MiB, largest local "
        f"worker {_peak_rss_mib(resource.RUSAGE_CHILDREN):.0f} MiB"
    )


if __name__ == "__main__":
    main()
