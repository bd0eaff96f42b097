"""Where a command's requests go: the embedded core (default) or a server (``--server``).

Both return the same response messages, so every command prints the same output either way,
and both fail with the core's error classes, so ``procure`` exits with the same status for the
same problem. grpc is imported only in remote mode.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
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

    from optimizer.catalog.model import Catalog

TOKEN_ENV = "PROCURE_TOKEN"


class Transport(Protocol):
    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse: ...

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse: ...


class Embedded:
    """Calls optimizer.api in this process; catalogs resolve against the local store."""

    def __init__(self, data_dir: str | None = None, tenant: str = "default") -> None:
        self.data_dir = data_dir
        self.tenant = tenant

    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse:
        from optimizer import api

        return api.estimate(req, data_dir=self.data_dir, tenant=self.tenant)

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse:
        from optimizer import api

        return api.optimize(req, data_dir=self.data_dir, tenant=self.tenant)


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
    code = error.code().name  # type: ignore[attr-defined]
    details = error.details() or code  # type: ignore[attr-defined]
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
        self._stub = service_pb2_grpc.OptimizerServiceStub(self._channel)
        self.catalogs = catalog_pb2_grpc.CatalogServiceStub(self._channel)

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
        if req.catalog and Path(req.catalog).exists():
            sent = optimize_pb2.OptimizeRequest()
            sent.CopyFrom(req)
            sent.catalog = self.stored_id(req.catalog)
            req = sent
        return self.call(self._stub.Optimize, req)  # type: ignore[no-any-return]

    def upload(
        self, path: str, name: str | None = None, request_id: str | None = None
    ) -> catalog_pb2.UploadCatalogResponse:
        """Validate the catalog at ``path`` here (the same report as embedded), then store it
        on the server as a new version (identical content returns the existing one)."""
        return self.call(
            self.catalogs.UploadCatalog,  # type: ignore[no-any-return]
            iter(upload_messages(path, name or "", request_id or "")),
        )

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

    def close(self) -> None:
        self._channel.close()


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
    messages = []
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


def transport_from(ctx: click.Context) -> Transport:
    """The transport the global options chose; one per command run."""
    root = ctx.find_root()
    obj = root.obj or {}
    if not obj.get("server"):
        return Embedded(obj.get("data_dir"), obj.get("tenant", "default"))
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
