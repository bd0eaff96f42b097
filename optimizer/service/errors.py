"""Errors only the service raises. They join the core hierarchy (optimizer.errors), so the one
mapping in optimizer.service.interceptors turns them into status codes like any other."""

from __future__ import annotations

from optimizer.errors import FieldViolation, ProcurementError


class Cancelled(ProcurementError):
    """The client cancelled the call; its solve was stopped."""

    grpc_code = "CANCELLED"


class DeadlineExceeded(ProcurementError):
    """The call's deadline passed (or leaves too little time to solve anything)."""

    grpc_code = "DEADLINE_EXCEEDED"


class Unavailable(ProcurementError):
    """The server is draining for shutdown; retry on another instance."""

    grpc_code = "UNAVAILABLE"


class WorkerError(ProcurementError):
    """An error raised in a worker process, carried back as its status code, message and
    field violations (so a remote caller sees the fields an embedded one would)."""

    def __init__(
        self, grpc_code: str, message: str, violations: tuple[FieldViolation, ...] = ()
    ) -> None:
        self.grpc_code = grpc_code
        self._violations = list(violations)
        super().__init__(message)

    def violations(self) -> list[FieldViolation]:
        return list(self._violations)
