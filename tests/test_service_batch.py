"""The service's batch engine is the batch runner's engine on the service's worker pool: the
same rows as the local pool, the call's deadline bounds each solve, and a stopped call ends
its jobs (the worker's CPU goes idle) without starting the rest. A failed run becomes an
error result that never quotes a bug's message."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterable, Iterator, Mapping
from pathlib import Path

import pandas as pd
import pytest

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2, service_pb2
from optimizer.batch import BatchPlan, Engine, LocalEngine, plan_batch, run_batch
from optimizer.batch.spec import Scenario, spec_from_document
from optimizer.batch.tasks import TaskResult, failed_result
from optimizer.batch.writer import TIMING_COLUMNS, read_results
from optimizer.errors import SolverFailed
from optimizer.service.batch_call import batch_results
from optimizer.service.batch_engine import ServiceEngine
from optimizer.service.errors import Cancelled
from optimizer.service.jobs import tenant_catalog
from optimizer.service.pool import PoolStats, WorkerPool
from tests.service_support import idle_within

FAST = {
    "top_k": 1,
    "workload": {"model": "bert-large", "training_tokens": 1e10},
    "allowed_topologies": ["single_switch"],
    "constraints": {"max_gpus": 32},
}
# Tens of seconds of search per scenario on one core (tests.service_support.long_optimize);
# the 175B scenario used before now solves in about a second.
REPLY_JITTER_S = 1.0  # what a loaded machine may add to a reply's wall-clock time
SLOW = {
    "top_k": 20,
    "workload": {"model": "llama3-405b"},
    "objective": "min_time",
    "constraints": {"budget_usd": 4e9},
    "solver": {"time_limit_s": 120},
}


def _plan(doc: dict) -> BatchPlan:
    return plan_batch(spec_from_document(doc))


def _rows(out: Path) -> pd.DataFrame:
    frame = read_results(out).drop(columns=list(TIMING_COLUMNS))
    return frame.sort_values("scenario_id").reset_index(drop=True)


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[WorkerPool]:
    pool = WorkerPool(2, 2, tmp_path / "data")
    pool.start()
    yield pool
    pool.close()


@pytest.mark.slow
def test_the_service_engine_writes_the_same_rows_as_the_local_pool(
    tmp_path: Path, pool: WorkerPool
) -> None:
    plan = _plan(
        {
            "catalogs": ["infiniband-ndr", "roce-spectrum"],
            "defaults": FAST,
            "scenarios": [{}, {"catalog": "infiniband-ndr", "constraints": {"budget_usd": -1}}],
            "grid": {"constraints.target_training_hours": [24.0, 96.0]},
        }
    )
    local = run_batch(plan, tmp_path / "local", engine=LocalEngine(2), report=False)
    served = run_batch(
        plan, tmp_path / "served", engine=ServiceEngine(pool, "default"), report=False
    )
    assert served.written == local.written == len(plan.scenarios) == 6
    assert served.errors == local.errors == 2
    pd.testing.assert_frame_equal(_rows(tmp_path / "served"), _rows(tmp_path / "local"))
    assert pool.stats().solves == 4  # the 2 with a negative budget fail validation in the driver


@pytest.mark.slow
def test_a_scenario_gets_only_the_time_its_calls_deadline_leaves(pool: WorkerPool) -> None:
    # Both workers import the solver and decode the catalog first: on a loaded CI machine that
    # took 2.5 s of a 3 s deadline once, which is the worker's start-up, not this behaviour.
    warm = _plan({"catalogs": ["ethernet-budget"], "defaults": FAST, "grid": {"top_k": [1, 2]}})
    assert len(list(ServiceEngine(pool, "default").run(warm.catalog_data, warm.scenarios))) == 2
    plan = _plan({"catalogs": ["ethernet-budget"], "scenarios": [SLOW]})
    started = time.monotonic()
    engine = ServiceEngine(pool, "default", deadline=started + 4.0)
    [result] = engine.run(plan.catalog_data, plan.scenarios)
    # Its 120 s solve was cut to what the deadline left: it answers at the deadline, not after
    # 120 s. The reply may land a little after it on a loaded machine (CI once: 4.02 s, with
    # the README's first command running beside it), which is scheduling, not this behaviour.
    assert time.monotonic() - started < 4.0 + REPLY_JITTER_S
    # stopped by its own timeout, with its best result, not killed by the pool at the deadline
    assert result.row["error_code"] == "DEADLINE_EXCEEDED"
    assert "best result found" in result.row["error"]
    assert pool.stats().restarts == 0


@pytest.mark.slow
def test_a_stopped_call_kills_its_running_jobs_and_starts_no_more(pool: WorkerPool) -> None:
    plan = _plan(
        {
            "catalogs": ["ethernet-budget"],
            "scenarios": [{**SLOW, "request_id": f"slow-{i}"} for i in range(4)],
        }
    )
    stop = threading.Event()
    engine = ServiceEngine(pool, "default", stop=stop)
    results = engine.run(plan.catalog_data, plan.scenarios)
    threading.Timer(1.0, stop.set).start()
    with pytest.raises(Cancelled, match="the call was cancelled; the batch was stopped"):
        next(results)
    assert idle_within([w.process.pid for w in pool._workers], 3.0)
    stats = _settled(pool, 15.0)
    assert (stats.busy, stats.queued, stats.solves) == (0, 0, 0)
    assert stats.restarts == 2  # the two running jobs; the other two never started


def _settled(pool: WorkerPool, seconds: float) -> PoolStats:
    """The pool's stats once no lane counts as busy, or at ``seconds``. A lane whose job was
    killed stays busy until its worker is replaced: on a loaded CI machine a worker started
    cold took longer than the 3 s the test waited (CI, session 36: busy 1, in both runs)."""
    deadline = time.monotonic() + seconds
    stats = pool.stats()
    while stats.busy and time.monotonic() < deadline:
        time.sleep(0.1)
        stats = pool.stats()
    return stats


class _FailingEngine(Engine):
    """Fails every scenario with ``error``, as an engine reports a worker that died."""

    workers = 1

    def __init__(self, error: Exception) -> None:
        self.error = error

    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        for s in scenarios:
            yield failed_result(s, self.error, catalogs[s.catalog_id])


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            SolverFailed("the solver worker ended unexpectedly (exit code -9)"),
            "SolverFailed: the solver worker ended unexpectedly (exit code -9)",
        ),
        (KeyError("price 41999.5 of sku-7"), "internal error (KeyError)"),
    ],
)
def test_a_failed_run_is_an_error_result_and_a_bugs_message_stays_inside(
    error: Exception, message: str
) -> None:
    request = service_pb2.BatchOptimizeRequest(
        scenarios=[
            optimize_pb2.OptimizeRequest(
                request_id="r",
                top_k=1,
                workload=estimate_pb2.Workload(model="bert-large"),
                constraints=optimize_pb2.Constraints(target_training_hours=24),
            )
        ],
        catalogs=["infiniband-ndr"],
    )
    [result] = batch_results(
        request, _FailingEngine(error), lambda ref: tenant_catalog(ref, "default", None)
    )
    assert (result.scenario_index, result.catalog, result.request_id) == (0, "infiniband-ndr", "r")
    assert (result.error_code, result.error_message) == ("INTERNAL", message)
    assert len(result.scenario_id) == 32 and not result.HasField("response")
