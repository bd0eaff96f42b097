"""Goodput end to end (issue 14): an EstimateRequest's ``reliability`` reaches the answer over
the real gRPC service, the CLI prints it, and the optimizer's times include it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from client.cli import main
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2
from tests.service_support import (
    TOKEN_A,
    Stubs,
    bearer,
    invalid_argument_fields,
    small_optimize,
    token_stubs,
)

A = bearer(TOKEN_A)
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    yield from token_stubs(tmp_path_factory.mktemp("goodput"))


def _llama3_70b(**reliability: float) -> estimate_pb2.EstimateRequest:
    req = json_format.Parse(
        (EXAMPLES / "estimate-llama3-70b.json").read_text(), estimate_pb2.EstimateRequest()
    )
    req.reliability.CopyFrom(estimate_pb2.Reliability(**reliability))
    return req


def test_a_request_with_reliability_fields_returns_goodput_and_both_times(stubs: Stubs) -> None:
    reply = stubs.optimizer.Estimate(
        _llama3_70b(
            failures_per_gpu_hour=1e-4,
            storage_write_gbytes_per_s_per_gpu=0.5,
            restart_minutes=20.0,
        ),
        metadata=A,
        timeout=60,
    )
    assert 0.5 < reply.goodput < 1.0
    assert reply.training_time_hours == pytest.approx(
        reply.productive_training_time_hours / reply.goodput
    )
    assert reply.checkpoint_interval_minutes > 0
    assert reply.expected_interruptions == pytest.approx(
        1e-4 * reply.gpus_used * reply.training_time_hours
    )
    assert any(n.startswith("goodput ") for n in reply.notes)


def test_the_range_is_stretched_by_the_same_goodput(stubs: Stubs) -> None:
    reply = stubs.optimizer.Estimate(_llama3_70b(), metadata=A, timeout=60)
    plain = stubs.optimizer.Estimate(_llama3_70b(failures_per_gpu_hour=0.0), metadata=A, timeout=60)
    low_ratio = reply.training_time_hours_low / plain.training_time_hours_low
    high_ratio = reply.training_time_hours_high / plain.training_time_hours_high
    assert low_ratio == pytest.approx(high_ratio, rel=1e-9)
    assert low_ratio > 1.0


def test_more_failures_make_the_same_run_longer(stubs: Stubs) -> None:
    rare = stubs.optimizer.Estimate(_llama3_70b(failures_per_gpu_hour=1e-6), metadata=A)
    often = stubs.optimizer.Estimate(_llama3_70b(failures_per_gpu_hour=1e-4), metadata=A)
    assert rare.productive_training_time_hours == often.productive_training_time_hours
    assert often.training_time_hours > rare.training_time_hours


def test_a_fixed_checkpoint_interval_is_reported(stubs: Stubs) -> None:
    reply = stubs.optimizer.Estimate(
        _llama3_70b(checkpoint_interval_minutes=90.0), metadata=A, timeout=60
    )
    assert reply.checkpoint_interval_minutes == pytest.approx(90.0)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("failures_per_gpu_hour", -1e-5),
        ("storage_write_gbytes_per_s_per_gpu", 0.0),
        ("storage_read_gbytes_per_s_per_gpu", 0.0),
        ("restart_minutes", -5.0),
        ("checkpoint_interval_minutes", 0.0),
    ],
)
def test_a_bad_reliability_field_is_invalid_argument_naming_it(
    stubs: Stubs, field: str, value: float
) -> None:
    request = _llama3_70b(**{field: value})
    fields = invalid_argument_fields(
        lambda: stubs.optimizer.Estimate(request, metadata=A, timeout=60)
    )
    assert fields == [f"reliability.{field}"]


def test_procure_estimate_prints_goodput_and_both_times(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    spec = json.loads((EXAMPLES / "estimate-llama3-70b.json").read_text())
    spec["reliability"] = {"failures_per_gpu_hour": 1e-4}
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(path)])
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    resp = api.estimate(json_format.Parse(path.read_text(), estimate_pb2.EstimateRequest()))
    assert f"{resp.goodput:.1%}" in out
    assert f"{resp.productive_training_time_hours:,.1f}" in out
    assert f"{resp.training_time_hours:,.1f}" in out
    assert "goodput" in out and "productive training time" in out


def test_procure_estimate_json_carries_the_goodput_fields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["estimate", str(EXAMPLES / "estimate-llama3-70b.json"), "--format", "json"])
    resp = json.loads(capsys.readouterr().out)
    assert {
        "goodput",
        "productive_training_time_hours",
        "checkpoint_interval_minutes",
        "expected_interruptions",
    } <= resp.keys()


def test_the_optimizer_ranks_on_training_time_with_goodput() -> None:
    req = small_optimize(catalog="ethernet-budget")
    req.reliability.failures_per_gpu_hour = 0.05  # a flaky cluster: a short run notices
    design = api.optimize(req).designs[0]
    est = design.estimate
    assert est.goodput < 0.99
    assert design.training_time_hours == pytest.approx(est.training_time_hours, rel=1e-9)
    assert design.training_time_hours == pytest.approx(
        est.productive_training_time_hours / est.goodput, rel=1e-9
    )
