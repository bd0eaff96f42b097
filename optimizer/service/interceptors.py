"""The one place where every call is admitted, authenticated, logged, counted, and where core
errors become status codes.

* Health is the only RPC served without credentials (reliability.md A12) and is never refused
  for capacity: other calls are admitted up to ``max_calls`` in all and ``max_calls_per_tenant``
  per tenant, and beyond that refused at once as busy (RESOURCE_EXHAUSTED with RetryInfo).
  While the server drains, every other call is refused with UNAVAILABLE (A7). Failed
  authentications are throttled per client address.
* ``ProcurementError.grpc_code`` gives the status, its field violations travel as
  ``google.rpc.BadRequest`` and a busy refusal's retry hint as ``google.rpc.RetryInfo`` plus a
  ``grpc-retry-pushback-ms`` trailer (optimizer.service.rpc_status). Anything else is a bug
  and becomes INTERNAL with an error id that the log line repeats. No handler returns UNKNOWN
  or a traceback (A2). Request bytes that do not parse are INVALID_ARGUMENT (after
  authentication), and a reply over the message limit is RESOURCE_EXHAUSTED here, so the log
  records the status the client received.
* One JSON log line per call: method, tenant, status code, duration. Never a token, a request
  field or an error message (messages can quote the caller's prices) (G2).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import Message

from optimizer.errors import (
    Busy,
    InvalidInput,
    LimitExceeded,
    PermissionDenied,
    ProcurementError,
    Unauthenticated,
)
from optimizer.service import rpc_status
from optimizer.service.auth import LOCAL_TENANT, TokenTable
from optimizer.service.errors import Unavailable
from optimizer.service.limits import MAX_MESSAGE_BYTES
from optimizer.service.metrics import Metrics

HEALTH_PREFIX = "/grpc.health.v1.Health/"
# Status details travel in HTTP/2 trailers; keep them well under gRPC's 8 KiB metadata cap.
MAX_DETAILS_CHARS = 4000
AUTH_FAILURES_PER_WINDOW = 20
"""Failed authentications one client address may make per AUTH_WINDOW_S before it is refused
without a token check (busy, with a retry hint)."""
AUTH_WINDOW_S = 10.0
ADMISSION_RETRY_S = 1.0
"""Retry hint of a call refused because the server or its tenant has too many calls open."""
_ERROR_ID = re.compile(r"\bid [0-9a-f]{12}\b")

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


@dataclass(frozen=True)
class _Abort(grpc.Status):
    """A status with trailers, for ``context.abort_with_status``."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: tuple[tuple[str, str | bytes], ...]


def _rich_trailers(
    code: grpc.StatusCode, message: str, error: ProcurementError
) -> tuple[tuple[str, str | bytes], ...]:
    """``grpc-status-details-bin`` (BadRequest, RetryInfo) and the retry pushback, if any."""
    rich = rpc_status.RichStatus(tuple(error.violations()), error.retry_after_s)
    if not rich.violations and rich.retry_after_s is None:
        return ()
    trailers: list[tuple[str, str | bytes]] = [
        (rpc_status.DETAILS_KEY, rpc_status.encode(code.value[0], message, rich))
    ]
    if rich.retry_after_s is not None:
        trailers.append((rpc_status.PUSHBACK_KEY, str(round(rich.retry_after_s * 1000))))
    return tuple(trailers)


class _Undecodable:
    """Stands in for a request whose bytes are not a valid message: gRPC would answer
    INTERNAL before any handler ran; the handler raises InvalidInput for it instead."""

    def __init__(self, type_name: str, error: Exception) -> None:
        self.type_name, self.error = type_name, type(error).__name__

    def invalid(self) -> InvalidInput:
        return InvalidInput(
            f"the request bytes are not a valid {self.type_name} message ({self.error})",
            field="request",
        )


