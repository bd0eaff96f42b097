"""The local pool survives its worker processes being killed: retried, never repeated, and a
scenario whose worker dies every time becomes an error row instead of stalling the batch."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from pathlib import Path

import pytest

from optimizer.batch import BatchPlan, BatchProgress, LocalEngine, plan_batch, run_batch
from optimizer.batch.spec import spec_from_document
from optimizer.batch.writer import RESPONSES_FILE, read_results


def _plan(targets: list[float]) -> BatchPlan:
    return plan_batch(
        spec_from_document(
            {
                "catalogs": ["infiniband-ndr", "roce-spectrum"],
                "defaults": {
                    "top_k": 1,
                    "workload": {"model": "bert-large", "training_tokens": 1e10},
                    "allowed_topologies": ["single_switch"],
                    "constraints": {"max_gpus": 32},
                },
                "grid": {"constraints.target_training_hours": targets},
            }
        )
    )


def _pool_children(before: set[int]) -> list[multiprocessing.process.BaseProcess]:
    """Worker processes started since ``before`` (the pool's, not other tests')."""
    return [p for p in multiprocessing.active_children() if p.pid not in before]


@pytest.fixture
def children_before() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


@pytest.mark.slow
def test_a_local_worker_killed_mid_batch_is_retried_and_nothing_repeats(
    tmp_path: Path, children_before: set[int]
) -> None:
    plan = _plan([12.0, 24.0, 48.0, 96.0])
    killed: list[int] = []

    def kill_a_worker(step: BatchProgress) -> None:
        if not killed and (victims := _pool_children(children_before)):
            os.kill(victims[0].pid, signal.SIGKILL)
            killed.append(victims[0].pid)

    summary = run_batch(plan, tmp_path, engine=LocalEngine(2), progress=kill_a_worker)
    assert killed
    assert summary.written == len(plan.scenarios) and summary.errors == 0
    expected = sorted(s.scenario_id for s in plan.scenarios)
    assert sorted(read_results(tmp_path)["scenario_id"]) == expected
    assert len((tmp_path / RESPONSES_FILE).read_text().splitlines()) == len(expected)


def test_a_scenario_whose_worker_always_dies_becomes_an_error_row(
    tmp_path: Path, children_before: set[int]
) -> None:
    plan = _plan([24.0])
    plan = BatchPlan(plan.catalogs, plan.scenarios[:1], 0)
    stop = threading.Event()

    def keep_killing() -> None:
        while not stop.wait(0.05):
            for child in _pool_children(children_before):
                if child.pid is not None:
                    os.kill(child.pid, signal.SIGKILL)

    killer = threading.Thread(target=keep_killing, daemon=True)
    killer.start()
    try:
        summary = run_batch(plan, tmp_path, engine=LocalEngine(1, max_attempts=2))
    finally:
        stop.set()
        killer.join()
    (row,) = read_results(tmp_path).to_dict("records")
    assert summary.errors == 1
    assert row["status"] == "ERROR" and "died 2 times" in row["error"]
