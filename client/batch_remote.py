"""``procure --server HOST:PORT batch``: the batch runner with the server as its engine.

The plan (catalogs, stable scenario ids, duplicates) is made here exactly as for an embedded
batch, so the output directory, ``--resume`` and the report work unchanged; only the solves
go to the server, through BatchOptimize (``Remote.batch_optimize``), and each result comes
back as the row the local task would have written. A catalog reference that is neither a
local path nor a bundled catalog is read from the server's store.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping
from pathlib import Path

from google.protobuf import json_format

from client.transport import BatchItem, Remote
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.batch.engines import Engine
from optimizer.batch.spec import Scenario, union_parts
from optimizer.batch.tasks import TaskResult, catalog_for, failed_result, solved_result
from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import bundled_catalogs, resolve_catalog
from optimizer.errors import InvalidInput, ProcurementError


class ServerEngine(Engine):
    """Runs scenarios on a procure server through BatchOptimize, results as they finish."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.workers = remote.workers()

    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        if timeout_s is not None:
            raise InvalidInput("not available with --server", field="--timeout")
        todo = list(scenarios)
        requests = [_request(s) for s in todo]
        for item in self.remote.batch_optimize(requests):
            yield task_result(todo[item.index], item, catalogs)


def _request(s: Scenario) -> optimize_pb2.OptimizeRequest:
    """The scenario's request against its catalog reference (the server resolves it; a local
    path is uploaded first)."""
    request = json_format.Parse(s.request_json, optimize_pb2.OptimizeRequest())
    first, *more = union_parts(s.catalog_ref)  # a union's parts go as catalog + catalogs
    request.catalog = first
    request.catalogs.extend(more)
    return request


def task_result(s: Scenario, item: BatchItem, catalogs: Mapping[str, bytes]) -> TaskResult:
    """The row and response line the local task writes for the same outcome."""
    catalog = catalog_for(s.catalog_id, catalogs[s.catalog_id])
    if item.response is not None:
        return solved_result(s, catalog, item.response, item.stopped or None)
    assert item.error is not None
    return failed_result(s, _unwrapped(item.error), catalogs[s.catalog_id])


def _unwrapped(error: ProcurementError) -> ProcurementError:
    """A server reports a task's error as ``Type: message``; the row adds the type itself."""
    prefix = f"{type(error).__name__}: "
    text = str(error)
    return type(error)(text[len(prefix) :]) if text.startswith(prefix) else error


def remote_resolver(remote: Remote) -> Callable[[str], Catalog]:
    """How a batch plan reads its catalogs with ``--server``: local paths and bundled catalogs
    here, any other reference from the server's store (the catalogs the server will solve
    against)."""
    bundled = {p.name for p in bundled_catalogs()}

    def resolve(ref: str) -> Catalog:
        if Path(ref).expanduser().exists() or ref in bundled:
            return resolve_catalog(ref)
        return remote.fetch_catalog(ref)

    return resolve
