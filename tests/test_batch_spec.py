"""Batch specs: expansion, CSV columns, stable scenario ids, and errors before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from hypothesis import given
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.batch.spec import (
    canonical_request_json,
    load_spec,
    plan_batch,
    scenario_id,
    spec_from_csv,
    spec_from_document,
)
from optimizer.errors import InvalidInput, LimitExceeded, NotFound

CATALOGS = ["infiniband-ndr", "roce-spectrum", "ethernet-budget"]


def _request(doc: dict) -> optimize_pb2.OptimizeRequest:
    return json_format.ParseDict(doc, optimize_pb2.OptimizeRequest())


def test_a_document_runs_every_scenario_under_every_grid_combination_on_every_catalog() -> None:
    spec = spec_from_document(
        {
            "catalogs": CATALOGS,
            "scenarios": [
                {"workload": {"model": "bert-large"}},
                {"workload": {"model": "llama3-8b"}},
            ],
            "grid": {
                "constraints.budget_usd": [1e6, 2e6],
                "constraints.target_training_hours": [24, 48, 96],
            },
        }
    )
    assert len(spec.rows) == 3 * 2 * 2 * 3
    assert {r.catalog_ref for r in spec.rows} == set(CATALOGS)
    budgets = {r.request.constraints.budget_usd for r in spec.rows}
    assert budgets == {1e6, 2e6}


def test_grid_values_override_the_scenario_which_overrides_the_defaults() -> None:
    spec = spec_from_document(
        {
            "catalogs": ["infiniband-ndr"],
            "defaults": {"top_k": 2, "constraints": {"budget_usd": 1, "max_gpus": 64}},
            "scenarios": [
                {"top_k": 5, "constraints": {"budget_usd": 2}, "workload": {"model": "bert-large"}}
            ],
            "grid": {"constraints.budget_usd": [3]},
        }
    )
    (row,) = spec.rows
    assert row.request.top_k == 5
    assert row.request.constraints.budget_usd == 3
    assert row.request.constraints.max_gpus == 64


def test_a_scenario_with_its_own_catalog_runs_only_on_that_catalog() -> None:
    spec = spec_from_document(
        {
            "catalogs": CATALOGS,
            "scenarios": [{"catalog": "roce-spectrum", "workload": {"model": "bert-large"}}],
        }
    )
    assert [r.catalog_ref for r in spec.rows] == ["roce-spectrum"]
    assert spec.rows[0].request.catalog == ""


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"catalogs": CATALOGS, "scenario": [{}]}, "spec"),
        ({"catalogs": CATALOGS, "scenarios": [{"workload": {"modle": "x"}}]}, "scenarios[0]"),
        ({"catalogs": CATALOGS, "grid": {"constraints.budget": [1]}}, "grid.constraints.budget"),
        (
            {"catalogs": CATALOGS, "grid": {"constraints.budget_usd": []}},
            "grid.constraints.budget_usd",
        ),
        ({"scenarios": [{"top_k": 1}]}, "scenarios[0]"),
        ({"catalogs": "infiniband-ndr"}, "catalogs"),
        ({"scenarios": [{"catalog": 7}]}, "scenarios[0].catalog"),
    ],
)
def test_a_malformed_document_is_rejected_naming_the_place(doc: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        spec_from_document(doc, source="spec")
    assert err.value.field == field


def test_a_grid_beyond_the_limit_is_refused_before_expanding() -> None:
    values = list(range(1000))
    with pytest.raises(LimitExceeded):
        spec_from_document(
            {"catalogs": CATALOGS, "grid": {"top_k": values, "constraints.max_gpus": values}}
        )


def test_csv_columns_may_be_bare_field_names_or_dotted_paths() -> None:
    text = (
        "catalog,model,training_tokens,constraints.budget_usd,target_training_hours,"
        "allowed_fabrics,flash_attention\n"
        "infiniband-ndr,bert-large,1e10,2000000,48,infiniband;roce,false\n"
        "roce-spectrum,llama3-8b,,,72,,\n"
    )
    first, second = spec_from_csv(text).rows
    assert first.catalog_ref == "infiniband-ndr"
    assert first.request.workload.model == "bert-large"
    assert first.request.workload.training_tokens == 1e10
    assert first.request.constraints.budget_usd == 2e6
    assert list(first.request.allowed_fabrics) == ["infiniband", "roce"]
    assert first.request.workload.flash_attention is False
    assert not second.request.constraints.HasField("budget_usd")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("model\nbert-large\n", "spec.csv"),
        ("catalog,budget\ninfiniband-ndr,1\n", "spec.csv, column budget"),
        ("catalog,micro_batch_size\ninfiniband-ndr,1\n", "spec.csv, column micro_batch_size"),
        ("catalog,top_k\ninfiniband-ndr,many\n", "spec.csv, row 2"),
        (
            "catalog,flash_attention\ninfiniband-ndr,yes\n",
            "spec.csv, row 2, column flash_attention",
        ),
        ("catalog,top_k\n,1\n", "spec.csv, row 2, column catalog"),
        ("catalog,top_k\ninfiniband-ndr,1,2\n", "spec.csv, row 2"),
    ],
)
def test_a_malformed_csv_is_rejected_naming_row_and_column(text: str, where: str) -> None:
    with pytest.raises(InvalidInput) as err:
        spec_from_csv(text)
    assert err.value.field == where


def test_yaml_json_and_csv_specs_load_by_suffix(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(
        "catalogs: [infiniband-ndr]\nscenarios: [{workload: {model: bert-large}}]\n"
    )
    (tmp_path / "a.json").write_text(
        json.dumps(
            {"catalogs": ["infiniband-ndr"], "scenarios": [{"workload": {"model": "bert-large"}}]}
        )
    )
    (tmp_path / "a.csv").write_text("catalog,model\ninfiniband-ndr,bert-large\n")
    requests = [load_spec(tmp_path / f"a.{ext}").rows[0].request for ext in ("yaml", "json", "csv")]
    assert requests[0] == requests[1] == requests[2]
    (tmp_path / "a.toml").write_text("")
    with pytest.raises(InvalidInput):
        load_spec(tmp_path / "a.toml")


def test_planning_resolves_catalogs_once_and_drops_repeated_scenarios() -> None:
    doc = {"catalogs": CATALOGS, "scenarios": [{"workload": {"model": "bert-large"}}] * 2}
    plan = plan_batch(spec_from_document(doc))
    assert len(plan.catalogs) == 3
    assert len(plan.scenarios) == 3
    assert plan.duplicates == 3
    assert len({s.comparison_key for s in plan.scenarios}) == 1


def test_an_unknown_catalog_fails_the_plan_before_any_work(tmp_path: Path) -> None:
    spec = spec_from_document({"catalogs": ["no-such-vendor"], "scenarios": [{}]})
    with pytest.raises(NotFound):
        plan_batch(spec, data_dir=tmp_path)


_budgets = st.floats(min_value=1, max_value=1e12, allow_nan=False)


@given(budget=_budgets, top_k=st.integers(1, 20), tokens=_budgets)
def test_scenario_ids_depend_on_content_not_spelling_or_key_order(
    budget: float, top_k: int, tokens: float
) -> None:
    a = _request(
        {
            "top_k": top_k,
            "constraints": {"budget_usd": budget},
            "workload": {"training_tokens": tokens, "model": "bert-large"},
        }
    )
    b = _request(
        {
            "workload": {"model": "bert-large", "training_tokens": str(tokens)},
            "constraints": {"budget_usd": str(budget)},
            "top_k": str(top_k),
            "catalog": "ignored: the content hash names the catalog",
        }
    )
    assert scenario_id("c" * 64, canonical_request_json(a)) == scenario_id(
        "c" * 64, canonical_request_json(b)
    )
    assert scenario_id("c" * 64, canonical_request_json(a)) != scenario_id(
        "d" * 64, canonical_request_json(a)
    )
