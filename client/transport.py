"""Where a command's requests go: the embedded core (default) or a server (``--server``).

Both implement ``Transport``, every call the CLI makes, and return the same messages and
records, so every command prints the same output either way; both fail with the core's error
classes, so ``procure`` exits with the same status for the same problem. grpc is imported
only in remote mode, the catalog store and the optimizer only when a call needs them.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from client.exits import EXIT_SERVER_UNAVAILABLE
from optimizer._pb.procurement.v1 import catalog_pb2, estimate_pb2, optimize_pb2
from optimizer.errors import (
    InvalidInput,
    LimitExceeded,
    NotFound,
    PermissionDenied,
    ProcurementError,
    SolverFailed,
    Unauthenticated,
)

if TYPE_CHECKING:
    import grpc

    from optimizer._pb.procurement.v1 import service_pb2
    from optimizer.catalog.model import Catalog
    from optimizer.catalog.store import StoredCatalogInfo

TOKEN_ENV = "PROCURE_TOKEN"
# Runs one BatchOptimize call may ask for (optimizer.service.limits.MAX_BATCH_RUNS); longer
# batches go as several calls, one after the other.
BATCH_CALL_RUNS = 100


@dataclass(frozen=True)
class BatchItem:
    """One scenario of ``Transport.batch_optimize``: its response, or the error that kept it
    from running (the same error class embedded and remote)."""

    index: int  # position in the requests
    response: optimize_pb2.OptimizeResponse | None
    error: ProcurementError | None = None
    scenario_id: str = ""  # the batch runner's id of the run (remote only)
    stopped: str = ""  # why a response is the best found before the call's deadline


@dataclass(frozen=True)
class ImportedCatalog:
    info: StoredCatalogInfo
    warnings: list[str]


class Transport(Protocol):
    """Every call the CLI makes, embedded or on a server."""

    where: str  # whose catalogs these are, for a table title: "of tenant 'x'", "on HOST:PORT"

    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse: ...

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse: ...

    def batch_optimize(
        self, requests: Sequence[optimize_pb2.OptimizeRequest]
    ) -> Iterator[BatchItem]: ...

    def import_catalog(
        self, path: str, name: str | None = None, request_id: str | None = None
    ) -> ImportedCatalog: ...

    def list_catalogs(self) -> list[StoredCatalogInfo]: ...

    def fetch_catalog(self, ref: str) -> Catalog: ...

    def export_catalog(self, ref: str, dest: Path, fmt: str) -> None: ...

    def delete_catalog(self, ref: str, all_versions: bool = False) -> list[StoredCatalogInfo]: ...


class Embedded:
    """Calls optimizer.api in this process; catalogs resolve against the local store."""

    def __init__(self, data_dir: str | None = None, tenant: str = "default") -> None:
        self.data_dir = data_dir
        self.tenant = tenant
        self.where = f"of tenant {tenant!r}"

    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse:
        from optimizer import api

        return api.estimate(req, data_dir=self.data_dir, tenant=self.tenant)

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse:
        from optimizer import api

        return api.optimize(req, data_dir=self.data_dir, tenant=self.tenant)

    def batch_optimize(
        self, requests: Sequence[optimize_pb2.OptimizeRequest]
    ) -> Iterator[BatchItem]:
        """Each request in order, in this process; an error ends its own item only."""
        for i, req in enumerate(requests):
            try:
                yield BatchItem(i, self.optimize(req))
            except ProcurementError as e:
                yield BatchItem(i, None, e)

    def import_catalog(
        self, path: str, name: str | None = None, request_id: str | None = None
    ) -> ImportedCatalog:
        from optimizer.catalog import load_catalog_report
        from optimizer.catalog.store import CatalogStore, renamed

        report = load_catalog_report(path)
        catalog = report.raise_for_errors()
        if name is not None:
            catalog = renamed(catalog, name)
        with CatalogStore(self.data_dir) as store:
            info = store.put(catalog, tenant=self.tenant, request_id=request_id)
        return ImportedCatalog(info, [str(w) for w in report.warnings])

    def list_catalogs(self) -> list[StoredCatalogInfo]:
        from optimizer.catalog.store import CatalogStore

        with CatalogStore(self.data_dir) as store:
            return store.list(self.tenant)

    def fetch_catalog(self, ref: str) -> Catalog:
        from optimizer.catalog.resolve import resolve_catalog

        return resolve_catalog(ref, data_dir=self.data_dir, tenant=self.tenant)

    def export_catalog(self, ref: str, dest: Path, fmt: str) -> None:
        from optimizer.catalog.store import CatalogStore

        with CatalogStore(self.data_dir) as store:
            store.export(ref, dest, fmt, tenant=self.tenant)

    def delete_catalog(self, ref: str, all_versions: bool = False) -> list[StoredCatalogInfo]:
        from optimizer.catalog.store import CatalogStore

        with CatalogStore(self.data_dir) as store:
            return store.delete(ref, tenant=self.tenant, all_versions=all_versions)


class ServerUnavailable(ProcurementError):
    """The server cannot be reached, is draining, or refused the connection."""

    grpc_code = "UNAVAILABLE"
    exit_code = EXIT_SERVER_UNAVAILABLE


class RemoteError(ProcurementError):
    """A status code the core has no class for (deadline, cancellation); exit as internal."""


# Status code name -> the core error the embedded run raises for the same problem.
_ERROR_BY_CODE: dict[str, type[ProcurementError]] = {
    cls.grpc_code: cls
    for cls in (
        InvalidInput,
        NotFound,
        LimitExceeded,
        Unauthenticated,
        PermissionDenied,
        SolverFailed,
    )
}


BUSY_RETRIES = 3
BUSY_BACKOFF_S = 0.5
BUSY_MAX_WAIT_S = 30.0


def busy_retry_after_s(error: grpc.RpcError) -> float | None:
    """The server's retry hint when ``error`` is a busy refusal (RESOURCE_EXHAUSTED with
    google.rpc.RetryInfo), else None: other refusals are not worth retrying."""
    from optimizer.service.rpc_status import from_trailers

    if error.code().name != "RESOURCE_EXHAUSTED":
        return None
    return from_trailers(error.trailing_metadata()).retry_after_s


def error_from_rpc(error: grpc.RpcError, server: str) -> ProcurementError:
    """The core error for a failed call: same class, same exit status as embedded."""
    code = error.code().name
    details = error.details() or code
    if code == "UNAVAILABLE":
        return ServerUnavailable(f"server {server} unavailable: {details.splitlines()[0]}")
    cls = _ERROR_BY_CODE.get(code, RemoteError)
    if cls is InvalidInput:  # the fields the server blamed (google.rpc.BadRequest)
        from optimizer.service.rpc_status import from_trailers

        violations = list(from_trailers(error.trailing_metadata()).violations)
        return InvalidInput(details, violations=violations)
    return cls(f"server {server}: {details}" if cls is RemoteError else details)


class Remote:
    """Calls the gRPC services; the tenant is the one the bearer token names.

    A request naming a local catalog path is sent with the catalog uploaded first (the server
    cannot read the client's files); bundled names and stored ids go as they are.
    """

    def __init__(
        self,
        server: str,
        tls_ca: str | None = None,
        token: str | None = None,
        *,
        client_cert: tuple[str, str] | None = None,
        timeout_s: float | None = None,
        notify: Callable[[str], None] = lambda note: None,
    ) -> None:
        import grpc

        from optimizer._pb.procurement.v1 import catalog_pb2_grpc, service_pb2_grpc

        self.server = server
        self.where = f"on {server}"
        self.timeout_s = timeout_s
        self._notify = notify
        self._uploaded: dict[str, str] = {}  # local path -> stored id on the server
        if tls_ca:
            cert, key = client_cert or (None, None)
            credentials = grpc.ssl_channel_credentials(
                read_file(tls_ca, "--tls-ca"),
                private_key=read_file(key, "--tls-key") if key else None,
                certificate_chain=read_file(cert, "--tls-cert") if cert else None,
            )
            self._channel = grpc.secure_channel(server, credentials)
        else:
            self._channel = grpc.insecure_channel(server)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        # The generated gRPC stubs carry no annotations.
        self._stub = service_pb2_grpc.OptimizerServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self.catalogs = catalog_pb2_grpc.CatalogServiceStub(self._channel)  # type: ignore[no-untyped-call]

    def call(self, method: Any, request: Any) -> Any:
        """``method(request)`` with the token and deadline; failures as core errors. A busy
        refusal (RetryInfo) is retried up to BUSY_RETRIES times, waiting the server's hint or
        an exponential backoff, whichever is longer, and saying so."""
        import grpc

        sent = list(request) if isinstance(request, Iterator) else None  # resendable
        for attempt in range(1, BUSY_RETRIES + 2):
            try:
                return method(
                    request if sent is None else iter(sent),
                    metadata=self._metadata,
                    timeout=self.timeout_s,
                )
            except grpc.RpcError as e:
                hint_s = busy_retry_after_s(e)
                if hint_s is None or attempt > BUSY_RETRIES:
                    raise error_from_rpc(e, self.server) from None
                wait_s = min(BUSY_MAX_WAIT_S, max(hint_s, BUSY_BACKOFF_S * 2 ** (attempt - 1)))
                self._notify(
                    f"server {self.server} busy; retrying in {wait_s:.1f} s "
                    f"(retry {attempt} of {BUSY_RETRIES})"
                )
                time.sleep(wait_s)
        raise AssertionError("unreachable")  # the loop returns or raises

    def stream(self, method: Any, request: Any) -> Iterator[Any]:
        """The messages of a server-streaming call; failures as core errors."""
        import grpc

        try:
            yield from method(request, metadata=self._metadata, timeout=self.timeout_s)
        except grpc.RpcError as e:
            raise error_from_rpc(e, self.server) from None

    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse:
        return self.call(self._stub.Estimate, req)  # type: ignore[no-any-return]

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse:
        return self.call(self._stub.Optimize, self._sendable(req))  # type: ignore[no-any-return]

    def batch_optimize(
        self, requests: Sequence[optimize_pb2.OptimizeRequest]
    ) -> Iterator[BatchItem]:
        """The requests through BatchOptimize, each against its own catalog, as they finish
        (local catalog paths uploaded first); at most BATCH_CALL_RUNS per call."""
        from optimizer._pb.procurement.v1 import service_pb2

        for start in range(0, len(requests), BATCH_CALL_RUNS):
            chunk = [self._sendable(r) for r in requests[start : start + BATCH_CALL_RUNS]]
            call = service_pb2.BatchOptimizeRequest(scenarios=chunk)
            for result in self.stream(self._stub.BatchOptimize, call):
                yield batch_item(result, start)

    def _sendable(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeRequest:
        """``req`` as the server can run it: a local catalog path (``catalog`` or any of
        ``catalogs``) becomes its stored id."""
        refs = [req.catalog, *req.catalogs]
        if not any(ref and Path(ref).exists() for ref in refs):
            return req
        sent = optimize_pb2.OptimizeRequest()
        sent.CopyFrom(req)
        if req.catalog and Path(req.catalog).exists():
            sent.catalog = self.stored_id(req.catalog)
        for i, ref in enumerate(req.catalogs):
            if ref and Path(ref).exists():
                sent.catalogs[i] = self.stored_id(ref)
        return sent

    def import_catalog(
        self, path: str, name: str | None = None, request_id: str | None = None
    ) -> ImportedCatalog:
        uploaded = self.upload(path, name, request_id)
        return ImportedCatalog(info_from_proto(uploaded.catalog), list(uploaded.warnings))

    def list_catalogs(self) -> list[StoredCatalogInfo]:
        """Every page of ListCatalogs (the server sends at most 1,000 versions a page)."""
        infos: list[StoredCatalogInfo] = []
        token: str | None = None
        while token != "":
            listed = self.call(
                self.catalogs.ListCatalogs,
                catalog_pb2.ListCatalogsRequest(page_size=1000, page_token=token or ""),
            )
            infos += [info_from_proto(i) for i in listed.catalogs]
            token = listed.next_page_token
        return infos

    def export_catalog(self, ref: str, dest: Path, fmt: str) -> None:
        """Write the server's export of ``ref`` where the embedded export would put it."""
        for name, data in self.download(ref, fmt).items():
            target = dest if fmt == "xlsx" and dest.suffix.lower() == ".xlsx" else dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def delete_catalog(self, ref: str, all_versions: bool = False) -> list[StoredCatalogInfo]:
        response = self.call(
            self.catalogs.DeleteCatalog,
            catalog_pb2.DeleteCatalogRequest(ref=ref, all_versions=all_versions),
        )
        return [info_from_proto(i) for i in response.deleted]

    def upload(
        self, path: str, name: str | None = None, request_id: str | None = None
    ) -> catalog_pb2.UploadCatalogResponse:
        """Validate the catalog at ``path`` here (the same report as embedded), then store it
        on the server as a new version (identical content returns the existing one)."""
        response: catalog_pb2.UploadCatalogResponse = self.call(
            self.catalogs.UploadCatalog, iter(upload_messages(path, name or "", request_id or ""))
        )
        return response

    def download(self, ref: str, fmt: str = "csv") -> dict[str, bytes]:
        """The server's export of the stored catalog ``ref``: file name -> content."""
        files: dict[str, bytearray] = {}
        for chunk in self.stream(
            self.catalogs.ExportCatalog, catalog_pb2.ExportCatalogRequest(ref=ref, format=fmt)
        ):
            # Only the base name: the server never chooses where a file lands.
            files.setdefault(Path(chunk.file_name).name, bytearray()).extend(chunk.data)
        return {name: bytes(data) for name, data in files.items()}

    def fetch_catalog(self, ref: str) -> Catalog:
        """The stored catalog ``ref``, read back and validated like an upload."""
        from optimizer.catalog.io import read_tables_from_bytes
        from optimizer.catalog.validation import validate

        return validate(read_tables_from_bytes(self.download(ref))).raise_for_errors()

    def stored_id(self, path: str) -> str:
        if path not in self._uploaded:
            info = self.upload(path).catalog
            self._notify(
                f"uploaded catalog {path} to {self.server} as {info.ref} (id {info.id[:12]})"
            )
            self._uploaded[path] = info.id
        return self._uploaded[path]

    def workers(self) -> int:
        """The server's solver worker processes (what a batch summary reports)."""
        from optimizer._pb.procurement.v1 import service_pb2

        metrics = self.call(self._stub.GetMetrics, service_pb2.GetMetricsRequest())
        return int(metrics.workers)

    def close(self) -> None:
        self._channel.close()


def batch_item(result: service_pb2.BatchResult, offset: int = 0) -> BatchItem:
    """A BatchResult as the item the embedded run gives: a response (also one a deadline
    stopped early), or the core error its status code names."""
    index = offset + result.scenario_index
    if result.HasField("response"):
        stopped = result.error_message if result.error_code == "DEADLINE_EXCEEDED" else ""
        return BatchItem(index, result.response, None, result.scenario_id, stopped)
    cls = _ERROR_BY_CODE.get(result.error_code, RemoteError)
    return BatchItem(index, None, cls(result.error_message), result.scenario_id)


def info_from_proto(info: catalog_pb2.CatalogInfo, tenant: str = "") -> StoredCatalogInfo:
    """A server's CatalogInfo as the store's record (the server does not name the tenant)."""
    from optimizer.catalog.store import StoredCatalogInfo

    return StoredCatalogInfo(
        tenant=tenant,
        id=info.id,
        name=info.name,
        version=info.version,
        vendor=info.vendor,
        quote_date=info.quote_date or None,
        created_at=info.created_at,
        row_count=info.row_count,
        size_bytes=info.size_bytes,
    )


UPLOAD_CHUNK_BYTES = 1024 * 1024  # well under the server's message limit


def upload_messages(
    path: str, name: str, request_id: str
) -> list[catalog_pb2.UploadCatalogRequest]:
    """The catalog at ``path``, validated here and written as canonical CSV tables, in chunks.

    Built before the call starts, so a catalog that fails validation raises CatalogInvalid
    with its problem table instead of cancelling the stream halfway.
    """
    from optimizer.catalog import load_catalog
    from optimizer.catalog.io import write_catalog

    catalog = load_catalog(path)
    messages: list[catalog_pb2.UploadCatalogRequest] = []
    with tempfile.TemporaryDirectory(prefix="procure-upload-") as tmp:
        folder = write_catalog(catalog, Path(tmp) / "catalog", "csv")
        for file in sorted(folder.iterdir()):
            data = file.read_bytes()
            for start in range(0, max(1, len(data)), UPLOAD_CHUNK_BYTES):
                first = not messages
                messages.append(
                    catalog_pb2.UploadCatalogRequest(
                        request_id=request_id if first else "",
                        name=name if first else "",
                        file_name=file.name,
                        data=data[start : start + UPLOAD_CHUNK_BYTES],
                    )
                )
    return messages


def read_file(path: str, flag: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise InvalidInput(f"cannot read {path} ({e.strerror})", field=flag) from None


def read_token(token_file: str | None) -> str | None:
    """The bearer token from ``--token-file`` or $PROCURE_TOKEN; its text is never echoed."""
    if token_file:
        token = read_file(token_file, "--token-file").decode(errors="replace").strip()
        if not token or any(c.isspace() for c in token):
            raise InvalidInput("expected one token on one line", field="--token-file")
        return token
    return os.environ.get(TOKEN_ENV) or None


def transport_from(
    ctx: click.Context, *, data_dir: str | None = None, tenant: str | None = None
) -> Transport:
    """The transport the global options chose; one per command run. ``data_dir`` and
    ``tenant`` (a command's own options) override the global ones for the embedded store."""
    obj = ctx.find_root().obj or {}
    if not obj.get("server"):
        return Embedded(
            data_dir if data_dir is not None else obj.get("data_dir"),
            tenant or obj.get("tenant", "default"),
        )
    return remote_from(ctx)


def remote_from(ctx: click.Context) -> Remote:
    """The ``--server`` connection, closed when the command ends."""
    root = ctx.find_root()
    obj = root.obj or {}
    if not obj.get("server"):
        raise click.UsageError("this needs --server HOST:PORT")

    def notify(note: str) -> None:
        if not obj.get("quiet"):
            click.echo(note, err=True)

    cert, key = obj.get("tls_cert"), obj.get("tls_key")
    remote = Remote(
        obj["server"],
        obj.get("tls_ca"),
        read_token(obj.get("token_file")),
        client_cert=(cert, key) if cert and key else None,
        notify=notify,
    )
    root.call_on_close(remote.close)
    return remote
