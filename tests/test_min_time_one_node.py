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


def test_a_one_node_design_whose_built_in_nics_speak_no_allowed_fabric_is_still_offered() -> None:
    """An ASUS B300 server ships with InfiniBand-only ConnectX-8 C8180s; with only RoCE and
    Ethernet allowed its one-node design (nothing cabled) failed its own check ("NIC C8180
    does not speak roce") and the whole request with it."""
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="gen-2026",
            objective="min_time",
            top_k=3,
            workload=estimate_pb2.Workload(model="mpt-7b", training_tokens=3e11),
            constraints=optimize_pb2.Constraints(budget_usd=3e7, max_gpus=8),
            allowed_vendors=["ASUS", "NVIDIA", "Broadcom", "Edgecore", "Credo", "generic"],
            allowed_fabrics=["roce", "ethernet"],
        )
    )
    assert resp.status == "OPTIMAL", resp.diagnosis
    assert ("XA-NB3I-E12", "single_node") in {(d.server_sku, d.topology) for d in resp.designs}


def test_a_one_node_design_is_named_for_a_fabric_its_built_in_nics_speak() -> None:
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="gen-2026",
            objective="min_time",
            top_k=1,
            ranking_only=True,
            workload=estimate_pb2.Workload(model="mpt-7b", training_tokens=3e11),
            constraints=optimize_pb2.Constraints(budget_usd=3e7, max_gpus=8),
            allowed_vendors=["ASUS"],
            allowed_fabrics=["roce", "infiniband"],  # the request's first is not what it speaks
        )
    )
    best = resp.designs[0]
    assert (best.server_sku, best.topology, best.fabric) == (
        "XA-NB3I-E12",
        "single_node",
        "infiniband",
    )
