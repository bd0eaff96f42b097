"""The PNG/SVG plots get the report's colouring fixes: a multi-catalog sweep is coloured by
catalog (two catalogs of one fabric were one colour), and a logarithmic time axis reads as
plain 1-2-5 numbers (it read as bare powers of ten)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from client.plots import catalogs_of, write_plot
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.reporting.frontier import Front, frontier, point_key


def _point(capex_usd: float, hours: float, sku: str) -> optimize_pb2.ParetoPoint:
    return optimize_pb2.ParetoPoint(
        capex_usd=capex_usd,
        training_time_hours=hours,
        gpus=64,
        server_sku=sku,
        fabric="roce",
        topology="fat_tree",
        oversubscription=1,
    )


def _marker_fills(svg: str) -> set[str]:
    """The fill colours of the scatter markers (matplotlib draws each as a <use> element)."""
    return set(re.findall(r'<use [^>]*style="fill: (#[0-9a-f]{6})', svg))


def _tick_texts(svg: str) -> list[str]:
    """matplotlib writes each text it draws as glyph paths after an XML comment of it."""
    return re.findall(r"<!-- (.*?) -->", svg)


def test_two_catalogs_of_one_fabric_get_two_colours(tmp_path: Path) -> None:
    a, b = _point(2e6, 100, "A"), _point(3e6, 80, "B")
    responses = [
        (
            optimize_pb2.OptimizeRequest(catalog="vendor-a"),
            optimize_pb2.OptimizeResponse(pareto=[a]),
        ),
        (
            optimize_pb2.OptimizeRequest(catalog="vendor-b"),
            optimize_pb2.OptimizeResponse(pareto=[b]),
        ),
    ]
    catalogs = catalogs_of(responses)
    assert catalogs == {point_key(a): "vendor-a", point_key(b): "vendor-b"}
    out = tmp_path / "sweep.svg"
    write_plot(str(out), [a, b], [Front("w", frontier([a, b]))], [], [], point_catalogs=catalogs)
    assert len(_marker_fills(out.read_text())) == 2


def test_one_catalog_keeps_the_fabric_colour(tmp_path: Path) -> None:
    a, b = _point(2e6, 100, "A"), _point(3e6, 80, "B")
    out = tmp_path / "optimize.svg"
    write_plot(str(out), [a, b], [], [], [])
    assert len(_marker_fills(out.read_text())) == 1


def test_a_log_time_axis_is_labelled_with_plain_numbers(tmp_path: Path) -> None:
    points = [_point(2e6, 30, "A"), _point(5e6, 2500, "B")]  # 30 h to 2,500 h: log scale
    out = tmp_path / "log.svg"
    write_plot(str(out), points, [], [], [])
    texts = _tick_texts(out.read_text())
    assert {"50", "100", "200", "500", "1,000", "2,000"} <= set(texts)
    assert not [t for t in texts if "10^" in t]


def test_the_batch_plot_labels_its_log_axes_with_plain_numbers(tmp_path: Path) -> None:
    from optimizer.batch import report

    rows = pd.DataFrame(
        {
            "scenario_id": ["s1", "s2"],
            "workload_key": ["w", "w"],
            "workload_model": ["bert-large", "bert-large"],
            "training_tokens": [2e10, 2e10],
            "catalog": ["vendor-a", "vendor-b"],
            "capex_usd": [2e6, 9e6],
            "training_time_hours": [30.0, 2500.0],
            "gpus": [64, 512],
            "fabric": ["roce", "roce"],
            "topology": ["fat_tree", "fat_tree"],
        }
    )
    out = tmp_path / "frontier.svg"
    report._plot(rows, out)
    texts = _tick_texts(out.read_text())
    assert {"100", "1,000", "$2M", "$5M"} <= set(texts)
    assert not [t for t in texts if "10^" in t]
