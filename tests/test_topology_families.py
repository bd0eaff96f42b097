"""Each topology family's sizing rules, limits and refusals (docs/topology.md)."""

from __future__ import annotations

import pytest

from optimizer.errors import InvalidInput
from optimizer.topology.dragonfly import balanced_shape
from optimizer.topology.fat_tree import max_endpoints, split_ports
from optimizer.topology.sizing import size_network
from optimizer.topology.torus import torus_shape


def test_single_switch_takes_up_to_radix_endpoints():
    sizing = size_network("single_switch", 64, 64)
    assert sizing.switches == 1
    assert sizing.links("node-leaf") == 64
    assert sizing.profile.max_switch_hops == 1


def test_single_switch_refuses_more_endpoints_than_ports():
    with pytest.raises(InvalidInput, match="exceed one switch") as e:
        size_network("single_switch", 65, 64)
    assert e.value.field == "endpoints"


def test_port_split_follows_the_oversubscription_ratio():
    assert split_ports(64, 1.0) == (32, 32)
    assert split_ports(64, 3.0) == (48, 16)
    assert split_ports(64, 7.0) == (56, 8)


def test_oversubscription_below_one_is_refused():
    with pytest.raises(InvalidInput) as e:
        size_network("fat_tree", 100, 64, oversubscription=0.5)
    assert e.value.field == "oversubscription"


def test_two_tier_non_blocking_maximum_is_k_squared_over_two():
    assert max_endpoints(64, tiers=2) == 64 * 64 // 2
    assert len(size_network("fat_tree", 2048, 64).tiers) == 2
    assert len(size_network("fat_tree", 2049, 64).tiers) == 3


def test_two_tier_leaf_spine_counts_follow_the_formula():
    # L = ceil(E/d) = ceil(1000/32) = 32 leaves; S = ceil(L*u/k) = 16, a divisor of u = 32.
    sizing = size_network("fat_tree", 1000, 64)
    assert (sizing.tier("leaf").switches, sizing.tier("spine").switches) == (32, 16)
    assert sizing.links("leaf-spine") == 32 * 32


def test_spines_divide_the_leaf_uplinks_evenly():
    # 24 leaves x 32 uplinks fill 12 spines, but 12 does not divide 32: 16 spines (SuperPOD 3 SU).
    sizing = size_network("fat_tree", 24 * 32, 64)
    assert sizing.tier("spine").switches == 16
    assert sizing.tier("spine").busiest_switch_ports_used == 48


def test_leaf_oversubscription_means_fewer_spines_and_less_bisection():
    full = size_network("fat_tree", 2048, 64)
    over = size_network("fat_tree", 2048, 64, oversubscription=3.0)
    assert over.tier("spine").switches < full.tier("spine").switches
    assert over.links("leaf-spine") < full.links("leaf-spine")
    assert over.profile.oversubscription == 3.0
    assert over.profile.bisection_ratio == pytest.approx(1 / 3, rel=0.01)


def test_oversubscribed_two_tier_holds_k_times_down_ports():
    assert len(size_network("fat_tree", 64 * 48, 64, oversubscription=3.0).tiers) == 2
    assert len(size_network("fat_tree", 64 * 48 + 1, 64, oversubscription=3.0).tiers) == 3


def test_aggregation_oversubscription_shrinks_the_core_only():
    # 4 full pods of 56 leaves (d_agg = 56 at 7:1) x 32 endpoints.
    full = size_network("fat_tree", 4 * 56 * 32, 64)
    over = size_network(
        "fat_tree", 4 * 56 * 32, 64, oversubscription=7.0, oversubscribed_tier="aggregation"
    )
    assert over.tier("leaf").switches == full.tier("leaf").switches
    assert over.tier("core").switches < full.tier("core").switches
    assert over.profile.oversubscription == 7.0
    assert over.profile.bisection_ratio == pytest.approx(1 / 7, rel=0.01)


def test_unknown_oversubscribed_tier_is_refused():
    with pytest.raises(InvalidInput) as e:
        size_network("fat_tree", 100, 64, oversubscription=2.0, oversubscribed_tier="core")
    assert e.value.field == "oversubscribed_tier"


def test_three_tier_refuses_more_than_k_pods():
    assert max_endpoints(8) == 128
    size_network("fat_tree", 128, 8)
    with pytest.raises(InvalidInput, match="at most 8 pods") as e:
        size_network("fat_tree", 129, 8)
    assert e.value.field == "endpoints"


def test_three_tier_path_crosses_five_switches():
    assert size_network("fat_tree", 5000, 64).profile.max_switch_hops == 5


