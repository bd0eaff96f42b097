"""Run a batch: the one runner behind ``procure batch`` and the service's batch RPC.

Usage::

    from optimizer.batch import load_spec, run_batch, LocalEngine, DaskEngine

    summary = run_batch(load_spec("quotes.yaml"), "out/")                 # all local cores
    summary = run_batch(spec, "out/", engine=DaskEngine("tcp://h:8786"))  # a Dask cluster
    summary = run_batch(spec, "out/", resume=True)    # skip scenarios already written
    summary = run_batch(spec, "out/", resume=True, allow_changed=True)  # after an edit

``run_batch`` resolves catalogs once (``plan_batch``), streams scenarios to the engine,
writes each result exactly once (``writer.ResultWriter``) and finishes with the report
(``report.md``, ``frontier.png``). ``iter_batch`` is the same loop as a generator, for a
caller that streams progress (the gRPC service): it yields one ``BatchProgress`` per result
and commits what it has when the consumer stops early. A ``progress`` callback that raises
(e.g. ``KeyboardInterrupt`` on Ctrl-C) stops the batch the same way; ``resume=True`` then
carries on where it stopped.

An output directory records in ``batch.json`` a fingerprint of its inputs: the spec's
scenarios and the content id each catalog reference resolved to. A resume against other
inputs (an edited spec, a catalog re-imported as a new version) is refused with what
differs (``InputsChanged``); ``allow_changed=True`` instead drops the rows of scenarios no
longer in the plan and runs the new ones. Opening the directory also repairs it
(``repair.repair``: damaged parts quarantined and rerun, side files rewritten from the
committed parts); the summary names what was quarantined.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

from optimizer.batch.engines import Engine, LocalEngine
from optimizer.batch.repair import readable_ids
from optimizer.batch.report import write_report
from optimizer.batch.spec import (
    BatchPlan,
    BatchSpec,
    InvalidScenarios,
    Scenario,
    plan_batch,
    request_error,
)
from optimizer.batch.tasks import ERROR, TaskResult, failed_result
from optimizer.batch.writer import (
    CSV_FILE,
    RESPONSES_FILE,
    RESULTS_DIR,
    ResultWriter,
    has_results,
    read_results,
)
from optimizer.errors import InvalidInput, ProcurementError

MANIFEST_FILE = "batch.json"


class InputsChanged(InvalidInput):
    """``--resume`` found results written from other inputs; ``differences`` says which."""

    def __init__(self, out: Path, differences: list[str]) -> None:
        self.differences = differences
        super().__init__(
            f"{out} holds results of other inputs: "
            + "; ".join(differences)
            + ". Pass --allow-changed to rerun the changed scenarios and replace their rows,"
            " or choose a new directory",
            field="--resume",
        )


class ScenariosRejected(InvalidInput):
    """``strict`` run with invalid scenarios: nothing ran."""

    def __init__(self, invalid: InvalidScenarios) -> None:
        self.invalid = invalid
        super().__init__(invalid.describe() + "\nnothing ran (strict); fix the spec")


def validate_scenarios(plan: BatchPlan) -> InvalidScenarios:
    """``plan.invalid``, or the same check over the plan's scenarios when planning skipped it
    (a plan built with ``validate=False``)."""
    if plan.invalid is not None:
        return plan.invalid
    errors: dict[str, ProcurementError] = {}
    rejected: dict[str, Scenario] = {}
    for s in plan.scenarios:
        if (error := request_error(s.request_json)) is not None:
            errors[s.scenario_id], rejected[s.scenario_id] = error, s
    return InvalidScenarios(errors, rejected)


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
    invalid: InvalidScenarios | None = None  # rejected before solving; written as error rows
    quarantined: tuple[Path, ...] = ()  # damaged files moved aside when the run opened
    repairs: tuple[str, ...] = ()  # what was found damaged, one line each
    replaced: int = 0  # committed rows dropped because their inputs changed (allow_changed)

    @property
    def scenarios_per_s(self) -> float:
        return self.written / self.elapsed_s if self.elapsed_s > 0 else 0.0


def open_output(
    plan: BatchPlan,
    out_dir: str | Path,
    *,
    resume: bool = False,
    allow_changed: bool = False,
    csv: bool = False,
    flush_rows: int = 200,
    flush_s: float = 10.0,
) -> ResultWriter:
    """Check ``out_dir`` against the plan, repair it, record the plan's fingerprint, and
    return its writer (``writer.repaired`` says what was repaired).

    Raises ``InvalidInput`` when ``out_dir`` already holds results and ``resume`` is false,
    and ``InputsChanged`` when they came from other inputs and ``allow_changed`` is false.
    """
    out = Path(out_dir)
    keep: set[str] | None = None
    if has_results(out):
        if not resume:
            msg = f"{out} already holds results; pass resume (--resume) or choose a new directory"
            raise InvalidInput(msg, field="out")
        differences = input_differences(plan, out)
        if differences and not allow_changed:
            raise InputsChanged(out, differences)
        if differences:
            keep = {s.scenario_id for s in plan.scenarios}
    out.mkdir(parents=True, exist_ok=True)
    writer = ResultWriter(out, csv_copy=csv, flush_rows=flush_rows, flush_s=flush_s, keep=keep)
    _write_manifest(plan, out, writer)
    return writer


def iter_batch(
    plan: BatchPlan,
    out_dir: str | Path,
    *,
    engine: Engine,
    resume: bool = False,
    allow_changed: bool = False,
    csv: bool = False,
    timeout_s: float | None = None,
    flush_rows: int = 200,
    flush_s: float = 10.0,
    writer: ResultWriter | None = None,
    invalid: InvalidScenarios | None = None,
) -> Generator[BatchProgress, None, None]:
    """Solve the plan's scenarios not yet written in ``out_dir``; one progress per result.

    ``writer`` is one ``open_output`` returned for this plan and directory (else it is
    opened here, with the same checks). Scenarios in ``invalid`` are not sent to the engine:
    their error rows (the ones a worker would write) are written first.
    """
    if writer is None:
        writer = open_output(
            plan,
            out_dir,
            resume=resume,
            allow_changed=allow_changed,
            csv=csv,
            flush_rows=flush_rows,
            flush_s=flush_s,
        )
    rejected = invalid.errors if invalid is not None else {}
    # Every committed id is one of the plan's (open_output refused or dropped the others).
    done = skipped = len(writer.written)
    data = plan.catalog_data
    todo = (
        s
        for s in plan.scenarios
        if s.scenario_id not in writer.written and s.scenario_id not in rejected
    )
    results = engine.run(data, todo, timeout_s=timeout_s)
    try:
        for sid, error in rejected.items():
            if invalid is not None and sid not in writer.written:
                s = invalid.scenarios[sid]
                result = failed_result(s, error, data[s.catalog_id])
                if writer.add(result):
                    done += 1
                    yield BatchProgress(done, len(plan.scenarios), skipped, result)
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
    allow_changed: bool = False,
    csv: bool = False,
    timeout_s: float | None = None,
    progress: Callable[[BatchProgress], None] | None = None,
    data_dir: str | Path | None = None,
    tenant: str = "default",
    report: bool = True,
    strict: bool = False,
) -> BatchSummary:
    """Run ``spec`` into ``out_dir`` on ``engine`` (default: a local pool of all CPUs) and
    write the report; see the module docstring.

    Scenarios the optimizer would reject are found first (``validate_scenarios``): with
    ``strict`` nothing runs (``ScenariosRejected``); otherwise they become error rows, the
    rest run, and ``BatchSummary.invalid`` lists them by cause."""
    plan = (
        spec
        if isinstance(spec, BatchPlan)
        else plan_batch(spec, data_dir=data_dir, tenant=tenant, validate=True)
    )
    invalid = validate_scenarios(plan)
    if strict and invalid.errors:
        raise ScenariosRejected(invalid)
    start = time.perf_counter()
    writer = open_output(plan, out_dir, resume=resume, allow_changed=allow_changed, csv=csv)
    own = engine is None
    eng = engine if engine is not None else LocalEngine()
    skipped = written = errors = 0
    steps = iter_batch(
        plan, out_dir, engine=eng, timeout_s=timeout_s, writer=writer, invalid=invalid
    )
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
        invalid=invalid if invalid.errors else None,
        quarantined=tuple(writer.repaired.quarantined),
        repairs=tuple(writer.repaired.problems),
        replaced=writer.repaired.dropped,
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


def fingerprint(plan: BatchPlan) -> dict[str, object]:
    """What the results of ``plan`` depend on: its scenarios (each a catalog reference and a
    canonical request, in order) and the content id each catalog reference resolved to."""
    sha = plan.spec_sha256
    if not sha:  # a plan built by hand: hash its scenarios as plan_batch does
        spec = hashlib.sha256()
        for s in plan.scenarios:
            spec.update(f"{s.catalog_ref}\n{s.request_json}\n".encode())
        sha = spec.hexdigest()
    return {
        "spec_sha256": sha,
        "scenarios": len(plan.scenarios),
        "catalog_ids": dict(sorted(plan.catalog_ids_by_ref.items())),
    }


def input_differences(plan: BatchPlan, out: Path) -> list[str]:
    """How the inputs recorded in ``out`` differ from ``plan`` (empty when they match).

    A directory written before fingerprints were recorded is compared by its rows: each
    committed scenario must be one of the plan's."""
    recorded = _read_manifest(out).get("fingerprint")
    now = fingerprint(plan)
    differences: list[str] = []
    if isinstance(recorded, dict):
        old_ids: dict[str, str] = recorded.get("catalog_ids") or {}
        new_ids = plan.catalog_ids_by_ref
        for ref in sorted(set(old_ids) | set(new_ids)):
            before, after = old_ids.get(ref), new_ids.get(ref)
            if before is None:
                differences.append(f"catalog {ref!r} is new in the spec")
            elif after is None:
                differences.append(f"catalog {ref!r} is no longer in the spec")
            elif before != after:
                differences.append(
                    f"catalog {ref!r} now has content id {after[:12]}, was {before[:12]}"
                    " (re-imported or edited)"
                )
        if recorded.get("spec_sha256") != now["spec_sha256"]:
            differences.append(
                f"the spec's scenarios changed ({recorded.get('scenarios')} before, "
                f"{now['scenarios']} now)"
            )
    planned = {s.scenario_id for s in plan.scenarios}
    committed = readable_ids(out)
    stale = len(committed - planned)
    if stale:
        differences.append(f"{stale} committed scenario(s) are not in this spec")
    return differences


def _read_manifest(out: Path) -> dict[str, object]:
    try:
        doc = json.loads((out / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _write_manifest(plan: BatchPlan, out: Path, writer: ResultWriter) -> None:
    """``batch.json``: the plan's size, catalogs, input fingerprint and what the last open
    repaired. Replaced atomically, so a crash never leaves half of it."""
    previous = _read_manifest(out)
    earlier = previous.get("quarantined")
    quarantined = [
        *(earlier if isinstance(earlier, list) else []),
        *(str(p) for p in writer.repaired.quarantined),
    ]
    doc = {
        "scenarios": len(plan.scenarios),
        "duplicates": plan.duplicates,
        "catalogs": [
            {"catalog_id": c.catalog_id, "ref": c.ref, "name": c.name, "vendor": c.vendor}
            for c in plan.catalogs.values()
        ],
        "fingerprint": fingerprint(plan),
        "quarantined": quarantined,
    }
    tmp = out / f"{MANIFEST_FILE}.tmp"
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST_FILE)
