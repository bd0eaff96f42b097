"""Thin servicers: convert the request, call the core (store or worker pool), convert back.

Errors are raised, never set on the context: the interceptor maps them in one place.
``context`` is the interceptor's CallContext, which carries the caller's tenant.
"""

from __future__ import annotations

import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from optimizer._pb.procurement.v1 import (
    catalog_pb2,
    catalog_pb2_grpc,
    estimate_pb2,
    optimize_pb2,
    service_pb2,
    service_pb2_grpc,
)
from optimizer.catalog.io import catalog_rows, read_tables_from_bytes
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.catalog.store import CatalogStore, StoredCatalogInfo, renamed
from optimizer.catalog.validation import validate
from optimizer.errors import InvalidInput, LimitExceeded
from optimizer.optimize.convert import spec_from_proto
from optimizer.service import limits
from optimizer.service.batch_call import batch_results
from optimizer.service.batch_engine import ServiceEngine
from optimizer.service.interceptors import CallContext
from optimizer.service.jobs import tenant_catalog
from optimizer.service.metrics import Metrics
from optimizer.service.pool import Job, WorkerPool

MAX_REQUEST_ID_CHARS = 128
_HEARTBEAT_S = 1.0
_PROGRESS_FIELDS = (
    "phase",
    "candidates_evaluated",
    "best_capex_usd",
    "bound_usd",
    "elapsed_s",
    "designs_found",
)


def info_to_proto(info: StoredCatalogInfo) -> catalog_pb2.CatalogInfo:
    return catalog_pb2.CatalogInfo(
        id=info.id,
        name=info.name,
        version=info.version,
        vendor=info.vendor,
        quote_date=info.quote_date or "",
        created_at=info.created_at,
        row_count=info.row_count,
        size_bytes=info.size_bytes,
        ref=info.ref,
    )


def progress_to_proto(report: dict[str, Any]) -> service_pb2.OptimizeProgress:
    """The optimizer's progress report as a message; keys it does not know are dropped."""
    return service_pb2.OptimizeProgress(
        **{k: report[k] for k in _PROGRESS_FIELDS if report.get(k) is not None}
    )


def _request_id(value: str) -> str | None:
    if len(value) > MAX_REQUEST_ID_CHARS:
        raise InvalidInput(
            f"expected at most {MAX_REQUEST_ID_CHARS} characters", field="request_id"
        )
    return value or None


class CatalogServicer(catalog_pb2_grpc.CatalogServiceServicer):
    """The tenant's catalogs in the store. Uploads are parsed on the calling thread (bounded
    by the upload limits) so that they never wait behind long solves."""

    def __init__(self, store: CatalogStore) -> None:
        self._store = store

    def UploadCatalog(
        self, request_iterator: Iterable[catalog_pb2.UploadCatalogRequest], context: CallContext
    ) -> catalog_pb2.UploadCatalogResponse:
        first: catalog_pb2.UploadCatalogRequest | None = None
        files: dict[str, bytearray] = {}
        total = 0
        for chunk in request_iterator:
            if first is None:
                first = chunk
            for name in ("request_id", "name"):
                if getattr(chunk, name) not in ("", getattr(first, name)):
                    raise InvalidInput("expected empty or the first message's value", field=name)
            if not chunk.file_name:
                raise InvalidInput(
                    "required in every message; expected a table file name such as servers.csv",
                    field="file_name",
                )
            buffer = files.setdefault(chunk.file_name, bytearray())
            total += len(chunk.data)
            limits.check_upload_file(
                chunk.file_name, len(buffer) + len(chunk.data), len(files), total
            )
            buffer += chunk.data
        if first is None:
            raise InvalidInput("no files; expected the catalog's table files", field="file_name")
        request_id = _request_id(first.request_id)
        raw = read_tables_from_bytes({name: bytes(data) for name, data in files.items()})
        limits.check_catalog_rows(raw)
        report = validate(raw)
        catalog = report.raise_for_errors()
        if first.name:
            catalog = renamed(catalog, first.name)
        info = self._store.put(catalog, tenant=context.tenant, request_id=request_id)
        return catalog_pb2.UploadCatalogResponse(
            catalog=info_to_proto(info), warnings=[str(p) for p in report.warnings]
        )

    def ListCatalogs(
        self, request: catalog_pb2.ListCatalogsRequest, context: CallContext
    ) -> catalog_pb2.ListCatalogsResponse:
        return catalog_pb2.ListCatalogsResponse(
            catalogs=[info_to_proto(i) for i in self._store.list(context.tenant)],
            bundled=[p.name for p in bundled_catalogs()],
        )

    def GetCatalog(
        self, request: catalog_pb2.GetCatalogRequest, context: CallContext
    ) -> catalog_pb2.GetCatalogResponse:
        info = self._store.info(request.ref, tenant=context.tenant)
        out = catalog_pb2.GetCatalogResponse(catalog=info_to_proto(info))
        if request.include_tables:
            catalog = self._store.get(info.id, tenant=context.tenant)
            for table, (header, rows) in catalog_rows(catalog).items():
                out.tables.add(
                    name=table, header=header, rows=[catalog_pb2.TableRow(cells=r) for r in rows]
                )
            if out.ByteSize() > limits.MAX_MESSAGE_BYTES:
                msg = (
                    f"the tables exceed the {limits.MAX_MESSAGE_BYTES}-byte message limit; "
                    "use ExportCatalog, which streams them"
                )
                raise LimitExceeded(msg)
        return out

    def ExportCatalog(
        self, request: catalog_pb2.ExportCatalogRequest, context: CallContext
    ) -> Iterator[catalog_pb2.FileChunk]:
        with tempfile.TemporaryDirectory(prefix="procure-export-") as tmp:
            out = self._store.export(
                request.ref, Path(tmp) / "catalog", request.format or "csv", tenant=context.tenant
            )
            files = [out] if out.is_file() else sorted(p for p in out.iterdir() if p.is_file())
            for path in files:
                data = path.read_bytes()
                for start in range(0, max(1, len(data)), limits.EXPORT_CHUNK_BYTES):
                    yield catalog_pb2.FileChunk(
                        file_name=path.name, data=data[start : start + limits.EXPORT_CHUNK_BYTES]
                    )

    def DeleteCatalog(
        self, request: catalog_pb2.DeleteCatalogRequest, context: CallContext
    ) -> catalog_pb2.DeleteCatalogResponse:
        deleted = self._store.delete(
            request.ref, tenant=context.tenant, all_versions=request.all_versions
        )
        return catalog_pb2.DeleteCatalogResponse(deleted=[info_to_proto(i) for i in deleted])


