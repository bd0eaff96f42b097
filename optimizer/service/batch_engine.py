"""The batch runner's engine inside the service: scenarios run as jobs of the service's own
worker pool, so a batch call obeys the pool's size, queue, deadlines and cancellation.

A second process pool inside the server would start processes next to gRPC threads (fork and
gRPC do not mix, shared/reliability.md B1) and escape those bounds (B2). Each job carries its
scenario and its catalog's canonical bytes; the worker runs ``optimizer.batch.tasks.
run_scenario``, the same task ``procure batch`` runs on its engines, and decodes a catalog
once per worker process.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Generator, Iterable, Mapping
from dataclasses import asdict

from optimizer.batch.engines import Engine
from optimizer.batch.spec import Scenario
from optimizer.batch.tasks import TaskResult, catalog_for, failed_result, run_scenario
from optimizer.errors import ProcurementError
from optimizer.service import limits
from optimizer.service.errors import Cancelled, DeadlineExceeded
from optimizer.service.jobs import SCENARIO_JOB
from optimizer.service.pool import Job, WorkerPool

_POLL_S = 0.02
# Codes of a job stopped because its call ended: they end the run, not just a scenario.
_CALL_ENDED = (Cancelled.grpc_code, DeadlineExceeded.grpc_code)


def scenario_payload(
    scenario: Scenario, catalog_data: bytes, timeout_s: float | None, deadline: float | None
) -> bytes:
    """A scenario job: one JSON line (the scenario, its timeout, the call's deadline), then
    the catalog's bytes."""
    head = json.dumps({"scenario": asdict(scenario), "timeout_s": timeout_s, "deadline": deadline})
    return head.encode() + b"\n" + catalog_data


def run_scenario_job(payload: bytes) -> bytes:
    """Worker side of a scenario job: ``run_scenario`` (which never raises), as JSON.

    The catalog is decoded first, so that the solve's timeout, taken from the call's
    deadline, starts with the solve. The deadline is a ``time.monotonic()`` value of the
    server, which shares that clock with its workers (processes on the same machine)."""
    head, _, catalog_data = payload.partition(b"\n")
    doc = json.loads(head)
    scenario = Scenario(**doc["scenario"])
    with contextlib.suppress(Exception):  # a bad catalog is run_scenario's error row
        catalog_for(scenario.catalog_id, catalog_data)
    timeout_s = _timeout_s(doc["timeout_s"], doc["deadline"])
    return json.dumps(asdict(run_scenario(scenario, catalog_data, timeout_s))).encode()


def _timeout_s(timeout_s: float | None, deadline: float | None) -> float | None:
    """The batch's per-task timeout, cut to what the call's deadline leaves a solve now."""
    budget = limits.solver_seconds(None if deadline is None else deadline - time.monotonic())
    if budget is None:
        return timeout_s
    return budget if timeout_s is None else min(timeout_s, budget)


def task_result(data: bytes) -> TaskResult:
    """The TaskResult a scenario job sent back."""
    return TaskResult(**json.loads(data))


class ServiceEngine(Engine):
    """Runs one call's scenarios on ``pool`` for ``tenant``, at most ``pool.size`` at a time.

    ``stop`` is the call's: set when the client cancels, it ends every job of the call; a
    job still running at ``deadline`` (a ``time.monotonic()`` value) is killed. Either ends
    ``run`` with Cancelled or DeadlineExceeded, since no result of the call can reach the
    client any more. A scenario's solve gets at most the time the deadline leaves it when it
    starts (the ``timeout_s`` of ``run_scenario``), so it reports its best design in time.
    One engine per call.
    """

    def __init__(
        self,
        pool: WorkerPool,
        tenant: str,
        *,
        deadline: float | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        self._pool, self._tenant, self._deadline = pool, tenant, deadline
        self._stop = stop if stop is not None else threading.Event()
        self.workers = pool.size

    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        todo = iter(scenarios)
        running: list[tuple[Job, Scenario]] = []
        try:
            while True:
                self._raise_if_stopped()
                while len(running) < self.workers and (s := next(todo, None)) is not None:
                    running.append((self._submit(s, catalogs[s.catalog_id], timeout_s), s))
                if not running:
                    return
                finished: list[tuple[Job, Scenario]] = []
                waiting: list[tuple[Job, Scenario]] = []
                for entry in running:
                    (finished if entry[0].done.is_set() else waiting).append(entry)
                running = waiting
                if not finished:
                    time.sleep(_POLL_S)
                for job, s in finished:
                    yield self._outcome(job, s, catalogs[s.catalog_id])
        finally:
            if running:  # the consumer stopped early: end the call's jobs still in the pool
                self._stop.set()

    def _submit(self, s: Scenario, catalog_data: bytes, timeout_s: float | None) -> Job:
        """Queue ``s``, waiting for room in the pool's queue (or for the call to end); a call
        whose deadline leaves no time to solve ends here (DeadlineExceeded)."""
        if self._deadline is not None:
            limits.solver_seconds(self._deadline - time.monotonic())
        payload = scenario_payload(s, catalog_data, timeout_s, self._deadline)
        return self._pool.submit(
            SCENARIO_JOB, payload, self._tenant, deadline=self._deadline, stop=self._stop, wait=True
        )

    def _outcome(self, job: Job, s: Scenario, catalog_data: bytes) -> TaskResult:
        """The job's result; a worker that died or failed is the scenario's error row, as on
        any engine. Cancellation and the deadline end the call instead."""
        try:
            return task_result(job.result())
        except ProcurementError as e:
            if e.grpc_code in _CALL_ENDED:  # also a worker's DeadlineExceeded (WorkerError)
                raise
            return failed_result(s, e, catalog_data)

    def _raise_if_stopped(self) -> None:
        if not self._stop.is_set():
            return
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise DeadlineExceeded("the call's deadline passed; the batch was stopped")
        raise Cancelled("the call was cancelled; the batch was stopped")
