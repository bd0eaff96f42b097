"""Alpha-beta collectives (Thakur et al. 2005): the line-rate bound and the algorithms' shape."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from optimizer.performance import collectives as coll

sizes = st.floats(1.0, 1e11)
ranks = st.integers(2, 4096)
bandwidths = st.floats(1e8, 1e12)
alphas = st.floats(0.0, 1e-4)


@given(size=sizes, n=ranks, bw=bandwidths, alpha=alphas)
def test_no_all_reduce_beats_the_line_rate_bound(
    size: float, n: int, bw: float, alpha: float
) -> None:
    """Seed claim / Patarasuk & Yuan 2009: all-reduce >= 2(n-1)/n S/B."""
    bound = coll.line_rate_all_reduce_bound_s(size, n, bw)
    assert coll.ring_all_reduce(size, n).seconds(bw, alpha) >= bound * (1 - 1e-12)
    assert coll.tree_all_reduce(size, n).seconds(bw, alpha) >= bound * (1 - 1e-12)
    assert coll.all_reduce_s(size, n, bw, alpha) >= bound * (1 - 1e-12)


@given(size=sizes, local=st.integers(1, 8), nodes=st.integers(1, 512), bw=bandwidths, alpha=alphas)
def test_hierarchical_all_reduce_respects_the_bound_at_equal_bandwidth(
    size: float, local: int, nodes: int, bw: float, alpha: float
) -> None:
    n = local * nodes
    bound = coll.line_rate_all_reduce_bound_s(size, n, bw)
    t = coll.hierarchical_all_reduce_s(size, local, nodes, bw, alpha, bw, alpha)
    assert t >= bound * (1 - 1e-9)


def test_ring_bandwidth_term_equals_the_bound() -> None:
    assert coll.ring_all_reduce(1e9, 8).seconds(1e10, 0.0) == pytest.approx(
        coll.line_rate_all_reduce_bound_s(1e9, 8, 1e10)
    )


def test_tree_wins_latency_bound_and_ring_bandwidth_bound_all_reduces() -> None:
    """Small messages on many ranks favour the tree's log n steps; large ones on few ranks
    favour the ring's 2(n-1)/n bytes."""
    alpha, bw = 5e-6, 25e9
    assert coll.tree_all_reduce(1e3, 1024).seconds(bw, alpha) < coll.ring_all_reduce(
        1e3, 1024
    ).seconds(bw, alpha)
    assert coll.ring_all_reduce(1e10, 8).seconds(bw, alpha) < coll.tree_all_reduce(1e10, 8).seconds(
        bw, alpha
    )


@given(size=sizes, n=ranks)
def test_reduce_scatter_plus_all_gather_moves_what_a_ring_all_reduce_moves(
    size: float, n: int
) -> None:
    rs, ag, ar = (
        coll.reduce_scatter(size, n),
        coll.all_gather(size, n),
        coll.ring_all_reduce(size, n),
    )
    assert rs.bytes + ag.bytes == pytest.approx(ar.bytes)
    assert rs.steps + ag.steps == ar.steps


def test_a_single_rank_costs_nothing() -> None:
    for fn in (coll.ring_all_reduce, coll.tree_all_reduce, coll.reduce_scatter, coll.all_to_all):
        assert fn(1e9, 1) == coll.NO_COST
