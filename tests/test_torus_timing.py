"""A direct network is timed by its shape (issue 13 review, defect 1): collectives run as
dimension-ordered rings, pipeline partners a stage apart pay their hops and channel load,
and switched fabrics are untouched."""

from __future__ import annotations

from optimizer.performance.estimator import group_shape, torus_distance, torus_ring_steps
from optimizer.topology.torus import size_torus


def test_a_block_of_consecutive_nodes_fills_the_fastest_sides_first() -> None:
    assert group_shape((16, 16, 8), 512) == (16, 16, 2)
    assert group_shape((2053, 1, 1), 512) == (512, 1, 1)


def test_a_reduce_scatter_over_a_torus_takes_one_ring_per_side() -> None:
    assert torus_ring_steps((16, 16, 8), 2048) == 15 + 15 + 7
    assert torus_ring_steps((2053, 1, 1), 2053) == 2052


def test_partners_a_stage_apart_are_the_shorter_way_round_each_ring() -> None:
    assert torus_distance((16, 16, 8), 512) == (0, 0, 2)
    assert torus_distance((2053, 1, 1), 1024) == (1024, 0, 0)
    assert torus_distance((2053, 1, 1), 1500) == (553, 0, 0)


def test_the_torus_sizing_hands_its_shape_to_the_estimator() -> None:
    assert size_torus(2048 * 6, rails=6).profile.shape == (16, 16, 8)
    assert size_torus(2053 * 6, rails=6).profile.shape == (2053, 1, 1)
