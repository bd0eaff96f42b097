"""Solver worker processes with a bounded queue, deadlines, and cancellation by killing.

The processes are started (fork + exec, never a bare fork) before the gRPC server exists and
import nothing of grpc (shared/reliability.md B1): forking a process that runs gRPC threads
can hang. Each
worker runs one job at a time with one solver thread (no oversubscription, B2) and is replaced
after ``jobs_per_worker`` jobs (bounds slow leaks, B3).

A job that is cancelled (the client went away) or outlives its deadline is stopped by killing
its worker's process group, which also ends any CBC child, so the CPU goes idle at once (A6);
a warm spare worker (started earlier, its imports done) takes its place at once, and a new
spare starts in the background, so a cancel costs no cold start on the hot path. One thread
per worker feeds it jobs from its queue and watches for that, so a solve stops even when no
handler is waiting on it.

Cheap jobs (CHEAP_JOBS: estimates, upload parsing) have their own lane: their own queue and
worker(s), so they never wait behind solves (issue 15, fairness).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from optimizer.errors import Busy, FieldViolation, SolverFailed
from optimizer.service.errors import Cancelled, DeadlineExceeded, Unavailable, WorkerError

_POLL_S = 0.05
# How long a worker may take to exit after being asked to stop before it is killed.
_EXIT_WAIT_S = 2.0
CHEAP_JOBS = frozenset({"estimate", "parse_catalog"})
"""Job kinds that take milliseconds, not minutes: served by the cheap lane."""
CHEAP_QUEUE_SIZE = 32
# Retry hints sent with a busy refusal (google.rpc.RetryInfo), seconds.
RETRY_MIN_S = 0.5
RETRY_MAX_S = 30.0

# From a worker: ("progress", dict) | ("ok", bytes)
#   | ("error", code name, message, [(field, description), ...]).
# To the handler: the same, with errors as ("error", exception).
Event = tuple[Any, ...]


@dataclass
class Job:
    """One unit of work for a worker; the handler that submitted it reads ``events``."""

    kind: str
    payload: bytes
    tenant: str
    deadline: float | None  # time.monotonic() value, or None
    stop: threading.Event = field(default_factory=threading.Event)
    events: queue.SimpleQueue[Event] = field(default_factory=queue.SimpleQueue)
    done: threading.Event = field(default_factory=threading.Event)  # the last event is queued

    def finish(self, event: Event) -> None:
        self.events.put(event)
        self.done.set()

    def fail(self, error: Exception) -> None:
        self.finish(("error", error))

    def stream(self, heartbeat_s: float | None = None) -> Generator[dict[str, Any], None, bytes]:
        """Progress reports as they come; returns the result bytes (StopIteration.value).

        With ``heartbeat_s``, a quiet spell that long yields ``{"phase": "running",
        "elapsed_s": ...}`` (keeps a long stream visibly alive). Returns promptly once
        ``stop`` is set, whether or not a worker has the job yet.
        """
        started = last = time.monotonic()
        while True:
            try:
                event = self.events.get(timeout=_POLL_S)
            except queue.Empty:
                if self.stop.is_set():
                    raise self._stopped() from None
                now = time.monotonic()
                if heartbeat_s is not None and now - last >= heartbeat_s:
                    last = now
                    yield {"phase": "running", "elapsed_s": now - started}
                continue
            last = time.monotonic()
            if event[0] == "progress":
                yield event[1]
            elif event[0] == "ok":
                result: bytes = event[1]
                return result
            else:
                raise event[1]

    def result(self) -> bytes:
        """The result bytes, once the job is done (progress reports are skipped)."""
        events = self.stream()
        while True:
            try:
                next(events)
            except StopIteration as done:
                result: bytes = done.value
                return result

    def expired(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def _stopped(self) -> Exception:
        if self.expired():
            return DeadlineExceeded("the call's deadline passed; the solve was stopped")
        return Cancelled("the call was cancelled; the solve was stopped")


@dataclass
class PoolStats:
    workers: int
    busy: int
    queued: int
    capacity: int
    solves: int
    solve_s_total: float
    solve_s_max: float
    restarts: int


class _Worker:
    """One worker process (``python -m optimizer.service.jobs``) and our end of its socket.

    A plain child process rather than a multiprocessing one: spawn-mode multiprocessing
    re-imports the parent's ``__main__`` in every worker, which may be anything.
    """

    def __init__(self, data_dir: str | None) -> None:
        self._data_dir = data_dir
        self.jobs = 0
        self.conn: Connection
        self.process: subprocess.Popen[bytes]
        self.start()

    def start(self) -> None:
        ours, theirs = socket.socketpair()
        args = [sys.executable, "-m", "optimizer.service.jobs", "--fd", str(theirs.fileno())]
        if self._data_dir is not None:
            args += ["--data-dir", self._data_dir]
        root = str(Path(__file__).resolve().parents[2])  # the folder holding ``optimizer``
        path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
        with theirs:
            # Own session: a kill of its group also ends any solver child; Ctrl-C on the
            # server's terminal does not reach it.
            self.process = subprocess.Popen(
                args,
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, "PYTHONPATH": path},
            )
        self.conn, self.jobs = Connection(ours.detach()), 0

    def alive(self) -> bool:
        return self.process.poll() is None

    def adopt(self, other: _Worker) -> None:
        """Take over ``other``'s (already running, warm) process."""
        self.process, self.conn, self.jobs = other.process, other.conn, 0

    def kill(self) -> None:
        """Kill the worker and everything it started."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        try:
            self.process.wait(_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(_EXIT_WAIT_S)
        self.conn.close()

    def stop(self) -> None:
        """Ask an idle worker to exit; kill it if it does not."""
        with contextlib.suppress(OSError):
            self.conn.send(None)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(_EXIT_WAIT_S)
        self.kill()


class WorkerPool:
    """``workers`` solver processes fed from a queue of at most ``queue_size`` waiting jobs."""

    def __init__(
        self,
        workers: int,
        queue_size: int,
        data_dir: str | Path | None,
        *,
        jobs_per_worker: int = 500,
        cheap_workers: int = 0,
        warm_spare: bool = False,
    ) -> None:
        self.size = workers
        self.queue_size = queue_size
        self.cheap_workers = cheap_workers
        self._data_dir = None if data_dir is None else str(data_dir)
        self._jobs_per_worker = jobs_per_worker
        self._warm_spare = warm_spare
        self._queue: queue.Queue[Job] = queue.Queue(maxsize=queue_size)
        self._cheap_queue: queue.Queue[Job] = queue.Queue(maxsize=CHEAP_QUEUE_SIZE)
        self._lock = threading.Lock()
        self._busy = self._solves = self._restarts = 0
        self._solve_s_total = self._solve_s_max = 0.0
        self._workers: list[_Worker] = []
        self._spare: _Worker | None = None
        self._threads: list[threading.Thread] = []
        self._closed = threading.Event()

    def start(self) -> None:
        """Start the processes (call before creating the gRPC server) and their feeders."""
        lanes = [(self._queue, "solver")] * self.size
        lanes += [(self._cheap_queue, "cheap")] * self.cheap_workers
        self._workers = [_Worker(self._data_dir) for _ in lanes]
        if self._warm_spare:
            self._spare = _Worker(self._data_dir)
        for i, (worker, (jobs, lane)) in enumerate(zip(self._workers, lanes, strict=True)):
            t = threading.Thread(
                target=self._feed, args=(worker, jobs), name=f"{lane}-feed-{i}", daemon=True
            )
            t.start()
            self._threads.append(t)

    def submit(
        self,
        kind: str,
        payload: bytes,
        tenant: str,
        *,
        deadline: float | None,
        stop: threading.Event | None = None,
        wait: bool = False,
    ) -> Job:
        """Queue a job. A full queue raises LimitExceeded at once, or with ``wait`` blocks
        until there is room (or ``stop`` is set)."""
        job = Job(kind, payload, tenant, deadline)
        if stop is not None:
            job.stop = stop
        cheap = kind in CHEAP_JOBS and self.cheap_workers > 0
        jobs = self._cheap_queue if cheap else self._queue
        while True:
            try:
                jobs.put(job, block=wait, timeout=_POLL_S if wait else None)
                return job
            except queue.Full:
                if not wait:
                    msg = (
                        f"server busy: {jobs.maxsize} {kind} jobs waiting; retry later"
                        if cheap
                        else f"server busy: {self.size} solves running and {self.queue_size} "
                        "waiting; retry later"
                    )
                    raise Busy(msg, retry_after_s=self.retry_after_s()) from None
                if job.stop.is_set():
                    raise job._stopped() from None

    def queue_full(self) -> bool:
        return self._queue.full()

    def retry_after_s(self) -> float:
        """When a refused job is worth retrying: the mean solve time so far, times the jobs
        ahead of it per worker, within RETRY_MIN_S..RETRY_MAX_S."""
        with self._lock:
            mean_s = self._solve_s_total / self._solves if self._solves else RETRY_MIN_S
        ahead = (self.queue_size + self.size) / self.size
        return min(RETRY_MAX_S, max(RETRY_MIN_S, mean_s * ahead))

    def stats(self) -> PoolStats:
        with self._lock:
            return PoolStats(
                self.size,
                self._busy,
                self._queue.qsize(),
                self.queue_size,
                self._solves,
                self._solve_s_total,
                self._solve_s_max,
                self._restarts,
            )

    def close(self) -> None:
        """Stop feeding, end every worker (a running job is killed), join the feeders."""
        self._closed.set()
        with self._lock:
            spare, self._spare = self._spare, None
        for worker in [*self._workers, *([spare] if spare else [])]:
            worker.stop()
        for t in self._threads:
            t.join(_EXIT_WAIT_S)

    def pids(self) -> tuple[list[int], int | None]:
        """The worker processes' ids (solver lane, then cheap lane) and the warm spare's."""
        with self._lock:
            spare = self._spare.process.pid if self._spare is not None else None
            return [w.process.pid for w in self._workers], spare

    def kill_all(self) -> None:
        """Kill every worker process group at once, without waiting (an abandoned shutdown)."""
        self._closed.set()
        with self._lock:
            workers = [*self._workers, *([self._spare] if self._spare else [])]
        for worker in workers:
            if worker.alive():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(worker.process.pid, signal.SIGKILL)

    # ------------------------------------------------------------------ feeder side
    def _feed(self, worker: _Worker, jobs: queue.Queue[Job]) -> None:
        while not (self._closed.is_set() and jobs.empty()):
            try:
                job = jobs.get(timeout=_POLL_S)
            except queue.Empty:
                continue
            if self._closed.is_set():
                job.fail(Unavailable("server is shutting down; retry on another instance"))
                continue
            if job.stop.is_set() or job.expired():
                job.fail(job._stopped())
                continue
            solver = jobs is self._queue  # workers_busy counts the solver lane
            with self._lock:
                self._busy += solver
            try:
                self._run(worker, job)
            finally:
                with self._lock:
                    self._busy -= solver

    def _run(self, worker: _Worker, job: Job) -> None:
        started = time.monotonic()
        try:
            worker.conn.send((job.kind, job.payload, job.tenant))
            while True:
                if worker.conn.poll(_POLL_S):
                    event = worker.conn.recv()
                    if event[0] != "progress":
                        break
                    job.events.put(event)
                # Asked after progress too: a stream of progress must not hide a stop.
                if job.stop.is_set() or job.expired():
                    self._replace(worker, kill=True)
                    job.fail(job._stopped())
                    return
                if not worker.alive():
                    raise EOFError
        except (EOFError, OSError):
            code = worker.process.poll()
            self._replace(worker, kill=True)
            job.fail(SolverFailed(f"the solver worker ended unexpectedly (exit code {code})"))
            return
        elapsed = time.monotonic() - started
        with self._lock:
            self._solves += 1
            self._solve_s_total += elapsed
            self._solve_s_max = max(self._solve_s_max, elapsed)
        if event[0] != "ok":
            violations = tuple(FieldViolation(f, d) for f, d in event[3])
            event = ("error", WorkerError(event[1], event[2], violations))
        job.finish(event)
        worker.jobs += 1
        if worker.jobs >= self._jobs_per_worker:
            self._replace(worker, kill=False)

    def _replace(self, worker: _Worker, *, kill: bool) -> None:
        if kill:
            worker.kill()
        else:
            worker.stop()
        if self._closed.is_set():
            return
        with self._lock:
            spare, self._spare = self._spare, None
            self._restarts += 1
        if spare is None or not spare.alive():
            worker.start()  # cold: its imports happen before its first job
            return
        worker.adopt(spare)
        fresh: _Worker | None = _Worker(self._data_dir)  # the next spare warms while this works
        with self._lock:
            if not self._closed.is_set():
                self._spare, fresh = fresh, None
        if fresh is not None:
            fresh.stop()
