"""Rent vs buy follows the request's cost model (issue 17, fixB): ``--years`` and the other
cost-model flags move the break-even, and owning's fixed cost is the same capex, support and
space as the design's TCO."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_files import add_column, copy_small
from cli_support import SMALL_SCENARIO, run
from google.protobuf import json_format

from optimizer._pb.procurement.v1 import optimize_pb2

FEASIBLE = (*SMALL_SCENARIO, "--target-hours", "8", "--top-k", "1")


def _top(capsys: pytest.CaptureFixture[str], *flags: str) -> optimize_pb2.OptimizeResponse:
    result = run(capsys, "optimize", *FEASIBLE, *flags, "--format", "json")
    assert result.code == 0, result.err
    return json_format.Parse(result.out, optimize_pb2.OptimizeResponse())


def _on_demand(resp: optimize_pb2.OptimizeResponse) -> optimize_pb2.BreakEven:
    return next(b for b in resp.designs[0].break_evens if b.pricing == "on_demand")


def test_more_years_lower_the_break_even_utilization(capsys: pytest.CaptureFixture[str]) -> None:
    four = _on_demand(_top(capsys))
    eight = _on_demand(_top(capsys, "--years", "8"))
    assert four.HasField("utilization") and eight.HasField("utilization")
    assert eight.utilization < four.utilization
    assert eight.rent_full_use_usd == pytest.approx(2 * four.rent_full_use_usd, rel=1e-6)


def test_the_note_states_the_requests_years(capsys: pytest.CaptureFixture[str]) -> None:
    resp = _top(capsys, "--years", "6", "--pue", "1.5")
    assert "break-even over 6 years at PUE 1.5" in resp.rent_note


def test_owning_fixed_cost_is_the_designs_capex_support_and_space(
    capsys: pytest.CaptureFixture[str],
) -> None:
    resp = _top(capsys, "--years", "3", "--support-rate", "0.2", "--rack-usd-per-month", "700")
    d = resp.designs[0]
    assert _on_demand(resp).own_fixed_usd == pytest.approx(
        d.tco.capex_usd + d.tco.support_usd + d.tco.space_usd, abs=0.02
    )
    assert d.tco.space_usd == pytest.approx(d.racks * 700 * 12 * 3, abs=0.01)


def test_the_energy_term_follows_the_tariff(capsys: pytest.CaptureFixture[str]) -> None:
    base = _on_demand(_top(capsys))
    dear = _on_demand(_top(capsys, "--electricity-usd-per-kwh", "0.30"))
    assert dear.own_energy_full_use_usd == pytest.approx(3 * base.own_energy_full_use_usd, rel=1e-6)


def test_owning_counts_the_catalogs_own_support_rates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A servers row's support_rate (0.3, against the request's 0.08) weighs in the break-even
    as it does in the TCO."""
    folder = copy_small(tmp_path)
    add_column(folder, "servers", "support_rate", "0.3")
    result = run(
        capsys,
        "optimize",
        "--catalog",
        str(folder),
        *FEASIBLE[2:],
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    d = resp.designs[0]
    assert d.tco.support_usd > 0.08 * 4 * d.tco.capex_usd
    assert _on_demand(resp).own_fixed_usd == pytest.approx(
        d.tco.capex_usd + d.tco.support_usd + d.tco.space_usd, abs=0.02
    )
