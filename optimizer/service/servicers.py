"""Thin servicers: convert the request, call the core (store or worker pool), convert back.

Errors are raised, never set on the context: the interceptor maps them in one place.
``context`` is the interceptor's CallContext, which carries the caller's tenant.
"""

from __future__ import annotations

import base64
import binascii
import json
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from functools import lru_cache
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
from optimizer.catalog.canonical import canonical_json, catalog_from_canonical, content_hash
from optimizer.catalog.io import catalog_rows, write_catalog
from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.catalog.store import CatalogStore, StoredCatalogInfo, renamed
from optimizer.errors import Busy, InvalidInput, LimitExceeded
from optimizer.optimize.convert import spec_from_proto
from optimizer.request_limits import (
    check_catalog_name,
    check_catalog_ref,
    check_estimate,
    check_optimize,
    check_request_id,
)
from optimizer.service import limits
from optimizer.service.batch_call import batch_results
from optimizer.service.batch_engine import ServiceEngine
from optimizer.service.errors import Cancelled
from optimizer.service.interceptors import CallContext
from optimizer.service.jobs import PARSE_CATALOG_JOB, tenant_catalog, upload_payload
from optimizer.service.metrics import Metrics
from optimizer.service.pool import Job, WorkerPool

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
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
    check_request_id(value)
    return value or None


@lru_cache(maxsize=16)
def _bundled(ref: str) -> tuple[catalog_pb2.CatalogInfo, Catalog] | None:
    """The bundled catalog named ``ref`` (read once; bundled catalogs never change)."""
    from optimizer.catalog import load_catalog

    folder = next((f for f in bundled_catalogs() if f.name == ref), None)
    if folder is None:
        return None
    catalog = load_catalog(folder)
    info = catalog_pb2.CatalogInfo(
        id=content_hash(catalog),
        name=ref,
        vendor=catalog.meta.vendor,
        quote_date=catalog.meta.quote_date.isoformat() if catalog.meta.quote_date else "",
        row_count=sum(len(rows) for _, rows in catalog_rows(catalog).values()),
        size_bytes=len(canonical_json(catalog)),
        ref=ref,
    )
    return info, catalog


def _page_size(requested: int) -> int:
    if requested < 0 or requested > MAX_PAGE_SIZE:
        raise InvalidInput(f"got {requested}, expected 0 to {MAX_PAGE_SIZE}", field="page_size")
    return requested or DEFAULT_PAGE_SIZE


def _page_token(after: StoredCatalogInfo) -> str:
    """Opaque to clients: the (name, version) the next page starts after."""
    return base64.urlsafe_b64encode(json.dumps([after.name, after.version]).encode()).decode()


def _after(token: str) -> tuple[str, int] | None:
    if not token:
        return None
    try:
        name, version = json.loads(base64.urlsafe_b64decode(token.encode()))
        if isinstance(name, str) and isinstance(version, int):
            return name, version
    except (ValueError, TypeError, binascii.Error):
        pass
    raise InvalidInput("expected the next_page_token of an earlier page", field="page_token")


class _IdleWatch:
    """Cancels a client-streaming call whose client sends nothing for ``idle_s`` seconds, so
    a silent stream cannot hold a call slot (and its thread) forever."""

    def __init__(self, context: CallContext, idle_s: float) -> None:
        self._context, self._idle_s = context, idle_s
        self._last = time.monotonic()
        self._done = threading.Event()
        self.fired = False
        threading.Thread(target=self._watch, name="upload-idle", daemon=True).start()

    def touch(self) -> None:
        self._last = time.monotonic()

    def close(self) -> None:
        self._done.set()

    def _watch(self) -> None:
        poll_s = min(1.0, max(0.05, self._idle_s / 4))
        while not self._done.wait(poll_s):
            if time.monotonic() - self._last >= self._idle_s:
                self.fired = True
                self._context.cancel()
                return


def _receive(
    request_iterator: Iterable[catalog_pb2.UploadCatalogRequest], watch: _IdleWatch
) -> tuple[catalog_pb2.UploadCatalogRequest, dict[str, bytearray]]:
    """The upload's first message and its files' bytes, within the upload limits."""
    first: catalog_pb2.UploadCatalogRequest | None = None
    files: dict[str, bytearray] = {}
    total = 0
    for chunk in request_iterator:
        watch.touch()
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
        limits.check_upload_file(chunk.file_name, len(buffer) + len(chunk.data), len(files), total)
        buffer += chunk.data
    if first is None:
        raise InvalidInput("no files; expected the catalog's table files", field="file_name")
    return first, files


