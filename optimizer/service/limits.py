"""Every size and count the service refuses to exceed, checked before any work.

docs/service.md lists them in a table; an exceeded limit is RESOURCE_EXHAUSTED
(shared/reliability.md A3, G1). What a request may ask for (top_k, solver time, every number
and name) is not a limit of the service but of the request: InvalidInput from
optimizer.request_limits and the optimizer, the same code embedded and remote.
"""

from __future__ import annotations

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.catalog.io import RawCatalog
from optimizer.catalog.schema import FILE_TABLES, MAX_FILE_BYTES, MAX_ROWS_PER_TABLE
from optimizer.catalog.store import MAX_CATALOG_BYTES
from optimizer.errors import LimitExceeded
from optimizer.optimize.convert import DEFAULT_TIME_LIMIT_S, MAX_TIME_LIMIT_S
from optimizer.service.errors import DeadlineExceeded

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""Largest single request or response message (gRPC's own default); uploads stream in chunks."""
MAX_UPLOAD_BYTES = MAX_CATALOG_BYTES
"""Largest upload: the bytes of all its files together."""
MAX_UPLOAD_FILE_BYTES = MAX_FILE_BYTES
"""Largest single file of an upload (a table file or a workbook)."""
MAX_UPLOAD_FILES = len(FILE_TABLES)
"""Most files one upload may carry: one per table."""
MAX_CATALOG_ROWS = MAX_ROWS_PER_TABLE
"""Most data rows one table of an uploaded catalog may hold."""
MAX_BATCH_RUNS = 100
"""Most (scenario, catalog) runs one BatchOptimize call may ask for."""
MAX_SOLVER_SECONDS = MAX_TIME_LIMIT_S
"""Longest solver time limit a request may ask for."""
DEFAULT_SOLVER_SECONDS = DEFAULT_TIME_LIMIT_S
"""Solver time limit when the request gives none."""
DEADLINE_MARGIN_S = 0.5
"""Time kept back from a call's deadline for search, verification and the reply."""
MIN_SOLVER_SECONDS = 0.2
"""A call whose deadline leaves less solver time than this fails at once (DEADLINE_EXCEEDED)."""
EXPORT_CHUNK_BYTES = 1024 * 1024
"""Size of the pieces ExportCatalog streams a file in."""


def check_upload_file(file_name: str, file_bytes: int, files: int, total_bytes: int) -> None:
    """Refuse an upload as soon as its bytes or files exceed the limits, before parsing."""
    if files > MAX_UPLOAD_FILES:
        msg = f"upload carries more than {MAX_UPLOAD_FILES} files; expected one per table"
        raise LimitExceeded(msg)
    if file_bytes > MAX_UPLOAD_FILE_BYTES:
        msg = f"file {file_name!r} exceeds {MAX_UPLOAD_FILE_BYTES} bytes"
        raise LimitExceeded(msg)
    if total_bytes > MAX_UPLOAD_BYTES:
        msg = f"upload exceeds {MAX_UPLOAD_BYTES} bytes in total"
        raise LimitExceeded(msg)


def check_catalog_rows(raw: RawCatalog) -> None:
    """Refuse a table with more rows than allowed before validating any cell.

    The reader keeps at most MAX_ROWS_PER_TABLE + 1 rows, enough to tell.
    """
    for table in raw.tables.values():
        if len(table.rows) > MAX_CATALOG_ROWS:
            msg = f"table {table.name!r} has more than {MAX_CATALOG_ROWS} rows"
            raise LimitExceeded(msg)


def check_batch_runs(runs: int) -> None:
    if runs > MAX_BATCH_RUNS:
        msg = f"batch asks for {runs} runs (scenarios x catalogs); at most {MAX_BATCH_RUNS}"
        raise LimitExceeded(msg)


def solver_seconds(remaining_s: float | None) -> float | None:
    """Solver time a call with ``remaining_s`` left can give a solve: that minus
    DEADLINE_MARGIN_S (reliability.md A1), None without a deadline. Raises DeadlineExceeded
    when it is below MIN_SOLVER_SECONDS, so a hopeless solve never starts."""
    if remaining_s is None:
        return None
    available = remaining_s - DEADLINE_MARGIN_S
    if available < MIN_SOLVER_SECONDS:
        msg = (
            f"the call's deadline leaves {max(0.0, remaining_s):.2f} s; a solve needs at "
            f"least {MIN_SOLVER_SECONDS + DEADLINE_MARGIN_S:g} s"
        )
        raise DeadlineExceeded(msg)
    return available


def with_solver_deadline(
    request: optimize_pb2.OptimizeRequest, remaining_s: float | None
) -> optimize_pb2.OptimizeRequest:
    """``request`` with its solver time limit cut to ``solver_seconds(remaining_s)``;
    unchanged when the call has no deadline."""
    available = solver_seconds(remaining_s)
    if available is None:
        return request
    requested = (
        request.solver.time_limit_s
        if request.solver.HasField("time_limit_s")
        else DEFAULT_SOLVER_SECONDS
    )
    if requested <= available:
        return request
    capped = optimize_pb2.OptimizeRequest()
    capped.CopyFrom(request)
    capped.solver.time_limit_s = available
    return capped
