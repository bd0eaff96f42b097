"""A tree oversubscribed at its aggregation tier slows only what leaves a pod (issue 14,
"Topology in the time": oversubscribed tiers exactly as much as physics says).

Meta's Llama 3 cluster joins full-bisection pods at 1:7 (Dubey et al. 2024, sec. 3.3.1).
Before, the estimator put every tier's oversubscription on the leaf's uplinks, so a ring of
two leaves in one pod ran at 1/7 of its line rate; Llama 3 405B on 8,192 GPUs read 329
TFLOP/s per GPU against the 418 measured (-21 %).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.performance.estimator import StepModel
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import META_LLAMA3_ROCE, cluster_for
from optimizer.topology.sizing import size_network
from optimizer.workload.presets import preset

IB = DEFAULT_FABRICS["infiniband"]  # adaptive routing: no ECMP collisions under the leaves
AT_LEAF = replace(META_LLAMA3_ROCE, oversubscribed_tier="leaf")


def test_a_tree_oversubscribed_at_its_aggregation_tier_knows_its_pods() -> None:
    """Radix 64 at 7:1 above the pods: 56 down-ports per aggregation switch, so a pod is 56
    leaves of 32 endpoints; oversubscribed at the leaf, the leaf is the block."""
    pods = size_network(
        "fat_tree", 8192, 64, oversubscription=7.0, rails=8, oversubscribed_tier="aggregation"
    )
    assert pods.profile.endpoints_per_pod == 56 * 32
    leaves = size_network("fat_tree", 8192, 64, oversubscription=7.0, rails=8)
    assert leaves.profile.endpoints_per_pod == 0


def test_the_pods_leaves_reach_each_other_at_full_bandwidth() -> None:
    """Pipeline partners 4 nodes apart over 64 nodes (16 leaves of one 224-node pod of a
    4,096-GPU tree) cross no oversubscribed link; with the same 7:1 at the leaf, 32 flows
    share each leaf's 8 uplinks."""
    w = preset("llama3-70b", global_batch_size=1024)
    plan = ParallelPlan(8, 16, 4, zero_stage=1, micro_batch_size=1)
    in_pod = StepModel(w, cluster_for(META_LLAMA3_ROCE, 4096, fabric="infiniband"), plan, IB)
    leaf_tree = cluster_for(AT_LEAF, 4096, fabric="infiniband")
    at_leaf = StepModel(w, leaf_tree, plan, IB)
    assert in_pod.p2p_net is not None and at_leaf.p2p_net is not None
    assert in_pod.p2p_net.multiplier == 1.0
    uplinks = 56 * leaf_tree.topology.bisection_ratio  # 8 of a 7:1 leaf's 64 ports
    assert at_leaf.p2p_net.multiplier == pytest.approx(32 / uplinks)


def test_traffic_leaving_its_pod_shares_the_pods_oversubscribed_uplinks() -> None:
    """Pipeline partners 64 nodes apart over 1,024 nodes: of a pod's 224 nodes, 64 send out
    of it on each of 8 rails, 512 flows over 1,792 x bisection_ratio uplinks."""
    c = cluster_for(META_LLAMA3_ROCE, 8192, fabric="infiniband")
    w = preset("llama3-70b", global_batch_size=1024)
    plan = ParallelPlan(8, 16, 64, zero_stage=1, micro_batch_size=1)
    model = StepModel(w, c, plan, IB)
    assert model.p2p_net is not None
    uplinks = 1792 * c.topology.bisection_ratio
    assert model.p2p_net.multiplier == pytest.approx(512 / uplinks)


def test_all_to_all_crosses_the_oversubscribed_tier_only_between_pods() -> None:
    """DeepSeek-V3's experts over 256 GPUs (32 nodes, 8 leaves, one pod): uniform all-to-all
    crosses no oversubscribed link; at 7:1 on the leaf, 4/5 of it crosses 1/7 bandwidth."""
    w = preset("deepseek-v3", global_batch_size=1024)
    plan = ParallelPlan(1, 1, 256, expert=256, zero_stage=1, micro_batch_size=1)
    in_pod = StepModel(w, cluster_for(META_LLAMA3_ROCE, 4096, fabric="infiniband"), plan, IB)
    at_leaf = StepModel(w, cluster_for(AT_LEAF, 4096, fabric="infiniband"), plan, IB)
    assert in_pod.a2a_net is not None and at_leaf.a2a_net is not None
    assert in_pod.a2a_net.multiplier == 1.0
    assert at_leaf.a2a_net.multiplier > 4.0
