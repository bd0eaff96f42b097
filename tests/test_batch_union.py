"""A batch scenario may name its own catalog union (issue 13): ``catalogs: [A, B]`` on a
scenario, in ``defaults``, in ``grid`` or as a CSV cell runs once against the union of A and B,
as ``procure optimize --catalog A --catalog B`` does, and its result rows name the union."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_support import run
from google.protobuf import json_format

from optimizer._pb.procurement.v1 import service_pb2
from optimizer.batch import Engine, LocalEngine, run_batch
from optimizer.batch.spec import Scenario, plan_batch, spec_from_csv, spec_from_document
from optimizer.batch.tasks import TaskResult, run_scenario
from optimizer.batch.writer import read_results
from optimizer.catalog.resolve import resolve_catalog
from optimizer.errors import InvalidInput
from optimizer.service.batch_call import batch_results

# Llama-3 8B on 2e11 tokens in 100 h: the union (servers of one quote, switches of the other)
# is cheaper than either catalog alone, so a batch that ignored the union would show it.
UNION = ["roce-spectrum", "ethernet-budget"]
REQUEST: dict[str, Any] = {
    "top_k": 1,
    "workload": {"model": "llama3-8b", "training_tokens": 2e11},
    "constraints": {"target_training_hours": 100},
}
RANK_ONE = ("server_sku", "nodes", "nic_sku", "fabric", "topology", "capex_usd")


def _cli_rank_one(capsys: pytest.CaptureFixture[str], *catalogs: str) -> dict[str, Any]:
    """Rank 1 of ``procure optimize --catalog A --catalog B ...`` for REQUEST."""
    flags = [arg for c in catalogs for arg in ("--catalog", c)]
    result = run(
        capsys,
        "optimize",
        *flags,
        "--workload",
        "llama3-8b",
        "--tokens",
        "2e11",
        "--target-hours",
        "100",
        "--top-k",
        "1",
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    design: dict[str, Any] = json.loads(result.out)["designs"][0]
    return {k: design.get(k) for k in RANK_ONE}


def test_a_scenarios_catalogs_make_one_row_against_their_union() -> None:
    spec = spec_from_document(
        {"catalogs": ["infiniband-ndr"], "scenarios": [{**REQUEST, "catalogs": UNION}]}
    )
    (row,) = spec.rows
    assert row.catalog_ref == "roce-spectrum + ethernet-budget"
    assert not row.request.catalogs  # moved into the reference: the request is the same one


def test_a_grid_of_catalog_lists_gives_one_row_per_union() -> None:
    spec = spec_from_document(
        {"scenarios": [REQUEST], "grid": {"catalogs": [UNION, ["roce-spectrum"]]}}
    )
    assert [r.catalog_ref for r in spec.rows] == [
        "roce-spectrum + ethernet-budget",
        "roce-spectrum",
    ]
    assert [spec.rows[k].catalog_ref for k in range(len(spec.rows))] == [
        r.catalog_ref for r in spec.rows
    ]


def test_a_scenarios_own_catalog_comes_first_in_its_union() -> None:
    doc = {"scenarios": [{**REQUEST, "catalog": "infiniband-ndr", "catalogs": UNION}]}
    (row,) = spec_from_document(doc).rows
    assert row.catalog_ref == "infiniband-ndr + roce-spectrum + ethernet-budget"


def test_a_csv_catalogs_cell_names_a_union() -> None:
    text = (
        "catalog,catalogs,model,target_training_hours\n"
        ",roce-spectrum;ethernet-budget,llama3-8b,100\n"
    )
    (row,) = spec_from_csv(text).rows
    assert row.catalog_ref == "roce-spectrum + ethernet-budget"


def test_an_empty_catalogs_list_names_the_scenario() -> None:
    with pytest.raises(InvalidInput) as e:
        list(spec_from_document({"scenarios": [REQUEST], "grid": {"catalogs": [[]]}}).rows)
    assert "catalogs" in (e.value.field or "") and "scenarios[0]" in (e.value.field or "")


def test_a_catalog_named_twice_in_a_union_is_refused_naming_it() -> None:
    spec = spec_from_document({"scenarios": [{**REQUEST, "catalogs": ["roce-spectrum"] * 2}]})
    with pytest.raises(InvalidInput, match="name each catalog once"):
        plan_batch(spec)


def test_a_union_scenarios_rank_one_is_procure_optimizes_over_the_same_catalogs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    plan = plan_batch(spec_from_document({"scenarios": [{**REQUEST, "catalogs": UNION}]}))
    (scenario,) = plan.scenarios
    row = run_scenario(scenario, plan.catalog_data[scenario.catalog_id]).row
    assert {k: row[k] for k in RANK_ONE} == _cli_rank_one(capsys, *UNION)
    # Cheaper than either catalog alone: the union, not one of its parts, was solved.
    for alone in UNION:
        assert row["capex_usd"] < _cli_rank_one(capsys, alone)["capex_usd"]


def test_the_comparison_rows_name_the_union(tmp_path: Path) -> None:
    doc = {"scenarios": [REQUEST], "grid": {"catalogs": [UNION, ["roce-spectrum"]]}}
    summary = run_batch(
        spec_from_document(doc), tmp_path / "out", engine=LocalEngine(1), report=False
    )
    assert summary.errors == 0
    rows = read_results(tmp_path / "out").set_index("catalog")
    assert set(rows.index) == {"roce-spectrum + ethernet-budget", "roce-spectrum"}
    # The same request against each: one comparison, the union its cheaper side.
    assert rows["comparison_key"].nunique() == 1
    union = rows.loc["roce-spectrum + ethernet-budget"]
    assert union["catalog_name"] == "roce-spectrum+ethernet-budget"
    assert union["capex_usd"] < rows.loc["roce-spectrum", "capex_usd"]


class _InlineEngine(Engine):
    """Runs each scenario in this process with the batch runner's task."""

    workers = 1

    def run(
        self,
        catalogs: Mapping[str, bytes],
        scenarios: Iterable[Scenario],
        *,
        timeout_s: float | None = None,
    ) -> Generator[TaskResult, None, None]:
        for s in scenarios:
            yield run_scenario(s, catalogs[s.catalog_id], timeout_s)