def test_rail_optimized_gives_each_rail_its_own_leaves():
    plain = size_network("fat_tree", 16 * 8, 64)
    rails = size_network("rail_optimized", 16 * 8, 64, rails=8)
    assert plain.tier("leaf").switches == 4
    assert rails.tier("leaf").switches == 8
    assert rails.profile.rail_optimized and not plain.profile.rail_optimized
    assert rails.profile.endpoints_per_leaf == 16


def test_rail_optimized_refuses_ports_that_do_not_split_over_rails():
    with pytest.raises(InvalidInput, match="rails"):
        size_network("rail_optimized", 100, 64, rails=8)


def test_balanced_dragonfly_shape_from_radix():
    assert balanced_shape(64) == (16, 32, 16)  # k = p + (a - 1) + h = 63 <= 64
    assert balanced_shape(7) == (2, 4, 2)


def test_dragonfly_counts():
    # k = 7: p = 2, a = 4, h = 2; 40 endpoints need 5 groups of 4 routers; a*h/(g-1) = 2 per pair.
    sizing = size_network("dragonfly", 40, 7)
    assert sizing.tier("router").switches == 20
    assert sizing.pods == 5
    assert sizing.links("intra-group") == 5 * 4 * 3 // 2
    assert sizing.links("global") == 5 * 4 // 2 * 2
    assert sizing.tier("router").busiest_switch_ports_used <= 7


def test_dragonfly_refuses_more_groups_than_a_h_plus_one():
    p, a, h = balanced_shape(7)
    size_network("dragonfly", p * a * (a * h + 1), 7)
    with pytest.raises(InvalidInput, match="at most 9 groups"):
        size_network("dragonfly", p * a * (a * h + 1) + 1, 7)


def test_dragonfly_parameters_must_fit_the_radix():
    with pytest.raises(InvalidInput, match="exceeds the router radix"):
        size_network("dragonfly", 100, 16, params=(("p", 8), ("a", 8), ("h", 4)))


def test_torus_counts_follow_the_k_ary_n_cube():
    # 512 nodes, 3-D: 8 x 8 x 8; n*N links, bisection 2N/k, diameter n*floor(k/2).
    sizing = size_network("torus", 512 * 6, 0, rails=6)
    assert sizing.tiers == ()
    assert sizing.links("torus") == 3 * 512
    assert sizing.bisection_links == 2 * 512 // 8
    assert sizing.profile.max_switch_hops == 12
    assert sizing.profile.tiers == 0


def test_torus_shape_is_exact_and_as_cubic_as_possible():
    assert torus_shape(512, 3) == (8, 8, 8)
    assert torus_shape(100, 3) == (5, 5, 4)
    assert torus_shape(64, 2) == (8, 8)


def test_torus_refuses_nodes_with_too_few_nic_ports():
    with pytest.raises(InvalidInput, match="uses 6 NIC ports per node; 4 NICs") as e:
        size_network("torus", 64 * 4, 0, rails=4)
    assert e.value.field == "nics_per_node"


def test_torus_dimension_parameter_changes_the_shape():
    sizing = size_network("torus", 64 * 4, 0, rails=4, params=(("dims", 2),))
    assert sizing.links("torus") == 2 * 64


def test_unknown_family_is_refused():
    with pytest.raises(InvalidInput) as e:
        size_network("hypercube", 10, 64)
    assert e.value.field == "topology"


@pytest.mark.parametrize("family", ["single_switch", "dragonfly"])
def test_families_without_an_oversubscribed_tier_refuse_a_ratio(family):
    with pytest.raises(InvalidInput) as e:
        size_network(family, 10, 64, oversubscription=2.0)
    assert e.value.field == "oversubscription"


def test_fat_tree_takes_no_family_parameters():
    with pytest.raises(InvalidInput) as e:
        size_network("fat_tree", 10, 64, params=(("dims", 3),))
    assert e.value.field == "topology_params"


def test_a_single_dragonfly_group_holds_only_the_routers_its_endpoints_fill():
    sizing = size_network("dragonfly", 128, 64)  # p = 16: 8 routers, all-to-all
    assert sizing.tier("router").switches == 8
    assert sizing.links("intra-group") == 8 * 7 // 2
    assert sizing.links("global") == 0


def test_a_fat_tree_that_fits_one_leaf_buys_no_spine():
    sizing = size_network("fat_tree", 16, 64)
    assert [t.name for t in sizing.tiers] == ["leaf"]
    assert sizing.profile.max_switch_hops == 1
    assert sizing.profile.bisection_ratio == 1.0
