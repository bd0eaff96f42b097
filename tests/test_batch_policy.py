"""Batch scenarios carry issue 13's request fields: the bandwidth policy and require_fabric
as columns, and a scenario's own ``catalogs`` is refused (a batch runs one catalog at a time)."""

from __future__ import annotations

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.batch.spec import request_error, spec_from_csv, spec_from_document
from optimizer.errors import InvalidInput


def test_csv_columns_set_the_policy_and_require_fabric() -> None:
    text = (
        "catalog,model,target_training_hours,min_nic_gbps_per_gpu,require_fabric\n"
        "infiniband-ndr,bert-large,48,400,true\n"
    )
    (row,) = spec_from_csv(text).rows
    assert row.request.constraints.min_nic_gbps_per_gpu == 400
    assert row.request.require_fabric is True
    assert request_error(row.request) is None


def test_a_bad_policy_in_a_scenario_names_the_field() -> None:
    (row,) = spec_from_document(
        {
            "catalogs": ["infiniband-ndr"],
            "scenarios": [
                {
                    "workload": {"model": "bert-large"},
                    "constraints": {"target_training_hours": 48, "min_nic_gbps_per_gpu": -1},
                }
            ],
        }
    ).rows
    error = request_error(row.request)
    assert isinstance(error, InvalidInput) and error.field == "constraints.min_nic_gbps_per_gpu"


def test_a_scenario_naming_several_catalogs_is_refused_not_ignored() -> None:
    request = optimize_pb2.OptimizeRequest(catalogs=["roce-spectrum"])
    request.workload.model = "bert-large"
    request.constraints.target_training_hours = 48
    error = request_error(request)
    assert isinstance(error, InvalidInput) and error.field == "catalogs"
