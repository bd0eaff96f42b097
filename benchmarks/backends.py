"""Backends side by side: CP-SAT, CBC and HiGHS on the same instances (time, status, rank-1
objective), each in a fresh process, and whether they agree on the optimum.

Run: python -m benchmarks.backends [--level full]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.measure import isolated
from benchmarks.report import Table, module_main, publish
from benchmarks.scenarios import bundled, run_optimize, scenario
from benchmarks.synthetic import synthetic_catalog
from optimizer.catalog.model import Catalog
from optimizer.optimize.backends import available_backends

TOP_K = 3
SOLVER_LIMIT_S = 60.0
POINT_TIMEOUT_S = 300.0
# (catalog, GPUs' worth of work) per level; "synthetic-N" is benchmarks.synthetic's N SKUs.
INSTANCES = {
    "smallest": (("infiniband-ndr", 8),),
    "quick": (("infiniband-ndr", 512), ("roce-spectrum", 4096), ("ethernet-budget", 64)),
    "full": (
        *tuple(
            (c, g)
            for c in ("infiniband-ndr", "roce-spectrum", "ethernet-budget")
            for g in (64, 1024, 16384)
        ),
        ("synthetic-100", 1024),
    ),
}


def _catalog(name: str) -> Catalog:
    if name.startswith("synthetic-"):
        return synthetic_catalog(int(name.removeprefix("synthetic-")))
    return bundled()[name]


def run(level: str, out: Path) -> list[Table]:
    backends = available_backends()
    table = Table(
        f"Backends on the same instances (top-{TOP_K}, one thread each)",
        (
            "instance",
            "backend",
            "status",
            "rank-1 capex USD",
            "designs",
            "wall s",
            "CPU s",
            "agrees with first backend",
        ),
    )
    disagreements = 0
    for name, gpus in INSTANCES[level]:
        catalog, sc = _catalog(name), scenario(name, gpus)
        first: tuple[int | None, ...] | None = None
        for backend in backends:
            spec = sc.spec(
                target_hours=sc.target_hours,
                top_k=TOP_K,
                backend=backend,
                time_limit_s=SOLVER_LIMIT_S,
            )
            try:
                m = isolated(run_optimize, catalog, spec, timeout_s=POINT_TIMEOUT_S)
            except TimeoutError:
                table.add(
                    sc.name,
                    backend,
                    f"stopped at {POINT_TIMEOUT_S:g} s",
                    None,
                    None,
                    None,
                    None,
                    "-",
                )
                continue
            o = m.value
            key = (o.capex_cents, o.designs)
            first = first or key
            agrees = key == first
            disagreements += not agrees
            table.add(
                sc.name,
                backend,
                o.status,
                o.capex_usd,
                o.designs,
                m.wall_s,
                m.cpu_s,
                "yes" if agrees else "NO",
            )
    table.notes.append(
        f"Backends available here: {', '.join(backends)}. "
        f"{disagreements} disagreement(s) on the rank-1 capex or design count."
    )
    publish(
        "backends", [table], out, {"level": level, "top_k": TOP_K, "solver_limit_s": SOLVER_LIMIT_S}
    )
    return [table]


if __name__ == "__main__":
    module_main(run, __doc__)
