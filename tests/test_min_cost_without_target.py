"""Min-cost with a budget and no target is the cheapest design that runs the workload: a size
no parallel plan fits (one node of a 70B model) does not meet the absent target."""

from __future__ import annotations

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2


def test_a_model_too_large_for_one_node_gets_its_cheapest_cluster() -> None:
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="ethernet-budget",
            top_k=1,
            ranking_only=True,
            workload=estimate_pb2.Workload(model="llama3-70b", training_tokens=2e11),
            constraints=optimize_pb2.Constraints(budget_usd=5e6),
        )
    )
    assert resp.status == "OPTIMAL", resp.diagnosis
    assert resp.designs[0].nodes > 1 and resp.designs[0].capex_usd <= 5e6
