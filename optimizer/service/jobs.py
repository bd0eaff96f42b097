"""What a solver worker process does: receive a job, run the core on it, send the result back.

Runs in the spawned worker processes, so it imports nothing of grpc (reliability.md B1).
Requests and responses cross the pipe as serialized protobuf messages (a batch scenario as
``batch_engine``'s payload); errors as their status code name and message, never as a
traceback. ``tenant_catalog`` is the one rule for which catalogs a caller may name; the server
applies it too when it plans a batch.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import signal
import sys
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from optimizer.errors import InvalidInput, NotFound, ProcurementError, SolverFailed

if TYPE_CHECKING:
    from optimizer.catalog.model import Catalog
    from optimizer.catalog.store import CatalogStore

Progress = Callable[[dict[str, Any]], None]
Cache = Callable[[str, Callable[[], Any]], Any]
_PR_SET_PDEATHSIG = 1
_CACHED_CATALOGS = 8
# A batch scenario (optimizer.service.batch_engine): the batch runner's task, in a worker.
SCENARIO_JOB = "scenario"
# An upload's files, parsed and validated in a worker (never on a gRPC thread, so a file that
# is slow or large to parse cannot hold the server's GIL): ``upload_payload`` -> canonical.
PARSE_CATALOG_JOB = "parse_catalog"


def upload_payload(files: dict[str, bytes]) -> bytes:
    """The files of an upload as one job payload: a JSON line of (name, size), then the bytes."""
    head = json.dumps([[name, len(data)] for name, data in files.items()]).encode()
    return head + b"\n" + b"".join(files.values())


def parse_upload(payload: bytes) -> bytes:
    """Worker side: read, bound and validate the files; a JSON line with the validation
    warnings, then the catalog's canonical bytes. Errors are raised (CatalogInvalid keeps
    every finding as a field violation across the pipe)."""
    from optimizer.catalog.canonical import canonical_json
    from optimizer.catalog.io import read_tables_from_bytes
    from optimizer.catalog.validation import validate
    from optimizer.service.limits import check_catalog_rows

    head, _, body = payload.partition(b"\n")
    files: dict[str, bytes] = {}
    at = 0
    for name, size in json.loads(head):
        files[name] = body[at : at + size]
        at += size
    raw = read_tables_from_bytes(files)
    check_catalog_rows(raw)
    report = validate(raw)
    catalog = report.raise_for_errors()
    warnings = json.dumps([str(w) for w in report.warnings]).encode()
    return warnings + b"\n" + canonical_json(catalog)


def worker_main(conn: Connection, data_dir: str | None) -> None:
    """Entry point of a worker process: serve jobs from ``conn`` until told to stop."""
    _detach()
    runner = JobRunner(data_dir)
    sending = threading.Lock()  # the optimizer may report progress from solver threads

    def send(message: tuple[Any, ...]) -> None:
        with sending:
            conn.send(message)

    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        kind, payload, tenant = job
        try:
            result = runner.run(kind, payload, tenant, lambda d: send(("progress", d)))
            send(("ok", result))
        except ProcurementError as e:
            violations = [(v.field, v.description) for v in e.violations()]
            send(("error", e.grpc_code, str(e), violations))
        except Exception as e:
            error_id = uuid.uuid4().hex[:12]
            where = _innermost(e)
            print(
                f"procure worker: {kind} job failed: {type(e).__name__} at {where} "
                f"(error id {error_id})",
                file=sys.stderr,
                flush=True,
            )
            send(("error", "INTERNAL", f"internal error ({type(e).__name__}, id {error_id})", []))


def _detach() -> None:
    """Die with the server, and leave Ctrl-C to the server, which decides when solves stop.
    (The pool starts each worker in its own session, so a kill reaches solver children.)"""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _innermost(error: BaseException) -> str:
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return "?"
    return f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"


class JobRunner:
    """Runs jobs in one worker; keeps a few catalogs decoded between jobs."""

    def __init__(self, data_dir: str | None) -> None:
        from optimizer import api  # the solver stack, imported once per worker

        self._api = api
        self._data_dir = data_dir
        self._catalogs: OrderedDict[str, Any] = OrderedDict()
        self._store: Any = None

    def run(self, kind: str, payload: bytes, tenant: str, progress: Progress) -> bytes:
        from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
        from optimizer.catalog.union import SERVER_REFS, request_catalog_refs, union_catalogs

        if kind == "smoke":
            return smoke_test()
        if kind == "estimate":
            est = estimate_pb2.EstimateRequest.FromString(payload)
            catalog = self.catalog(est.catalog, tenant) if est.catalog else None
            return self._api.estimate(est, catalog=catalog).SerializeToString()
        if kind == "optimize":
            req = optimize_pb2.OptimizeRequest.FromString(payload)
            catalog = union_catalogs(
                [
                    (field, ref, self.catalog(ref, tenant))
                    for field, ref in request_catalog_refs(
                        req.catalog, req.catalogs, expected=SERVER_REFS
                    )
                ]
            )
            return self._api.optimize(
                req, data_dir=self._data_dir, tenant=tenant, catalog=catalog, progress=progress
            ).SerializeToString()
        if kind == PARSE_CATALOG_JOB:
            return parse_upload(payload)
        if kind == SCENARIO_JOB:
            from optimizer.service.batch_engine import run_scenario_job

            return run_scenario_job(payload)
        msg = f"unknown job kind {kind!r}"
        raise SolverFailed(msg)

    def catalog(self, ref: str, tenant: str) -> Any:
        """``tenant_catalog`` against the data directory's store, decoded catalogs cached."""
        return tenant_catalog(ref, tenant, self._open_store(), cached=self._cached)

    def _open_store(self) -> CatalogStore | None:
        """The data directory's store, or None while it has none (a lookup must not create
        an empty store)."""
        from optimizer.catalog.store import DB_FILENAME, CatalogStore, default_data_dir

        if self._store is None:
            store_dir = Path(self._data_dir) if self._data_dir else default_data_dir()
            if (store_dir / DB_FILENAME).is_file():
                self._store = CatalogStore(store_dir)
        return self._store

    def _cached(self, key: str, load: Callable[[], Any]) -> Any:
        if key in self._catalogs:
            self._catalogs.move_to_end(key)
            return self._catalogs[key]
        value = load()
        self._catalogs[key] = value
        while len(self._catalogs) > _CACHED_CATALOGS:
            self._catalogs.popitem(last=False)
        return value


