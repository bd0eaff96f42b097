"""The answer says what the seed's rule of thumb would buy and what rank 1 saves against it
(issue 13): the rule's design and both savings are those of ``rule_of_thumb`` for the same
job, and the CLI prints them under the sensitivity line."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cli_support import run

from optimizer.catalog.resolve import resolve_catalog
from optimizer.optimize.baseline import rule_of_thumb
from optimizer.optimize.explain import describe_design, usd
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset

# The README's main job: Llama-3 70B in 30 days on the bundled InfiniBand catalog.
MAIN_JOB = OptimizeSpec(
    workload=preset("llama3-70b"),
    constraints=Constraints(target_training_hours=720.0),
    top_k=1,
)


def test_the_main_job_names_the_rules_design_and_the_capex_saved() -> None:
    catalog = resolve_catalog("infiniband-ndr")
    result = optimize(catalog, MAIN_JOB)
    rule = rule_of_thumb(catalog, MAIN_JOB)
    assert rule is not None and result.designs
    saved_cents = rule.bom.capex_cents - result.designs[0].bom.capex_cents
    assert saved_cents > 0  # the optimizer is never dearer than the rule (test_optimizer_baseline)
    assert describe_design(rule.design, rule.gpus) in result.baseline
    assert f"buys {describe_design(rule.design, rule.gpus)} for {usd(rule.bom.capex_cents)}" in (
        result.baseline
    )
    assert f"rank 1 saves {usd(saved_cents)}" in result.baseline


def test_the_main_job_says_the_training_time_saved() -> None:
    catalog = resolve_catalog("infiniband-ndr")
    result = optimize(catalog, MAIN_JOB)
    rule = rule_of_thumb(catalog, MAIN_JOB)
    assert rule is not None
    faster_hours = rule.time_hours - result.designs[0].time_hours
    if abs(faster_hours) < 0.5:
        assert "trains as fast" in result.baseline
    else:
        word = "faster" if faster_hours > 0 else "slower"
        assert f"trains {abs(faster_hours):,.0f} h {word}" in result.baseline


def test_min_time_without_a_target_sizes_the_rule_for_rank_ones_time() -> None:
    catalog = resolve_catalog("roce-spectrum")
    spec = OptimizeSpec(
        workload=preset("llama3-8b", training_tokens=2e11),
        constraints=Constraints(budget_cents=500_000_000),
        objective=Objective.MIN_TIME,
        top_k=1,
    )
    result = optimize(catalog, spec)
    best = result.designs[0]
    sized = replace(
        spec, constraints=replace(spec.constraints, target_training_hours=best.time_hours)
    )
    rule = rule_of_thumb(catalog, sized)
    assert rule is not None
    assert "sized for rank 1's time" in result.baseline
    assert f"buys {describe_design(rule.design, rule.gpus)}" in result.baseline


def test_the_table_prints_the_baseline_under_the_sensitivity_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run(
        capsys,
        "optimize",
        "--catalog",
        "infiniband-ndr",
        "--workload",
        "llama3-70b",
        "--target-hours",
        "720",
    ).out
    assert "Baseline: The rule of thumb (seed article) buys" in out
    assert out.index("Sensitivity:") < out.index("Baseline:")
