"""BatchOptimize through the batch runner: the request becomes a ``BatchSpec``, ``plan_batch``
gives every (scenario, catalog) run the stable id ``procure batch`` gives it, and an engine
(the service's ``ServiceEngine``) runs the scenarios with the runner's task.

Limits are checked before anything else. A run whose scenario the optimizer would reject (any
field, including numbers out of range: optimizer.request_limits), or whose catalog does not
resolve for the caller's tenant, becomes a result with its error before any solve; the call
itself fails only for a limit, a busy server, a cancellation or its deadline.
Runs that plan to the same scenario id (the same request against the same catalog content)
are solved once and reported under each of their indexes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Iterator

from google.protobuf import json_format

from optimizer._pb.procurement.v1 import optimize_pb2, service_pb2
from optimizer.batch.engines import Engine
from optimizer.batch.spec import BatchSpec, SpecRow, plan_batch, resolve_ref, union_ref
from optimizer.batch.tasks import TaskResult
from optimizer.catalog.model import Catalog
from optimizer.errors import ProcurementError
from optimizer.optimize.convert import spec_from_proto
from optimizer.request_limits import check_catalog_ref, check_optimize
from optimizer.service import limits

Run = tuple[int, SpecRow]  # (scenario index, the row planned for it)


def batch_runs(request: service_pb2.BatchOptimizeRequest) -> list[Run]:
    """Every (scenario, catalog) pair: each scenario against ``request.catalogs``, or
    against its own catalog when none are given. A scenario's own ``catalogs`` join each of
    those in a union (docs/batch.md), as they join ``catalog`` in an Optimize call."""
    runs: list[Run] = []
    for i, scenario in enumerate(request.scenarios):
        own = list(scenario.catalogs)
        if own:
            scenario = _without_catalogs(scenario)
        for ref in request.catalogs or [scenario.catalog]:
            runs.append(
                (i, SpecRow(union_ref([r for r in (ref, *own) if r]), scenario, f"scenarios[{i}]"))
            )
    return runs


def _without_catalogs(scenario: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeRequest:
    """The scenario with its ``catalogs`` moved out (into the run's union reference)."""
    out = optimize_pb2.OptimizeRequest()
    out.CopyFrom(scenario)
    out.ClearField("catalogs")
    return out


def batch_results(
    request: service_pb2.BatchOptimizeRequest, engine: Engine, resolve: Callable[[str], Catalog]
) -> Iterator[service_pb2.BatchResult]:
    """One result per run of ``request``, refusals first, then solves as they finish."""
    runs = batch_runs(request)
    limits.check_batch_runs(len(runs))
    invalid = _invalid_scenarios(request)
    catalogs, unresolved = _resolve_all(
        dict.fromkeys(row.catalog_ref for _, row in runs), _checked(resolve)
    )
    ready: list[Run] = []
    for i, row in runs:
        error = invalid.get(i) or unresolved.get(row.catalog_ref)
        if error is None:
            ready.append((i, row))
        else:
            yield _refused(i, row, error)
    if ready:
        yield from _solved(ready, engine, catalogs)


def _solved(
    runs: list[Run], engine: Engine, catalogs: dict[str, Catalog]
) -> Iterator[service_pb2.BatchResult]:
    plan = plan_batch(
        BatchSpec(tuple(row for _, row in runs), source="BatchOptimize"),
        resolve=catalogs.__getitem__,
    )
    runs_of: dict[str, list[Run]] = {}
    for run, sid in zip(runs, plan.row_ids, strict=True):
        runs_of.setdefault(sid, []).append(run)
    results = engine.run(plan.catalog_data, plan.scenarios)
    with contextlib.closing(results):  # ends the call's jobs if the client goes away
        for result in results:
            for i, row in runs_of[result.scenario_id]:
                yield _from_task(i, row, result)


def _invalid_scenarios(request: service_pb2.BatchOptimizeRequest) -> dict[int, ProcurementError]:
    """Scenarios the optimizer would reject, by index: refused before they wait for a worker."""
    invalid: dict[int, ProcurementError] = {}
    for i, scenario in enumerate(request.scenarios):
        try:
            check_optimize(scenario, f"scenarios[{i}].")
            spec_from_proto(scenario)
        except ProcurementError as e:
            invalid[i] = e
    return invalid


def _checked(resolve: Callable[[str], Catalog]) -> Callable[[str], Catalog]:
    """``resolve`` after the reference's shape is checked (an impossible version is the
    run's error, never a store lookup)."""

    def checked(ref: str) -> Catalog:
        check_catalog_ref(ref)
        return resolve(ref)

    return checked


def _resolve_all(
    refs: Iterable[str], resolve: Callable[[str], Catalog]
) -> tuple[dict[str, Catalog], dict[str, ProcurementError]]:
    """Each reference resolved once: the catalogs (by each part of a union reference), and
    the errors of the references that failed."""
    catalogs: dict[str, Catalog] = {}
    errors: dict[str, ProcurementError] = {}

    def one(part: str) -> Catalog:
        if part not in catalogs:
            catalogs[part] = resolve(part)
        return catalogs[part]

    for ref in refs:
        try:
            resolve_ref(ref, one)  # a union: each part, then their union (checked once)
        except ProcurementError as e:
            errors[ref] = e
    return catalogs, errors


def _base(index: int, row: SpecRow) -> service_pb2.BatchResult:
    return service_pb2.BatchResult(
        scenario_index=index, catalog=row.catalog_ref, request_id=row.request.request_id
    )


def _refused(index: int, row: SpecRow, error: ProcurementError) -> service_pb2.BatchResult:
    out = _base(index, row)
    out.error_code, out.error_message = error.grpc_code, str(error)
    return out


def _from_task(index: int, row: SpecRow, result: TaskResult) -> service_pb2.BatchResult:
    """The runner's result row and response line as a BatchResult."""
    out = _base(index, row)
    out.scenario_id = result.scenario_id
    response = json.loads(result.response_json)["response"]
    if response is not None:
        json_format.ParseDict(response, out.response)
    code = result.row["error_code"]
    if code:
        out.error_code = code
        out.error_message = _error_message(code, result.row["error"])
    return out


def _error_message(code: str, error: str) -> str:
    """The row's error (``Type: message``), except that an internal error other than one of
    ours names only its type, as a worker reports a bug (jobs.worker_main): a bug's message
    may quote prices."""
    kind = error.split(":", 1)[0]
    if code == "INTERNAL" and not _is_ours(kind):
        return f"internal error ({kind})"
    return error


def _is_ours(name: str) -> bool:
    """Whether ``name`` is a ProcurementError class, whose messages are written for users."""
    todo: list[type[ProcurementError]] = [ProcurementError]
    while todo:
        cls = todo.pop()
        if cls.__name__ == name:
            return True
        todo.extend(cls.__subclasses__())
    return False
