"""Admission under hostile load: one tenant holding every slot it can get leaves health and
other tenants unaffected; busy refusals say when to retry; silent uploads are cancelled."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from optimizer._pb.procurement.v1 import catalog_pb2, service_pb2
from optimizer.service import rpc_status
from optimizer.service.config import DEFAULT_MAX_CALLS_PER_TENANT
from tests.service_support import (
    TOKEN_A,
    TOKEN_B,
    Stubs,
    bearer,
    health_status,
    long_optimize,
    small_estimate,
    start,
    write_tokens,
)

A, B = bearer(TOKEN_A), bearer(TOKEN_B)
HOSTILE_CALLS = 70
HEALTH_WITHIN_S = 0.1


@pytest.fixture
def hostile_server(tmp_path: Path) -> Iterator[tuple[str, Stubs]]:
    """Defaults as ``procure serve`` has them, except one solver and a long upload idle time
    (the uploads must stay open while health is measured)."""
    service, address = start(
        tmp_path, tokens_file=write_tokens(tmp_path), queue_size=8, upload_idle_s=60.0
    )
    with grpc.insecure_channel(address) as channel:
        yield address, Stubs(channel)
    service.shutdown(0)


def _health_latency_s(stubs: Stubs) -> float:
    """The best of three health checks (a single one may lose a scheduling slot)."""
    timings = []
    for _ in range(3):
        started = time.monotonic()
        assert health_status(stubs) == "SERVING"
        timings.append(time.monotonic() - started)
    return min(timings)


def _silent(release: threading.Event) -> Iterator[catalog_pb2.UploadCatalogRequest]:
    release.wait(60)
    return
    yield  # a generator that sends nothing until released


def _refusals(futures: list[Any], within_s: float) -> list[grpc.RpcError]:
    """The calls among ``futures`` that ended (refused) within ``within_s``."""
    deadline = time.monotonic() + within_s
    refused = []
    for f in futures:
        try:
            f.result(timeout=max(0.01, deadline - time.monotonic()))
        except grpc.FutureTimeoutError:
            continue
        except grpc.RpcError as e:
            refused.append(e)
    return refused


def test_seventy_idle_uploads_leave_health_and_other_tenants_served(
    hostile_server: tuple[str, Stubs],
) -> None:
    _, stubs = hostile_server
    release = threading.Event()
    uploads = [
        stubs.catalogs.UploadCatalog.future(_silent(release), metadata=A, timeout=60)
        for _ in range(HOSTILE_CALLS)
    ]
    try:
        refused = _refusals(uploads, within_s=5.0)
        assert len(refused) == HOSTILE_CALLS - DEFAULT_MAX_CALLS_PER_TENANT
        assert {e.code() for e in refused} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        assert _health_latency_s(stubs) < HEALTH_WITHIN_S
        reply = stubs.optimizer.Estimate(small_estimate(), metadata=B, timeout=30)
        assert reply.training_time_hours > 0
    finally:
        release.set()


def test_a_busy_refusal_carries_a_retry_hint(hostile_server: tuple[str, Stubs]) -> None:
    _, stubs = hostile_server
    release = threading.Event()
    uploads = [
        stubs.catalogs.UploadCatalog.future(_silent(release), metadata=A, timeout=60)
        for _ in range(DEFAULT_MAX_CALLS_PER_TENANT + 1)
    ]
    try:
        (refused,) = _refusals(uploads, within_s=5.0)
        trailers = dict(refused.trailing_metadata())  # type: ignore[attr-defined]
        rich = rpc_status.from_trailers(refused.trailing_metadata())  # type: ignore[attr-defined]
        assert rich.retry_after_s is not None and rich.retry_after_s > 0
        assert int(trailers[rpc_status.PUSHBACK_KEY]) == round(rich.retry_after_s * 1000)
    finally:
        release.set()


def test_seventy_batches_leave_health_and_other_tenants_served(
    hostile_server: tuple[str, Stubs],
) -> None:
    _, stubs = hostile_server
    batch = service_pb2.BatchOptimizeRequest(scenarios=[long_optimize()])
    calls = [
        stubs.optimizer.BatchOptimize(batch, metadata=A, timeout=30) for _ in range(HOSTILE_CALLS)
    ]
    codes: list[grpc.StatusCode] = []

    def drain(call: Any) -> None:
        try:
            list(call)
            codes.append(grpc.StatusCode.OK)
        except grpc.RpcError as e:
            codes.append(e.code())

    threads = [threading.Thread(target=drain, args=(c,), daemon=True) for c in calls]
    for t in threads:
        t.start()
    try:
        time.sleep(2.0)  # the refusals are immediate; the admitted batches are running
        assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) >= (
            HOSTILE_CALLS - DEFAULT_MAX_CALLS_PER_TENANT
        )
        assert _health_latency_s(stubs) < HEALTH_WITHIN_S
        reply = stubs.optimizer.Estimate(small_estimate(), metadata=B, timeout=30)
        assert reply.training_time_hours > 0
    finally:
        for c in calls:
            c.cancel()


def test_an_upload_that_sends_nothing_is_cancelled_after_the_idle_time(tmp_path: Path) -> None:
    service, address = start(tmp_path, upload_idle_s=0.5)
    release = threading.Event()
    try:
        with grpc.insecure_channel(address) as channel:
            stubs = Stubs(channel)
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as e:
                stubs.catalogs.UploadCatalog(_silent(release), timeout=30)
            assert e.value.code() is grpc.StatusCode.CANCELLED
            assert time.monotonic() - started < 3.0
    finally:
        release.set()
        service.shutdown(0)


def test_a_batch_is_refused_at_once_while_the_solver_queue_is_full(tmp_path: Path) -> None:
    service, address = start(tmp_path, queue_size=1)
    try:
        with grpc.insecure_channel(address) as channel:
            stubs = Stubs(channel)
            running = stubs.optimizer.Optimize.future(long_optimize(), timeout=60)
            waiting = None
            deadline = time.monotonic() + 10
            while waiting is None and time.monotonic() < deadline:
                reply = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest())
                if reply.workers_busy == 1:
                    waiting = stubs.optimizer.Optimize.future(long_optimize(), timeout=60)
                time.sleep(0.05)
            while stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest()).queue_depth < 1:
                time.sleep(0.05)
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as e:
                list(
                    stubs.optimizer.BatchOptimize(
                        service_pb2.BatchOptimizeRequest(scenarios=[long_optimize()]), timeout=30
                    )
                )
            assert e.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert time.monotonic() - started < 1.0
            rich = rpc_status.from_trailers(e.value.trailing_metadata())  # type: ignore[attr-defined]
            assert rich.retry_after_s is not None
            running.cancel()
            if waiting is not None:
                waiting.cancel()
    finally:
        service.shutdown(0)
