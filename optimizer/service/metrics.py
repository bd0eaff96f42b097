"""Counters the GetMetrics RPC reports: calls per method and status, durations, the pool."""

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
    """Thread-safe per-method call counters; the interceptor records every finished call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._methods: dict[str, _MethodStats] = {}
        self._started = time.monotonic()

    def record(self, method: str, code: str, duration_s: float) -> None:
        with self._lock:
            stats = self._methods.setdefault(method, _MethodStats())
            stats.codes[code] += 1
            stats.duration_s_total += duration_s
            stats.duration_s_max = max(stats.duration_s_max, duration_s)

    def to_proto(self, pool: PoolStats) -> service_pb2.GetMetricsResponse:
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
            for method, stats in sorted(self._methods.items()):
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
