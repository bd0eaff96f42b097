"""The planner and the estimator agree on what can run: every candidate the planner may time
is a plan ``estimate`` accepts (check_plan), whatever the request fixes. A candidate it
refuses either wastes the search's time or, when the search times it first, turns a request
that has valid plans into an error (check_plan runs on the first candidate timed)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.performance.estimator import check_plan
from optimizer.performance.plan import PartialPlan
from optimizer.performance.planner import candidate_plans
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

FIXED = [
    PartialPlan(),
    PartialPlan(virtual_pipeline=2),
    PartialPlan(context=2),
    PartialPlan(zero_stage=3),
    PartialPlan(reshard_after_forward=False),
    PartialPlan(micro_batch_size=2),
    PartialPlan(tensor=2),
]


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["bert-large", "llama3-8b", "mpt-3b", "mpt-7b", "mixtral-8x7b"]),
    framework=st.sampled_from(["megatron", "deepspeed"]),
    gpus=st.sampled_from([8, 16, 24, 64, 96]),
    fixed=st.sampled_from(FIXED),
)
def test_every_candidate_is_a_plan_the_estimator_accepts(
    name: str, framework: str, gpus: int, fixed: PartialPlan
) -> None:
    w = replace(preset(name), framework=framework)
    c = cluster(gpus)
    for plan in candidate_plans(w, c, fixed):
        check_plan(w, c, plan)


def _optimize(workload: estimate_pb2.Workload, hours: float, **fixed: int) -> Any:
    return api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="infiniband-ndr",
            top_k=1,
            workload=workload,
            constraints=optimize_pb2.Constraints(target_training_hours=hours),
            parallelism=estimate_pb2.Parallelism(**fixed),
        )
    )


def test_an_optimize_request_fixing_the_depth_alone_gets_designs() -> None:
    """Llama 3 8B with virtual_pipeline 2: every cluster size was refused, so the answer was
    INFEASIBLE with no design."""
    response = _optimize(estimate_pb2.Workload(model="llama3-8b"), 2000, virtual_pipeline=2)
    assert response.designs
    assert response.designs[0].estimate.parallelism.virtual_pipeline == 2


def test_the_cheapest_design_is_not_lost_to_a_refused_candidate() -> None:
    """Mixtral 8x7B under DeepSpeed with context 2, 3,000 h: one 8-GPU server meets it
    (t1 c2 d4 e4, 2,859 h). Its search was refused (a tensor-2 candidate timed first), so
    the answer was two servers at twice the price."""
    w = estimate_pb2.Workload(model="mixtral-8x7b", framework="deepspeed")
    design = _optimize(w, 3000, context=2).designs[0]
    assert design.gpus == 8
    assert design.training_time_hours <= 3000


def test_no_design_for_a_parallelism_no_size_runs_says_why() -> None:
    """BERT-Large with expert 2 (a dense model): the diagnosis used to blame memory ("no
    parallel plan fits its memory on any allowed server"); it names the refused field."""
    response = _optimize(estimate_pb2.Workload(model="bert-large"), 2000, expert=2)
    assert not response.designs
    assert "parallelism.expert: expert 2 needs a mixture of experts" in response.diagnosis
