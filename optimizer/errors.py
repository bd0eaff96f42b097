"""One error hierarchy for the whole core.

The service maps ``grpc_code`` to a gRPC status in one place and the CLI maps
``exit_code`` to a process exit status in one place; nothing else translates errors.
Messages never carry prices or credentials.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldViolation:
    """One bad field of a request or file: where (``field``) and what was wrong with it.

    Travels unchanged from a worker to the client (as ``google.rpc.BadRequest`` on the wire),
    so a remote caller learns the same fields an embedded one does.
    """

    field: str
    description: str


class ProcurementError(Exception):
    """Root of every error the core raises on purpose."""

    grpc_code: str = "INTERNAL"
    exit_code: int = 1
    retry_after_s: float | None = None
    """Set when the same request may succeed later: how long to wait first (busy, not wrong)."""

    def violations(self) -> list[FieldViolation]:
        """The fields this error blames, if any (only invalid input blames fields)."""
        return []


class InvalidInput(ProcurementError, ValueError):
    """A request or file is malformed; the message names the field and what was expected."""

    grpc_code = "INVALID_ARGUMENT"
    exit_code = 3

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        violations: list[FieldViolation] | None = None,
    ) -> None:
        self.field = field
        self._violations = violations
        self.problem = message
        super().__init__(f"{field}: {message}" if field else message)

    def violations(self) -> list[FieldViolation]:
        if self._violations is not None:
            return list(self._violations)
        return [FieldViolation(self.field, self.problem)] if self.field else []


@dataclass(frozen=True)
class Finding:
    """One finding of catalog validation, located as the user sees it in the file.

    ``row`` is the 1-based line (CSV) or sheet row (XLSX) including the header row,
    or ``None`` for a table- or catalog-level finding.
    """

    severity: str  # "error" | "warning"
    table: str
    row: int | None
    column: str | None
    value: str | None
    expected: str

    def __str__(self) -> str:
        where = self.table
        if self.row is not None:
            where += f", row {self.row}"
        if self.column:
            where += f", column {self.column}"
        got = "" if self.value is None else f": got {self.value!r}"
        return f"{self.severity}: {where}{got}; expected {self.expected}"

    def violation(self) -> FieldViolation:
        """This finding as a field violation: ``table[row].column`` and what was expected."""
        where = self.table
        if self.row is not None:
            where += f"[{self.row}]"
        if self.column:
            where += f".{self.column}"
        got = "" if self.value is None else f"got {self.value!r}; "
        return FieldViolation(where, f"{got}expected {self.expected}")


class CatalogInvalid(InvalidInput):
    """A catalog failed validation; ``problems`` lists every error and warning found."""

    def __init__(self, problems: list[Finding]) -> None:
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        lines = "\n".join(str(p) for p in errors)
        super().__init__(
            f"catalog has {len(errors)} error(s):\n{lines}",
            violations=[p.violation() for p in errors],
        )


class NotFound(ProcurementError, LookupError):
    """The named catalog, version or job does not exist for this tenant."""

    grpc_code = "NOT_FOUND"
    exit_code = 3


class LimitExceeded(ProcurementError):
    """A documented size or count limit was exceeded; checked before any work."""

    grpc_code = "RESOURCE_EXHAUSTED"
    exit_code = 3


class Busy(LimitExceeded):
    """The server is at capacity for now; the same request may be retried after
    ``retry_after_s`` (sent as ``google.rpc.RetryInfo``), unlike any other LimitExceeded."""

    def __init__(self, message: str, *, retry_after_s: float) -> None:
        self.retry_after_s = retry_after_s
        super().__init__(message)


class Unauthenticated(ProcurementError):
    grpc_code = "UNAUTHENTICATED"
    exit_code = 5


class PermissionDenied(ProcurementError):
    grpc_code = "PERMISSION_DENIED"
    exit_code = 5


class SolverUnavailable(ProcurementError):
    """The requested solver backend is not installed on this machine."""

    grpc_code = "UNAVAILABLE"
    exit_code = 1


class SolverFailed(ProcurementError):
    """A backend crashed or returned something the verifier rejects."""

    grpc_code = "INTERNAL"
    exit_code = 1
