"""Chunked dispatch: scenarios sharing a (catalog, workload) key run together on a warm
worker, every scenario is still emitted and written exactly once, the rows are the ones each
scenario gives alone, and a worker decodes each catalog once however many chunks use it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from distributed import Client, LocalCluster

from optimizer.batch import BatchPlan, DaskEngine, LocalEngine, plan_batch, run_batch
from optimizer.batch.chunks import chunk_key, chunked
from optimizer.batch.spec import Scenario, spec_from_document
from optimizer.batch.tasks import catalog_loads, run_chunk, run_scenario
from optimizer.batch.writer import RESPONSES_FILE, TIMING_COLUMNS, read_results


def _scenario(i: int, catalog: str, model: str) -> Scenario:
    request = {"workload": {"model": model}, "constraints": {"budget_usd": 1000 + i}}
    return Scenario(f"s{i}", f"c{i}", catalog, catalog, json.dumps(request, sort_keys=True))


def _interleaved(n: int) -> list[Scenario]:
    """``n`` scenarios cycling over four keys (two catalogs x two workloads)."""
    keys = [("cat-a", "bert-large"), ("cat-b", "bert-large"), ("cat-a", "llama3-8b")]
    keys.append(("cat-b", "llama3-8b"))
    return [_scenario(i, *keys[i % 4]) for i in range(n)]


def test_every_scenario_is_emitted_exactly_once_in_chunks_of_one_key() -> None:
    scenarios = _interleaved(101)
    chunks = list(chunked(scenarios, max_chunk=8, spread=4, lookahead=32))
    emitted = [s.scenario_id for chunk in chunks for s in chunk]
    assert sorted(emitted) == sorted(s.scenario_id for s in scenarios)
    assert all(len({chunk_key(s) for s in chunk}) == 1 for chunk in chunks)
    assert all(1 <= len(chunk) <= 8 for chunk in chunks)


def test_interleaved_keys_are_gathered_into_full_chunks() -> None:
    chunks = list(chunked(_interleaved(64), max_chunk=8, spread=2, lookahead=64))
    assert [len(c) for c in chunks] == [8] * 8


def test_the_end_of_the_stream_is_cut_so_that_every_worker_gets_a_share() -> None:
    same_key = [_scenario(i, "cat-a", "bert-large") for i in range(4)]
    assert [len(c) for c in chunked(same_key, max_chunk=8, spread=4)] == [1, 1, 1, 1]


def test_grouping_looks_ahead_a_bounded_number_of_scenarios() -> None:
    pulled = 0

    def stream() -> Iterator[Scenario]:
        nonlocal pulled
        for s in _interleaved(10_000):
            pulled += 1
            yield s

    chunks = chunked(stream(), max_chunk=8, spread=2, lookahead=32)
    emitted = 0
    for chunk in chunks:
        emitted += len(chunk)
        assert pulled - emitted <= 32
        if emitted > 500:
            break


def test_workload_and_catalog_make_the_key_not_budget_or_target() -> None:
    a, b = _scenario(1, "cat-a", "bert-large"), _scenario(2, "cat-a", "bert-large")
    assert chunk_key(a) == chunk_key(b)
    assert chunk_key(a) != chunk_key(_scenario(3, "cat-b", "bert-large"))
    assert chunk_key(a) != chunk_key(_scenario(4, "cat-a", "llama3-8b"))


def _plan() -> BatchPlan:
    """2 catalogs x 2 workloads x 3 targets: four keys of three small solves each."""
    return plan_batch(
        spec_from_document(
            {
                "catalogs": ["infiniband-ndr", "roce-spectrum"],
                "defaults": {
                    "top_k": 1,
                    "allowed_topologies": ["single_switch"],
                    "constraints": {"max_gpus": 32},
                },
                "scenarios": [
                    {"workload": {"model": "bert-large", "training_tokens": 1e10}},
                    {"workload": {"model": "bert-large", "training_tokens": 2e10}},
                ],
                "grid": {"constraints.target_training_hours": [12.0, 48.0, 96.0]},
            }
        )
    )


def _rows(out: Path) -> pd.DataFrame:
    rows = read_results(out).drop(columns=list(TIMING_COLUMNS))
    return rows.sort_values("scenario_id").reset_index(drop=True)


def _responses(out: Path) -> list[dict]:
    docs = [json.loads(line) for line in (out / RESPONSES_FILE).read_text().splitlines()]
    for d in docs:
        if d["response"] is not None:
            d["response"].pop("solve_time_s", None)
    return sorted(docs, key=lambda d: d["scenario_id"])


def _alone(plan: BatchPlan) -> list[dict]:
    """Each scenario's response line when run by itself, without chunks or a pool."""
    lines = [run_scenario(s, plan.catalog_data[s.catalog_id]).response_json for s in plan.scenarios]
    docs = [json.loads(line) for line in lines]
    for d in docs:
        d["response"].pop("solve_time_s", None)
    return sorted(docs, key=lambda d: d["scenario_id"])


@pytest.mark.slow
def test_chunks_on_the_local_pool_write_each_scenario_once_with_its_own_result(
    tmp_path: Path,
) -> None:
    plan = _plan()
    summary = run_batch(plan, tmp_path, engine=LocalEngine(2, chunk_size=3), report=False)
    assert summary.written == len(plan.scenarios) == 12 and summary.errors == 0
    ids = sorted(read_results(tmp_path)["scenario_id"])
    assert ids == sorted(s.scenario_id for s in plan.scenarios)
    assert _responses(tmp_path) == _alone(plan)


@pytest.mark.slow
def test_chunk_size_does_not_change_rows_or_responses(tmp_path: Path) -> None:
    plan = _plan()
    run_batch(plan, tmp_path / "one", engine=LocalEngine(1, chunk_size=1), report=False)
    run_batch(plan, tmp_path / "six", engine=LocalEngine(1, chunk_size=6), report=False)
    pd.testing.assert_frame_equal(_rows(tmp_path / "one"), _rows(tmp_path / "six"))
    assert _responses(tmp_path / "one") == _responses(tmp_path / "six")


def test_a_chunk_decodes_its_catalog_once() -> None:
    plan = _plan()
    cid = plan.scenarios[0].catalog_id
    chunk = tuple(s for s in plan.scenarios if s.catalog_id == cid)[:3]
    before = catalog_loads().get(cid, 0)
    results = run_chunk(chunk, plan.catalog_data[cid])
    assert [r.scenario_id for r in results] == [s.scenario_id for s in chunk]
    assert catalog_loads().get(cid, 0) - before <= 1  # 0 when an earlier test decoded it


@pytest.fixture(scope="module")
def one_worker_cluster() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@pytest.mark.slow
def test_a_dask_worker_decodes_each_catalog_once_for_the_whole_batch(
    tmp_path: Path, one_worker_cluster: Client
) -> None:
    plan = _plan()
    engine = DaskEngine(one_worker_cluster, chunk_size=2)
    summary = run_batch(plan, tmp_path, engine=engine, report=False)
    assert summary.written == 12 and summary.errors == 0
    (loads,) = one_worker_cluster.run(catalog_loads).values()
    assert loads == {cid: 1 for cid in plan.catalog_data}
