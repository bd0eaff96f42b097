"""A rented run is timed on the GPU the offer rents. Before, AWS p4d (A100 40 GB) was timed
with the 80 GB memory of the catalog's A100 row, and over gen-2026 (no H100 or A100 server)
every bundled offer went untimed: "no servers row of GPU H100 in the catalog"."""

from __future__ import annotations

from dataclasses import replace

from catalog_samples import sample_catalog, sample_offer
from google.protobuf import json_format

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog.model import CloudOffer
from optimizer.cost.rent import bundled_offers, design_break_evens, offer_cluster, quote_offer
from optimizer.cost.tco import CostModel
from optimizer.workload.presets import preset

P4D = next(o for o in bundled_offers() if o.instance.startswith("p4d"))
A100_80 = replace(sample_catalog().servers[0], gpu_model="A100", gpu_memory_gb=80.0)
# Llama 3 70B on 64 A100s: plans that fit 80 GB do not all fit 40 GB.
SEVENTY = preset("llama3-70b")


def _offer(**changes: object) -> CloudOffer:
    return sample_offer(gpu_model="A100", interconnect="infiniband_hdr", **changes)


def test_the_bundled_p4d_offer_states_its_40_gb_a100s() -> None:
    assert P4D.gpu_model == "A100" and P4D.gpu_memory_gb == 40.0
    assert "A100 40 GB" in P4D.source


def test_an_offers_gpu_memory_replaces_the_servers_rows() -> None:
    assert offer_cluster(_offer(gpu_memory_gb=40.0), A100_80, 64).gpu_memory_gb == 40.0
    assert offer_cluster(_offer(), A100_80, 64).gpu_memory_gb == 80.0


def test_less_memory_per_gpu_never_times_the_rented_run_faster() -> None:
    small = quote_offer(_offer(gpu_memory_gb=40.0), A100_80, 64, SEVENTY)
    large = quote_offer(_offer(), A100_80, 64, SEVENTY)
    assert (small.gpu_memory_gb, large.gpu_memory_gb) == (40.0, 80.0)
    assert small.training_time_hours is not None and large.training_time_hours is not None
    assert small.training_time_hours > large.training_time_hours


def test_an_offer_of_other_memory_is_not_the_designs_gpu_for_break_even() -> None:
    model = CostModel(4.0, 0.5, 1.3, 0.1, 0.08, 1500.0, 0.0)
    design = {"capex_cents": 10_000_000, "it_power_kw": 10.0, "racks": 1, "gpus": 8}
    offers = [_offer(gpu_memory_gb=40.0)]
    assert design_break_evens(offers, "A100", gpu_memory_gb=80.0, model=model, **design) == ()
    assert design_break_evens(offers, "A100", gpu_memory_gb=40.0, model=model, **design)


def test_bundled_offers_over_a_catalog_without_their_gpu_take_a_bundled_rows_figures() -> None:
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="gen-2026",
            top_k=1,
            workload=estimate_pb2.Workload(model="llama3-8b", training_tokens=1e11),
            constraints=optimize_pb2.Constraints(target_training_hours=200),
        )
    )
    assert resp.designs and resp.rent_quotes
    for q in resp.rent_quotes:
        assert q.HasField("training_time_hours"), json_format.MessageToJson(q)
        assert "GPU figures from the bundled " in q.note
        assert f"(the request's catalog has no {q.gpu_model} server)" in q.note
    memory = {q.gpu_model: q.gpu_memory_gb for q in resp.rent_quotes}
    assert memory == {"H100": 80.0, "A100": 40.0}
