"""Token dropping (issue 14, MoE): Megatron-Core's moe_expert_capacity_factor and
moe_pad_expert_input_to_capacity as workload.expert_capacity_factor and
workload.pad_expert_input_to_capacity. Each expert takes at most c times its even share of
the routed tokens, the rest dropped, so the busiest expert rank waits on at most c times a
balanced layer's load; padded to capacity, every rank computes, sends and holds exactly that,
however balanced the routing. Before, a token-drop recipe could not be stated and was timed
as dropless at the stated load."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from optimizer.errors import InvalidInput
from optimizer.performance.estimator import estimate, expert_collective
from optimizer.performance.plan import ParallelPlan
from optimizer.performance.validation import HGX_H100, cluster_for
from optimizer.workload.memory import memory_per_gpu
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

# Mixtral 8x7B on 64 H100s: 8 experts over 8 expert ranks, tensor 2, the experts folded
PLAN = ParallelPlan(2, 1, 32, 8, micro_batch_size=1, expert_tensor=1)
CLUSTER = cluster_for(HGX_H100, 64)


def _mixtral(**fields: object) -> Workload:
    return preset("mixtral-8x7b", **fields)


def _step_s(w: Workload) -> float:
    return estimate(w, CLUSTER, PLAN).step_time_s


def test_dropless_is_the_default_and_unchanged() -> None:
    w = _mixtral(expert_load_imbalance=1.5)

    assert (w.expert_capacity_factor, w.pad_expert_input_to_capacity) == (0.0, False)
    assert w.expert_token_share == 1.0
    assert w.busiest_expert_load(8) == pytest.approx(1.0 + 0.5 * (1 - 1 / 8))


def test_a_capacity_caps_the_busiest_ranks_load() -> None:
    """Routing 1.5 x the mean to the busiest of 8 ranks: 1.44 x dropless, at most 1.25 x."""
    assert (
        _mixtral(expert_load_imbalance=1.5, expert_capacity_factor=1.25).busiest_expert_load(8)
        == 1.25
    )
    roomy = _mixtral(expert_load_imbalance=1.5, expert_capacity_factor=2.0)
    dropless = _mixtral(expert_load_imbalance=1.5)
    assert roomy.busiest_expert_load(8) == dropless.busiest_expert_load(8)


def test_a_capacity_below_one_drops_tokens_even_when_balanced() -> None:
    w = _mixtral(expert_load_imbalance=1.0, expert_capacity_factor=0.5)

    assert w.busiest_expert_load(8) == 0.5
    assert w.expert_token_share == 0.5
    assert _step_s(w) < _step_s(_mixtral(expert_load_imbalance=1.0))


def test_padding_to_capacity_times_every_rank_at_the_capacity() -> None:
    """Balanced routing gains nothing: the padded buffers are computed, sent and held."""
    balanced = _mixtral(expert_load_imbalance=1.0)
    padded = _mixtral(
        expert_load_imbalance=1.0, expert_capacity_factor=1.25, pad_expert_input_to_capacity=True
    )

    assert padded.busiest_expert_load(8) == 1.25
    assert _step_s(padded) > _step_s(balanced)
    sent = expert_collective(padded, PLAN, 8, 8)
    dropless = expert_collective(balanced, PLAN, 8, 8)
    assert sent is not None and dropless is not None
    assert sent.cost.bytes == pytest.approx(1.25 * dropless.cost.bytes)
    assert (
        memory_per_gpu(padded, PLAN).activations_gb > memory_per_gpu(balanced, PLAN).activations_gb
    )


def test_the_estimate_says_what_the_capacity_does() -> None:
    notes = estimate(
        _mixtral(expert_load_imbalance=1.5, expert_capacity_factor=1.25), CLUSTER, PLAN
    ).notes

    assert any(
        "each expert takes at most 1.25 x its even share" in n
        and "the busiest of 8 expert ranks is timed at 1.25 x" in n
        for n in notes
    )


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"expert_capacity_factor": -0.5}, "workload.expert_capacity_factor"),
        ({"expert_capacity_factor": 4.5}, "workload.expert_capacity_factor"),  # 8 / 2 = 4
        ({"expert_capacity_factor": float("nan")}, "workload.expert_capacity_factor"),
        ({"pad_expert_input_to_capacity": True}, "workload.pad_expert_input_to_capacity"),
    ],
)
def test_a_capacity_out_of_range_is_refused_naming_its_field(
    fields: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as refused:
        _mixtral(**fields)

    assert refused.value.field == field


def test_a_dense_model_has_no_capacity() -> None:
    with pytest.raises(InvalidInput) as refused:
        preset("llama3-8b", expert_capacity_factor=1.0)

    assert refused.value.field == "workload.expert_capacity_factor"


@settings(max_examples=30, deadline=None)
@given(
    low=st.floats(0.25, 2.0),  # padded to 4 x, Mixtral no longer fits these GPUs
    high=st.floats(0.25, 2.0),
    imbalance=st.floats(1.0, 2.0),
    pad=st.booleans(),
)
def test_more_capacity_is_never_faster(
    low: float, high: float, imbalance: float, pad: bool
) -> None:
    """A larger capacity drops fewer tokens (or pads to more): the step never shrinks."""
    low, high = min(low, high), max(low, high)
    fields = {"expert_load_imbalance": imbalance, "pad_expert_input_to_capacity": pad}

    assert _step_s(_mixtral(expert_capacity_factor=low, **fields)) <= _step_s(
        _mixtral(expert_capacity_factor=high, **fields)
    ) * (1 + 1e-12)
