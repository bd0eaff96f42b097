"""Run a batch: the one runner behind ``procure batch`` and the service's batch RPC.

Usage::

    from optimizer.batch import load_spec, run_batch, LocalEngine, DaskEngine

    summary = run_batch(load_spec("quotes.yaml"), "out/")                 # all local cores
    summary = run_batch(spec, "out/", engine=DaskEngine("tcp://h:8786"))  # a Dask cluster
    summary = run_batch(spec, "out/", resume=True)    # skip scenarios already written

``run_batch`` resolves catalogs once (``plan_batch``), streams scenarios to the engine,
writes each result exactly once (``writer.ResultWriter``) and finishes with the report
(``report.md``, ``frontier.png``). ``iter_batch`` is the same loop as a generator, for a
caller that streams progress (the gRPC service): it yields one ``BatchProgress`` per result
and commits what it has when the consumer stops early. A ``progress`` callback that raises
(e.g. ``KeyboardInterrupt`` on Ctrl-C) stops the batch the same way; ``resume=True`` then
carries on where it stopped.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

from optimizer.batch.engines import Engine, LocalEngine
from optimizer.batch.report import write_report
from optimizer.batch.spec import BatchPlan, BatchSpec, plan_batch
from optimizer.batch.tasks import ERROR, TaskResult
from optimizer.batch.writer import (
    CSV_FILE,
    RESPONSES_FILE,
    RESULTS_DIR,
    ResultWriter,
    has_results,
    read_results,
)
from optimizer.errors import InvalidInput

MANIFEST_FILE = "batch.json"


@dataclass(frozen=True)
class BatchProgress:
    done: int  # scenarios with a result, including those skipped
    total: int
    skipped: int  # already written by an earlier run (resume)
    result: TaskResult


@dataclass(frozen=True)
class BatchSummary:
    out_dir: Path
    scenarios: int  # distinct scenarios in the spec
    skipped: int  # already written by an earlier run (resume)
    written: int  # written by this run
    errors: int  # rows of this run whose status is ERROR
    duplicates: int  # spec rows dropped because they repeat an earlier scenario
    workers: int
    elapsed_s: float
    report_path: Path | None
    plot_path: Path | None

    @property
    def scenarios_per_s(self) -> float:
        return self.written / self.elapsed_s if self.elapsed_s > 0 else 0.0


def iter_batch(
    plan: BatchPlan,
    out_dir: str | Path,
    *,
    engine: Engine,
    resume: bool = False,
    csv: bool = False,
    timeout_s: float | None = None,
    flush_rows: int = 200,
    flush_s: float = 10.0,
) -> Generator[BatchProgress, None, None]:
    """Solve the plan's scenarios not yet written in ``out_dir``; one progress per result.

    Raises ``InvalidInput`` when ``out_dir`` already holds results and ``resume`` is false.
    """
    out = Path(out_dir)
    if has_results(out) and not resume:
        msg = f"{out} already holds results; pass resume (--resume) or choose a new directory"
        raise InvalidInput(msg, field="out")
    out.mkdir(parents=True, exist_ok=True)
    _write_manifest(plan, out)
    writer = ResultWriter(out, csv_copy=csv, flush_rows=flush_rows, flush_s=flush_s)
    todo = [s for s in plan.scenarios if s.scenario_id not in writer.written]
    done = skipped = len(plan.scenarios) - len(todo)
    results = engine.run(plan.catalog_data, todo, timeout_s=timeout_s)
    try:
        for result in results:
            if writer.add(result):
                done += 1
                yield BatchProgress(done, len(plan.scenarios), skipped, result)
    finally:
        results.close()
        writer.flush()


def run_batch(
    spec: BatchSpec | BatchPlan,
    out_dir: str | Path,
    *,
    engine: Engine | None = None,
    resume: bool = False,
    csv: bool = False,
    timeout_s: float | None = None,
    progress: Callable[[BatchProgress], None] | None = None,
    data_dir: str | Path | None = None,
    tenant: str = "default",
    report: bool = True,
) -> BatchSummary:
    """Run ``spec`` into ``out_dir`` on ``engine`` (default: a local pool of all CPUs) and
    write the report; see the module docstring."""
    plan = (
        spec if isinstance(spec, BatchPlan) else plan_batch(spec, data_dir=data_dir, tenant=tenant)
    )
    own = engine is None
    eng = engine if engine is not None else LocalEngine()
    skipped = written = errors = 0
    start = time.perf_counter()
    steps = iter_batch(plan, out_dir, engine=eng, resume=resume, csv=csv, timeout_s=timeout_s)
    try:
        with contextlib.closing(steps):  # commits the results so far if progress raises
            for step in steps:
                skipped = step.skipped
                written += 1
                errors += step.result.row["status"] == ERROR
                if progress is not None:
                    progress(step)
    finally:
        if own:
            eng.close()
    elapsed = time.perf_counter() - start
    if not written:
        skipped = len(plan.scenarios)
    paths = write_report(read_results(out_dir), out_dir) if report else (None, None)
    return BatchSummary(
        out_dir=Path(out_dir),
        scenarios=len(plan.scenarios),
        skipped=skipped,
        written=written,
        errors=errors,
        duplicates=plan.duplicates,
        workers=eng.workers,
        elapsed_s=elapsed,
        report_path=paths[0],
        plot_path=paths[1],
    )


def output_files(out_dir: str | Path) -> dict[str, Path]:
    """Where a batch directory keeps each of its outputs."""
    out = Path(out_dir)
    return {
        "results": out / RESULTS_DIR,
        "responses": out / RESPONSES_FILE,
        "csv": out / CSV_FILE,
        "manifest": out / MANIFEST_FILE,
    }


def _write_manifest(plan: BatchPlan, out: Path) -> None:
    doc = {
        "scenarios": len(plan.scenarios),
        "duplicates": plan.duplicates,
        "catalogs": [
            {"catalog_id": c.catalog_id, "ref": c.ref, "name": c.name, "vendor": c.vendor}
            for c in plan.catalogs.values()
        ],
    }
    (out / MANIFEST_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
