"""A one-node design buys no scale-out fabric, so no table or page may name one for it
(issue 13, defect 5: the fabric column said "InfiniBand" beside "one node")."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from rich.console import Console

from client import render
from client.narrow import design_label
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.api import optimize
from optimizer.reporting import Scenario, render_html

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(scope="module")
def response() -> optimize_pb2.OptimizeResponse:
    """BERT-large on 4e10 tokens in a day: rank 1 is one node, a switched design ranks below."""
    req = optimize_pb2.OptimizeRequest(catalog="infiniband-ndr", top_k=3)
    req.workload.model = "bert-large"
    req.workload.training_tokens = 4e10
    req.constraints.target_training_hours = 24
    resp = optimize(req)
    topologies = [d.topology for d in resp.designs]
    assert topologies[0] == "single_node" and "single_switch" in topologies
    return resp


def _printed(resp: optimize_pb2.OptimizeResponse, width: int) -> str:
    console = Console(width=width, record=True, no_color=True)
    render.print_optimize(resp, console)
    return console.export_text()


def _row(table_text: str, rank: int) -> str:
    """The wide designs table's line for ``rank`` (its first cell)."""
    return next(line for line in table_text.splitlines() if re.match(rf"^│\s+{rank} │", line))


def test_the_wide_table_shows_no_fabric_for_a_one_node_design(
    response: optimize_pb2.OptimizeResponse,
) -> None:
    text = _printed(response, 200)
    one_node = _row(text, 1)
    assert "one node" in one_node and "InfiniBand" not in one_node
    assert re.search(rf"│ {render.NO_FABRIC}\s+│", one_node)
    switched = _row(text, [d.topology for d in response.designs].index("single_switch") + 1)
    assert "InfiniBand" in switched


def test_the_narrow_table_names_no_fabric_for_a_one_node_design(
    response: optimize_pb2.OptimizeResponse,
) -> None:
    one_node, switched = (
        next(d for d in response.designs if d.topology == t)
        for t in ("single_node", "single_switch")
    )
    assert "InfiniBand" not in design_label(one_node)
    assert design_label(one_node).endswith("one node (no fabric)")
    assert "InfiniBand" in design_label(switched)
    text = _printed(response, 80)
    assert "InfiniBand one node" not in " ".join(text.split())


def test_the_report_page_shows_no_fabric_for_a_one_node_design(
    response: optimize_pb2.OptimizeResponse,
) -> None:
    page = render_html(
        [Scenario(optimize_pb2.OptimizeRequest(), response)], title="t", generated_at=WHEN
    )
    rows = re.findall(r"<tr data-bom=.*?</tr>", page)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    by_topology = {c[6]: c[5] for c in cells}
    assert by_topology["one node"] == "none"
    assert by_topology["single switch"] == "InfiniBand"
    assert "InfiniBand one node" not in page and "InfiniBand<br>one node" not in page
