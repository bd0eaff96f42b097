"""Pipeline sends leave the node wherever two adjacent stages sit on different nodes, not only
when one stage fills a node.

Stages are the outermost ranks (Megatron-LM's order: tensor, context, data, then pipeline),
so stages smaller than a node still meet a node edge every gpus_per_node / stage GPUs, and
every micro-batch crosses those edges on its way through the pipeline: the step runs at the
pace of the slowest hop. Counted as NVLink traffic whenever a stage was smaller than a node,
Llama 3 70B on 160 GPUs (tensor 2, pipeline 40, data 2: 19 of its 39 stage edges between
nodes) took 5,063.9 h at 0.01 Gb/s per node as at 3,200, and the planner chose such
pipelines to make slow NICs look free (found by a randomised hunt over request fields).
"""

from __future__ import annotations

from optimizer.performance.estimator import estimate
from optimizer.performance.plan import ParallelPlan
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

LLAMA70 = preset("llama3-70b", activation_recompute="full")
SUB_NODE_STAGES = ParallelPlan(2, 40, 2, zero_stage=1)  # a stage: 4 GPUs, half a node


def test_sub_node_stages_send_over_the_network_between_nodes() -> None:
    slow = estimate(LLAMA70, cluster(160, nic_gbps_per_node=1.0), SUB_NODE_STAGES)
    fast = estimate(LLAMA70, cluster(160, nic_gbps_per_node=3200.0), SUB_NODE_STAGES)
    assert slow.breakdown.pipeline_p2p_s > 10 * fast.breakdown.pipeline_p2p_s
    assert slow.training_time_hours > fast.training_time_hours


def test_a_pipeline_inside_one_node_never_touches_the_network() -> None:
    one_node = ParallelPlan(1, 4, 2)  # 8 GPUs: the whole pipeline on NVLink
    slow = estimate(preset("llama3-8b"), cluster(8, nic_gbps_per_node=1.0), one_node)
    fast = estimate(preset("llama3-8b"), cluster(8, nic_gbps_per_node=3200.0), one_node)
    assert slow.training_time_hours == fast.training_time_hours
