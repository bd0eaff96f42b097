"""`procure estimate SPEC.json`: the request as protobuf JSON in, a response or an error out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from client.cli import main
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(["estimate", *args])
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


def _spec(tmp_path: Path, **changes: Any) -> Path:
    spec = json.loads((EXAMPLES / "estimate-llama3-70b.json").read_text())
    for dotted, value in changes.items():
        section, field = dotted.split("__")
        spec.setdefault(section, {})[field] = value
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    return path


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.glob("estimate-*.json")))
def test_every_example_estimates(capsys: pytest.CaptureFixture[str], example: str) -> None:
    code, out, _ = _run(capsys, str(EXAMPLES / example), "--format", "json")
    resp = json.loads(out)
    assert code == 0
    assert (
        resp["training_time_hours_low"]
        <= resp["training_time_hours"]
        <= resp["training_time_hours_high"]
    )


def test_json_output_uses_proto_field_names(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, str(EXAMPLES / "estimate-llama3-70b.json"), "--format", "json")
    resp = json.loads(out)
    assert {
        "step_time_s",
        "training_time_hours",
        "model_tflops_per_gpu",
        "hardware_tflops_per_gpu",
        "memory_per_gpu_gb",
        "parallelism",
        "breakdown",
    } <= resp.keys()
    assert "micro_batch_size" in resp["parallelism"]


def test_table_output_is_readable(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(EXAMPLES / "estimate-llama3-70b.json"))
    assert code == 0
    assert "training time (hours)" in out and "MFU" in out


def test_the_table_shows_the_context_degree_and_its_time(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """GPUs = tensor x pipeline x data x context: without the context degree the plan's
    degrees did not multiply to the cluster's GPUs."""
    spec = _spec(
        tmp_path,
        workload__sequence_length=65_536,
        workload__global_batch_size=64,
        parallelism__context=8,
    )
    _, out, _ = _run(capsys, str(spec), "--format", "json")
    resp = json.loads(out)
    p, b = resp["parallelism"], resp["breakdown"]
    assert p["tensor"] * p["pipeline"] * p["data"] * p["context"] == 1024
    assert b["context_parallel_s"] > 0
    _, table, _ = _run(capsys, str(spec))
    assert "plan (tensor, pipeline, data, expert, context)" in table
    degrees = f"{p['tensor']}, {p['pipeline']}, {p['data']}, {p['expert']}, 8"
    assert degrees in table
    assert f"{b['context_parallel_s']:.3f}" in table


def test_the_table_gives_the_memory_per_gpu_in_gib_too(capsys: pytest.CaptureFixture[str]) -> None:
    """A GPU's memory is stated in GiB: 81.2 (decimal) GB fits an "80 GB" H100's 85.9 GB,
    but read beside its 80 it looked as if it did not."""
    example = str(EXAMPLES / "estimate-llama3-70b.json")
    _, out, _ = _run(capsys, example, "--format", "json")
    gb = json.loads(out)["memory_per_gpu_gb"]
    _, table, _ = _run(capsys, example)
    row = next(line for line in table.splitlines() if "memory per GPU (GB / GiB)" in line)
    assert f"{gb:.1f} / {gb * 1e9 / 2**30:.1f}" in row


def test_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    code, out, _ = _run(
        capsys,
        str(EXAMPLES / "estimate-llama3-70b.json"),
        "--format",
        "json",
        "--output",
        str(target),
    )
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["training_time_hours"] > 0


def test_fixed_plan_is_reported_back(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, str(EXAMPLES / "estimate-gpt3-175b-megatron.json"), "--format", "json")
    p = json.loads(out)["parallelism"]
    assert (p["tensor"], p["pipeline"], p["data"]) == (8, 8, 16)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"cluster__gpuz": 8}, "gpuz"),  # unknown field
        ({"cluster__fabric": "omnipath"}, "cluster.fabric"),
        ({"cluster__nic_gbps_per_node": 0}, "cluster.nic_gbps_per_node"),
        ({"cluster__topology": "hypercube"}, "cluster.topology"),
        ({"parallelism__tensor": 3}, "parallelism"),
        (
            {
                "parallelism__tensor": 8,
                "parallelism__pipeline": 1,
                "parallelism__data": 128,
                "parallelism__zero_stage": 0,
                "parallelism__micro_batch_size": 1,
                "parallelism__virtual_pipeline": 1,
                "parallelism__expert": 1,
            },
            "parallelism",
        ),
        ({"workload__model": "gpt-9"}, "workload.model"),
        ({"workload__activation_recompute": "sometimes"}, "workload.activation_recompute"),
        ({"workload__framework": "jax"}, "workload.framework"),
        (
            {"workload__framework": "deepspeed", "parallelism__virtual_pipeline": 2},
            "parallelism.virtual_pipeline",
        ),
        (
            {
                "workload__framework": "deepspeed",
                "workload__sequence_length": 65_536,
                "parallelism__context": 16,  # Llama 3's 8 K/V heads over 16 Ulysses ranks
            },
            "parallelism.context",
        ),
    ],
)
def test_bad_specs_exit_3_naming_the_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, changes: dict[str, Any], field: str
) -> None:
    code, _, err = _run(capsys, str(_spec(tmp_path, **changes)), "--format", "json")
    assert code == 3
    assert field in err and "Traceback" not in err