class _Call:
    """The pool-facing side of one call: its deadline and a stop event the call's end sets."""

    def __init__(self, context: CallContext) -> None:
        remaining = context.time_remaining()
        self.deadline = None if remaining is None else time.monotonic() + remaining
        self.stop = threading.Event()
        if not context.add_callback(self.stop.set):
            self.stop.set()

    def remaining_s(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


class OptimizerServicer(service_pb2_grpc.OptimizerServiceServicer):
    """Estimation and optimization, run in the worker pool, never on a gRPC thread."""

    def __init__(self, pool: WorkerPool, metrics: Metrics, store: CatalogStore) -> None:
        self._pool = pool
        self._metrics = metrics
        self._store = store  # batch planning resolves the caller's catalogs here

    def _submit(self, call: _Call, kind: str, request: Any, tenant: str) -> Job:
        return self._pool.submit(
            kind, request.SerializeToString(), tenant, deadline=call.deadline, stop=call.stop
        )

    def _optimize_job(self, call: _Call, request: optimize_pb2.OptimizeRequest, tenant: str) -> Job:
        limits.check_optimize(request)
        spec_from_proto(request)  # every field checked here, before the job waits in a queue
        capped = limits.with_solver_deadline(request, call.remaining_s())
        return self._submit(call, "optimize", capped, tenant)

    def Estimate(
        self, request: estimate_pb2.EstimateRequest, context: CallContext
    ) -> estimate_pb2.EstimateResponse:
        job = self._submit(_Call(context), "estimate", request, context.tenant)
        return estimate_pb2.EstimateResponse.FromString(job.result())

    def Optimize(
        self, request: optimize_pb2.OptimizeRequest, context: CallContext
    ) -> optimize_pb2.OptimizeResponse:
        job = self._optimize_job(_Call(context), request, context.tenant)
        return optimize_pb2.OptimizeResponse.FromString(job.result())

    def OptimizeStream(
        self, request: optimize_pb2.OptimizeRequest, context: CallContext
    ) -> Iterator[service_pb2.OptimizeEvent]:
        job = self._optimize_job(_Call(context), request, context.tenant)
        yield service_pb2.OptimizeEvent(progress=service_pb2.OptimizeProgress(phase="queued"))
        events = job.stream(heartbeat_s=_HEARTBEAT_S)
        while True:
            try:
                report = next(events)
            except StopIteration as done:
                result = optimize_pb2.OptimizeResponse.FromString(done.value)
                yield service_pb2.OptimizeEvent(result=result)
                return
            yield service_pb2.OptimizeEvent(progress=progress_to_proto(report))

    def BatchOptimize(
        self, request: service_pb2.BatchOptimizeRequest, context: CallContext
    ) -> Iterator[service_pb2.BatchResult]:
        """The batch runner's plan and task on this service's workers, at most one run per
        worker at a time; each result streams as it finishes (service/batch_call.py)."""
        call, tenant = _Call(context), context.tenant
        engine = ServiceEngine(self._pool, tenant, deadline=call.deadline, stop=call.stop)
        return batch_results(request, engine, lambda ref: tenant_catalog(ref, tenant, self._store))

    def GetMetrics(
        self, request: service_pb2.GetMetricsRequest, context: CallContext
    ) -> service_pb2.GetMetricsResponse:
        return self._metrics.to_proto(self._pool.stats())
