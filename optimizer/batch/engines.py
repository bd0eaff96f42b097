"""Where batch tasks run: a local process pool (default) or a Dask cluster, one interface.

Both engines take the catalogs (canonical bytes by content id) and an iterable of
scenarios and yield one ``TaskResult`` per scenario as results complete, in completion
order. They dispatch chunks of scenarios that share a (catalog, workload) key
(``chunks.chunked``) to long-lived workers, which keep their decoded catalogs and planner
and estimator caches warm across chunks. They keep a bounded number of chunks in flight,
so memory stays flat however long the batch. A scenario whose worker died (killed, out of
memory) is retried up to ``max_attempts`` times, then becomes an error row; the local
engine reruns such suspects one at a time, so a scenario that kills its worker fails no
other scenario. Every scenario yields exactly once: it is resubmitted only after its
previous attempt has failed.

Processes are started with ``spawn``: a forked child of a process that already runs gRPC or
solver threads can deadlock (shared/reliability.md B1).
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import os
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import TYPE_CHECKING, Any

from optimizer.batch.chunks import DEFAULT_MAX_CHUNK, chunked
from optimizer.batch.spec import Scenario
from optimizer.batch.tasks import TaskResult, failed_result, install_catalogs, run_chunk
from optimizer.errors import InvalidInput, ProcurementError

if TYPE_CHECKING:
    from distributed import Client

# Dask's own default for ``distributed.scheduler.allowed-failures`` + 1, used for both
# engines so that a scenario that kills its worker every time cannot stall a batch.
DEFAULT_MAX_ATTEMPTS = 4
# A fresh worker process after about this many scenarios bounds any slow leak in the solver
# stack (workers run chunks of scenarios; see LocalEngine._pool).
DEFAULT_TASKS_PER_CHILD = 250
# How often a local worker checks that its driver is alive; an orphan exits within this.
WATCHDOG_INTERVAL_S = 0.5
# How long a stopped batch waits for a terminated worker before killing it.
TERMINATE_GRACE_S = 5.0


# How long DaskEngine waits to reach its scheduler (and to reconnect after losing it).
DASK_CONNECT_TIMEOUT_S = 30.0
# Client states in which the scheduler is gone for good (distributed.Client.status).
_DASK_GONE = ("closing", "closed", "failed")


class EngineUnavailable(ProcurementError):
    """The engine cannot be reached or was lost mid-batch (a Dask scheduler that is down or
    went away): not the input's fault, so it has its own exit status (client/exits.py
    EXIT_ENGINE_UNAVAILABLE). Rows committed before the loss stay; ``--resume`` continues."""

    grpc_code = "UNAVAILABLE"
    exit_code = 6


class WorkerDied(RuntimeError):
    """The process running a scenario died ``attempts`` times; recorded as the row's error."""


