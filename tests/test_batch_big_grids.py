"""Big grids are planned lazily, with progress, and runs without a terminal print progress
lines (issue 20, item 6)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from batch_support import FAST_DEFAULTS, fast_spec, write_spec
from cli_support import run

from optimizer.batch import plan_batch
from optimizer.batch.spec import spec_from_document

# What the driver may hold per planned scenario (the dedup set of 16-byte ids plus slack);
# planning used to keep every parsed request and scenario, about 1.5 KB each.
MAX_PLAN_BYTES_PER_SCENARIO = 400


def _grid(n_budgets: int) -> dict[str, Any]:
    return {
        "catalogs": ["infiniband-ndr", "roce-spectrum"],
        "defaults": FAST_DEFAULTS,
        "grid": {
            "constraints.budget_usd": [1e6 + i for i in range(n_budgets)],
            "constraints.target_training_hours": [float(h) for h in range(1, 11)],
        },
    }


def _planning_peak_bytes(doc: dict[str, Any]) -> int:
    tracemalloc.start()
    try:
        plan_batch(spec_from_document(doc))
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_planning_memory_per_scenario_is_only_its_dedup_entry() -> None:
    """The extra peak of planning 4,000 more scenarios, per scenario."""
    plan_batch(spec_from_document(_grid(1)))  # warm the per-process caches
    small, large = _planning_peak_bytes(_grid(100)), _planning_peak_bytes(_grid(300))
    assert (large - small) / 4_000 < MAX_PLAN_BYTES_PER_SCENARIO


def test_rows_made_on_demand_equal_the_rows_iterated() -> None:
    doc = {
        "catalogs": ["infiniband-ndr", "roce-spectrum"],
        "defaults": FAST_DEFAULTS,
        "scenarios": [{}, {"catalog": "ethernet-budget", "objective": "min_time"}],
        "grid": {"constraints.budget_usd": [1e6, 2e6, 3e6], "top_k": [1, 2]},
    }
    rows = spec_from_document(doc).rows
    listed = list(rows)
    assert len(listed) == len(rows) == (2 + 1) * 3 * 2
    assert [rows[i] for i in range(len(rows))] == listed
    assert rows[-1] == listed[-1] and rows[2:5] == tuple(listed[2:5])


def test_planned_scenarios_are_stable_across_iterations() -> None:
    plan = plan_batch(spec_from_document(_grid(3)))
    first = [s.scenario_id for s in plan.scenarios]
    assert first == [s.scenario_id for s in plan.scenarios] and len(first) == len(set(first))
    assert plan.scenarios[4] == list(plan.scenarios)[4]
    assert list(plan.row_ids) == first  # no duplicates in this grid


def test_planning_reports_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("optimizer.batch.spec.PLAN_PROGRESS_ROWS", 10)
    seen: list[tuple[int, int]] = []
    plan_batch(
        spec_from_document(_grid(3)), progress=lambda done, total: seen.append((done, total))
    )
    assert seen == [(10, 60), (20, 60), (30, 60), (40, 60), (50, 60), (60, 60), (60, 60)]


def test_without_a_terminal_progress_lines_go_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("optimizer.batch.spec.PLAN_PROGRESS_ROWS", 1)
    spec = write_spec(tmp_path / "s.json", fast_spec([12.0, 24.0]))
    got = run(
        capsys,
        "batch",
        str(spec),
        "--out",
        str(tmp_path / "o"),
        "--workers",
        "1",
        "--progress-interval",
        "0",
    )
    assert got.code == 0, got.err
    assert "planning: 4 of 4 spec rows" in got.err
    assert "solving: 4 of 4 scenarios done (0 from earlier runs), 0 errors" in got.err


def test_quiet_prints_no_progress_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path / "s.json", fast_spec([12.0]))
    got = run(capsys, "batch", str(spec), "--out", str(tmp_path / "o"), "--workers", "1", "-q")
    assert got.code == 0 and "solving:" not in got.err
