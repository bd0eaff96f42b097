"""Large-catalog cost as a ratio: each catalog's CPU time for the same request divided by that
of the bundled infiniband-ndr catalog (issue 19's acceptance: rank 1 on a 5,000-SKU catalog
within 2.5x of a bundled one, peak memory within 300 MB).

The measurements are benchmarks.scale's catalog sweep (1,024 GPUs' worth of Llama 3 70B,
rank 1, one fresh process per catalog); this module only states them as ratios. When
benchmarks.scale grows ``large_catalog_ratio(level)`` (issue 19), the suite runs that instead.
Run: python -m benchmarks.catalog_ratio [--level full]
"""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks import scale
from benchmarks.report import Table, module_main, publish

CPU_RATIO_TARGET = 2.5
PEAK_MIB_TARGET = 300.0


def ratios(level: str) -> Table:
    sweep = scale.catalog_sweep(level)
    rows = sweep.records()
    base = next((r for r in rows if r["catalog"] == scale.SWEEP_CATALOG), None)
    base_cpu_s = base["CPU s"] if base else None
    table = Table(
        f"Large-catalog CPU as a ratio to the bundled {scale.SWEEP_CATALOG} catalog "
        f"({scale.CATALOG_SWEEP_GPUS:,} GPUs' worth of Llama 3 70B, rank 1)",
        (
            "catalog",
            "SKUs",
            "status",
            "CPU s",
            f"CPU / {scale.SWEEP_CATALOG} CPU",
            "peak RSS growth MiB",
            "load avg 1 min",
        ),
    )
    load = os.getloadavg()[0]
    for r in rows:
        cpu_s = r["CPU s"]
        ratio = cpu_s / base_cpu_s if cpu_s is not None and base_cpu_s else None
        table.add(
            r["catalog"], r["SKUs"], r["status"], cpu_s, ratio, r["peak RSS growth MiB"], load
        )
    table.notes.append(
        f"Targets (issue 19): a 5,000-SKU catalog within {CPU_RATIO_TARGET:g}x the CPU of a "
        f"bundled one (top-10 within 4x), peak memory growth <= {PEAK_MIB_TARGET:g} MiB. "
        "The load average is read once, after the sweep."
    )
    table.notes.extend(sweep.notes)
    return table


def run(level: str, out: Path) -> list[Table]:
    theirs = getattr(scale, "large_catalog_ratio", None)  # issue 19 (largecat), once merged
    tables = [theirs(level)] if callable(theirs) else [ratios(level)]
    publish("catalog_ratio", tables, out, {"level": level})
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
