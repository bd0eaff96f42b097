"""``procure --server HOST:PORT batch`` with a scenario naming its own catalog union: the
server solves the same union (a local path among its parts uploaded) and the output holds the
rows and responses an embedded batch writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from catalog_files import SMALL
from cli_support import run
from service_support import TOKEN_A, serving, write_tokens

from optimizer.batch import read_results
from optimizer.batch.writer import RESPONSES_FILE, TIMING_COLUMNS

pytestmark = pytest.mark.slow  # starts a server

# The small test catalog (a local path, uploaded) united with a bundled one.
SPEC = {
    "defaults": {
        "top_k": 1,
        "workload": {"model": "bert-large", "training_tokens": 2e10},
        "allowed_topologies": ["single_switch"],
        "constraints": {"max_gpus": 32, "target_training_hours": 8.0},
    },
    "scenarios": [{"catalogs": [str(SMALL), "infiniband-ndr"]}],
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("server")
    yield from serving(folder, tokens_file=write_tokens(folder))


def _rows(out: Path) -> list[dict[str, object]]:
    frame = read_results(out).drop(columns=list(TIMING_COLUMNS))
    rows = frame.sort_values("scenario_id").to_dict("records")
    return json.loads(json.dumps(rows, default=str))  # NaN and None compare alike as null


def _responses(out: Path) -> list[dict[str, object]]:
    def without_timing(d: dict[str, object]) -> dict[str, object]:
        return {k: v for k, v in d.items() if k != "solve_time_s"}

    lines = (out / RESPONSES_FILE).read_text().splitlines()
    return [json.loads(line, object_hook=without_timing) for line in lines]


def test_a_union_scenario_on_the_server_writes_the_embedded_row(
    capsys: pytest.CaptureFixture[str],
    server: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROCURE_TOKEN", TOKEN_A)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(SPEC))
    here, there = tmp_path / "here", tmp_path / "there"
    embedded = run(capsys, "batch", str(spec), "--out", str(here), "--workers", "1")
    remote = run(capsys, "--quiet", "--server", server, "batch", str(spec), "--out", str(there))
    assert embedded.code == remote.code == 0, remote.err
    (row,) = _rows(here)
    assert row["status"] == "OPTIMAL" and row["catalog"] == f"{SMALL} + infiniband-ndr"
    assert _rows(there) == [row]
    assert _responses(there) == _responses(here)
