"""The planner ranks plans on wall-clock time (issue 14, goodput): GPUs that fail more often
than they speed the job up are left idle."""

from __future__ import annotations

from dataclasses import replace

from optimizer.performance.estimator import estimate
from optimizer.performance.goodput import Reliability
from optimizer.performance.options import ModelOptions
from optimizer.performance.planner import plan_and_estimate
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

FLAKY = ModelOptions(reliability=Reliability(failures_per_gpu_hour=0.01))
NO_FAILURES = ModelOptions(reliability=Reliability(failures_per_gpu_hour=0.0))


def test_a_flaky_cluster_leaves_gpus_idle_when_that_finishes_sooner() -> None:
    # BERT-Large scales poorly past 2,048 GPUs: at 0.01 failures per GPU-hour the plan with
    # the fastest step (4,096 GPUs) loses more to failures than its steps save.
    w, c = preset("bert-large"), cluster(4104)
    fastest_step = plan_and_estimate(w, c, options=NO_FAILURES)
    on_flaky = estimate(
        w, replace(c, gpus=fastest_step.gpus_used), fastest_step.plan, options=FLAKY
    )
    chosen = plan_and_estimate(w, c, options=FLAKY)
    assert chosen.gpus_used < fastest_step.gpus_used
    assert chosen.training_time_hours < on_flaky.training_time_hours


def test_without_failures_the_plan_with_the_fastest_step_wins() -> None:
    w, c = preset("bert-large"), cluster(4104)
    fastest_step = plan_and_estimate(w, c, options=NO_FAILURES)
    assert fastest_step.step_time_s <= plan_and_estimate(w, c, options=FLAKY).step_time_s
