"""Run the benchmark suite: ``python -m benchmarks`` (quick, < 10 minutes), ``--smallest`` (CI's
smoke case, < 60 s: keeps the suite working, times nothing worth reading) or ``--full`` (every
figure in docs/benchmarks.md). Each benchmark prints its tables and writes JSON under --out.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks import (
    backends,
    batch_scaling,
    catalog_ratio,
    cli_startup,
    cpsat_linearization,
    estimator_speed,
    latency,
    optimality,
    profile_largest,
    quality,
    scale,
    versus_enumerator,
)
from benchmarks.report import DEFAULT_OUT, Table, machine

# The fair comparison (the independent enumerator) first, the exponential oracle beside it.
SUITE: dict[str, Callable[[str, Path], list[Table]]] = {
    "versus_enumerator": versus_enumerator.run,
    "optimality": optimality.run,
    "scale": scale.run,
    "catalog_ratio": catalog_ratio.run,
    "batch_scaling": batch_scaling.run,
    "estimator_speed": estimator_speed.run,
    "backends": backends.run,
    "cpsat_linearization": cpsat_linearization.run,
    "quality": quality.run,
    "latency": latency.run,
    "profile_largest": profile_largest.run,
    "cli_startup": cli_startup.run,
}


def main() -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    size = p.add_mutually_exclusive_group()
    size.add_argument("--smallest", action="store_true", help="CI smoke case (< 60 s)")
    size.add_argument("--full", action="store_true", help="everything (tens of minutes)")
    p.add_argument(
        "--only", choices=tuple(SUITE), action="append", help="run only this benchmark (repeatable)"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"directory for the JSON results (default {DEFAULT_OUT})",
    )
    args = p.parse_args()
    level = "smallest" if args.smallest else "full" if args.full else "quick"
    info = machine()
    print(
        f"# Benchmarks ({level}) on {info['nproc']} x {info['cpu_model']}, Python "
        f"{info['python']}, commit {info['commit']}, load average "
        f"{info['load_average_1min']:.2f} (1 min) at the start\n",
        flush=True,
    )
    start, start_cpu = time.perf_counter(), _cpu_s()
    for name in args.only or SUITE:
        began, began_cpu = time.perf_counter(), _cpu_s()
        print(f"## {name}\n", flush=True)
        SUITE[name](level, args.out)
        print(
            f"({name}: {time.perf_counter() - began:,.0f} s wall, "
            f"{_cpu_s() - began_cpu:,.1f} s CPU)\n",
            flush=True,
        )
    print(
        f"Suite finished in {time.perf_counter() - start:,.0f} s wall, "
        f"{_cpu_s() - start_cpu:,.1f} s CPU (load average {os.getloadavg()[0]:.2f}); "
        f"JSON in {args.out}"
    )


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (every benchmark forks or spawns
    its measurements): on a shared machine the wall time says more about the load."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


if __name__ == "__main__":
    main()
