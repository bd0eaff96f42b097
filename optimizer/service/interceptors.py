"""The one place where every call is admitted, authenticated, logged, counted, and where core
errors become status codes.

* Health is the only RPC served without credentials (reliability.md A12); while the server
  drains, every other call is refused with UNAVAILABLE (A7).
* ``ProcurementError.grpc_code`` gives the status; anything else is a bug and becomes INTERNAL
  with an error id that the log line repeats. No handler returns UNKNOWN or a traceback (A2).
* One JSON log line per call: method, tenant, status code, duration. Never a token, a request
  field or an error message (messages can quote the caller's prices) (G2).
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from optimizer.errors import ProcurementError
from optimizer.service.auth import LOCAL_TENANT, TokenTable
from optimizer.service.errors import Unavailable
from optimizer.service.metrics import Metrics

HEALTH_PREFIX = "/grpc.health.v1.Health/"
# Status details travel in HTTP/2 trailers; keep them well under gRPC's 8 KiB metadata cap.
MAX_DETAILS_CHARS = 4000

log = logging.getLogger("procure.service")


class CallContext:
    """What a servicer sees of a call: grpc's context plus the caller's tenant."""

    def __init__(self, context: grpc.ServicerContext, tenant: str) -> None:
        self._context = context
        self.tenant = tenant

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def _truncated(message: str) -> str:
    if len(message) <= MAX_DETAILS_CHARS:
        return message
    cut = message.rfind("\n", 0, MAX_DETAILS_CHARS)
    cut = cut if cut > 0 else MAX_DETAILS_CHARS
    return f"{message[:cut]}\n... ({len(message) - cut} more characters)"


def _status(name: str) -> grpc.StatusCode:
    code = getattr(grpc.StatusCode, name, None)
    return grpc.StatusCode.INTERNAL if code in (None, grpc.StatusCode.UNKNOWN) else code


class _Call:
    """One call in progress: admission, the status it ends with, and its log line."""

    def __init__(
        self, owner: ServiceInterceptor, method: str, context: grpc.ServicerContext
    ) -> None:
        self.owner, self.method, self.context = owner, method, context
        self.tenant = "-"
        self.code = "OK"
        self.started = time.monotonic()
        self.counted = not method.startswith(HEALTH_PREFIX)

    def admit(self) -> CallContext:
        if self.counted:
            self.owner.enter()
            if self.owner.draining.is_set():
                raise Unavailable("server is shutting down; retry on another instance")
            self.tenant = self.owner.tenant_of(self.context)
        return CallContext(self.context, self.tenant)

    def fail(self, error: BaseException) -> None:
        """Abort the call with the status ``error`` maps to (raises)."""
        already = self.context.code()
        if already is not None and already is not grpc.StatusCode.OK:
            self.code = already.name  # the handler aborted by itself (health, reflection)
            raise error
        if isinstance(error, ProcurementError):
            status = _status(error.grpc_code)
            self.code = status.name
            self.context.abort(status, _truncated(str(error)))
        error_id = uuid.uuid4().hex[:12]
        self.code = "INTERNAL"
        tb = error.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb else "?"
        log.error(
            json.dumps(
                {
                    "event": "internal_error",
                    "error_id": error_id,
                    "method": self.method,
                    "type": type(error).__name__,
                    "at": where,
                }
            )
        )
        self.context.abort(grpc.StatusCode.INTERNAL, f"internal error (id {error_id})")

    def finish(self) -> None:
        duration = time.monotonic() - self.started
        if self.code == "OK":
            code = self.context.code()
            self.code = code.name if code is not None else "OK"
        if self.counted:
            self.owner.leave()
        self.owner.metrics.record(self.method, self.code, duration)
        log.info(
            json.dumps(
                {
                    "event": "rpc",
                    "method": self.method,
                    "tenant": self.tenant,
                    "code": self.code,
                    "duration_ms": round(duration * 1000, 1),
                }
            )
        )


class ServiceInterceptor(grpc.ServerInterceptor):  # type: ignore[misc]
    """Wraps every handler of the server (see the module docstring)."""

    def __init__(self, tokens: TokenTable | None, metrics: Metrics) -> None:
        self.tokens = tokens
        self.metrics = metrics
        self.draining = threading.Event()
        self._in_flight = 0
        self._idle = threading.Condition()

    # ------------------------------------------------------------------ admission
    def tenant_of(self, context: grpc.ServicerContext) -> str:
        if self.tokens is None:
            return LOCAL_TENANT
        values = [v for k, v in context.invocation_metadata() if k == "authorization"]
        return self.tokens.tenant_for(values[0] if len(values) == 1 else None)

    def enter(self) -> None:
        with self._idle:
            self._in_flight += 1

    def leave(self) -> None:
        with self._idle:
            self._in_flight -= 1
            self._idle.notify_all()

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no authenticated call is in progress; False if ``timeout_s`` passed."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout_s)

    # ------------------------------------------------------------------ wrapping
    def intercept_service(
        self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        handler = continuation(details)
        if handler is None:
            return None
        method = details.method
        kinds = (
            ("unary_unary", self._unary, grpc.unary_unary_rpc_method_handler),
            ("stream_unary", self._unary, grpc.stream_unary_rpc_method_handler),
            ("unary_stream", self._streaming, grpc.unary_stream_rpc_method_handler),
            ("stream_stream", self._streaming, grpc.stream_stream_rpc_method_handler),
        )
        for attr, wrap, make in kinds:
            behavior = getattr(handler, attr)
            if behavior is not None:
                return make(
                    wrap(method, behavior),
                    request_deserializer=handler.request_deserializer,
                    response_serializer=handler.response_serializer,
                )
        return handler

    def _unary(self, method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Any:
            call = _Call(self, method, context)
            try:
                return behavior(request, call.admit())
            except Exception as e:
                call.fail(e)
                raise
            finally:
                call.finish()

        return handle

    def _streaming(self, method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            call = _Call(self, method, context)
            try:
                yield from behavior(request, call.admit())
            except GeneratorExit:  # the client went away while we were streaming
                call.code = "CANCELLED"
                raise
            except Exception as e:
                call.fail(e)
                raise
            finally:
                call.finish()

        return handle
