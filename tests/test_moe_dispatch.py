"""How the expert all-to-all moves tokens and how evenly the router loads the experts.

A deduplicating dispatch (DeepEP, HybridEP; DeepSeek-V3 report, arXiv:2412.19437, sec.
3.2.2) sends a token over the network once per node its experts are on and forwards it over
NVLink there; node-limited routing caps those nodes (sec. 2.1.2). Benchmarks that
force-balance the routing (NVIDIA's Megatron-Bridge tables) run every expert rank at the
mean load. Before these workload fields a request could say neither.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction

import pytest
from google.protobuf.json_format import ParseDict
from hypothesis import given
from hypothesis import strategies as st

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.errors import InvalidInput
from optimizer.performance.collectives import expected_remote_domains
from optimizer.performance.compute import compute_s_per_token
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.estimator import estimate, expert_collective
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

DEDUP = "node_deduplicated"


def _enumerated_remote_domains(experts: int, k: int, domains: int, limit: int) -> Fraction:
    """The expectation by listing every routing: the reachable domains (every set of
    ``limit`` of them, or all), then every set of k experts on those, from domain 0."""
    per = experts // domains
    reach = min(limit, domains) if limit else domains
    total, count = Fraction(0), 0
    for chosen in itertools.combinations(range(domains), reach):
        pool = [x for d in chosen for x in range(d * per, (d + 1) * per)]
        for picked in itertools.combinations(pool, k):
            total += len({x // per for x in picked} - {0})
            count += 1
    return total / count


@pytest.mark.parametrize(
    ("experts", "k", "domains", "limit"),
    [(8, 2, 4, 0), (12, 3, 3, 0), (16, 4, 4, 2), (16, 3, 8, 3), (8, 1, 8, 0), (8, 4, 2, 0)],
)
def test_remote_domains_equal_the_enumerated_routings(
    experts: int, k: int, domains: int, limit: int
) -> None:
    expected = _enumerated_remote_domains(experts, k, domains, limit)

    assert expected_remote_domains(experts, k, domains, limit) == pytest.approx(float(expected))


@given(
    st.sampled_from([8, 16, 64, 128, 256]),
    st.integers(1, 8),
    st.sampled_from([1, 2, 4, 8, 16, 32]),
    st.integers(1, 8),
)
def test_a_token_reaches_at_most_its_copies_and_a_node_limit_never_adds(
    experts: int, k: int, domains: int, limit: int
) -> None:
    k = min(k, experts)
    domains = min(domains, experts)
    free = expected_remote_domains(experts, k, domains)
    limited = expected_remote_domains(experts, k, domains, limit)

    assert 0.0 <= free <= min(k, domains - 1) + 1e-9
    assert limited <= free + 1e-9


def test_a_limit_below_the_domains_that_hold_k_experts_reaches_those() -> None:
    """One expert a domain, top-8: a token needs 8 domains whatever the limit says."""
    assert expected_remote_domains(256, 8, 256, 4) == expected_remote_domains(256, 8, 256, 8)


def _deepseek(**fields: object) -> Workload:
    return preset("deepseek-v3", **fields)


def _plan(tensor: int = 1, expert: int = 64) -> ParallelPlan:
    return ParallelPlan(tensor=tensor, pipeline=8, data=128 // tensor, expert=expert)


@pytest.mark.parametrize(("tensor", "expert"), [(1, 8), (1, 16), (1, 64), (2, 64), (4, 32)])
def test_deduplicated_dispatch_never_puts_more_bytes_on_the_network(
    tensor: int, expert: int
) -> None:
    plan = _plan(tensor, expert)
    copies = expert_collective(_deepseek(), plan, 8, 8)
    once = expert_collective(_deepseek(expert_dispatch=DEDUP), plan, 8, 8)
    assert copies is not None and once is not None

    assert once.cost.bytes * once.remote_share <= copies.cost.bytes * copies.remote_share


def test_inside_one_node_the_dispatch_changes_nothing() -> None:
    plan = _plan(1, 8)

    assert expert_collective(_deepseek(expert_dispatch=DEDUP), plan, 8, 8) == expert_collective(
        _deepseek(), plan, 8, 8
    )


def test_across_nodes_deduplicating_makes_the_step_faster() -> None:
    plan = ParallelPlan(tensor=2, pipeline=8, data=64, expert=64, virtual_pipeline=4)
    c = cluster_for(HGX_H100, 1024)
    copies = estimate(_deepseek(global_batch_size=8192), c, plan)
    once = estimate(_deepseek(global_batch_size=8192, expert_dispatch=DEDUP), c, plan)

    assert once.breakdown.all_to_all_s < 0.9 * copies.breakdown.all_to_all_s
    assert once.step_time_s < copies.step_time_s


def test_force_balanced_routing_waits_for_no_busier_rank() -> None:
    balanced = _deepseek(expert_load_imbalance=1.0)
    skewed = _deepseek()
    args = (1, 1, "H100", 989.4, None, 64)

    assert balanced.busiest_expert_load(64) == 1.0
    assert skewed.busiest_expert_load(64) == pytest.approx(1.0 + 0.2 * (1 - 1 / 64))
    assert compute_s_per_token(balanced, *args)[0] < compute_s_per_token(skewed, *args)[0]


def _workload(fields: dict[str, object]) -> object:
    return workload_from_proto(ParseDict(fields, estimate_pb2.Workload()))


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        (
            {"model": "llama3-70b", "expert_dispatch": DEDUP},
            "expert_dispatch",
            "mixture-of-experts",
        ),
        ({"model": "llama3-70b", "expert_load_imbalance": 1.0}, "expert_load_imbalance", "dense"),
        ({"model": "deepseek-v3", "expert_dispatch": "deepep"}, "expert_dispatch", DEDUP),
        ({"model": "deepseek-v3", "expert_node_limit": 4}, "expert_node_limit", DEDUP),
        ({"model": "deepseek-v3", "expert_load_imbalance": 0.9}, "expert_load_imbalance", "1"),
        (
            {"model": "deepseek-v3", "expert_dispatch": DEDUP, "expert_node_limit": -1},
            "expert_node_limit",
            ">= 1",
        ),
    ],
)
def test_a_bad_moe_field_is_refused_naming_it(fields: dict, field: str, says: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        _workload(fields)

    assert raised.value.field == f"workload.{field}"
    assert says in str(raised.value)


def test_the_dispatch_is_read_in_any_case() -> None:
    w = _workload({"model": "deepseek-v3", "expert_dispatch": " Node_Deduplicated "})

    assert w.expert_dispatch == DEDUP


def test_the_defaults_are_the_nccl_all_to_all_at_a_skew_of_1_2() -> None:
    w = _workload({"model": "deepseek-v3"})

    assert (w.expert_dispatch, w.expert_node_limit) == ("all_to_all", 0)
    assert math.isclose(w.expert_load_imbalance, 1.2)
    assert replace(w, expert_load_imbalance=1.2) == w


def _dispatch_notes(w: Workload, plan: ParallelPlan, gpus: int) -> list[str]:
    notes = estimate(w, cluster_for(HGX_H100, gpus), plan).notes
    return [n for n in notes if n.startswith("expert all-to-all")]


def test_an_all_to_all_across_nodes_says_what_deduplicating_would_send() -> None:
    plan = ParallelPlan(tensor=2, pipeline=8, data=64, expert=64, virtual_pipeline=4)

    (note,) = _dispatch_notes(_deepseek(global_batch_size=8192), plan, 1024)
    assert "7.5 of each token's 8 routed copies" in note
    assert f"{DEDUP}) would send 6.1" in note


def test_a_deduplicated_all_to_all_says_what_it_sends() -> None:
    plan = ParallelPlan(tensor=2, pipeline=8, data=64, expert=64, virtual_pipeline=4)
    w = _deepseek(global_batch_size=8192, expert_dispatch=DEDUP)

    (note,) = _dispatch_notes(w, plan, 1024)
    assert "6.1 network sends a token instead of 7.5 routed copies" in note


def test_an_expert_group_inside_a_node_says_nothing_of_its_dispatch() -> None:
    plan = ParallelPlan(tensor=1, pipeline=4, data=16, expert=8)

    assert _dispatch_notes(preset("mixtral-8x7b"), plan, 64) == []