def _lenient(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None
    owner = getattr(deserializer, "__self__", None)
    descriptor = getattr(owner, "DESCRIPTOR", None)
    type_name = getattr(descriptor, "full_name", "request")

    def parse(data: bytes) -> Any:
        try:
            return deserializer(data)
        except Exception as e:
            return _Undecodable(type_name, e)

    return parse


def _parsed(request: Any) -> Any:
    if isinstance(request, _Undecodable):
        raise request.invalid()
    return request


def _parsed_stream(requests: Iterable[Any]) -> Iterator[Any]:
    for request in requests:
        yield _parsed(request)


def _fits(reply: Any) -> Any:
    """``reply``, unless it exceeds the message limit: then the error the client would get
    (RESOURCE_EXHAUSTED) raised here, so it is what the log records."""
    if isinstance(reply, Message):
        size = reply.ByteSize()
        if size > MAX_MESSAGE_BYTES:
            msg = f"the reply would be {size} bytes; at most {MAX_MESSAGE_BYTES} per message"
            raise LimitExceeded(msg)
    return reply


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
        self.admitted = False

    def admit(self) -> CallContext:
        """Authenticate and admit the call (health: always); raises its refusal."""
        if self.counted:
            self.owner.enter()
            if self.owner.draining.is_set():
                raise Unavailable("server is shutting down; retry on another instance")
            self.tenant = self.owner.tenant_of(self.context)
            self.owner.admit(self.tenant)
            self.admitted = True
        return CallContext(self.context, self.tenant)

    def fail(self, error: BaseException) -> None:
        """Abort the call with the status ``error`` maps to (raises)."""
        already = _code_of(self.context)
        if already is not None and already is not grpc.StatusCode.OK:
            self.code = already.name  # the handler aborted by itself (health, reflection)
            raise error
        if isinstance(error, ProcurementError):
            status = _status(error.grpc_code)
            self.code = status.name
            message = _truncated(str(error))
            if status is grpc.StatusCode.INTERNAL and not _ERROR_ID.search(message):
                message = f"{message} (id {self._log_internal(error)})"
            self.context.abort_with_status(
                _Abort(status, message, _rich_trailers(status, message, error))
            )
        error_id = self._log_internal(error)
        self.code = "INTERNAL"
        self.context.abort(grpc.StatusCode.INTERNAL, f"internal error (id {error_id})")

    def _log_internal(self, error: BaseException) -> str:
        """Log a bug (type and innermost line, never its message) under a new error id."""
        error_id = uuid.uuid4().hex[:12]
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
        return error_id

    def finish(self) -> None:
        duration = time.monotonic() - self.started
        if self.code == "OK":
            code = _code_of(self.context)
            self.code = code.name if code is not None else "OK"
        if self.counted:
            self.owner.leave(self.tenant if self.admitted else None)
        self.owner.metrics.record(self.method, self.code, duration, tenant=self.tenant)
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


class ServiceInterceptor(grpc.ServerInterceptor):
    """Wraps every handler of the server (see the module docstring)."""

    def __init__(
        self,
        tokens: TokenTable | None,
        metrics: Metrics,
        *,
        max_calls: int = 1 << 30,
        max_calls_per_tenant: int = 1 << 30,
        tenant_from_cert: bool = False,
    ) -> None:
        self.tokens = tokens
        self.tenant_from_cert = tenant_from_cert
        self.metrics = metrics
        self.max_calls = max_calls
        self.max_calls_per_tenant = max_calls_per_tenant
        self.draining = threading.Event()
        self._in_flight = 0  # every non-health call, admitted or not yet
        self._admitted = 0
        self._by_tenant: Counter[str] = Counter()
        self._idle = threading.Condition()
        self._auth_failures: dict[str, deque[float]] = {}

    # ------------------------------------------------------------------ admission
    def tenant_of(self, context: grpc.ServicerContext) -> str:
        """The caller's tenant from its bearer token (and, with ``tenant_from_cert``, its
        client certificate's common name, which must agree); a client address that keeps
        failing is refused without a check for a while (throttles token guessing)."""
        certified = _certificate_name(context) if self.tenant_from_cert else None
        if self.tenant_from_cert and certified is None:
            raise Unauthenticated("expected a client certificate with a common name")
        if self.tokens is None:
            return certified or LOCAL_TENANT
        host = _host(context.peer())
        now = time.monotonic()
        with self._idle:
            failures = self._auth_failures.get(host)
            while failures and now - failures[0] > AUTH_WINDOW_S:
                failures.popleft()
            if failures is not None and len(failures) >= AUTH_FAILURES_PER_WINDOW:
                wait_s = AUTH_WINDOW_S - (now - failures[0])
                msg = (
                    f"too many failed authentications from this address "
                    f"(at most {AUTH_FAILURES_PER_WINDOW} per {AUTH_WINDOW_S:g} s)"
                )
                raise Busy(msg, retry_after_s=max(0.1, wait_s))
        values = [v for k, v in context.invocation_metadata() if k == "authorization"]
        presented = values[0] if len(values) == 1 and isinstance(values[0], str) else None
        try:
            tenant = self.tokens.tenant_for(presented)
            if certified is not None and tenant != certified:
                raise PermissionDenied("the bearer token is not the client certificate's tenant")
            return tenant
        except Unauthenticated:
            with self._idle:
                if len(self._auth_failures) > 10_000:  # bound the table under address churn
                    self._auth_failures.clear()
                self._auth_failures.setdefault(host, deque()).append(now)
            raise

    def admit(self, tenant: str) -> None:
        """Take one of the server's call slots and one of ``tenant``'s, or raise Busy."""
        with self._idle:
            if self._admitted >= self.max_calls:
                msg = f"server busy: {self.max_calls} calls in progress; retry later"
                raise Busy(msg, retry_after_s=ADMISSION_RETRY_S)
            if self._by_tenant[tenant] >= self.max_calls_per_tenant:
                msg = (
                    f"tenant busy: {self.max_calls_per_tenant} calls of this tenant in "
                    "progress; retry later"
                )
                raise Busy(msg, retry_after_s=ADMISSION_RETRY_S)
            self._admitted += 1
            self._by_tenant[tenant] += 1

    def enter(self) -> None:
        with self._idle:
            self._in_flight += 1

    def leave(self, tenant: str | None = None) -> None:
        """End a call; ``tenant`` when it was admitted (gives its slots back)."""
        with self._idle:
            self._in_flight -= 1
            if tenant is not None:
                self._admitted -= 1
                self._by_tenant[tenant] -= 1
                if self._by_tenant[tenant] <= 0:
                    del self._by_tenant[tenant]
            self._idle.notify_all()

    def in_flight(self) -> int:
        with self._idle:
            return self._in_flight

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until no authenticated call is in progress; False if ``timeout_s`` passed."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout_s)

    # ------------------------------------------------------------------ wrapping
    def intercept_service(
        self, continuation: Callable[[Any], Any], details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler: grpc.RpcMethodHandler[Any, Any] | None = continuation(details)
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
                    wrap(method, behavior, streaming_request=attr.startswith("stream_")),
                    request_deserializer=_lenient(handler.request_deserializer),
                    response_serializer=handler.response_serializer,
                )
        return handler

    def _unary(
        self, method: str, behavior: Callable[..., Any], *, streaming_request: bool
    ) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Any:
            call = _Call(self, method, context)
            try:
                admitted = call.admit()
                parsed = _parsed_stream(request) if streaming_request else _parsed(request)
                return _fits(behavior(parsed, admitted))
            except Exception as e:
                call.fail(e)
                raise
            finally:
                call.finish()

        return handle

    def _streaming(
        self, method: str, behavior: Callable[..., Any], *, streaming_request: bool
    ) -> Callable[..., Any]:
        def handle(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            call = _Call(self, method, context)
            try:
                admitted = call.admit()
                parsed = _parsed_stream(request) if streaming_request else _parsed(request)
                for reply in behavior(parsed, admitted):
                    yield _fits(reply)
            except GeneratorExit:  # the client went away while we were streaming
                call.code = "CANCELLED"
                raise
            except Exception as e:
                call.fail(e)
                raise
            finally:
                call.finish()

        return handle


def _certificate_name(context: grpc.ServicerContext) -> str | None:
    """The verified client certificate's common name (mutual TLS), if any."""
    names: bytes | list[bytes] = context.auth_context().get("x509_common_name") or []
    first = names if isinstance(names, bytes) else (names[0] if names else None)
    return first.decode("utf-8", "replace") if first else None


def _code_of(context: grpc.ServicerContext) -> grpc.StatusCode | None:
    """The status a handler set or aborted with (grpc's context has ``code()``; the stubs
    do not declare it)."""
    code: grpc.StatusCode | None = context.code()  # type: ignore[attr-defined]
    return code


def _host(peer: str) -> str:
    """The address part of a gRPC peer string (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``)."""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rpartition(":")[0] or rest
    return peer
