"""Links the request's vendor filters leave out are out of the search too, not only of the
MIP: the search's greedy BOMs, whose costs bound and prune it, build from the same links."""

from __future__ import annotations

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2

# ethernet-budget's cables and optics are all from "generic"; its H100 server is Supermicro's.
NO_CABLES = ["Supermicro", "NVIDIA", "Intel", "Arista", "Edgecore"]


def test_designs_cabled_only_by_excluded_vendors_do_not_prune_the_one_node_design() -> None:
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="ethernet-budget",
            objective="min_time",
            top_k=1,
            ranking_only=True,
            workload=estimate_pb2.Workload(model="llama3-8b", training_tokens=2e11),
            constraints=optimize_pb2.Constraints(budget_usd=5e6),
            allowed_vendors=NO_CABLES,
        )
    )
    assert resp.status == "OPTIMAL", resp.diagnosis
    assert [(d.topology, d.nodes) for d in resp.designs] == [("single_node", 1)]
