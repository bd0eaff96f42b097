"""Solves under pressure: deadlines and cancellation stop the solve (the worker's CPU goes idle),
a full queue refuses at once, and health answers fast while every worker is busy.

A stopped solve's worker is killed and replaced; the replacement spends its first seconds
starting Python and importing. So "the solve stopped" is measured on the worker that ran it,
and "nothing runs any more" only once the replacement has reported ready by answering a job
(``_ready_and_idle``), never while it imports (that made these tests flaky on 2 cores).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from optimizer._pb.procurement.v1 import service_pb2
from optimizer.service.errors import DeadlineExceeded
from optimizer.service.pool import WorkerPool
from tests.service_support import (
    READY_TIMEOUT_S,
    Stubs,
    health_status,
    idle_within,
    long_optimize,
    serving,
    small_estimate,
    worker_pids,
)

pytestmark = pytest.mark.slow  # starts a server and kills workers: about 15 s on 2 cores


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    for address in serving(tmp_path_factory.mktemp("solves"), workers=1, queue_size=1):
        with grpc.insecure_channel(address) as channel:
            yield Stubs(channel)


def _busy_workers(before_s: float = 60.0) -> list[int]:
    """The worker processes once one of them is using CPU (a replacement worker may first
    have to start and import, which takes seconds on a loaded machine)."""
    deadline = time.monotonic() + before_s
    while time.monotonic() < deadline:
        pids = worker_pids(os.getpid())
        if pids and not idle_within(pids, 0.5, busy_below_s=0.1):
            return pids
    raise AssertionError("no worker started solving")


def _restarts(stubs: Stubs) -> int:
    return stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5).worker_restarts


def _ready_and_idle(stubs: Stubs, within_s: float = 10.0) -> bool:
    """Whether the workers are idle once ready: first no job is running or queued (a
    cancelled job leaves the queue when the feeder reaches it); then the module's one worker
    answers an estimate, so it has started and imported; then it must use no CPU."""
    deadline = time.monotonic() + within_s
    while True:
        metrics = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5)
        if (metrics.workers_busy, metrics.queue_depth) == (0, 0):
            break
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    stubs.optimizer.Estimate(small_estimate(), timeout=READY_TIMEOUT_S)
    return idle_within(worker_pids(os.getpid()), 2.0)


def _fast_health(stubs: Stubs) -> float:
    started = time.monotonic()
    assert health_status(stubs) == "SERVING"
    return time.monotonic() - started


def test_a_call_ends_by_its_deadline_and_its_solve_stops(stubs: Stubs) -> None:
    """Asks for 120 s of solver time with a 2 s deadline: the solver gets what the deadline
    leaves, and whatever is still running when it passes is killed."""
    solving = worker_pids(os.getpid())  # the module's one worker, ready: it takes the call
    started = time.monotonic()
    try:
        reply = stubs.optimizer.Optimize(long_optimize(), timeout=2.0)
        assert reply.solve_time_s < 2.0
    except grpc.RpcError as e:
        assert e.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 2.5
    assert _fast_health(stubs) < 0.1
    assert idle_within(solving, 2.0)


def test_a_job_past_its_deadline_is_killed(tmp_path: Path) -> None:
    pool = WorkerPool(1, 1, tmp_path)
    pool.start()
    try:
        started = time.monotonic()
        solving = pool._workers[0].process  # replaced by a fresh process after the kill
        job = pool.submit(
            "optimize", long_optimize().SerializeToString(), "default", deadline=started + 1.5
        )
        with pytest.raises(DeadlineExceeded):
            job.result()  # the worker was not told the deadline: the pool enforces it
        assert time.monotonic() - started < 2.5
        assert solving.poll() == -signal.SIGKILL  # killed and reaped before the job failed
        assert pool.stats().restarts == 1
    finally:
        pool.close()


def test_a_cancelled_call_stops_the_solve_and_health_stays_fast(stubs: Stubs) -> None:
    restarts = _restarts(stubs)
    future = stubs.optimizer.Optimize.future(long_optimize(), timeout=60)
    pids = _busy_workers()
    assert _fast_health(stubs) < 0.1
    future.cancel()
    assert idle_within(pids, 2.0)
    assert future.cancelled()
    deadline = time.monotonic() + 5
    while _restarts(stubs) == restarts and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _restarts(stubs) == restarts + 1


def test_a_cancelled_stream_stops_the_solve(stubs: Stubs) -> None:
    events = stubs.optimizer.OptimizeStream(long_optimize(), timeout=60)
    assert next(events).progress.phase == "queued"
    pids = _busy_workers()
    events.cancel()
    assert idle_within(pids, 2.0)


def test_a_cancelled_batch_stops_its_solve_and_starts_no_other(stubs: Stubs) -> None:
    before = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5)
    scenarios = [long_optimize() for _ in range(3)]
    for i, scenario in enumerate(scenarios):
        scenario.request_id = f"long-{i}"
    results = stubs.optimizer.BatchOptimize(
        service_pb2.BatchOptimizeRequest(scenarios=scenarios), timeout=60
    )
    pids = _busy_workers()
    results.cancel()
    assert idle_within(pids, 2.0)
    time.sleep(1.0)  # long enough for a next scenario to be queued and started, were it sent
    after = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5)
    assert (after.workers_busy, after.queue_depth) == (0, 0)
    assert after.solves == before.solves
    assert after.worker_restarts == before.worker_restarts + 1
    assert _ready_and_idle(stubs)


def test_a_full_queue_refuses_at_once_while_health_answers(stubs: Stubs) -> None:
    running = stubs.optimizer.Optimize.future(long_optimize(), timeout=60)
    _busy_workers()
    queued = stubs.optimizer.Optimize.future(long_optimize(), timeout=60)
    time.sleep(0.2)
    started = time.monotonic()
    with pytest.raises(grpc.RpcError) as e:
        stubs.optimizer.Optimize(long_optimize(), timeout=60)
    assert e.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert e.value.details() == "server busy: 1 solves running and 1 waiting; retry later"
    assert time.monotonic() - started < 0.5
    assert _fast_health(stubs) < 0.1
    queued.cancel()
    running.cancel()
    assert _ready_and_idle(stubs)