def local_cpu_count() -> int:
    """CPUs this process may run on (affinity and cgroup-pinned sets, not the host total)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class Engine(ABC):
    """Runs scenarios somewhere and yields their results as they complete."""

    workers: int

    @abstractmethod
    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        """One result per scenario, in completion order."""

    def close(self) -> None:  # noqa: B027 - engines without resources need not override it
        """Release processes or connections the engine owns."""

    def __enter__(self) -> Engine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _init_worker(catalogs: Mapping[str, bytes], driver_pid: int) -> None:
    """Local-pool initializer: install the catalogs and start the orphan watchdog."""
    install_catalogs(catalogs)
    threading.Thread(
        target=_exit_with_driver, args=(driver_pid,), name="driver-watchdog", daemon=True
    ).start()


def _exit_with_driver(driver_pid: int) -> None:
    """End this worker as soon as its driver is gone (SIGKILL, OOM killer, crash): an
    orphan would hold memory, a CPU and the driver's stdout (``procure batch | cat`` would
    never end). A dead parent reparents us, so the parent pid changes."""
    while os.getppid() == driver_pid:
        threading.Event().wait(WATCHDOG_INTERVAL_S)
    os._exit(1)


def _stop_pool(pool: ProcessPoolExecutor, *, terminate: bool) -> None:
    """Shut ``pool`` down; with ``terminate`` (the batch was stopped, not finished), end its
    workers now instead of letting them finish their current solves."""
    processes = list((getattr(pool, "_processes", None) or {}).values()) if terminate else []
    pool.shutdown(wait=False, cancel_futures=True)
    for p in processes:
        p.terminate()
    for p in processes:
        p.join(TERMINATE_GRACE_S)
        if p.is_alive():
            p.kill()


class LocalEngine(Engine):
    """A spawn-context process pool on this machine, one process per CPU by default."""

    def __init__(
        self,
        workers: int | None = None,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        tasks_per_child: int = DEFAULT_TASKS_PER_CHILD,
        chunk_size: int = DEFAULT_MAX_CHUNK,
    ) -> None:
        if workers is not None and workers < 1:
            raise InvalidInput(f"got {workers}, expected at least 1", field="workers")
        if chunk_size < 1:
            raise InvalidInput(f"got {chunk_size}, expected at least 1", field="chunk_size")
        self.workers = workers or local_cpu_count()
        self.max_attempts = max_attempts
        self.tasks_per_child = tasks_per_child
        self.chunk_size = chunk_size

    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        todo = chunked(scenarios, max_chunk=self.chunk_size, spread=2 * self.workers)
        retry: deque[Scenario] = deque()
        attempts: dict[str, int] = {}
        inflight: dict[Future[list[TaskResult]], tuple[Scenario, ...]] = {}
        pool: ProcessPoolExecutor | None = None
        finished = False
        try:
            while True:
                if pool is None:
                    pool = self._pool(catalogs)
                while len(inflight) < 2 * self.workers:
                    if retry:
                        # A suspect runs alone, so that another death names its culprit and
                        # a scenario that kills its worker cannot use up the others' attempts.
                        if not inflight:
                            one = (retry.popleft(),)
                            inflight[pool.submit(run_chunk, one, None, timeout_s)] = one
                        break
                    chunk = next(todo, None)
                    if chunk is None:
                        break
                    inflight[pool.submit(run_chunk, chunk, None, timeout_s)] = chunk
                if not inflight:
                    finished = True
                    return
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                broken = False
                for fut in done:
                    chunk = inflight.pop(fut)
                    try:
                        results = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        yield from self._failed_attempts(chunk, attempts, retry, catalogs)
                        continue
                    for s in chunk:
                        attempts.pop(s.scenario_id, None)
                    yield from results
                if broken:
                    # A dead worker fails every unfinished task of the pool: retry them.
                    for fut, chunk in list(inflight.items()):
                        inflight.pop(fut)
                        if fut.done() and not fut.cancelled() and fut.exception() is None:
                            yield from fut.result()
                            continue
                        yield from self._failed_attempts(chunk, attempts, retry, catalogs)
                    pool.shutdown(wait=False, cancel_futures=True)
                    pool = None
        finally:
            if pool is not None:
                _stop_pool(pool, terminate=not finished)

    def _pool(self, catalogs: Mapping[str, bytes]) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(dict(catalogs), os.getpid()),
            # A task is a chunk: recycle after about ``tasks_per_child`` scenarios.
            max_tasks_per_child=max(1, self.tasks_per_child // self.chunk_size),
        )

    def _failed_attempts(
        self,
        chunk: tuple[Scenario, ...],
        attempts: dict[str, int],
        retry: deque[Scenario],
        catalogs: Mapping[str, bytes],
    ) -> Iterator[TaskResult]:
        """The error rows of the chunk's scenarios out of attempts; the others are queued to
        run again, one at a time (any of them may be the one that killed the worker)."""
        for s in chunk:
            n = spend_attempt(attempts, s, self.max_attempts)
            if n is None:
                retry.append(s)
                continue
            died = WorkerDied(f"a worker process died {n} times while this scenario ran")
            yield failed_result(s, died, catalogs[s.catalog_id])


def spend_attempt(attempts: dict[str, int], s: Scenario, max_attempts: int) -> int | None:
    """Count one failed attempt of ``s``: None while it may run again, else the attempts it
    used (and its count is dropped: the scenario is done, as an error row)."""
    n = attempts[s.scenario_id] = attempts.get(s.scenario_id, 0) + 1
    if n < max_attempts:
        return None
    attempts.pop(s.scenario_id)
    return n


class DaskEngine(Engine):
    """Tasks on a Dask ``distributed`` cluster: ``tcp://host:port`` or an existing Client.

    Catalog bytes are scattered to every worker once (``broadcast=True``) and tasks refer to
    them by future, so a task carries only its scenario. A worker that dies mid-task is
    handled by the scheduler (it reruns the task elsewhere, up to its ``allowed-failures``)
    and then by this engine (a lost catalog replica is scattered again and the scenario
    resubmitted, up to ``max_attempts``).
    """

    def __init__(
        self,
        scheduler: str | Client,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        chunk_size: int = DEFAULT_MAX_CHUNK,
    ) -> None:
        from distributed import Client

        if chunk_size < 1:
            raise InvalidInput(f"got {chunk_size}, expected at least 1", field="chunk_size")
        # distributed is untyped: the client is Any here, its calls checked by the tests.
        self.client: Any
        if isinstance(scheduler, str):
            self.address = scheduler
            connect: Any = Client
            unreachable = None
            try:
                self.client = connect(scheduler, timeout=f"{DASK_CONNECT_TIMEOUT_S:g}s")
            except ValueError as e:  # distributed's own address parsing
                msg = f"got {scheduler!r}, expected tcp://HOST:PORT or tls://HOST:PORT ({e})"
                raise InvalidInput(msg, field="--scheduler") from None
            except OSError as e:
                unreachable = (
                    f"cannot reach the Dask scheduler at {scheduler} within "
                    f"{DASK_CONNECT_TIMEOUT_S:g} s ({e})"
                )
            if unreachable is not None:
                # Finalise the half-started Client now, where this thread holds no lock of
                # distributed's: its __del__ closes its loop under LoopRunner's class-wide
                # lock, and run by a garbage collection inside a later Client's start (which
                # holds that lock) it deadlocks the thread (a test hung 300 s so).
                gc.collect()
                raise EngineUnavailable(unreachable)
            self._owns_client = True
        else:
            self.client, self._owns_client = scheduler, False
            self.address = str(self.client.scheduler.address)
        self.max_attempts = max_attempts
        self.chunk_size = chunk_size
        self.workers = max(1, sum(self.client.nthreads().values()))

    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        from distributed import as_completed

        shipped: dict[str, Any] = {}

        def ship(catalog_id: str) -> Any:
            shipped[catalog_id] = self.client.scatter(
                catalogs[catalog_id], broadcast=True, hash=False
            )
            return shipped[catalog_id]

        # Twice the workers' threads in chunks: each thread has one chunk queued behind its
        # current one, and the end of the batch is cut small enough to reach every thread.
        spread = 2 * self.workers
        todo = chunked(scenarios, max_chunk=self.chunk_size, spread=spread)
        attempts: dict[str, int] = {}
        inflight: dict[Any, tuple[Scenario, ...]] = {}
        completed: Any = as_completed
        queue = completed()
        window = max(8, spread)

        def submit(chunk: tuple[Scenario, ...]) -> None:
            cid = chunk[0].catalog_id  # one key per chunk, so one catalog
            data = shipped[cid] if cid in shipped else ship(cid)
            fut = self.client.submit(run_chunk, chunk, data, timeout_s, pure=False)
            inflight[fut] = chunk
            queue.add(fut)

        try:
            for chunk in itertools.islice(todo, window):
                submit(chunk)
            for fut in self._until_lost(queue):
                chunk = inflight.pop(fut)
                results, again = self._outcome(fut, chunk, attempts, catalogs)
                fut.release()
                yield from results
                if again:  # lost with its worker: ship the catalog again, retry
                    ship(chunk[0].catalog_id)
                    for part in again:
                        submit(part)
                    continue
                nxt = next(todo, None)
                if nxt is not None:
                    submit(nxt)
        except (OSError, TimeoutError) as e:  # distributed's CommClosedError is an OSError
            raise self._lost(e) from None
        finally:
            if self.client.status not in _DASK_GONE:
                for fut in inflight:
                    fut.cancel()
                for data in shipped.values():
                    data.release()

    def _until_lost(self, queue: Any) -> Iterator[Any]:
        """The futures of ``queue`` as they complete; ``EngineUnavailable`` as soon as the
        client has given up on its scheduler (its futures are then cancelled, and
        resubmitting them would fail or wait forever)."""
        for fut in queue:
            if self.client.status in _DASK_GONE:
                raise self._lost()
            yield fut

    def _lost(self, cause: BaseException | None = None) -> EngineUnavailable:
        detail = f" ({cause})" if cause else ""
        return EngineUnavailable(
            f"lost the Dask scheduler at {self.address}{detail}; the rows received so far "
            "are committed, run again with --resume when it is back"
        )

    def _outcome(
        self,
        fut: Any,
        chunk: tuple[Scenario, ...],
        attempts: dict[str, int],
        catalogs: Mapping[str, bytes],
    ) -> tuple[list[TaskResult], list[tuple[Scenario, ...]]]:
        """The chunk's results (error rows for scenarios out of retries) and the chunks to
        submit again. A chunk that killed its workers is split into single scenarios, so
        that the scheduler's verdict (KilledWorker) falls on the culprit alone."""
        from distributed.scheduler import KilledWorker

        try:
            results: list[TaskResult] = fut.result()
        except KilledWorker as e:  # the scheduler already retried on other workers
            if len(chunk) > 1:
                return [], [(s,) for s in chunk]
            return [failed_result(chunk[0], WorkerDied(str(e)), catalogs[chunk[0].catalog_id])], []
        except Exception as e:
            if self.client.status in _DASK_GONE:  # cancelled because the scheduler is gone
                raise self._lost(e) from None
            failed: list[TaskResult] = []
            again: list[Scenario] = []
            for s in chunk:
                n = spend_attempt(attempts, s, self.max_attempts)
                if n is None:
                    again.append(s)
                    continue
                died = WorkerDied(f"gave up after {n} attempts: {e}")
                failed.append(failed_result(s, died, catalogs[s.catalog_id]))
            return failed, [tuple(again)] if again else []
        for s in chunk:
            attempts.pop(s.scenario_id, None)
        return results, []

    def close(self) -> None:
        if self._owns_client:
            self.client.close()


def make_engine(scheduler: str | Client | None = None, workers: int | None = None) -> Engine:
    """``LocalEngine(workers)`` unless a Dask scheduler address or Client is given."""
    if scheduler is None:
        return LocalEngine(workers)
    if workers is not None:
        raise InvalidInput("the Dask cluster decides its workers; drop --workers", field="workers")
    return DaskEngine(scheduler)
