"""When the facility excludes every design, the diagnosis names the binding limit and the
number that relaxes it, and that number is exactly enough: a re-solve at it finds a design,
one less finds none."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import pytest
from facility_fixtures import HALL, relaxing_number, solve, two_node_spec
from optimizer_fixtures import server

from optimizer.optimize.request import OptimizeSpec

Setter = Callable[[OptimizeSpec, int], OptimizeSpec]


def _constraint(name: str) -> Setter:
    return lambda spec, v: replace(spec, constraints=replace(spec.constraints, **{name: v}))


def _rack_kw(spec: OptimizeSpec, v: int) -> OptimizeSpec:
    return replace(spec, rack_power_kw=float(v))


SCENARIOS = [
    # (infeasible request, flag the diagnosis names, how to set that limit)
    (two_node_spec(max_power_kw=20.0), "--max-power-kw", _constraint("max_power_kw")),
    (
        replace(two_node_spec(max_racks=2), rack_power_kw=12.0),
        "--max-racks",
        _constraint("max_racks"),
    ),
    (replace(two_node_spec(max_racks=2), rack_power_kw=12.0), "--max-rack-kw", _rack_kw),
    (
        two_node_spec(max_floor_positions=1),
        "--max-floor-positions",
        _constraint("max_floor_positions"),
    ),
]


@pytest.mark.parametrize(
    ("spec", "flag", "set_to"), SCENARIOS, ids=[flag for _, flag, _ in SCENARIOS]
)
def test_the_relaxing_number_is_exactly_enough(
    spec: OptimizeSpec, flag: str, set_to: Setter
) -> None:
    result = solve(spec)
    assert not result.designs, "the premise: the facility excludes every design"
    value = relaxing_number(result.diagnosis, flag)
    assert solve(set_to(spec, value)).designs, f"{flag} {value} should admit a design"
    assert not solve(set_to(spec, value - 1)).designs, f"{flag} {value - 1} should not"


def test_the_diagnosis_says_how_far_over_the_rack_cap_the_design_is() -> None:
    result = solve(replace(two_node_spec(max_racks=2), rack_power_kw=12.0))
    assert "needs 3 racks, 1 more than --max-racks 2" in result.diagnosis


def test_power_is_said_as_the_cap_to_raise_to() -> None:
    result = solve(two_node_spec(max_power_kw=20.0))
    assert "raise --max-power-kw to 22 kW (from 20 kW)" in result.diagnosis


def test_an_air_facility_that_excludes_the_only_affordable_server_suggests_liquid() -> None:
    """$515,000 buys two liquid SRV-LQ ($508,800) but not two air SRV-A ($528,800)."""
    spec = two_node_spec(cooling="air", budget_usd=515_000)
    result = solve(spec)
    assert not result.designs
    assert "a facility with liquid cooling (--cooling liquid) admits" in result.diagnosis
    assert "--max-rack-kw" not in result.diagnosis  # a denser air rack would not help
    liquid = replace(spec, constraints=replace(spec.constraints, cooling="liquid"))
    assert solve(liquid).designs[0].cooling == "liquid"


def test_a_target_no_hall_can_meet_is_not_blamed_on_the_facility() -> None:
    spec = replace(
        two_node_spec(max_racks=2),
        constraints=replace(two_node_spec(max_racks=2).constraints, target_training_hours=0.5),
    )
    result = solve(spec)
    assert not result.designs
    assert "facility" not in result.diagnosis
    assert "target" in result.diagnosis


def test_limits_that_bind_only_together_are_named_together_with_what_the_design_needs() -> None:
    """Every design takes a network rack beside its servers: one rack admits none, and 20 kW
    admits no two nodes; raising either alone is not enough."""
    result = solve(two_node_spec(max_racks=1, max_power_kw=20.0))
    assert not result.designs
    assert result.diagnosis.startswith("no single facility limit is the reason")
    needs = re.search(
        r"needs 2 racks \(--max-racks 1\) and ([\d,]+) kW \(--max-power-kw 20 kW\)",
        result.diagnosis,
    )
    assert needs, result.diagnosis
    kw = float(needs.group(1).replace(",", ""))
    assert kw >= 2 * 14.3  # two liquid servers, their NICs and a switch
    assert solve(two_node_spec(max_racks=2, max_power_kw=kw)).designs


def test_a_liquid_hall_is_told_to_raise_the_default_rack_limit_for_a_denser_server() -> None:
    """A 60 kW liquid-only box does not fit the default 42 kW rack; --cooling liquid says the
    hall is a liquid one, so the diagnosis says how far to raise the rack limit."""
    big = replace(server("SRV-BIG", 250_000), cooling="liquid", power_kw=60.0, rack_units=4)
    catalog = replace(HALL, servers=(big,))
    spec = two_node_spec(cooling="liquid")
    spec = replace(spec, constraints=replace(spec.constraints, target_training_hours=30.0))
    result = solve(spec, catalog)
    assert not result.designs
    value = relaxing_number(result.diagnosis, "--max-rack-kw")
    assert "(from 42 kW)" in result.diagnosis
    assert solve(_rack_kw(spec, value), catalog).designs
    assert not solve(_rack_kw(spec, value - 1), catalog).designs
