"""The planner and the estimator agree on what can run: every candidate the planner may time
is a plan ``estimate`` accepts (check_plan), whatever the request fixes. A candidate it
refuses either wastes the search's time or, when the search times it first, turns a request
that has valid plans into an error (check_plan runs on the first candidate timed)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

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
