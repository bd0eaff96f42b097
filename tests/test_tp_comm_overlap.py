"""Tensor-parallel communication overlapped with the GEMMs (issue 14,
``workload.tp_comm_overlap``).

Megatron-LM's 2021 schedule waits for each tensor-parallel all-gather and reduce-scatter; NVIDIA's
NeMo / Megatron-Bridge recipes split them into chunks that run beside the GEMM they feed or
follow (Megatron-Core ``--tp-comm-overlap``, Transformer Engine's userbuffers). Before the field
every plan exposed them whole, and NVIDIA's published Llama 3 70B and 405B H100 rows, which
overlap them, came out 14-25 % slow."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from google.protobuf import json_format
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.api import estimate
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.estimator import StepModel, overlapped_s, scenario
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, cluster_for, unseen_runs
from optimizer.workload.presets import preset
from tests.service_support import TOKEN_A, Stubs, bearer, token_stubs
from tests.test_planner_exact import (
    _assert_no_bound_exceeds_its_exact_step,
    assert_the_search_finds_the_exhaustive_loops_plan,
    clusters,
)

A = bearer(TOKEN_A)
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "estimate-llama3-70b.json"
CLUSTER = cluster_for(HGX_H100, 64)
FABRIC = DEFAULT_FABRICS[CLUSTER.fabric]
EXPECTED = scenario(CLUSTER, FABRIC, "expected")
TP4 = ParallelPlan(tensor=4, pipeline=8, data=2, virtual_pipeline=5, micro_batch_size=1)
W = preset("llama3-70b", global_batch_size=256)


def _step(overlap: bool, plan: ParallelPlan = TP4) -> StepModel:
    return StepModel(replace(W, tp_comm_overlap=overlap), CLUSTER, plan, FABRIC)


def test_overlapped_tensor_collectives_add_only_what_the_gemms_do_not_hide() -> None:
    """The exposed part is overlapped_s(GEMMs, collectives) - GEMMs: the longer of the two, the
    GEMMs slowed by the fitted overlap slow-down while both run (flash attention has no
    collective beside it)."""
    plain, overlapped = _step(False), _step(True)
    tp = plain.breakdown(EXPECTED).tensor_parallel_s
    gemm = overlapped.tensor_core_s * (1.0 - overlapped.flash_share) / EXPECTED.kernel_efficiency
    hidden = tp - (overlapped_s(gemm, tp) - gemm)

    assert 0.0 < hidden < tp
    assert overlapped.breakdown(EXPECTED).tensor_parallel_s == tp  # before overlap, as reported
    assert overlapped.breakdown(EXPECTED).exposed_communication_s < (
        plain.breakdown(EXPECTED).exposed_communication_s
    )
    assert overlapped.step_time_s(EXPECTED) < plain.step_time_s(EXPECTED)


def test_without_tensor_parallelism_there_is_nothing_to_overlap() -> None:
    plan = ParallelPlan(tensor=1, pipeline=8, data=8, virtual_pipeline=5, micro_batch_size=1)

    assert _step(True, plan).step_time_s(EXPECTED) == _step(False, plan).step_time_s(EXPECTED)


def test_collectives_longer_than_the_gemms_stay_exposed_beyond_them() -> None:
    """A slow scale-up fabric (the GEMMs cannot hide it all): the step still grows with it."""
    slow = replace(CLUSTER, intra_node_gbytes_per_s=5.0)
    fast = replace(CLUSTER, intra_node_gbytes_per_s=50.0)
    w = replace(W, tp_comm_overlap=True)
    slow_s = StepModel(w, slow, TP4, FABRIC).step_time_s(EXPECTED)
    fast_s = StepModel(w, fast, TP4, FABRIC).step_time_s(EXPECTED)

    assert slow_s > fast_s


@settings(max_examples=15, deadline=None)
@given(
    name=st.sampled_from(("llama3-8b", "mpt-7b", "mixtral-8x7b")),
    c=clusters,
    batch=st.sampled_from([64, 256, 1024]),
)
def test_the_search_stays_exact_with_overlapped_tensor_collectives(
    name: str, c: ClusterSpec, batch: int
) -> None:
    """The planner's bounds take none of an overlapped plan's tensor collectives: still the
    plan and the step time of a plain loop over every candidate."""
    assert_the_search_finds_the_exhaustive_loops_plan(
        preset(name, global_batch_size=batch, tp_comm_overlap=True), c
    )


@settings(max_examples=15, deadline=None)
@given(name=st.sampled_from(("llama3-8b", "mpt-7b", "mixtral-8x7b")), c=clusters)
def test_no_bound_exceeds_an_overlapped_plans_exact_step(name: str, c: ClusterSpec) -> None:
    _assert_no_bound_exceeds_its_exact_step(
        preset(name, global_batch_size=1024, tp_comm_overlap=True), c
    )


def test_nvidias_tensor_parallel_rows_state_the_overlap_their_recipes_run() -> None:
    """Megatron-Bridge's Llama 3 70B and 3.1 405B recipes (H100, B200, GB300) set userbuffers
    TP overlap, as NeMo 24.07's launcher configs do for GPT-3, Nemotron and (its performance
    script) Llama 3 70B; its stored Llama 2 70B config does not."""
    rows = {r.id: r for r in unseen_runs()}
    overlapped = [i for i, r in rows.items() if r.request["workload"].get("tp_comm_overlap")]

    assert sorted(overlapped) == sorted(
        i
        for i in rows
        if i.startswith(("llama3-70b", "llama3.1-405b", "nemotron-"))
        or (i.startswith("gpt3-") and not i.startswith("gpt3-5b"))
    )
    assert all(
        "userbuffers" in rows[i].source or "ub_tp_comm_overlap: True" in rows[i].source
        for i in overlapped
    )
    assert "ub_tp_comm_overlap: false" in rows["llama2-70b-64xh100-fp8-nemo24.07"].source


def _request(**workload: object) -> estimate_pb2.EstimateRequest:
    spec = json.loads(EXAMPLE.read_text())
    spec["workload"].update(workload)
    spec["parallelism"] = {"tensor": 8, "pipeline": 4, "micro_batch_size": 1}
    return json_format.ParseDict(spec, estimate_pb2.EstimateRequest())


def test_the_field_is_read_from_the_request_json() -> None:
    plain, overlapped = estimate(_request()), estimate(_request(tp_comm_overlap=True))

    assert overlapped.training_time_hours < plain.training_time_hours
    assert overlapped.breakdown.tensor_parallel_s == plain.breakdown.tensor_parallel_s


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    yield from token_stubs(tmp_path_factory.mktemp("tp_comm_overlap"))


def test_over_grpc_the_overlap_shortens_the_answer(stubs: Stubs) -> None:
    plain = stubs.optimizer.Estimate(_request(), metadata=A, timeout=120)
    overlapped = stubs.optimizer.Estimate(_request(tp_comm_overlap=True), metadata=A, timeout=120)

    assert overlapped.training_time_hours < plain.training_time_hours