def _batch_request(**scenario: Any) -> service_pb2.BatchOptimizeRequest:
    request = service_pb2.BatchOptimizeRequest()
    json_format.ParseDict({**REQUEST, **scenario}, request.scenarios.add())
    return request


def test_batch_optimize_runs_a_scenarios_catalogs_as_their_union(
    capsys: pytest.CaptureFixture[str],
) -> None:
    request = _batch_request(catalog=UNION[0], catalogs=UNION[1:])
    (result,) = batch_results(request, _InlineEngine(), resolve_catalog)
    assert not result.error_code, result.error_message
    assert result.catalog == "roce-spectrum + ethernet-budget"
    best = result.response.designs[0]
    got = json_format.MessageToDict(best, preserving_proto_field_name=True)
    assert {k: got.get(k) for k in RANK_ONE} == _cli_rank_one(capsys, *UNION)


def test_batch_optimize_names_the_part_of_a_union_that_does_not_resolve() -> None:
    request = _batch_request(catalogs=["roce-spectrum", "no-such-catalog"])
    (result,) = batch_results(request, _InlineEngine(), resolve_catalog)
    assert result.error_code == "NOT_FOUND"
    assert "no-such-catalog" in result.error_message


def test_a_sweep_scenario_file_runs_a_union_as_procure_optimize_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "scenarios.json"
    path.write_text(json.dumps({"scenarios": [{**REQUEST, "catalogs": UNION}]}))
    result = run(capsys, "sweep", "--scenarios", str(path), "--format", "json")
    assert result.code == 0, result.err
    (scenario,) = json.loads(result.out)["scenarios"]
    assert scenario["request"]["catalog"] == UNION[0]
    assert scenario["request"]["catalogs"] == UNION[1:]
    design = scenario["response"]["designs"][0]
    assert {k: design.get(k) for k in RANK_ONE} == _cli_rank_one(capsys, *UNION)


def test_each_bom_line_of_a_union_row_names_the_catalog_it_is_ordered_from() -> None:
    plan = plan_batch(spec_from_document({"scenarios": [{**REQUEST, "catalogs": UNION}]}))
    (scenario,) = plan.scenarios
    line = json.loads(run_scenario(scenario, plan.catalog_data[scenario.catalog_id]).response_json)
    origins = {b["catalog"] for b in line["response"]["designs"][0]["bom"]}
    assert origins == set(UNION)  # servers from one quote, the rest from the other