def test_a_model_that_does_not_fit_is_infeasible(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _run(
        capsys, str(_spec(tmp_path, workload__model="llama3-405b", cluster__gpus=8))
    )
    assert code == 3 and "no parallel plan fits" in err


def test_custom_architecture_needs_its_fields() -> None:
    req = estimate_pb2.EstimateRequest()
    req.workload.layers = 2
    req.cluster.gpus = 8
    req.cluster.fabric = "roce"
    with pytest.raises(ValueError, match=r"workload.hidden_size"):
        estimate(req)


def test_fabric_profile_override_in_the_request_slows_the_estimate(tmp_path: Path) -> None:
    spec = json.loads((EXAMPLES / "estimate-mixtral-8x7b-roce.json").read_text())
    base = estimate(_parse(spec))
    spec["fabric_profiles"] = [
        {
            "fabric": "roce",
            "efficiency_low": 0.2,
            "efficiency_expected": 0.3,
            "efficiency_high": 0.4,
            "base_latency_us_low": 5,
            "base_latency_us_expected": 10,
            "base_latency_us_high": 20,
            "per_hop_latency_ns": 400,
            "host_network_cpu_ghz_per_node": 32,
        }
    ]
    assert estimate(_parse(spec)).training_time_hours > base.training_time_hours


def test_server_sku_takes_gpu_fields_from_the_catalog() -> None:
    from optimizer.catalog.resolve import resolve_catalog

    server = resolve_catalog("infiniband-ndr").servers[0]
    spec = {
        "workload": {"model": "llama3-8b"},
        "catalog": "infiniband-ndr",
        "cluster": {
            "gpus": 64,
            "server_sku": server.sku,
            "fabric": "infiniband",
            "nic_gbps_per_node": 3200,
        },
    }
    resp = estimate(_parse(spec))
    assert resp.mfu * 1.0 == pytest.approx(resp.model_tflops_per_gpu / server.gpu_peak_bf16_tflops)


def _parse(spec: dict[str, Any]) -> estimate_pb2.EstimateRequest:
    from google.protobuf import json_format

    return json_format.ParseDict(spec, estimate_pb2.EstimateRequest())


def test_the_table_counts_a_small_model_in_millions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _spec(tmp_path, workload__model="mpt-125m", workload__training_tokens=1e9)

    code, out, _ = _run(capsys, str(path))

    assert code == 0
    assert "124M" in next(row for row in out.splitlines() if "parameters" in row)


def test_an_fp8_estimate_says_which_peak_its_mfu_is_of(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """MFU is of the dense BF16 peak; an fp8 run's 57.8 % read as if of its FP8 peak."""
    _, out, _ = _run(capsys, str(_spec(tmp_path, workload__precision="fp8")), "--format", "json")
    resp = json.loads(out)
    bf16, fp8 = 989.4, 1978.9  # the example's cluster
    assert resp["mfu"] == pytest.approx(resp["model_tflops_per_gpu"] / bf16)
    assert (
        f"MFU {resp['mfu']:.1%} is of the dense BF16 peak (989 TFLOP/s); of the dense FP8 peak "
        f"(1,979) it is {resp['model_tflops_per_gpu'] / fp8:.1%}"
    ) in resp["notes"]


def test_the_table_gives_the_layers_of_each_pipeline_stage(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The layout the estimate timed, stated (parallelism.stage_layers) or the model's own,
    so that a run can be configured to it."""
    spec = _spec(tmp_path, parallelism__stage_layers=[19, 21, 21, 19])
    _, out, _ = _run(capsys, str(spec), "--format", "json")
    assert json.loads(out)["parallelism"]["stage_layers"] == [19, 21, 21, 19]
    _, table, _ = _run(capsys, str(spec))
    row = next(line for line in table.splitlines() if "layers per pipeline stage" in line)
    assert "19, 21, 21, 19" in row
