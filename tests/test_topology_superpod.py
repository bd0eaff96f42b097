"""The sizing reproduces NVIDIA's DGX SuperPOD tables and Al-Fares's k-ary fat-tree formulas.

Reference: shared/reference/hardware/hardware.md section 5 (docs.nvidia.com/dgx-superpod,
H100 and B200 reference architectures, 64-port Quantum-2 NDR switches, 8 rails per node).
"""

from __future__ import annotations

import pytest

from optimizer.topology.fat_tree import max_endpoints
from optimizer.topology.sizing import size_network

RADIX_NDR = 64
RAILS = 8
# The H100 RA gives one of the 32*SU node slots to the UFM appliance, cabled with 4 links into
# the compute fabric: switch counts are those of the DGX nodes alone, and the node->leaf cable
# count is the nodes' links plus these 4 (docs/topology.md, "UFM slot").
UFM_LINKS = 4

# SUs, DGX H100 nodes, leaf, spine, node->leaf cables, leaf->spine cables
H100 = [
    (1, 31, 8, 4, 252, 256),
    (2, 63, 16, 8, 508, 512),
    (3, 95, 24, 16, 764, 768),
    (4, 127, 32, 16, 1020, 1024),
]
# SUs, DGX B200 nodes, leaf, spine, core, cables per tier (None where the table gives none)
B200 = [
    (2, 64, 16, 8, 0, 512),
    (4, 128, 32, 16, 0, 1024),
    (8, 256, 64, 32, 0, None),
    (16, 512, 128, 128, 64, 4096),
    (32, 1024, 256, 256, 128, None),
    (64, 2048, 512, 512, 256, None),
]


def _switches(sizing, tier: str) -> int:
    t = sizing.tier(tier)
    return t.switches if t else 0


@pytest.mark.parametrize(("sus", "nodes", "leaf", "spine", "node_leaf", "leaf_spine"), H100)
def test_h100_superpod_switch_and_cable_counts(sus, nodes, leaf, spine, node_leaf, leaf_spine):
    sizing = size_network("rail_optimized", nodes * RAILS, RADIX_NDR, rails=RAILS)
    assert (_switches(sizing, "leaf"), _switches(sizing, "spine")) == (leaf, spine)
    assert _switches(sizing, "core") == 0
    assert sizing.links("node-leaf") + UFM_LINKS == node_leaf
    assert sizing.links("leaf-spine") == leaf_spine


@pytest.mark.parametrize(("sus", "nodes", "leaf", "spine", "node_leaf", "leaf_spine"), H100)
def test_h100_ufm_slot_does_not_change_switch_counts(
    sus, nodes, leaf, spine, node_leaf, leaf_spine
):
    with_ufm_slot = size_network("rail_optimized", (nodes + 1) * RAILS, RADIX_NDR, rails=RAILS)
    assert (_switches(with_ufm_slot, "leaf"), _switches(with_ufm_slot, "spine")) == (leaf, spine)


@pytest.mark.parametrize(("sus", "nodes", "leaf", "spine", "core", "cables"), B200)
def test_b200_superpod_switch_and_cable_counts(sus, nodes, leaf, spine, core, cables):
    sizing = size_network("rail_optimized", nodes * RAILS, RADIX_NDR, rails=RAILS)
    counts = (_switches(sizing, "leaf"), _switches(sizing, "spine"), _switches(sizing, "core"))
    assert counts == (leaf, spine, core)
    if cables is not None:
        assert {g.count for g in sizing.link_groups} == {cables}


def test_superpod_is_non_blocking_and_rail_optimized_in_the_profile():
    profile = size_network("rail_optimized", 127 * RAILS, RADIX_NDR, rails=RAILS).profile
    assert profile.rail_optimized
    assert profile.oversubscription == 1.0
    assert profile.bisection_ratio == 1.0
    assert profile.endpoints_per_leaf == 32


@pytest.mark.parametrize("k", [4, 6, 8, 16, 24, 48])
def test_k_ary_fat_tree_hosts_k_cubed_over_four_with_five_k_squared_over_four_switches(k):
    sizing = size_network("fat_tree", k**3 // 4, k)
    assert [t.name for t in sizing.tiers] == ["leaf", "spine", "core"]
    assert sizing.switches == 5 * k * k // 4
    assert sizing.tier("core").switches == (k // 2) ** 2
    assert sizing.pods == k
    assert max_endpoints(k) == k**3 // 4
    assert sizing.profile.bisection_ratio == 1.0


@pytest.mark.parametrize("k", [4, 8, 16, 64])
def test_k_ary_fat_tree_uses_every_port(k):
    sizing = size_network("fat_tree", k**3 // 4, k)
    assert all(t.ports_free == 0 for t in sizing.tiers)
