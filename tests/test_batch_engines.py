"""The same batch on the local process pool and on a real Dask cluster: identical results,
and every scenario written exactly once even when a worker is killed mid-batch."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from distributed import Client, LocalCluster

from optimizer.batch import BatchPlan, BatchProgress, DaskEngine, LocalEngine, plan_batch, run_batch
from optimizer.batch.spec import spec_from_document
from optimizer.batch.writer import RESPONSES_FILE, TIMING_COLUMNS, read_results

CATALOGS = ["infiniband-ndr", "roce-spectrum", "ethernet-budget"]
# Small solves (well under a second each): an 8-GPU-class BERT run with room to spare.
FAST = {
    "top_k": 1,
    "workload": {"model": "bert-large", "training_tokens": 1e10},
    "allowed_topologies": ["single_switch"],
    "constraints": {"max_gpus": 32},
}


def _plan(targets: list[float], *, bad: bool = False) -> BatchPlan:
    scenarios: list[dict] = [{}]
    if bad:  # a scenario the optimizer rejects: must become an error row, not end the batch
        scenarios.append({"catalog": "infiniband-ndr", "constraints": {"budget_usd": -1}})
    return plan_batch(
        spec_from_document(
            {
                "catalogs": CATALOGS,
                "defaults": FAST,
                "scenarios": scenarios,
                "grid": {"constraints.target_training_hours": targets},
            }
        )
    )


def _rows(out: Path) -> pd.DataFrame:
    frame = read_results(out).drop(columns=list(TIMING_COLUMNS))
    return frame.sort_values("scenario_id").reset_index(drop=True)


def _responses(out: Path) -> dict[str, dict]:
    by_id = {}
    for line in (out / RESPONSES_FILE).read_text().splitlines():
        doc = json.loads(line)
        if doc["response"]:
            doc["response"].pop("solve_time_s")
        by_id[doc["scenario_id"]] = doc
    return by_id


def _assert_each_scenario_written_once(plan: BatchPlan, out: Path) -> None:
    ids = list(read_results(out)["scenario_id"])
    lines = [json.loads(x)["scenario_id"] for x in (out / RESPONSES_FILE).read_text().splitlines()]
    expected = sorted(s.scenario_id for s in plan.scenarios)
    assert sorted(ids) == expected
    assert sorted(lines) == expected


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.mark.slow
def test_local_pool_and_dask_cluster_give_identical_results(
    tmp_path: Path, dask_client: Client
) -> None:
    plan = _plan([24.0, 96.0], bad=True)
    local = run_batch(plan, tmp_path / "local", engine=LocalEngine(2))
    dask = run_batch(plan, tmp_path / "dask", engine=DaskEngine(dask_client))
    assert local.written == dask.written == len(plan.scenarios) == 3 * 2 + 2
    assert local.errors == dask.errors == 2
    pd.testing.assert_frame_equal(_rows(tmp_path / "local"), _rows(tmp_path / "dask"))
    assert _responses(tmp_path / "local") == _responses(tmp_path / "dask")
    bad = _rows(tmp_path / "local").query("status == 'ERROR'").iloc[0]
    assert bad["error_code"] == "INVALID_ARGUMENT" and "budget_usd" in bad["error"]


@pytest.mark.slow
def test_a_dask_worker_killed_mid_batch_loses_and_repeats_nothing(
    tmp_path: Path, dask_client: Client
) -> None:
    plan = _plan([12.0, 24.0, 48.0, 96.0])
    killed: list[int] = []

    def kill_a_busy_worker(step: BatchProgress) -> None:
        busy = [w for w, keys in dask_client.processing().items() if keys]
        if killed or not busy:
            return
        pid = dask_client.run(os.getpid, workers=busy[:1])[busy[0]]
        os.kill(pid, signal.SIGKILL)  # its nanny starts a fresh worker
        killed.append(pid)

    summary = run_batch(plan, tmp_path, engine=DaskEngine(dask_client), progress=kill_a_busy_worker)
    assert killed
    assert summary.written == len(plan.scenarios) and summary.errors == 0
    _assert_each_scenario_written_once(plan, tmp_path)
