"""An infeasible request's diagnosis names what really stops every design: the network parts
its vendor filters or lead-time cap leave out, or a fabric or topology the allowed parts
cannot build, with the field and what would fix it; "no parallel plan fits its memory" only
where memory is the reason (docs/optimizer.md)."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2

# ethernet-budget's cables and optics are all from "generic"; its H100 server is Supermicro's.
NO_CABLES = ["Supermicro", "NVIDIA", "Intel", "Arista", "Edgecore"]
MEMORY = "no parallel plan fits its memory"


def _diagnosis(catalog: str, constraints: dict[str, Any], **fields: Any) -> str:
    """Llama 3 70B (two nodes at least, for memory) over ``catalog``: the diagnosis."""
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog=catalog,
            top_k=1,
            workload=estimate_pb2.Workload(model="llama3-70b", training_tokens=2e11),
            constraints=optimize_pb2.Constraints(**constraints),
            **fields,
        )
    )
    assert resp.status == "INFEASIBLE" and not resp.designs
    return resp.diagnosis


def test_vendors_that_leave_out_every_cable_are_named_not_memory() -> None:
    text = _diagnosis("ethernet-budget", {"target_training_hours": 2000}, allowed_vendors=NO_CABLES)
    assert MEMORY not in text
    assert "allowed_vendors leaves out generic, the vendor of the cables it needs" in text
    assert "add generic to allowed_vendors" in text


def test_memory_is_still_the_reason_where_it_is() -> None:
    """One node (max_gpus 8) holds no plan of a 70B model, whatever the vendors."""
    text = _diagnosis(
        "ethernet-budget",
        {"target_training_hours": 1e5, "max_gpus": 8},
        allowed_vendors=NO_CABLES,
    )
    assert MEMORY in text and "allowed_vendors" not in text


def test_a_min_time_budget_with_no_cables_names_the_cables() -> None:
    """The re-solve without the budget finds nothing either: the cables, not the budget."""
    text = _diagnosis(
        "ethernet-budget", {"budget_usd": 1e6}, objective="min_time", allowed_vendors=NO_CABLES
    )
    assert MEMORY not in text and "budget" not in text
    assert "add generic to allowed_vendors" in text


def test_an_excluded_vendor_of_every_network_part_is_named_with_the_parts() -> None:
    text = _diagnosis("infiniband-ndr", {"target_training_hours": 720}, excluded_vendors=["NVIDIA"])
    assert (
        "excluded_vendors leaves out NVIDIA, the vendor of the servers, switches and cables" in text
    )
    assert "remove NVIDIA from excluded_vendors" in text


def test_the_design_named_is_the_one_the_fix_gets() -> None:
    """Removing NVIDIA from excluded_vendors lets in its DGX servers too: the design named is
    the fixed request's rank 1 (5 x DGX-B200), not the cheapest on the servers the filter
    allowed, which costs more."""
    text = _diagnosis("infiniband-ndr", {"target_training_hours": 600}, excluded_vendors=["NVIDIA"])
    fixed = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="infiniband-ndr",
            top_k=1,
            workload=estimate_pb2.Workload(model="llama3-70b", training_tokens=2e11),
            constraints=optimize_pb2.Constraints(target_training_hours=600),
        )
    )
    rank1 = fixed.designs[0]
    assert f"is {rank1.nodes:,} x {rank1.server_sku} (" in text
    assert f"at ${rank1.capex_usd:,.0f}," in text


def test_a_lead_time_cap_names_the_parts_and_the_lead_time_that_would_do() -> None:
    text = _diagnosis("infiniband-ndr", {"target_training_hours": 720, "max_lead_time_days": 40})
    assert MEMORY not in text
    assert "constraints.max_lead_time_days (40 days) leaves out the servers and switches" in text
    assert "raise constraints.max_lead_time_days to 120" in text


def test_a_fabric_no_allowed_switch_runs_is_named() -> None:
    text = _diagnosis(
        "ethernet-budget", {"target_training_hours": 720}, allowed_fabrics=["infiniband"]
    )
    assert MEMORY not in text
    assert "allowed_fabrics (infiniband): no allowed switch runs InfiniBand" in text


def test_a_torus_without_forwarding_hardware_is_named() -> None:
    text = _diagnosis(
        "ethernet-budget", {"target_training_hours": 720}, allowed_topologies=["torus"]
    )
    assert MEMORY not in text
    assert "allowed_topologies (torus): a torus needs NICs or servers that forward" in text


def test_a_left_out_parts_fix_says_when_its_design_still_breaks_the_budget() -> None:
    # "to build it, add generic to allowed_vendors" and, once added, "over the $700,000 budget
    # by $1,705,232": the design named as the way out broke the cap the re-solve left out.
    text = _diagnosis(
        "ethernet-budget",
        {"target_training_hours": 2000, "budget_usd": 50_000},
        allowed_vendors=NO_CABLES,
    )
    assert "add generic to allowed_vendors, but even so it costs" in text
    assert "over the $50,000 budget" in text


def test_filters_that_stop_every_design_only_together_are_named_not_memory() -> None:
    # A vendor filter leaves the NVIDIA NICs out, allowed_fabrics asks for RoCE, which no
    # switch of infiniband-ndr runs: neither alone is the reason, and memory was blamed
    # although HGX-H200 servers run the model (found by a diagnosis hunt).
    text = _diagnosis(
        "infiniband-ndr",
        {"target_training_hours": 2000},
        excluded_vendors=["NVIDIA"],
        allowed_fabrics=["roce"],
    )
    assert MEMORY not in text
    assert "no design can be built from what excluded_vendors and allowed_fabrics allow" in text


def _rank_one_usd(request: optimize_pb2.OptimizeRequest) -> str:
    resp = api.optimize(request)
    assert resp.status == "OPTIMAL", resp.diagnosis
    return f"${resp.designs[0].capex_usd:,.0f}"


def test_filters_stopping_every_design_together_name_what_the_request_gets_without_them() -> None:
    """The design named is rank 1 of the request re-solved without the filters (the
    cheapest meeting its target), not the fastest design there is: that was a $1.57B,
    32,768-GPU cluster for a job a $766k one does (found reading the answer)."""
    text = _diagnosis(
        "infiniband-ndr",
        {"target_training_hours": 2000},
        excluded_vendors=["NVIDIA"],
        allowed_fabrics=["roce"],
    )
    unfiltered = optimize_pb2.OptimizeRequest(
        catalog="infiniband-ndr",
        top_k=1,
        workload=estimate_pb2.Workload(model="llama3-70b", training_tokens=2e11),
        constraints=optimize_pb2.Constraints(target_training_hours=2000),
    )
    assert "without them the cheapest design that meets the target is" in text
    assert f" at {_rank_one_usd(unfiltered)}" in text


def test_filters_together_under_a_budget_name_the_fastest_design_within_it() -> None:
    text = _diagnosis(
        "infiniband-ndr",
        {"budget_usd": 2e6},
        objective="min_time",
        excluded_vendors=["NVIDIA"],
        allowed_fabrics=["roce"],
    )
    unfiltered = optimize_pb2.OptimizeRequest(
        catalog="infiniband-ndr",
        top_k=1,
        objective="min_time",
        workload=estimate_pb2.Workload(model="llama3-70b", training_tokens=2e11),
        constraints=optimize_pb2.Constraints(budget_usd=2e6),
    )
    assert "without them the fastest design within the budget is" in text
    assert f" at {_rank_one_usd(unfiltered)}" in text


def test_filters_together_under_a_budget_too_small_say_what_meeting_the_target_costs() -> None:
    """Without the filters the request still finds nothing within $1M: the design named is
    the cheapest that meets the target, with the budget it breaks."""
    text = _diagnosis(
        "infiniband-ndr",
        {"target_training_hours": 300, "budget_usd": 1e6},
        excluded_vendors=["NVIDIA"],
        allowed_fabrics=["roce"],
    )
    assert "without them the cheapest design that meets the 300 h target is" in text
    assert "but even so it costs" in text and "over the $1,000,000 budget by" in text


def _diagnosis_of(request: dict[str, Any]) -> str:
    resp = api.optimize(
        json_format.ParseDict({"top_k": 1, **request}, optimize_pb2.OptimizeRequest())
    )
    assert resp.status == "INFEASIBLE" and not resp.designs
    return resp.diagnosis


# allowed_vendors without Supermicro and a 10-day lead-time cap both leave out its server.
TWO_FILTERS_ONE_SERVER = {
    "catalog": "roce-spectrum",
    "workload": {"model": "mpt-30b", "training_tokens": 3e11},
    "objective": "min_time",
    "constraints": {"budget_usd": 3e6, "max_lead_time_days": 10},
    "allowed_vendors": ["generic", "Broadcom", "Edgecore"],
}


def test_a_part_two_filters_leave_out_is_named_under_both() -> None:
    """The fix lifts both: adding Supermicro alone would still leave its 60-day server out."""
    text = _diagnosis_of(TWO_FILTERS_ONE_SERVER)
    assert "allowed_vendors leaves out Supermicro, the vendor of the servers it needs" in text
    assert "constraints.max_lead_time_days (10 days) leaves out the servers it needs" in text
    assert (
        "add Supermicro to allowed_vendors and raise constraints.max_lead_time_days to 60" in text
    )


def test_the_fix_lifts_no_filter_the_vendors_alone_do_not_need() -> None:
    """Allowing NVIDIA within the 60-day cap builds a design; the cheapest without the cap
    too uses a 90-day switch, and asking the buyer to wait for it is not the smallest fix."""
    request = {
        "catalog": "infiniband-ndr",
        "workload": {"model": "llama3-70b", "training_tokens": 1e12},
        "constraints": {"target_training_hours": 100, "max_lead_time_days": 60},
        "allowed_vendors": ["generic", "Supermicro"],
    }
    text = _diagnosis_of(request)
    assert "to build it, add NVIDIA to allowed_vendors" in text
    assert "max_lead_time_days" not in text
    fixed = api.optimize(
        json_format.ParseDict(
            {**request, "top_k": 1, "allowed_vendors": ["generic", "Supermicro", "NVIDIA"]},
            optimize_pb2.OptimizeRequest(),
        )
    )
    assert f"at ${fixed.designs[0].capex_usd:,.0f}," in text


def test_filters_that_stop_every_design_say_when_the_target_is_missed_even_without_them() -> None:
    """Every infiniband-ndr server ships in more than 30 days; without the cap, 64 GPUs train
    GPT-3 on 1e11 tokens in 487 h at best, over the 400 h target."""
    text = _diagnosis_of(
        {
            "catalog": "infiniband-ndr",
            "workload": {"model": "gpt3-175b", "training_tokens": 1e11},
            "constraints": {"target_training_hours": 400, "max_lead_time_days": 30, "max_gpus": 64},
        }
    )
    assert "no design can be built from what constraints.max_lead_time_days allows" in text
    assert text.endswith(", over the 400 h target even so")
