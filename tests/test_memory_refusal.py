"""A request refused for memory says what the lightest plan needs and where that memory goes,
naming the request fields that set it. Before, Llama 3 8B at a 10M-token sequence on 1,024
H100s was refused as "no parallel plan fits llama3-8b (8.03B parameters) in 1024 GPUs of
80 GB", naming the parameter count and not the sequence; the optimizer's diagnosis said only
"no parallel plan fits its memory on any allowed server"."""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

import pytest

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import check_degrees, estimate, usable_memory_gb
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.planner import CONTEXT_CHOICES, MICRO_BATCH_CHOICES, plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.memory import memory_per_gpu
from optimizer.workload.presets import preset

LONG = replace(preset("llama3-8b"), sequence_length=10_000_000)
NEEDS = re.compile(r"the lightest plan using all of them, (.*), needs ([\d,.]+) GB per GPU: (\w+)")


def _refusal(gpus: int) -> str:
    with pytest.raises(PlanInfeasible) as refused:
        plan_and_estimate(LONG, cluster_for(HGX_H100, gpus))
    return str(refused.value)


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _lightest_by_enumeration(gpus: int) -> float:
    """The least memory per GPU of every plan of ``gpus`` H100s the model's rules allow
    (tensor inside the 8-GPU host, every context, pipeline, micro-batch and ZeRO choice at
    v = 1), enumerated plainly: the planner's figure is checked against it."""
    c = cluster_for(HGX_H100, gpus)
    least = float("inf")
    for t, cp, p in itertools.product(_divisors(8), CONTEXT_CHOICES, _divisors(gpus)):
        if gpus % (t * cp * p) or p > LONG.layers:
            continue
        d = gpus // (t * cp * p)
        for mb, (z, reshard) in itertools.product(
            MICRO_BATCH_CHOICES, ((0, True), (1, True), (2, True), (3, False), (3, True))
        ):
            if LONG.global_batch_size % (d * mb) or (z == 0) != (d * cp == 1):
                continue
            plan = ParallelPlan(t, p, d, 1, 1, z, mb, context=cp, reshard_after_forward=reshard)
            try:
                check_degrees(LONG, c, plan)
            except InvalidInput:
                continue
            least = min(least, memory_per_gpu(LONG, plan).total_gb)
    return least


def test_a_sequence_too_long_for_memory_is_named() -> None:
    text = _refusal(1024)
    assert "workload.sequence_length 10,000,000" in text
    match = NEEDS.search(text)
    assert match is not None, text
    assert match.group(3) == "activations"  # the larger part comes first
    assert float(match.group(2).replace(",", "")) > usable_memory_gb(cluster_for(HGX_H100, 1024))


@pytest.mark.parametrize("gpus", [64, 1024])
def test_the_lightest_plan_named_is_the_lightest_there_is(gpus: int) -> None:
    match = NEEDS.search(_refusal(gpus))
    assert match is not None
    assert float(match.group(2).replace(",", "")) == pytest.approx(
        _lightest_by_enumeration(gpus), abs=0.05
    )


def test_a_fixed_plan_too_heavy_says_where_its_memory_goes() -> None:
    w, c = preset("llama3-70b"), cluster_for(HGX_H100, 8)
    with pytest.raises(PlanInfeasible) as refused:
        estimate(w, c, ParallelPlan(8, 1, 1, zero_stage=0))
    text = str(refused.value)
    assert text.startswith("parallelism: needs ")
    assert "weights " in text and "optimizer states" in text and "activations" in text
    assert text.index("weights ") < text.index("activations")  # 70B of states lead


def test_the_optimizer_diagnosis_says_what_the_lightest_plan_needs() -> None:
    resp = api.optimize(
        optimize_pb2.OptimizeRequest(
            catalog="roce-spectrum",
            top_k=1,
            workload=estimate_pb2.Workload(model="llama3-8b", sequence_length=10_000_000),
            constraints=optimize_pb2.Constraints(budget_usd=50e6),
            objective="MIN_TIME",
        )
    )
    assert resp.status == "INFEASIBLE" and not resp.designs
    assert "no parallel plan fits its memory" in resp.diagnosis
    assert "on the most GPUs tried, no parallel plan fits llama3-8b" in resp.diagnosis
    assert "workload.sequence_length 10,000,000" in resp.diagnosis
