"""Where a command's requests go: the embedded core (default) or a server (``--server``).

Both return the same response messages, so every command prints the same output either way,
and both fail with the core's error classes, so ``procure`` exits with the same status for the
same problem. grpc is imported only in remote mode.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import click

from client.exits import EXIT_SERVER_UNAVAILABLE
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
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

        return api.estimate(req)

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
    cls.grpc_code: cls for cls in (InvalidInput, NotFound, LimitExceeded, Unauthenticated,
                                   PermissionDenied, SolverFailed)
}
_ERROR_BY_CODE["UNAVAILABLE"] = ServerUnavailable


def error_from_rpc(error: grpc.RpcError, server: str) -> ProcurementError:
    """The core error for a failed call: same class, same exit status as embedded."""
    code = error.code().name  # type: ignore[attr-defined]
    details = error.details() or code  # type: ignore[attr-defined]
    if code == "UNAVAILABLE":
        return ServerUnavailable(f"server {server} unavailable: {details.splitlines()[0]}")
    cls = _ERROR_BY_CODE.get(code, RemoteError)
    return cls(f"server {server}: {details}" if cls is RemoteError else details)


class Remote:
    """Calls the gRPC OptimizerService; the tenant is the one the bearer token names."""

    def __init__(self, server: str, tls_ca: str | None = None, token: str | None = None,
                 timeout_s: float | None = None) -> None:
        import grpc

        from optimizer._pb.procurement.v1 import service_pb2_grpc

        self.server = server
        self.timeout_s = timeout_s
        if tls_ca:
            credentials = grpc.ssl_channel_credentials(read_file(tls_ca, "--tls-ca"))
            self._channel = grpc.secure_channel(server, credentials)
        else:
            self._channel = grpc.insecure_channel(server)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        self._stub = service_pb2_grpc.OptimizerServiceStub(self._channel)

    def _call(self, method: Any, request: Any) -> Any:
        import grpc

        try:
            return method(request, metadata=self._metadata, timeout=self.timeout_s)
        except grpc.RpcError as e:
            raise error_from_rpc(e, self.server) from None

    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse:
        return self._call(self._stub.Estimate, req)  # type: ignore[no-any-return]

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse:
        return self._call(self._stub.Optimize, req)  # type: ignore[no-any-return]

    def close(self) -> None:
        self._channel.close()


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
    remote = Remote(obj["server"], obj.get("tls_ca"), read_token(obj.get("token_file")))
    root.call_on_close(remote.close)
    return remote
