"""One schema: a field a core record and its proto message share by name converts by itself.

For each mirrored pair the message fields converted by hand are listed here; a new field added
to a message and its record (the two places) converts with no converter edit, and one added to
a message alone fails this test until its conversion is decided.
"""

from __future__ import annotations

import pytest

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.cost.rent import BreakEven, RentQuote
from optimizer.optimize.request import Constraints
from optimizer.optimize.result import CostSplit, OptimizeResult, ParetoEntry, RankedDesign
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.estimator import Estimate, StepBreakdown
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.registry.schema import mirrored, record_values
from optimizer.topology.bom import BomLine
from optimizer.topology.design import Design
from optimizer.workload.model import Workload

# message -> (records mirrored into it, fields its converter sets by hand)
BY_HAND = {
    estimate_pb2.EstimateResponse: ((Estimate,), {"parallelism", "breakdown"}),
    estimate_pb2.StepBreakdown: ((StepBreakdown,), set()),
    estimate_pb2.Parallelism: ((ParallelPlan,), {"stage_layers"}),  # issue 14 (layout)
    optimize_pb2.BomLine: ((BomLine,), set()),
    optimize_pb2.CostBreakdown: ((CostSplit,), {"network_share"}),
    optimize_pb2.ParetoPoint: ((ParetoEntry, Design), {"fabric_kind", "topology_family"}),
    optimize_pb2.Design: (
        (RankedDesign, Design),
        {
            "capex_usd",
            "power_kw",
            "racks",
            "training_time_hours",
            "training_time_hours_low",
            "training_time_hours_high",
            "estimate",
            "bom",
            "cost",
            "fabric_kind",
            "topology_family",
            "scale_out_gbps_per_gpu",
            "network_time_share",
            "tco_usd",  # issue 17 (tco)
            "tco",  # issue 17 (tco)
            "workload_times",  # issue 17 (portfolio)
            "scale_up_gpus",  # issue 16 (scale-up): from the design's estimate
            "break_evens",  # issue 17 (rent)
        },
    ),
    optimize_pb2.OptimizeResponse: (
        (OptimizeResult,),
        {"designs", "pareto", "catalog_id", "cost_model", "rent_quotes"},  # issue 17 (tco, rent)
    ),
    # issue 17 (rent)
    optimize_pb2.RentQuote: ((RentQuote,), set()),
    optimize_pb2.BreakEven: ((BreakEven,), set()),
}


@pytest.mark.parametrize("message", list(BY_HAND), ids=lambda m: m.DESCRIPTOR.name)
def test_every_response_field_is_mirrored_or_named_by_its_converter(message) -> None:
    records, by_hand = BY_HAND[message]
    by_name = {m.message_field for r in records for m in mirrored(r, message)}
    assert {f.name for f in message.DESCRIPTOR.fields} - by_name == by_hand


def test_money_in_cents_is_mirrored_as_dollars() -> None:
    money = [m for m in mirrored(Constraints, optimize_pb2.Constraints) if m.cents_as_usd]
    assert [(m.record_field, m.message_field) for m in money] == [
        ("budget_cents", "budget_usd"),
        ("max_tco_cents", "max_tco_usd"),  # issue 17 (tco)
    ]


def test_only_the_fields_a_request_sets_are_read() -> None:
    c = optimize_pb2.Constraints(budget_usd=1234.56, max_racks=4)
    assert record_values(c, Constraints) == {"budget_cents": 123456, "max_racks": 4}


def test_request_records_mirror_their_messages() -> None:
    assert {m.record_field for m in mirrored(PartialPlan, estimate_pb2.Parallelism)} == {
        "tensor",
        "pipeline",
        "data",
        "expert",
        "virtual_pipeline",
        "zero_stage",
        "micro_batch_size",
        "context",  # issue 14
        "reshard_after_forward",  # issue 14
        "expert_tensor",  # issue 14 (MoE parallel folding)
    }
    workload = {m.record_field for m in mirrored(Workload, estimate_pb2.Workload)}
    assert {"layers", "hidden_size", "precision", "flash_attention"} <= workload
    cluster = {m.record_field for m in mirrored(ClusterSpec, estimate_pb2.Cluster)}
    assert {"gpus", "fabric", "nic_gbps_per_node", "gpu_peak_fp8_tflops"} <= cluster
