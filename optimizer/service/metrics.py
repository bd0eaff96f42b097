"""Counters the GetMetrics RPC reports: the caller's own calls per method and status, their
durations, and the pool (shared by every tenant, so reported to each)."""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from optimizer._pb.procurement.v1 import service_pb2
from optimizer.service.pool import PoolStats


@dataclass
class _MethodStats:
    codes: Counter[str] = field(default_factory=Counter)
    duration_s_total: float = 0.0
    duration_s_max: float = 0.0


class Metrics:
    """Thread-safe per-tenant, per-method call counters; the interceptor records every
    finished call (calls refused before authentication count under tenant ``-``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._methods: dict[tuple[str, str], _MethodStats] = {}
        self._started = time.monotonic()

    def record(self, method: str, code: str, duration_s: float, *, tenant: str = "-") -> None:
        with self._lock:
            stats = self._methods.setdefault((tenant, method), _MethodStats())
            stats.codes[code] += 1
            stats.duration_s_total += duration_s
            stats.duration_s_max = max(stats.duration_s_max, duration_s)

    def calls(self, tenant: str, method: str) -> dict[str, int]:
        """Calls of ``tenant`` to ``method`` so far, by status code name."""
        with self._lock:
            stats = self._methods.get((tenant, method))
            return dict(stats.codes) if stats else {}

    def to_proto(self, pool: PoolStats, tenant: str) -> service_pb2.GetMetricsResponse:
        """The pool and ``tenant``'s own calls (never another tenant's)."""
        out = service_pb2.GetMetricsResponse(
            workers=pool.workers,
            workers_busy=pool.busy,
            queue_depth=pool.queued,
            queue_capacity=pool.capacity,
            solves=pool.solves,
            solve_s_total=pool.solve_s_total,
            solve_s_max=pool.solve_s_max,
            worker_restarts=pool.restarts,
            uptime_s=time.monotonic() - self._started,
        )
        with self._lock:
            for (owner, method), stats in sorted(self._methods.items()):
                if owner != tenant:
                    continue
                total = sum(stats.codes.values())
                out.methods.add(
                    method=method,
                    requests=total,
                    errors=total - stats.codes["OK"],
                    codes=dict(stats.codes),
                    duration_s_total=stats.duration_s_total,
                    duration_s_max=stats.duration_s_max,
                )
        return out
