"""Laws every sizing obeys, for any family, size, radix and ratio (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.topology.sizing import max_endpoints, size_network

# Link ends each group puts on each tier.
ENDS = {
    "leaf": {"node-leaf": 1, "leaf-spine": 1},
    "spine": {"leaf-spine": 1, "spine-core": 1},
    "core": {"spine-core": 1},
    "router": {"node-leaf": 1, "intra-group": 2, "global": 2},
}


@st.composite
def sizings(draw: st.DrawFn):
    family = draw(st.sampled_from(["single_switch", "fat_tree", "rail_optimized", "dragonfly"]))
    radix = draw(st.sampled_from([8, 16, 32, 48, 64, 128]))
    rails = draw(st.sampled_from([1, 2, 4, 8]))
    endpoints = rails * draw(st.integers(1, 4000 // rails))
    ratio, tier = 1.0, "leaf"
    if family in ("fat_tree", "rail_optimized"):
        ratio = draw(st.sampled_from([1.0, 1.5, 2.0, 3.0, 7.0]))
        tier = draw(st.sampled_from(["leaf", "aggregation"]))
    try:
        return size_network(
            family, endpoints, radix, oversubscription=ratio, rails=rails, oversubscribed_tier=tier
        )
    except InvalidInput:
        return None  # a size the family refuses (tested in test_topology_families.py)


@settings(max_examples=300, deadline=None)
@given(sizings())
def test_ports_used_on_a_tier_equal_the_link_ends_landing_there(sizing):
    if sizing is None:
        return
    links = {g.name: g.count for g in sizing.link_groups}
    for tier in sizing.tiers:
        ends = sum(links.get(g, 0) * n for g, n in ENDS[tier.name].items())
        assert tier.down_ports_used + tier.up_ports_used == ends


@settings(max_examples=300, deadline=None)
@given(sizings())
def test_no_switch_is_over_full(sizing):
    if sizing is None:
        return
    for tier in sizing.tiers:
        assert tier.busiest_switch_ports_used <= tier.ports_per_switch
        assert tier.ports_free >= 0


@settings(max_examples=300, deadline=None)
@given(sizings())
def test_every_endpoint_has_a_link_and_the_profile_agrees(sizing):
    if sizing is None:
        return
    assert sizing.links("node-leaf") == sizing.endpoints
    assert sizing.profile.endpoints == sizing.endpoints
    assert sizing.profile.tiers == len(sizing.tiers) or sizing.family == "dragonfly"
    assert 0 < sizing.profile.bisection_ratio <= 1
    assert sizing.profile.oversubscription >= 1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60_000), st.sampled_from([16, 32, 64]), st.sampled_from([1.0, 3.0]))
def test_more_endpoints_never_need_fewer_switches(endpoints, radix, ratio):
    try:
        bigger = size_network("fat_tree", endpoints + 1, radix, oversubscription=ratio)
    except InvalidInput:
        return
    assert (
        size_network("fat_tree", endpoints, radix, oversubscription=ratio).switches
        <= bigger.switches
    )


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["single_switch", "fat_tree", "rail_optimized", "dragonfly"]),
    st.sampled_from([8, 12, 16, 24, 32]),
    st.sampled_from([1, 2, 4, 8]),
    st.sampled_from([1.0, 3.0]),
    st.sampled_from(["leaf", "aggregation"]),
)
def test_max_endpoints_is_the_exact_limit(family, radix, rails, ratio, tier):
    if family in ("single_switch", "dragonfly"):
        ratio = 1.0
    kwargs = {"oversubscription": ratio, "rails": rails, "oversubscribed_tier": tier}
    limit = max_endpoints(family, radix, **kwargs)
    step = rails if family == "rail_optimized" else 1
    size_network(family, limit, radix, **kwargs)
    with pytest.raises(InvalidInput):
        size_network(family, limit + step, radix, **kwargs)
