"""The framework's collective efficiency derates every collective's bandwidth, on the
scale-up fabric and the network alike (issue 14; the calibration fits it)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from optimizer.performance.estimator import StepBreakdown, StepModel, scenario
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

LLAMA_8B = preset("llama3-8b")
IB = DEFAULT_FABRICS["infiniband"]


def _breakdown(plan: ParallelPlan, efficiency: float) -> StepBreakdown:
    c = cluster(64)
    sc = replace(scenario(c, IB, "expected"), collective_efficiency=efficiency)
    return StepModel(LLAMA_8B, c, plan, IB).breakdown(sc)


@pytest.mark.parametrize(
    ("plan", "term"),
    [
        (ParallelPlan(8, 1, 8, zero_stage=1, micro_batch_size=1), "tensor_parallel_s"),  # NVLink
        (ParallelPlan(1, 1, 64, zero_stage=1, micro_batch_size=1), "network_s"),
        (ParallelPlan(1, 1, 64, zero_stage=3, micro_batch_size=1), "data_parallel_s"),
    ],
)
def test_halving_the_collective_efficiency_doubles_the_bandwidth_time(
    plan: ParallelPlan, term: str
) -> None:
    """time = bytes / (B x efficiency) + latency: each halving adds twice the previous
    increment (latency unchanged). Fails on main, where the efficiency was ignored."""
    full, half, quarter = (getattr(_breakdown(plan, e), term) for e in (1.0, 0.5, 0.25))
    assert half > full
    assert quarter - half == pytest.approx(2 * (half - full), rel=1e-9)
