"""A tensor degree splits the attention heads, the K/V groups and the FFN columns evenly:
Megatron-Core's `divide` asserts all three (attention.py, the column-parallel linears), so a
grouped-query model with 2 K/V heads cannot run tensor 4; with sequence parallelism (which the
memory model assumes) it splits each sequence's tokens too. The planner offers only degrees
that split all of them, and a request's degree that does not is refused naming the field."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster


def test_two_kv_groups_cap_the_planners_tensor_degree_at_two() -> None:
    """Before: t4 p2 d32 on 256 H100s, two ranks sharing each K/V head."""
    w = preset("llama3-70b", kv_heads=2)
    plan = plan_and_estimate(w, cluster_for(HGX_H100, 256, fabric="infiniband")).plan
    assert plan.tensor == 2


def test_multi_query_attention_is_planned_without_tensor_parallelism() -> None:
    """Before: t2 p4 on one 8-GPU node for MPT-30B with a single K/V head."""
    w = preset("mpt-30b", kv_heads=1)
    plan = plan_and_estimate(w, cluster_for(HGX_H100, 8, fabric="infiniband")).plan
    assert plan.tensor == 1


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(["mpt-30b", "llama3-70b", "mixtral-8x7b"]),
    kv_heads=st.sampled_from([1, 2, 4]),
    ffn_hidden_size=st.sampled_from([None, 14_334, 14_340]),
    nodes=st.integers(1, 32),
)
def test_every_planned_tensor_degree_splits_the_kv_heads_and_the_ffn(
    name: str, kv_heads: int, ffn_hidden_size: int | None, nodes: int
) -> None:
    ffn = {} if ffn_hidden_size is None else {"ffn_hidden_size": ffn_hidden_size}
    w = preset(name, kv_heads=kv_heads, **ffn)
    try:
        plan = plan_and_estimate(w, cluster_for(HGX_H100, 8 * nodes, fabric="roce")).plan
    except PlanInfeasible:
        return
    assert w.kv_heads % plan.tensor == 0
    assert w.ffn_hidden_size % plan.tensor == 0


def test_a_requested_tensor_degree_that_splits_a_kv_group_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"kv_heads 2") as refused:
        estimate(preset("llama3-8b", kv_heads=2), cluster(64), ParallelPlan(4, 1, 16))
    assert refused.value.field == "parallelism.tensor"


def test_a_requested_tensor_degree_that_splits_the_ffn_is_refused() -> None:
    with pytest.raises(InvalidInput, match=r"ffn_hidden_size 14330") as refused:
        estimate(preset("llama3-8b", ffn_hidden_size=14_330), cluster(64), ParallelPlan(4, 1, 16))
    assert refused.value.field == "parallelism.tensor"


def test_a_requested_tensor_degree_that_splits_a_sequence_unevenly_is_refused() -> None:
    """Before: no refusal for a complete plan, and "no parallel plan fits" naming
    cluster.gpus for a partial one (the check ran only under context parallelism)."""
    w = preset("llama3-8b", sequence_length=1020)
    with pytest.raises(InvalidInput, match=r"1020 tokens of a sequence") as complete:
        estimate(w, cluster(64), ParallelPlan(8, 1, 8))
    with pytest.raises(InvalidInput) as partial:
        plan_and_estimate(w, cluster(64), PartialPlan(tensor=8))
    assert complete.value.field == partial.value.field == "parallelism.tensor"
