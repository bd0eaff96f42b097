"""The per-vendor summary: who wins a comparison, the equal-target medians, the frontier."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from optimizer.batch.report import frontier, vendor_table, winners, write_report


def _row(
    catalog: str,
    key: str,
    capex: float | None,
    hours: float | None,
    *,
    objective: str = "min_cost",
    target: float = 24.0,
) -> dict:
    return {
        "scenario_id": f"{catalog}-{key}",
        "comparison_key": key,
        "catalog": catalog,
        "vendor": catalog.upper(),
        "objective": objective,
        "workload_key": "w",
        "workload_model": "bert-large",
        "training_tokens": 1e10,
        "target_training_hours": target,
        "status": "OPTIMAL" if capex else "INFEASIBLE",
        "capex_usd": capex,
        "training_time_hours": hours,
        "gpus": 8,
        "fabric": "roce",
        "topology": "single_switch",
    }


ROWS = pd.DataFrame(
    [
        _row("ib", "a", 300.0, 10.0),
        _row("roce", "a", 200.0, 12.0),
        _row("ib", "b", 500.0, 5.0),
        _row("roce", "b", None, None),
        _row("ib", "c", 900.0, 2.0, objective="min_time"),
        _row("roce", "c", 800.0, 3.0, objective="min_time"),
    ]
)


def test_the_cheapest_wins_min_cost_and_the_fastest_wins_min_time() -> None:
    assert winners(ROWS).to_dict() == {"a": "roce", "b": "ib", "c": "ib"}


def test_a_catalog_without_a_design_loses_and_equal_target_medians_skip_it() -> None:
    table = vendor_table(ROWS)
    assert table.loc["ib", "wins"] == 2 and table.loc["roce", "wins"] == 1
    assert table.loc["roce", "with_design"] == 2
    # Only comparison "a" is a min_cost request both catalogs met.
    assert table.loc["ib", "median_capex_usd_equal_target"] == 300.0
    assert table.loc["roce", "median_capex_usd_equal_target"] == 200.0


def test_the_report_names_every_catalog_and_draws_a_png(tmp_path: Path) -> None:
    md, png = write_report(ROWS.assign(error=None, designs=1), tmp_path)
    text = md.read_text()
    assert "| ib | IB |" in text and "| roce | ROCE |" in text
    assert png.read_bytes()[:4] == b"\x89PNG"


_points = st.lists(st.tuples(st.integers(1, 50), st.integers(1, 50)), min_size=1, max_size=30)


@given(_points)
def test_the_frontier_holds_exactly_the_points_nothing_beats(points: list[tuple[int, int]]) -> None:
    frame = pd.DataFrame(
        [
            {
                "training_time_hours": float(t),
                "capex_usd": float(c),
                "gpus": 8,
                "fabric": "roce",
                "topology": "fat_tree",
            }
            for t, c in points
        ]
    )
    front = set(
        zip(frontier(frame)["training_time_hours"], frontier(frame)["capex_usd"], strict=True)
    )

    def beaten(t: float, c: float) -> bool:
        return any(t2 <= t and c2 <= c and (t2, c2) != (t, c) for t2, c2 in points)

    assert front == {(float(t), float(c)) for t, c in points if not beaten(t, c)}
