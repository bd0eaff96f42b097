"""Min-time offers the one-node design without a fabric, as min-cost does: on one node it is
as fast as the same node under a switch and cheaper, so it ranks first."""

from __future__ import annotations

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2


def test_min_time_ranks_the_switchless_one_node_design_first() -> None:
    # $320,000 buys one SYS-8125GS-TNHR ($296,644), with or without a switch and NIC
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="ethernet-budget",
            objective="min_time",
            top_k=2,
            ranking_only=True,
            workload=estimate_pb2.Workload(model="llama3-8b", training_tokens=2e11),
            constraints=optimize_pb2.Constraints(budget_usd=320_000),
        )
    )
    assert resp.status == "OPTIMAL", resp.diagnosis
    best = resp.designs[0]
    assert (best.topology, best.nodes, best.capex_usd) == ("single_node", 1, 296_644)
