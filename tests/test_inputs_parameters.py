"""A stated workload.parameters is never ignored (issue 14, defect 1).

When the architecture's count disagrees with it by more than 2 %, the request conversion
tries the FFN / embedding variants the request left open and keeps the one that matches,
saying so in the estimate's notes; if none matches it refuses, naming the field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2 as pb
from optimizer.api import estimate
from optimizer.errors import InvalidInput
from optimizer.performance.convert import request_from_proto, workload_from_proto
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.model import parameter_count
from optimizer.workload.presets import preset

LLAMA3_405B: dict[str, Any] = {
    "layers": 126,
    "hidden_size": 16384,
    "ffn_hidden_size": 53248,
    "attention_heads": 128,
    "kv_heads": 8,
    "vocab_size": 128256,
    "sequence_length": 8192,
    "training_tokens": 15.6e12,
    "global_batch_size": 2048,
    "parameters": 405e9,
}
CLUSTER: dict[str, Any] = {
    "gpus": 16384,
    "gpus_per_node": 8,
    "gpu_model": "H100",
    "gpu_peak_tflops": 989.4,
    "gpu_memory_gb": 80,
    "intra_node_gbytes_per_s": 450,
    "fabric": "infiniband",
    "nic_gbps_per_node": 3200,
}


def _workload(**fields: Any) -> pb.Workload:
    return ParseDict({**LLAMA3_405B, **fields}, pb.Workload())


def test_llama3_405b_without_gated_ffn_is_modelled_at_405b() -> None:
    w = workload_from_proto(_workload())

    assert w.gated_ffn is True
    assert w.parameters == pytest.approx(405e9, rel=0.02)


def test_the_inference_is_said_in_the_estimate_notes() -> None:
    request = ParseDict({"workload": LLAMA3_405B, "cluster": CLUSTER}, pb.EstimateRequest())

    response = estimate(request)

    assert response.parameters == pytest.approx(405e9, rel=0.02)
    assert any("gated_ffn=true" in n and "workload.parameters" in n for n in response.notes)


def test_a_matching_count_changes_nothing_and_says_nothing() -> None:
    w = workload_from_proto(_workload(gated_ffn=True))

    assert w.inferred == ()
    assert w == workload_from_proto(_workload(gated_ffn=True, parameters=None))


def test_a_flag_the_request_set_is_not_overridden() -> None:
    with pytest.raises(InvalidInput) as err:
        workload_from_proto(_workload(gated_ffn=False))

    assert err.value.field == "workload.parameters"
    assert "gated_ffn set by the request" in str(err.value)


def test_no_matching_variant_refuses_with_both_counts_and_what_was_tried() -> None:
    with pytest.raises(InvalidInput) as err:
        workload_from_proto(_workload(parameters=70e9))

    message = str(err.value)
    assert err.value.field == "workload.parameters"
    assert "states 70B" in message and "has 296B" in message
    assert "gated_ffn=true, tied_embeddings=false: 406B" in message


def test_a_preset_with_a_wrong_count_is_refused() -> None:
    with pytest.raises(InvalidInput) as err:
        workload_from_proto(pb.Workload(model="llama3-8b", parameters=70e9))

    assert err.value.field == "workload.parameters"


def test_tied_embeddings_are_inferred_too() -> None:
    mpt: dict[str, Any] = dict(
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=16384,
        attention_heads=32,
        kv_heads=32,
        vocab_size=50368,
    )
    untied = workload_from_proto(
        ParseDict({**LLAMA3_405B, **mpt, "parameters": None}, pb.Workload())
    )
    tied_count = untied.parameters - 50368 * 4096  # one embedding matrix fewer

    w = workload_from_proto(
        ParseDict({**LLAMA3_405B, **mpt, "parameters": tied_count}, pb.Workload())
    )

    assert w.tied_embeddings is True and w.gated_ffn is False


def test_a_non_positive_count_names_the_field() -> None:
    with pytest.raises(InvalidInput) as err:
        request_from_proto(
            ParseDict(
                {"workload": {**LLAMA3_405B, "parameters": 0}, "cluster": CLUSTER},
                pb.EstimateRequest(),
            )
        )

    assert err.value.field == "workload.parameters"


# issue 14 (inputs): a model below a billion parameters is counted in millions, not "0.0B".
SMALL_MODEL: dict[str, Any] = {
    "layers": 8,
    "hidden_size": 512,
    "attention_heads": 8,
    "sequence_length": 2048,
    "vocab_size": 32000,
    "training_tokens": 1e9,
    "global_batch_size": 64,
}  # 57.9M parameters; 41.5M with tied embeddings


def test_a_small_models_inference_note_counts_in_millions() -> None:
    w = workload_from_proto(ParseDict({**SMALL_MODEL, "parameters": 41.6e6}, pb.Workload()))

    assert w.inferred == (
        "inferred tied_embeddings=true from workload.parameters 41.6M: the architecture has "
        "41.5M with it, 57.9M without",
    )


def test_a_small_models_mismatch_states_both_counts_in_millions() -> None:
    with pytest.raises(InvalidInput) as err:
        workload_from_proto(ParseDict({**SMALL_MODEL, "parameters": 90e6}, pb.Workload()))

    assert "states 90M parameters but the architecture has 57.9M" in str(err.value)


@pytest.mark.parametrize(
    ("count", "said"),
    [
        (41.5e6, "41.5M"),
        (999.6e6, "1B"),
        (1.02e9, "1.02B"),
        (405.8e9, "406B"),
        (1.6e12, "1.6T"),
        (1e15, "1,000T"),  # the request limit: '.3g' alone said 1e+03T
    ],
)
def test_a_parameter_count_is_said_in_its_unit_with_three_digits(count: float, said: str) -> None:
    assert parameter_count(count) == said


def test_the_planners_no_plan_fits_error_says_a_small_model_in_millions() -> None:
    # It read "mpt-125m (0.1B parameters)" (and a 50M model "0.0B").
    c = replace(cluster_for(HGX_H100, 8), gpu_memory_gb=0.2)

    with pytest.raises(PlanInfeasible, match=r"mpt-125m \(124M parameters\)"):
        plan_and_estimate(preset("mpt-125m"), c)
