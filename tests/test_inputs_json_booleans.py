"""JSON true/false in a field that is not bool is refused, naming the field and what it takes.

Protobuf's JSON parser reads ``true`` as 1 in a number or enum field, so ``"budget_usd":
true`` was a one-dollar budget and ``"parameters": true`` one parameter. Every reader of a
request's JSON form (``procure estimate|optimize`` files, ``--calibration`` profiles,
``procure calibrate`` measurements, ``procure batch`` specs) goes through
``optimizer.request_json.parse_json``, which refuses them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from catalog_files import SMALL
from cli_support import run

from client.commands.calibrate import read_profile
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.batch.spec import spec_from_document
from optimizer.errors import InvalidInput
from optimizer.performance.fit import load_measurements
from optimizer.request_json import parse_json

WORKLOAD: dict[str, Any] = {"model": "bert-large", "training_tokens": 2e10}
CLUSTER: dict[str, Any] = {
    "gpus": 16,
    "gpus_per_node": 8,
    "gpu_model": "A100",
    "gpu_peak_tflops": 312,
    "gpu_memory_gb": 80,
    "intra_node_gbytes_per_s": 300,
    "fabric": "infiniband",
    "nic_gbps_per_node": 1600,
}


def _file(tmp_path: Path, doc: Any) -> str:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_estimate_refuses_true_as_a_layer_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"workload": {**WORKLOAD, "layers": True}, "cluster": CLUSTER}

    result = run(capsys, "estimate", _file(tmp_path, doc))

    assert result.code == 3
    assert "workload.layers: got true, expected an integer" in result.err


def test_estimate_refuses_true_as_a_parameter_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"workload": {**WORKLOAD, "parameters": True}, "cluster": CLUSTER}

    result = run(capsys, "estimate", _file(tmp_path, doc))

    assert result.code == 3
    assert "workload.parameters: got true, expected a number" in result.err


def test_optimize_refuses_true_as_a_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = {"catalog": str(SMALL), "workload": WORKLOAD, "constraints": {"budget_usd": True}}

    result = run(capsys, "optimize", _file(tmp_path, doc))

    assert result.code == 3
    assert "constraints.budget_usd: got true, expected a number" in result.err


def test_a_bool_field_still_takes_true(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"workload": {**WORKLOAD, "flash_attention": False}, "cluster": CLUSTER}

    result = run(capsys, "estimate", _file(tmp_path, doc), "--format", "json")

    assert result.code == 0, result.err


def test_a_calibration_profile_refuses_false_as_a_number(tmp_path: Path) -> None:
    path = _file(tmp_path, {"gpu_generation": "A100", "kernel_efficiency_scale": False})

    with pytest.raises(InvalidInput) as err:
        read_profile(path)

    assert err.value.field == "calibration.kernel_efficiency_scale"
    assert err.value.problem == "got false, expected a number"


def test_a_measurement_request_names_the_entry_and_the_field(tmp_path: Path) -> None:
    entry = {
        "request": {"workload": WORKLOAD, "cluster": {**CLUSTER, "gpu_peak_tflops": True}},
        "measured": {"step_time_s": 1.0},
    }
    path = tmp_path / "measurements.json"
    path.write_text(json.dumps([entry]))

    with pytest.raises(InvalidInput) as err:
        load_measurements(path)

    assert err.value.field == "measurements[0].request.cluster.gpu_peak_tflops"


def test_a_batch_spec_scenario_names_the_scenario_and_the_field() -> None:
    doc = {
        "catalogs": ["infiniband-ndr"],
        "scenarios": [{"workload": WORKLOAD, "constraints": {"target_training_hours": True}}],
    }

    with pytest.raises(InvalidInput) as err:
        spec_from_document(doc)

    assert err.value.field == "scenarios[0]"
    assert err.value.problem == "constraints.target_training_hours: got true, expected a number"


def test_an_entry_of_a_repeated_message_is_named_with_its_index() -> None:
    doc = {"workloads": [{"workload": WORKLOAD}, {"workload": {"layers": False}}]}

    with pytest.raises(InvalidInput) as err:
        parse_json(doc, optimize_pb2.OptimizeRequest())

    assert err.value.field == "workloads[1].workload.layers"
