"""A one-node design buys no scale-out fabric, so the sweep table, the plots and the benchmark
tables name none for it, as client/render.py does (issue 13, defect 5; review item 4: the
decision-quality table read "fabric: ethernet -> infiniband" for roce-spectrum/bert-large/8)."""

from __future__ import annotations

from rich.console import Console

from benchmarks.scenarios import NO_FABRIC, choices, describe, differences
from client.plots import fabric_colour
from client.render import NO_FABRIC as RENDER_NO_FABRIC
from client.sweep import Outcome, sweep_table
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.topology.design import Design

ONE_NODE = Design("dgx-h100", 1, "cx7-ib", 8, "infiniband", "single_node")
SWITCHED = Design("dgx-h100", 1, "cx7-eth", 8, "ethernet", "single_switch", 1.0, ("sn5600",))


def _sweep_text(design: optimize_pb2.Design) -> str:
    outcome = Outcome(
        1,
        optimize_pb2.OptimizeRequest(catalog="c"),
        optimize_pb2.OptimizeResponse(designs=[design]),
    )
    console = Console(width=200, record=True, no_color=True)
    console.print(sweep_table([outcome]))
    return console.export_text()


def test_the_benchmark_tables_share_the_renderers_word_for_no_fabric() -> None:
    assert NO_FABRIC == RENDER_NO_FABRIC


def test_a_one_node_design_has_no_fabric_to_differ_in() -> None:
    diff = differences(choices(SWITCHED), choices(ONE_NODE))
    assert "fabric: ethernet -> none" in diff
    assert not [d for d in diff if "infiniband" in d]
    assert "infiniband" not in describe(ONE_NODE)


def test_a_switched_one_node_design_keeps_its_fabric() -> None:
    assert choices(SWITCHED).fabric == "ethernet"


def test_the_sweep_table_names_no_fabric_for_one_node() -> None:
    one = optimize_pb2.Design(gpus=8, nodes=1, fabric="infiniband", topology="single_node")
    text = _sweep_text(one)
    assert "InfiniBand" not in text and f" {NO_FABRIC} " in text
    switched = optimize_pb2.Design(gpus=8, nodes=1, fabric="infiniband", topology="single_switch")
    assert "InfiniBand" in _sweep_text(switched)


def test_a_one_node_point_is_plotted_grey_not_in_its_fabrics_colour() -> None:
    assert fabric_colour("infiniband", "single_node") == "tab:gray"
    assert fabric_colour("infiniband", "single_switch") == fabric_colour("infiniband")
    assert fabric_colour("infiniband") != "tab:gray"
