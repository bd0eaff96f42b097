"""``procure --server HOST:PORT batch``: the server solves (through BatchOptimize) and the
output directory holds the same rows and responses as an embedded batch of the same spec."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from catalog_files import SMALL
from cli_support import run
from service_support import TOKEN_A, Stubs, bearer, serving, write_tokens

from optimizer._pb.procurement.v1 import service_pb2
from optimizer.batch import read_results
from optimizer.batch.writer import RESPONSES_FILE, TIMING_COLUMNS

# A local catalog path (uploaded to the server), a bundled one, an invalid scenario.
SPEC = {
    "catalogs": [str(SMALL), "infiniband-ndr"],
    "defaults": {
        "top_k": 1,
        "workload": {"model": "bert-large", "training_tokens": 2e10},
        "allowed_topologies": ["single_switch"],
        "constraints": {"max_gpus": 32},
    },
    "grid": {"constraints.target_training_hours": [8.0, 24.0, -1.0]},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("server")
    yield from serving(folder, tokens_file=write_tokens(folder))


@pytest.fixture
def spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROCURE_TOKEN", TOKEN_A)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(SPEC))
    return path


def _calls(server: str, method: str) -> int:
    with grpc.insecure_channel(server) as channel:
        metrics = Stubs(channel).optimizer.GetMetrics(
            service_pb2.GetMetricsRequest(), metadata=bearer(TOKEN_A), timeout=10
        )
    return sum(m.requests for m in metrics.methods if m.method.endswith(f"/{method}"))


def _rows(out: Path) -> list[dict[str, object]]:
    frame = read_results(out).drop(columns=list(TIMING_COLUMNS))
    rows = frame.sort_values("scenario_id").to_dict("records")
    return json.loads(json.dumps(rows, default=str))  # NaN and None compare alike as null


def _responses(out: Path) -> list[dict[str, object]]:
    def without_timing(d: dict[str, object]) -> dict[str, object]:
        return {k: v for k, v in d.items() if k != "solve_time_s"}

    lines = (out / RESPONSES_FILE).read_text().splitlines()
    docs = [json.loads(line, object_hook=without_timing) for line in lines]
    return sorted(docs, key=lambda d: str(d["scenario_id"]))


def test_a_batch_on_the_server_writes_the_embedded_rows_and_responses(
    capsys: pytest.CaptureFixture[str], server: str, spec: Path, tmp_path: Path
) -> None:
    embedded = run(capsys, "batch", str(spec), "--out", str(tmp_path / "here"), "--workers", "1")
    remote = run(
        capsys, "--quiet", "--server", server, "batch", str(spec), "--out", str(tmp_path / "there")
    )
    # The spec's invalid scenarios are error rows and make both runs exit 3 (invalid input).
    assert embedded.code == remote.code == 3, remote.err
    rows = _rows(tmp_path / "here")
    assert len(rows) == 6 and {r["status"] for r in rows} >= {"OPTIMAL", "ERROR"}
    assert _rows(tmp_path / "there") == rows
    assert _responses(tmp_path / "there") == _responses(tmp_path / "here")


def test_a_batch_on_the_server_goes_through_batch_optimize(
    capsys: pytest.CaptureFixture[str], server: str, spec: Path, tmp_path: Path
) -> None:
    before = _calls(server, "BatchOptimize"), _calls(server, "Optimize")
    result = run(capsys, "--server", server, "batch", str(spec), "--out", str(tmp_path / "out"))
    assert result.code == 3, result.err  # the invalid scenarios, refused before any solve
    assert _calls(server, "BatchOptimize") == before[0] + 1
    assert _calls(server, "Optimize") == before[1]


def test_a_sweep_on_the_server_goes_through_batch_optimize(
    capsys: pytest.CaptureFixture[str], server: str, spec: Path
) -> None:
    before = _calls(server, "BatchOptimize"), _calls(server, "Optimize")
    sweep = ("sweep", "--catalog", str(SMALL), "--workload", "bert-large", "--tokens", "2e10")
    result = run(capsys, "--server", server, *sweep, "--targets", "8,24", "--format", "json")
    assert result.code == 0, result.err
    assert _calls(server, "BatchOptimize") == before[0] + 1
    assert _calls(server, "Optimize") == before[1]


@pytest.mark.parametrize(
    "flag", [("--workers", "2"), ("--scheduler", "tcp://127.0.0.1:1"), ("--timeout", "5")]
)
def test_local_engine_flags_are_refused_with_server(
    capsys: pytest.CaptureFixture[str],
    server: str,
    spec: Path,
    tmp_path: Path,
    flag: tuple[str, str],
) -> None:
    result = run(capsys, "--server", server, "batch", str(spec), "--out", str(tmp_path), *flag)
    assert result.code == 2 and flag[0] in result.err


def test_the_client_splits_batches_at_the_servers_run_limit(
    capsys: pytest.CaptureFixture[str], server: str, spec: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from client import transport
    from optimizer.service import limits

    assert transport.BATCH_CALL_RUNS == limits.MAX_BATCH_RUNS
    sweep = ("sweep", "--catalog", str(SMALL), "--workload", "bert-large", "--tokens", "2e10")
    grid = (*sweep, "--targets", "8,24,48", "--format", "json")
    whole = run(capsys, "--server", server, *grid)
    monkeypatch.setattr(transport, "BATCH_CALL_RUNS", 2)
    before = _calls(server, "BatchOptimize")
    split = run(capsys, "--server", server, *grid)
    assert whole.code == split.code == 0
    assert _calls(server, "BatchOptimize") == before + 2
    assert _without_timings(json.loads(split.out)) == _without_timings(json.loads(whole.out))


def _without_timings(document: dict[str, object]) -> dict[str, object]:
    text = json.dumps(document)
    return json.loads(
        text, object_hook=lambda d: {k: v for k, v in d.items() if k != "solve_time_s"}
    )
