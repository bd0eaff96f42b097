"""Facility limits on the wire and on the command line: the flags reach the request, the old
``rack_power_kw`` keeps working beside ``max_rack_kw``, and a bad value is refused naming its
field (exit 3 on the CLI, INVALID_ARGUMENT from the API)."""

from __future__ import annotations

import json

import pytest
from cli_support import run

from client.commands.optimize import request_from_flags
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.optimize.convert import spec_from_proto

SCENARIO = (
    "optimize",
    "--catalog",
    "infiniband-ndr",
    "--workload",
    "bert-large",
    "--tokens",
    "2e10",
    "--target-hours",
    "24",
    "--top-k",
    "1",
)


def _request(**constraints: object) -> optimize_pb2.OptimizeRequest:
    return optimize_pb2.OptimizeRequest(
        catalog="infiniband-ndr",
        top_k=1,
        workload=estimate_pb2.Workload(model="bert-large", training_tokens=2e10),
        constraints=optimize_pb2.Constraints(target_training_hours=24, **constraints),
    )


def test_the_flags_fill_the_facility_fields() -> None:
    req = request_from_flags(max_racks=4, max_floor_positions=5, max_rack_kw=30.0, cooling="liquid")
    c = req.constraints
    assert (c.max_racks, c.max_floor_positions, c.max_rack_kw, c.cooling) == (4, 5, 30.0, "liquid")


def test_the_facility_fields_reach_the_spec() -> None:
    spec = spec_from_proto(_request(max_floor_positions=5, cooling="air", max_rack_kw=25.0))
    assert spec.constraints.max_floor_positions == 5
    assert spec.constraints.cooling == "air"
    assert spec.rack_power_kw == 25.0


def test_the_old_rack_power_field_still_sets_the_rack_limit() -> None:
    assert spec_from_proto(_request(rack_power_kw=21.0)).rack_power_kw == 21.0
    both = _request(rack_power_kw=21.0, max_rack_kw=21.0)
    assert spec_from_proto(both).rack_power_kw == 21.0


def test_the_old_and_new_rack_fields_must_agree() -> None:
    with pytest.raises(InvalidInput) as e:
        spec_from_proto(_request(rack_power_kw=21.0, max_rack_kw=30.0))
    assert e.value.field == "constraints.max_rack_kw"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_floor_positions", 0),
        ("max_rack_kw", -1.0),
        ("max_racks", 0),
        ("cooling", "water"),
    ],
)
def test_a_bad_facility_value_is_invalid_argument_naming_its_field(
    field: str, value: object
) -> None:
    with pytest.raises(InvalidInput) as e:
        api.optimize(_request(**{field: value}))
    assert e.value.field == f"constraints.{field}"
    assert e.value.grpc_code == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [
        ("--max-floor-positions", "0", "constraints.max_floor_positions"),
        ("--max-rack-kw", "-1", "constraints.max_rack_kw"),
        ("--max-racks", "0", "constraints.max_racks"),
        ("--cooling", "water", "constraints.cooling"),
    ],
)
def test_a_bad_facility_flag_exits_3_naming_the_field(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, field: str
) -> None:
    result = run(capsys, *SCENARIO, flag, value)
    assert result.code == 3
    assert result.err.startswith(f"error: {field}: ")
    assert "Traceback" not in result.err


def test_the_answer_reports_what_each_design_asks_of_the_hall(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, *SCENARIO, "--cooling", "air", "--format", "json")
    assert result.code == 0
    design = json.loads(result.out)["designs"][0]
    assert design["cooling"] == "air"
    assert design["floor_positions"] >= design["racks"]
    assert 0 < design["rack_kw"] <= 30.0


def test_the_csv_answer_carries_the_facility_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = run(capsys, *SCENARIO, "--cooling", "air", "--format", "csv")
    assert result.code == 0
    header, row = result.out.splitlines()[:2]
    values = dict(zip(header.split(","), row.split(","), strict=True))
    assert values["cooling"] == "air"
    assert int(values["floor_positions"]) >= int(values["racks"])
    assert float(values["rack_kw"]) > 0