def _uncached(key: str, load: Callable[[], Any]) -> Any:
    return load()


def tenant_catalog(
    ref: str, tenant: str, store: CatalogStore | None, *, cached: Cache = _uncached
) -> Catalog:
    """A bundled catalog by name, else ``tenant``'s stored one (``store`` None: nothing is
    stored). Never a server path: a caller must not make the server read its own files."""
    from optimizer.catalog import load_catalog

    if not ref:
        raise InvalidInput("required; expected a catalog name, name@version or id", field="catalog")
    folder = _bundled(ref)
    if folder is not None:
        bundled: Catalog = cached(f"bundled:{ref}", lambda: load_catalog(folder))
        return bundled
    if store is None:
        raise NotFound(f"catalog {ref!r} not found")
    info = store.info(ref, tenant=tenant)
    stored: Catalog = cached(f"{tenant}:{info.id}", lambda: store.get(info.id, tenant=tenant))
    return stored


def _bundled(ref: str) -> Path | None:
    from optimizer.catalog.resolve import bundled_catalogs

    return next((folder for folder in bundled_catalogs() if folder.name == ref), None)


def smoke_test() -> bytes:
    """Solve a two-variable MIP with the default backend and check the answer (readiness:
    the server reports SERVING only after this passes, reliability.md A8, D1)."""
    from optimizer.optimize.backends import Limits, SolveStatus, get_backend
    from optimizer.optimize.mip import MipModel

    model = MipModel()
    x, y = model.var("x", 0, 10), model.var("y", 0, 10)
    model.add("cover", {x: 1, y: 1}, lo=3)
    model.minimize({x: 2, y: 3})
    res = get_backend("cpsat").solve(model, Limits(time_limit_s=5.0))
    if res.status is not SolveStatus.OPTIMAL or res.objective != 6:
        msg = f"solver smoke test failed: status {res.status}, objective {res.objective}"
        raise SolverFailed(msg)
    return b"ok"


def main(argv: list[str] | None = None) -> None:
    """``python -m optimizer.service.jobs --fd N [--data-dir D]``, started by WorkerPool."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fd", type=int, required=True, help="socket to the server")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    worker_main(Connection(args.fd), args.data_dir)


if __name__ == "__main__":
    main()
