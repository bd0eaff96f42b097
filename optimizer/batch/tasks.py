"""The batch task: a pure function of (catalog content, scenario) that never raises.

Engines run ``run_scenario`` anywhere (a local process, a Dask worker on another machine).
Catalogs travel once per worker process as canonical bytes and are decoded once per
process (``catalog_for``); the task checks the bytes against the id it was promised, so a
stale cache can never price a scenario against the wrong quote. Every failure (bad request,
solver error, timeout) comes back as a row with its error, never as an exception.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.batch.spec import Scenario, decode_catalog, short_hash
from optimizer.catalog.canonical import hash_canonical
from optimizer.catalog.model import Catalog
from optimizer.errors import InvalidInput, ProcurementError
from optimizer.optimize.request import Objective
from optimizer.rows import FACILITY_COLUMNS, TCO_COLUMNS, rank1_row

# Row status of a scenario that raised instead of returning a response.
ERROR = "ERROR"

# Decoded catalogs a process keeps, least recently used dropped first: a long-lived service
# worker sees many tenants' catalogs, a batch rarely more than a few.
MAX_DECODED_CATALOGS = 32

# Per-process caches: canonical bytes installed by a pool initializer, decoded catalogs.
_shipped: dict[str, bytes] = {}
_decoded: OrderedDict[str, Catalog] = OrderedDict()
_decoded_lock = threading.Lock()
# How many times this process decoded each catalog (by content id): a warm worker decodes a
# catalog once however many tasks use it (tests count it; ``catalog_loads``).
_loads: dict[str, int] = {}


@dataclass(frozen=True)
class TaskResult:
    scenario_id: str
    row: dict[str, Any]  # one flat result row (writer.ROW_SCHEMA)
    response_json: str  # one JSON line: ids plus the full OptimizeResponse (or the error)


def install_catalogs(catalogs: Mapping[str, bytes]) -> None:
    """Local-pool initializer: make these catalogs available to every task in the process."""
    _shipped.update(catalogs)


def catalog_for(catalog_id: str, data: bytes | None = None) -> Catalog:
    """The decoded catalog ``catalog_id``, from ``data`` or the installed bytes, decoded
    once per process."""
    with _decoded_lock:  # a Dask worker may run several tasks in threads
        cached = _decoded.get(catalog_id)
        if cached is not None:
            _decoded.move_to_end(catalog_id)
            return cached
    raw = data if data is not None else _shipped.get(catalog_id)
    if raw is None:
        raise InvalidInput(
            "catalog content was not shipped to this worker", field=f"catalog {catalog_id[:12]}"
        )
    if hash_canonical(raw) != catalog_id:
        raise InvalidInput(
            "shipped catalog bytes do not match their content hash",
            field=f"catalog {catalog_id[:12]}",
        )
    catalog = decode_catalog(raw)  # canonical JSON, or a union's parts
    with _decoded_lock:
        _loads[catalog_id] = _loads.get(catalog_id, 0) + 1
        _decoded[catalog_id] = catalog
        while len(_decoded) > MAX_DECODED_CATALOGS:
            _decoded.popitem(last=False)
    return catalog


def catalog_loads() -> dict[str, int]:
    """Decodes of each catalog (by content id) in this process so far."""
    with _decoded_lock:
        return dict(_loads)


def run_chunk(
    scenarios: Sequence[Scenario], catalog_data: bytes | None = None, timeout_s: float | None = None
) -> list[TaskResult]:
    """``run_scenario`` for each of ``scenarios`` (one chunk, ``chunks.chunked``), in order, in
    this process: they share its warm catalog, planner and estimator caches. ``timeout_s``
    applies to each scenario, as if it ran alone."""
    return [run_scenario(s, catalog_data, timeout_s) for s in scenarios]


def run_scenario(
    scenario: Scenario, catalog_data: bytes | None = None, timeout_s: float | None = None
) -> TaskResult:
    """Solve one scenario; ``timeout_s`` asks the solver to stop and report what it has."""
    from optimizer.api import optimize

    stop = threading.Event()
    # A timeout past what a wait can take (a call without a real deadline) is no timeout.
    timer = (
        threading.Timer(timeout_s, stop.set)
        if timeout_s is not None and 0 < timeout_s < threading.TIMEOUT_MAX
        else None
    )
    try:
        catalog = catalog_for(scenario.catalog_id, catalog_data)
        request = json_format.Parse(scenario.request_json, optimize_pb2.OptimizeRequest())
        if timer is not None:
            timer.start()
        response = optimize(request, catalog=catalog, stop=stop)
    except Exception as e:
        return failed_result(scenario, e, catalog_data)
    finally:
        if timer is not None:
            timer.cancel()
    stopped = (
        f"the task timeout of {timeout_s:g} s expired; this is the best result found by then"
        if stop.is_set()
        else None
    )
    return solved_result(scenario, catalog, response, stopped)


def solved_result(
    scenario: Scenario,
    catalog: Catalog,
    response: optimize_pb2.OptimizeResponse,
    stopped: str | None = None,
) -> TaskResult:
    """The result of a scenario that ran, here or on a server (``procure batch --server``);
    ``stopped`` says why the solve ended early (a DEADLINE_EXCEEDED row)."""
    row = {**_request_columns(scenario, catalog), **_response_columns(response)}
    if stopped is not None:
        row["error"] = stopped
        row["error_code"] = "DEADLINE_EXCEEDED"
    body = json_format.MessageToDict(response, preserving_proto_field_name=True)
    return TaskResult(scenario.scenario_id, row, _line(scenario, row, body))


def failed_result(
    scenario: Scenario, error: BaseException, catalog_data: bytes | None = None
) -> TaskResult:
    """The error row of a scenario that raised (in the task) or could not run (an engine
    gave up after its workers died)."""
    try:
        catalog: Catalog | None = catalog_for(scenario.catalog_id, catalog_data)
    except ProcurementError:
        catalog = None
    code = error.grpc_code if isinstance(error, ProcurementError) else "INTERNAL"
    row = {
        **_request_columns(scenario, catalog),
        **_response_columns(optimize_pb2.OptimizeResponse()),
        "status": ERROR,
        "error": f"{type(error).__name__}: {error}",
        "error_code": code,
        "solve_time_s": None,
    }
    return TaskResult(scenario.scenario_id, row, _line(scenario, row, None))


def _request_columns(s: Scenario, catalog: Catalog | None) -> dict[str, Any]:
    request = json_format.Parse(s.request_json, optimize_pb2.OptimizeRequest())
    w, c = request.workload, request.constraints
    return {
        "scenario_id": s.scenario_id,
        "comparison_key": s.comparison_key,
        "catalog": s.catalog_ref,
        "catalog_id": s.catalog_id,
        "catalog_name": catalog.meta.name if catalog else None,
        "vendor": catalog.meta.vendor if catalog else None,
        "objective": request.objective or Objective.MIN_COST.value,
        "workload_key": short_hash(
            json_format.MessageToJson(
                w, preserving_proto_field_name=True, sort_keys=True, indent=None
            )
        ),
        "workload_model": w.model or None,
        "training_tokens": w.training_tokens if w.HasField("training_tokens") else None,
        "budget_usd": c.budget_usd if c.HasField("budget_usd") else None,
        "target_training_hours": (
            c.target_training_hours if c.HasField("target_training_hours") else None
        ),
        "request_id": request.request_id or None,
    }


# The rank-1 design's columns of a result row (writer.ROW_SCHEMA).
_DESIGN_COLUMNS = (
    "gpus",
    "nodes",
    "server_sku",
    "nic_sku",
    "fabric",
    "topology",
    "oversubscription",
    "capex_usd",
    "training_time_hours",
    "power_kw",
    # issue 17 (tco)
    *TCO_COLUMNS,
    *FACILITY_COLUMNS,  # issue 17 (facility)
)


def _response_columns(r: optimize_pb2.OptimizeResponse) -> dict[str, Any]:
    top = r.designs[0] if r.designs else None
    return {
        "status": r.status,
        "error": None,
        "error_code": None,
        "designs": len(r.designs),
        **rank1_row(r, _DESIGN_COLUMNS),
        "solve_time_s": r.solve_time_s,
        "gap": r.gap if top else None,
        "diagnosis": r.diagnosis or None,
    }


def _line(s: Scenario, row: dict[str, Any], response: dict[str, Any] | None) -> str:
    doc = {
        "scenario_id": s.scenario_id,
        "catalog": s.catalog_ref,
        "catalog_id": s.catalog_id,
        "request": json.loads(s.request_json),
        "status": row["status"],
        "error": row["error"],
        "response": response,
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))
