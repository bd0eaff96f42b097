"""The batch task never raises: every outcome of a scenario is one complete row."""

from __future__ import annotations

import json

import pytest

from optimizer.batch.spec import BatchPlan, plan_batch, spec_from_document
from optimizer.batch.tasks import ERROR, run_scenario
from optimizer.batch.writer import ROW_SCHEMA


@pytest.fixture(scope="module")
def plan() -> BatchPlan:
    return plan_batch(
        spec_from_document(
            {
                "catalogs": ["infiniband-ndr"],
                "defaults": {
                    "top_k": 1,
                    "workload": {"model": "bert-large", "training_tokens": 1e10},
                    "allowed_topologies": ["single_switch"],
                },
                "scenarios": [
                    {"constraints": {"target_training_hours": 48}},
                    {"constraints": {"target_training_hours": -48}},
                ],
            }
        )
    )


def test_a_solved_scenario_is_a_row_with_its_rank_1_design(plan: BatchPlan) -> None:
    good = plan.scenarios[0]
    result = run_scenario(good, plan.catalogs[good.catalog_id].data)
    assert list(result.row) == ROW_SCHEMA.names
    row = result.row
    assert row["status"] == "OPTIMAL" and row["error"] is None
    assert row["capex_usd"] > 0 and row["training_time_hours"] <= 48
    assert row["vendor"] == "NVIDIA (reference prices)"
    line = json.loads(result.response_json)
    assert line["scenario_id"] == good.scenario_id
    assert line["response"]["designs"][0]["capex_usd"] == row["capex_usd"]


def test_a_request_the_optimizer_rejects_is_an_error_row(plan: BatchPlan) -> None:
    bad = plan.scenarios[1]
    row = run_scenario(bad, plan.catalogs[bad.catalog_id].data).row
    assert row["status"] == ERROR
    assert row["error_code"] == "INVALID_ARGUMENT"
    assert "target_training_hours" in row["error"]
    assert row["target_training_hours"] == -48


def test_catalog_bytes_that_do_not_match_their_id_are_an_error_row(plan: BatchPlan) -> None:
    good = plan.scenarios[0]
    tampered = plan.catalogs[good.catalog_id].data.replace(b"NVIDIA", b"NVIDIB")
    fresh = type(good)(
        good.scenario_id, good.comparison_key, "f" * 64, good.catalog_ref, good.request_json
    )
    row = run_scenario(fresh, tampered).row
    assert row["status"] == ERROR and "content hash" in row["error"]


def test_a_scenario_past_its_timeout_says_so_in_its_row(plan: BatchPlan) -> None:
    good = plan.scenarios[0]
    row = run_scenario(good, plan.catalogs[good.catalog_id].data, timeout_s=1e-6).row
    assert row["error_code"] == "DEADLINE_EXCEEDED"
    assert "timeout" in row["error"]