class CatalogServicer(catalog_pb2_grpc.CatalogServiceServicer):
    """The tenant's catalogs in the store, and the bundled ones (read only). Uploads are
    received here (bounded by the upload limits, cancelled when idle) and parsed in a worker
    of the pool's cheap lane, so that they neither run on a gRPC thread nor wait behind
    solves."""

    def __init__(
        self, store: CatalogStore, pool: WorkerPool, *, upload_idle_s: float = 10.0
    ) -> None:
        self._store = store
        self._pool = pool  # uploads are parsed in its cheap lane, off the gRPC threads
        self._upload_idle_s = upload_idle_s

    def UploadCatalog(
        self, request_iterator: Iterable[catalog_pb2.UploadCatalogRequest], context: CallContext
    ) -> catalog_pb2.UploadCatalogResponse:
        """Receive the files (cancelled when the client sends nothing for ``upload_idle_s``),
        then parse, validate and store them."""
        watch = _IdleWatch(context, self._upload_idle_s)
        try:
            first, files = _receive(request_iterator, watch)
        except Exception:
            if watch.fired:
                msg = f"the upload sent nothing for {self._upload_idle_s:g} s; it was cancelled"
                raise Cancelled(msg) from None
            raise
        finally:
            watch.close()
        request_id = _request_id(first.request_id)
        if first.name:
            check_catalog_name(first.name)  # before any parsing
        payload = upload_payload({name: bytes(data) for name, data in files.items()})
        call = _Call(context)
        job = self._pool.submit(
            PARSE_CATALOG_JOB, payload, context.tenant, deadline=call.deadline, stop=call.stop
        )
        head, _, canonical = job.result().partition(b"\n")
        warnings = json.loads(head)
        catalog = catalog_from_canonical(canonical)
        if first.name:
            catalog = renamed(catalog, first.name)
        else:
            check_catalog_name(catalog.meta.name, "metadata.name")
        info = self._store.put(catalog, tenant=context.tenant, request_id=request_id)
        return catalog_pb2.UploadCatalogResponse(catalog=info_to_proto(info), warnings=warnings)

    def ListCatalogs(
        self, request: catalog_pb2.ListCatalogsRequest, context: CallContext
    ) -> catalog_pb2.ListCatalogsResponse:
        """One page of the tenant's versions (``page_size``, ``page_token``); the bundled
        catalogs with the first page."""
        size = _page_size(request.page_size)
        after = _after(request.page_token)
        stored = self._store.list(context.tenant)
        if after is not None:
            stored = [i for i in stored if (i.name, i.version) > after]
        page = stored[:size]
        return catalog_pb2.ListCatalogsResponse(
            catalogs=[info_to_proto(i) for i in page],
            bundled=[] if after is not None else [p.name for p in bundled_catalogs()],
            next_page_token=_page_token(page[-1]) if len(stored) > size else "",
        )

    def GetCatalog(
        self, request: catalog_pb2.GetCatalogRequest, context: CallContext
    ) -> catalog_pb2.GetCatalogResponse:
        check_catalog_ref(request.ref, "ref")
        bundled = _bundled(request.ref)
        catalog: Catalog | None
        if bundled is not None:  # as Optimize resolves a name: bundled first
            out = catalog_pb2.GetCatalogResponse(catalog=bundled[0])
            catalog = bundled[1]
        else:
            info = self._store.info(request.ref, tenant=context.tenant)
            out = catalog_pb2.GetCatalogResponse(catalog=info_to_proto(info))
            catalog = (
                self._store.get(info.id, tenant=context.tenant) if request.include_tables else None
            )
        if catalog is not None and request.include_tables:
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
        check_catalog_ref(request.ref, "ref")
        bundled = _bundled(request.ref)
        with tempfile.TemporaryDirectory(prefix="procure-export-") as tmp:
            dest, fmt = Path(tmp) / "catalog", request.format or "csv"
            if bundled is not None:
                out = write_catalog(bundled[1], dest, fmt)
            else:
                out = self._store.export(request.ref, dest, fmt, tenant=context.tenant)
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
        check_catalog_ref(request.ref, "ref")
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
        check_optimize(request)  # every field checked here, before the job waits in a queue
        spec_from_proto(request)
        capped = limits.with_solver_deadline(request, call.remaining_s())
        return self._submit(call, "optimize", capped, tenant)

    def Estimate(
        self, request: estimate_pb2.EstimateRequest, context: CallContext
    ) -> estimate_pb2.EstimateResponse:
        check_estimate(request)
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
        if self._pool.queue_full():
            msg = "server busy: the solver queue is full; retry the batch later"
            raise Busy(msg, retry_after_s=self._pool.retry_after_s())
        call, tenant = _Call(context), context.tenant
        engine = ServiceEngine(self._pool, tenant, deadline=call.deadline, stop=call.stop)
        return batch_results(request, engine, lambda ref: tenant_catalog(ref, tenant, self._store))

    def GetMetrics(
        self, request: service_pb2.GetMetricsRequest, context: CallContext
    ) -> service_pb2.GetMetricsResponse:
        return self._metrics.to_proto(self._pool.stats(), context.tenant)
