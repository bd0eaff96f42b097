"""What expert load skew costs reaches every face of the answer (issue 14, MoE): the
response's ``expert_skew_s`` (the same plan re-timed with balanced routing), over the real
gRPC service, in ``procure estimate``'s table, and once among the optimizer's warnings for
all ranks whose plans wait for a busier expert rank."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.protobuf import json_format

from client.cli import main
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from tests.service_support import TOKEN_A, Stubs, bearer, token_stubs

A = bearer(TOKEN_A)
CLUSTER = {
    "gpus": 256,
    "gpu_model": "H100 SXM5 80GB",
    "gpu_peak_tflops": 989.4,
    "gpu_memory_gb": 80,
    "gpus_per_node": 8,
    "intra_node_gbytes_per_s": 450,
    "fabric": "infiniband",
    "nic_gbps_per_node": 3200,
    "topology": "fat_tree",
}
SKEW_PREFIX = "the busiest expert rank"


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    yield from token_stubs(tmp_path_factory.mktemp("skew"))


def _mixtral(imbalance: float, expert: int = 8) -> estimate_pb2.EstimateRequest:
    return json_format.ParseDict(
        {
            "workload": {
                "model": "mixtral-8x22b",
                "training_tokens": 2e12,
                "expert_load_imbalance": imbalance,
            },
            "cluster": CLUSTER,
            "parallelism": {"expert": expert, "tensor": 1},
        },
        estimate_pb2.EstimateRequest(),
    )


def test_the_response_carries_the_step_the_skew_adds_over_balanced_routing() -> None:
    skewed, balanced = api.estimate(_mixtral(1.2)), api.estimate(_mixtral(1.0))

    assert skewed.expert_skew_s == pytest.approx(skewed.step_time_s - balanced.step_time_s)
    assert skewed.expert_skew_s > 0.0
    assert balanced.expert_skew_s == 0.0


def test_without_expert_parallelism_no_rank_waits() -> None:
    assert api.estimate(_mixtral(1.5, expert=1)).expert_skew_s == 0.0


def test_the_field_crosses_the_service(stubs: Stubs) -> None:
    request = _mixtral(1.2)

    reply = stubs.optimizer.Estimate(request, metadata=A, timeout=60)

    assert reply.expert_skew_s == pytest.approx(api.estimate(request).expert_skew_s)


def test_procure_estimate_prints_the_skews_seconds_only_where_some(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def table(imbalance: float) -> str:
        path = tmp_path / f"spec-{imbalance}.json"
        path.write_text(json.dumps(json_format.MessageToDict(_mixtral(imbalance))))
        with pytest.raises(SystemExit) as done:
            main(["estimate", str(path)])
        assert done.value.code in (0, None)
        return capsys.readouterr().out

    skew_s = api.estimate(_mixtral(1.2)).expert_skew_s

    assert "expert load skew, over balanced routing (s/step)" in table(1.2)
    assert f"{skew_s:.3f}" in table(1.2)
    assert "expert load skew, over balanced routing" not in table(1.0)


def _optimize(imbalance: float) -> optimize_pb2.OptimizeResponse:
    return api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="infiniband-ndr",
            top_k=3,
            workload=estimate_pb2.Workload(
                model="mixtral-8x7b", training_tokens=1e11, expert_load_imbalance=imbalance
            ),
            parallelism=estimate_pb2.Parallelism(expert=8),
            constraints=optimize_pb2.Constraints(target_training_hours=720),
        )
    )


def test_the_optimizer_says_once_what_the_skew_costs_its_ranks() -> None:
    response = _optimize(1.2)
    shares = [d.estimate.expert_skew_s / d.estimate.step_time_s for d in response.designs]
    ranks = ", ".join(str(d.rank) for d in response.designs)

    (warning,) = [w for w in response.warnings if SKEW_PREFIX in w]
    assert warning.startswith(f"ranks {ranks}: {SKEW_PREFIX}")
    assert f"{min(shares):.1%}-{max(shares):.1%} of the step" in warning


def test_balanced_routing_draws_no_skew_warning() -> None:
    assert not [w for w in _optimize(1.0).warnings if SKEW_PREFIX in w]
