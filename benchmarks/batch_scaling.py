"""Batch throughput per worker and scaling efficiency (issue 19): benchmarks.batch's
``batch_scaling`` at the run level, published on its own so ``python -m benchmarks`` shows it
beside the other comparisons.
Run: python -m benchmarks.batch_scaling [--level full]
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import batch
from benchmarks.report import Table, module_main, publish


def run(level: str, out: Path) -> list[Table]:
    tables = batch.batch_scaling(level)
    publish("batch_scaling", tables, out, {"level": level})
    return tables


if __name__ == "__main__":
    module_main(run, __doc__)
