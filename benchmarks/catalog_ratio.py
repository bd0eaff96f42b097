"""Large-catalog cost as a ratio to a bundled catalog (issue 19's acceptance: rank 1 on a
5,000-SKU catalog within 2.5x the process CPU of a bundled one, top 10 within 4x, peak memory
within 300 MB); the table is benchmarks.scale's ``large_catalog_ratio``, published on its own
so that ``python -m benchmarks`` shows it beside the other comparisons.
Run: python -m benchmarks.catalog_ratio [--level full]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import scale
from benchmarks.report import Table, module_main, publish


def run(level: str, out: Path) -> list[Table]:
    tables = [scale.large_catalog_ratio(level)]
    publish("catalog_ratio", tables, out, {"level": level})
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
