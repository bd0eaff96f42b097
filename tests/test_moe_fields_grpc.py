"""The MoE and attention-width workload fields (MLA's too) end to end: over the real gRPC
service, a request with them gets its answer (with the note on what the dispatch sends), a bad
one gets INVALID_ARGUMENT naming the field, and the CLI's JSON keeps their protobuf names."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from client.cli import main
from optimizer._pb.procurement.v1 import estimate_pb2
from tests.service_support import TOKEN_A, Stubs, bearer, invalid_argument_fields, token_stubs

A = bearer(TOKEN_A)
DEEPSEEK = Path(__file__).resolve().parents[1] / "examples" / "estimate-deepseek-v3-h800.json"


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    yield from token_stubs(tmp_path_factory.mktemp("moe_fields"))


def _deepseek(**workload: object) -> estimate_pb2.EstimateRequest:
    spec = json.loads(DEEPSEEK.read_text())
    spec["workload"].update(workload)
    return json_format.ParseDict(spec, estimate_pb2.EstimateRequest())


def test_a_deduplicated_dispatch_request_is_answered_with_its_note(stubs: Stubs) -> None:
    reply = stubs.optimizer.Estimate(_deepseek(), metadata=A, timeout=120)

    assert reply.training_time_hours > 0
    assert any("deduplicated per domain, at most 4 a token" in n for n in reply.notes)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("expert_dispatch", "deepep"),
        ("expert_load_imbalance", 0.5),
        ("expert_node_limit", -2),
        ("head_dim", -64),
        ("shared_expert_ffn_hidden_size", -2048),
        ("kv_lora_rank", -512),
        ("q_lora_rank", -1536),
        ("dense_layers", -3),
        ("mtp_layers", -1),
        ("optimizer_moments", "fp16"),
        ("pipeline_schedule", "zero-bubble"),
        ("expert_capacity_factor", -1.0),
        ("expert_capacity_factor", 64.0),  # past experts / experts_per_token = 32
        ("pad_expert_input_to_capacity", True),  # without a capacity
    ],
)
def test_a_bad_field_is_invalid_argument_naming_it(stubs: Stubs, field: str, value: object) -> None:
    request = _deepseek(**{field: value})
    fields = invalid_argument_fields(
        lambda: stubs.optimizer.Estimate(request, metadata=A, timeout=60)
    )

    assert fields == [f"workload.{field}"]


def test_the_cli_reads_the_fields_by_their_protobuf_names(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(DEEPSEEK), "--format", "json"])

    assert done.value.code in (0, None)
    notes = json.loads(capsys.readouterr().out)["notes"]
    assert any("deduplicated per domain" in n for n in notes)
    assert any(n.startswith("DualPipe over") for n in notes)  # workload.pipeline_schedule
