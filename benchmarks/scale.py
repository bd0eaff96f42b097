"""Scale: solve time and peak memory as the cluster grows (64 to 131,072 GPUs' worth of work)
and as the catalog grows (the bundled catalogs, then synthetic catalogs of 100, 1,000 and
5,000 SKUs from benchmarks.synthetic), with the growth exponent fitted on log-log axes; and the
issue's latency targets (rank-1 of a 16,384-GPU scenario proven optimal in <= 2 s, top-10 in
<= 10 s, 131,072 GPUs in <= 10 s, one core).

One workload runs the whole cluster sweep so that only the size changes: Llama 3 70B with a
global batch of 16,384 sequences (128 M tokens; the preset's 512 cannot keep 131,072 GPUs busy,
since data parallelism is bounded by the batch). Every point runs in a fresh process
(benchmarks.measure.isolated). Run: python -m benchmarks.scale [--level full]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.measure import ChildFailed, Measured, fit_exponent, isolated
from benchmarks.report import Table, module_main, publish
from benchmarks.scenarios import Outcome, Scenario, bundled, run_optimize
from benchmarks.synthetic import synthetic_catalog
from optimizer.catalog.model import Catalog
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

SWEEP_CATALOG = "infiniband-ndr"
CLUSTER_GPUS = {
    "smallest": (64,),
    "quick": (64, 512, 4096, 16384, 131072),
    "full": (64, 256, 1024, 4096, 16384, 65536, 131072),
}
SYNTHETIC_SKUS = {"smallest": (), "quick": (100,), "full": (100, 1000, 5000)}
CATALOG_SWEEP_GPUS = 1024
# Points that run longer are stopped and reported as such (the optimizer's own limit is
# ``SOLVER_LIMIT_S``; a point over the timeout means the search before the MIP ignored it).
POINT_TIMEOUT_S = {"smallest": 60.0, "quick": 120.0, "full": 600.0}
SOLVER_LIMIT_S = 60.0
# Address-space cap per point: one 5,000-SKU request once grew past the 24 GB of the machine.
MEMORY_LIMIT_MIB = 8192
# (GPUs' worth of work, top K, target seconds) from the issue.
TARGETS = ((16384, 1, 2.0), (16384, 10, 10.0), (131072, 1, 10.0))
TARGET_CATALOGS = {
    "smallest": (),
    "quick": (SWEEP_CATALOG,),
    "full": ("infiniband-ndr", "roce-spectrum", "ethernet-budget"),
}


def sweep_workload() -> Workload:
    return preset("llama3-70b", global_batch_size=16384)


def _point(catalog: Catalog, sc: Scenario, top_k: int, timeout_s: float) -> Measured | str:
    """The measured request, or why it has no measurement (stopped, or its process died)."""
    spec = sc.spec(target_hours=sc.target_hours, top_k=top_k, time_limit_s=SOLVER_LIMIT_S)
    try:
        return isolated(
            run_optimize, catalog, spec, timeout_s=timeout_s, memory_limit_mib=MEMORY_LIMIT_MIB
        )
    except TimeoutError:
        return f"stopped at {timeout_s:g} s"
    except ChildFailed as e:
        return f"failed: {str(e).strip().splitlines()[-1]}"


COLUMNS = (
    "status",
    "GPUs chosen",
    "rank-1 design",
    "candidates timed",
    "wall s",
    "CPU s",
    "peak RSS growth MiB",
)


def _cells(m: Measured | str) -> tuple[object, ...]:
    if isinstance(m, str):
        return (m, None, "", None, None, None, None)
    o: Outcome = m.value
    return (
        o.status,
        o.gpus,
        o.design,
        o.candidates_evaluated,
        m.wall_s,
        m.cpu_s,
        m.peak_rss_growth_mib,
    )


Point = tuple[float, tuple[object, ...], Catalog, Scenario]  # x, leading cells, catalog, scenario


def _sweep(table: Table, axis: str, points: list[Point], timeout_s: float) -> Table:
    """Measure each point into a row (leading cells first) and fit the growth along ``axis``."""
    xs, times, mems = [], [], []
    for x, lead, catalog, sc in points:
        m = _point(catalog, sc, 1, timeout_s)
        table.add(*lead, *_cells(m))
        if isinstance(m, Measured):
            xs.append(x)
            times.append(m.cpu_s)
            mems.append(m.peak_rss_growth_mib)
    if len(xs) >= 2:
        table.notes.append(
            f"Fitted growth: CPU time ~ {axis}^{fit_exponent(xs, times):.2f}, "
            f"peak memory growth ~ {axis}^{fit_exponent(xs, mems):.2f} "
            f"(least squares on log-log, {len(xs)} finished points)."
        )
    return table


def cluster_sweep(level: str) -> Table:
    catalog = bundled()[SWEEP_CATALOG]
    table = Table(
        f"Cluster size sweep ({SWEEP_CATALOG}, Llama 3 70B, top-1)",
        ("GPUs' worth of work", "target h", *COLUMNS),
    )
    points: list[Point] = []
    for gpus in CLUSTER_GPUS[level]:
        sc = Scenario(SWEEP_CATALOG, gpus, sweep_workload())
        points.append((gpus, (gpus, sc.target_hours), catalog, sc))
    return _sweep(table, "GPUs", points, POINT_TIMEOUT_S[level])


def catalog_sweep(level: str) -> Table:
    catalogs: list[tuple[str, Catalog]] = list(bundled().items())
    if level == "smallest":
        catalogs = [(SWEEP_CATALOG, bundled()[SWEEP_CATALOG])]
    catalogs += [(f"synthetic-{n}", synthetic_catalog(n)) for n in SYNTHETIC_SKUS[level]]
    table = Table(
        f"Catalog size sweep ({CATALOG_SWEEP_GPUS:,} GPUs' worth of Llama 3 70B, top-1)",
        ("catalog", "SKUs", *COLUMNS),
    )
    points: list[Point] = []
    for name, catalog in catalogs:
        skus = len(catalog.servers) + len(catalog.nics) + len(catalog.switches) + len(catalog.links)
        points.append(
            (skus, (name, skus), catalog, Scenario(name, CATALOG_SWEEP_GPUS, sweep_workload()))
        )
    return _sweep(table, "SKUs", points, POINT_TIMEOUT_S[level])


def targets(level: str) -> Table:
    timeout = POINT_TIMEOUT_S[level]
    table = Table(
        "Latency targets (one core; met = proven optimal within the target CPU time)",
        ("catalog", "GPUs' worth of work", "top K", "target s", *COLUMNS, "met"),
    )
    for name in TARGET_CATALOGS[level]:
        for gpus, top_k, limit_s in TARGETS:
            m = _point(bundled()[name], Scenario(name, gpus, sweep_workload()), top_k, timeout)
            met = isinstance(m, Measured) and m.value.status == "OPTIMAL" and m.cpu_s <= limit_s
            table.add(name, gpus, top_k, limit_s, *_cells(m), "yes" if met else "NO")
    return table


def run(level: str, out: Path) -> list[Table]:
    tables = [cluster_sweep(level), catalog_sweep(level)]
    if TARGET_CATALOGS[level]:
        tables.append(targets(level))
    publish(
        "scale",
        tables,
        out,
        {
            "level": level,
            "solver_limit_s": SOLVER_LIMIT_S,
            "point_timeout_s": POINT_TIMEOUT_S[level],
            "workload": "llama3-70b, global_batch_size=16384",
        },
    )
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
