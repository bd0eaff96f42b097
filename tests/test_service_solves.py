"""Solves under pressure: deadlines and cancellation stop the solve (the worker's CPU goes idle),
a full queue refuses at once, and health answers fast while every worker is busy.

A stopped solve's worker is killed; the warm spare takes its place and a new spare starts,
spending its first seconds starting Python and importing. So "the solve stopped" is measured on
the solver worker that ran it (asked of the pool, never guessed from the process tree), and
"nothing runs any more" waits until every worker has idled once (``_ready_and_idle``): a running
solve never idles, a spare that is importing does once it is done (that made these tests flaky on
2 cores).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from optimizer._pb.procurement.v1 import service_pb2
from optimizer.service.errors import DeadlineExceeded
from optimizer.service.pool import WorkerPool
from optimizer.service.server import Service
from tests.service_support import (
    READY_TIMEOUT_S,
    Stubs,
    health_status,
    idle_within,
    long_optimize,
    small_estimate,
    start,
)

pytestmark = pytest.mark.slow  # starts a server and kills workers: about 15 s on 2 cores


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, str]]:
    service, address = start(tmp_path_factory.mktemp("solves"), workers=1, queue_size=1)
    yield service, address
    service.shutdown(1)


@pytest.fixture(scope="module")
def stubs(served: tuple[Service, str]) -> Iterator[Stubs]:
    with grpc.insecure_channel(served[1]) as channel:
        yield Stubs(channel)


@pytest.fixture
def pool(served: tuple[Service, str]) -> WorkerPool:
    return served[0]._pool


def _solver(pool: WorkerPool) -> int:
    """The solver lane's one worker (the pool lists it before the cheap lane's)."""
    return pool.pids()[0][0]


def _solving(pool: WorkerPool, before_s: float = 60.0) -> int:
    """The solver worker once it has taken a job and uses CPU on it (a spare that took a killed
    worker's place may still be importing: the job is then sent and runs next)."""
    deadline = time.monotonic() + before_s
    while time.monotonic() < deadline:
        if pool.stats().busy and not idle_within([_solver(pool)], 0.5, busy_below_s=0.1):
            return _solver(pool)
        time.sleep(0.05)
    raise AssertionError("no worker started solving")


def _restarts(stubs: Stubs) -> int:
    return stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5).worker_restarts


def _ready_and_idle(stubs: Stubs, pool: WorkerPool, within_s: float = 10.0) -> bool:
    """Whether nothing runs any more: first no job is running or queued (a cancelled job
    leaves the queue when the feeder reaches it); then an estimate is still answered; then
    every worker, the spare too, idles within READY_TIMEOUT_S. A solve never idles; a new
    spare does once it has imported."""
    deadline = time.monotonic() + within_s
    while True:
        metrics = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5)
        if (metrics.workers_busy, metrics.queue_depth) == (0, 0):
            break
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    stubs.optimizer.Estimate(small_estimate(), timeout=READY_TIMEOUT_S)
    workers, spare = pool.pids()
    return idle_within([*workers, *([spare] if spare else [])], READY_TIMEOUT_S)


def _fast_health(stubs: Stubs) -> float:
    started = time.monotonic()
    assert health_status(stubs) == "SERVING"
    return time.monotonic() - started


def test_a_call_ends_by_its_deadline_and_its_solve_stops(stubs: Stubs, pool: WorkerPool) -> None:
    """Asks for 120 s of solver time with a 2 s deadline: the solver gets what the deadline
    leaves, and whatever is still running when it passes is killed."""
    solving = _solver(pool)  # idle, ready: it takes the call
    started = time.monotonic()
    try:
        reply = stubs.optimizer.Optimize(long_optimize(), timeout=2.0)
        assert reply.solve_time_s < 2.0
    except grpc.RpcError as e:
        assert e.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 2.5
    assert _fast_health(stubs) < 0.1
    assert idle_within([solving], 2.0)


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


def test_a_cancelled_call_stops_the_solve_and_health_stays_fast(
    stubs: Stubs, pool: WorkerPool
) -> None:
    restarts = _restarts(stubs)
    future = stubs.optimizer.Optimize.future(long_optimize(), timeout=60)
    solving = _solving(pool)
    assert _fast_health(stubs) < 0.1
    future.cancel()
    assert idle_within([solving], 2.0)
    assert future.cancelled()
    deadline = time.monotonic() + 5
    while _restarts(stubs) == restarts and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _restarts(stubs) == restarts + 1


def test_a_cancelled_stream_stops_the_solve(stubs: Stubs, pool: WorkerPool) -> None:
    events = stubs.optimizer.OptimizeStream(long_optimize(), timeout=60)
    assert next(events).progress.phase == "queued"
    solving = _solving(pool)
    events.cancel()
    assert idle_within([solving], 2.0)


def test_a_cancelled_batch_stops_its_solve_and_starts_no_other(
    stubs: Stubs, pool: WorkerPool
) -> None:
    before = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5)
    scenarios = [long_optimize() for _ in range(3)]
    for i, scenario in enumerate(scenarios):
        scenario.request_id = f"long-{i}"
    results = stubs.optimizer.BatchOptimize(
        service_pb2.BatchOptimizeRequest(scenarios=scenarios), timeout=60
    )
    solving = _solving(pool)
    results.cancel()
    assert idle_within([solving], 2.0)
    time.sleep(1.0)  # long enough for a next scenario to be queued and started, were it sent
    after = stubs.optimizer.GetMetrics(service_pb2.GetMetricsRequest(), timeout=5)
    assert (after.workers_busy, after.queue_depth) == (0, 0)
    assert after.solves == before.solves
    assert after.worker_restarts == before.worker_restarts + 1
    assert _ready_and_idle(stubs, pool)


def test_a_full_queue_refuses_at_once_while_health_answers(stubs: Stubs, pool: WorkerPool) -> None:
    running = stubs.optimizer.Optimize.future(long_optimize(), timeout=60)
    _solving(pool)
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
    assert _ready_and_idle(stubs, pool)
