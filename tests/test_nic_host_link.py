"""A NIC moves no more than its server's slot carries (issue 14, host link).

An 800G NIC in a PCIe Gen5 x16 slot trains at 800G but moves about 400 Gb/s: "you will not
achieve [line rate] as the performance will ultimately be bottlenecked by the PCIe
throughput" (NVIDIA Network Support; catalogs/README.md). ``servers.nic_slot_gbps`` says
what a slot carries; the time, the bandwidth per GPU the answer prints and the optimizer's
bounds all read the NIC at that rate.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from catalog_files import TODAY, read_rows, the_one_error, with_new_column, write_rows
from click.testing import CliRunner
from enumerator import assert_rank_one_is_the_optimum

from client.cli import cli
from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.candidates import (
    HOST_LINK_NOTE,
    EstimateCache,
    TimeKey,
    scale_out_gbps_per_gpu,
)
from optimizer.optimize.request import Confidence, Constraints, Objective, OptimizeSpec
from optimizer.performance.cluster import server_cluster
from optimizer.performance.planner import plan_and_estimate
from optimizer.topology.sizing import size_network
from optimizer.workload.presets import preset

GEN_2026_FOLDER = next(p for p in bundled_catalogs() if p.name == "gen-2026")
GEN_2026 = load_catalog(GEN_2026_FOLDER)
SERVERS = {s.sku: s for s in GEN_2026.servers}
MI355X = SERVERS["MI355X-8GPU-DLC-SERVER"]  # PCIe Gen5 x16 slots: 400 Gb/s
B300 = SERVERS["XA-NB3I-E12"]  # ConnectX-8 on a PCIe Gen6 x16 link: 800 Gb/s


def _training_hours(server_sku: str, nic_speed_gbps: int, nics_per_node: int) -> float:
    server = SERVERS[server_sku]
    nodes = 64
    profile = size_network("fat_tree", nodes * nics_per_node, 64, rails=nics_per_node).profile
    cluster = server_cluster(
        server,
        nodes=nodes,
        fabric="infiniband",
        nic_gbps=nic_speed_gbps,
        nics_per_node=nics_per_node,
        topology=profile,
    )
    return plan_and_estimate(preset("llama3-70b"), cluster).training_time_hours


def test_a_nic_moves_the_lesser_of_its_line_rate_and_the_slot() -> None:
    assert MI355X.nic_rate_gbps(800) == 400
    assert MI355X.nic_rate_gbps(200) == 200
    assert B300.nic_rate_gbps(800) == 800
    assert replace(MI355X, nic_slot_gbps=None).nic_rate_gbps(800) == 800


def test_an_800g_nic_in_a_gen5_server_trains_as_fast_as_a_400g_one() -> None:
    """2 x 800G per MI355X node were timed as 200 Gb/s per GPU before; they move 100."""
    assert _training_hours(MI355X.sku, 800, 2) == _training_hours(MI355X.sku, 400, 2)
    assert _training_hours(MI355X.sku, 800, 2) > _training_hours(MI355X.sku, 400, 4)


def test_a_gen6_server_gets_the_800g_nics_speed() -> None:
    assert _training_hours(B300.sku, 800, 2) < _training_hours(B300.sku, 400, 2)


def test_the_bandwidth_per_gpu_an_answer_prints_is_what_the_nics_move() -> None:
    assert scale_out_gbps_per_gpu(MI355X, 800, 2) == 100
    assert scale_out_gbps_per_gpu(B300, 800, 2) == 200


@pytest.mark.parametrize("value", ["0", "fast", "400.5"])
def test_a_bad_slot_rate_names_its_row_and_column(tmp_path: Path, value: str) -> None:
    finding = the_one_error(tmp_path, "servers", "nic_slot_gbps", "400", 3, value)
    assert "integer" in finding.expected


def test_a_catalog_without_the_column_moves_every_nic_at_its_line_rate(tmp_path: Path) -> None:
    folder = with_new_column(tmp_path, "servers", "nic_slot_gbps", "", 2, "")
    assert all(s.nic_slot_gbps is None for s in load_catalog(folder, today=TODAY).servers)


def _dropped(servers: set[str], nics: set[str]) -> set[str]:
    """The SKUs of gen-2026's servers and NICs not kept."""
    return {s.sku for s in GEN_2026.servers} - servers | {n.sku for n in GEN_2026.nics} - nics


def _only(tmp_path: Path, servers: set[str], nics: set[str]) -> Path:
    """gen-2026's files with only these servers and NICs (and the price breaks of what is
    left)."""
    folder = tmp_path / "catalog"
    shutil.copytree(GEN_2026_FOLDER, folder)
    gone = _dropped(servers, nics)
    for table in ("servers", "nics", "price_breaks"):  # the SKU is each table's first column
        write_rows(folder, table, [r for r in read_rows(folder, table) if r[0] not in gone])
    return folder


def test_an_answer_that_buys_faster_nics_than_the_slots_carry_says_so(tmp_path: Path) -> None:
    """Only 800G NICs for a PCIe Gen5 server: the design prints the bandwidth they move and
    why."""
    folder = _only(tmp_path, {MI355X.sku}, {"C8180"})
    args = ["optimize", "--catalog", str(folder), "--workload", "llama3-8b", "--tokens", "1e11"]
    # 150 h: one server alone (no fabric, no NIC to derate) takes about 191 h.
    result = CliRunner().invoke(cli, [*args, "--target-hours", "150", "--format", "json"])
    assert result.exit_code == 0, result.output
    rank1 = json.loads(result.output)["designs"][0]
    assert rank1["nic_sku"] == "C8180"
    nics = sum(int(line["quantity"]) for line in rank1["bom"] if line["sku"] == "C8180")
    per_gpu = 400 * nics / (rank1["nodes"] * MI355X.gpus_per_node)
    assert rank1["scale_out_gbps_per_gpu"] == per_gpu
    assert any("each 800G NIC moves 400 Gb/s" in n for n in rank1["estimate"]["notes"])
    text = CliRunner().invoke(cli, [*args, "--target-hours", "150"]).output
    assert "Each 800G NIC moves 400 Gb/s" in " ".join(text.split())


def test_a_one_node_design_has_no_nic_to_derate() -> None:
    """Its nominal scale-out NIC (faster than an A100 server's 200 Gb/s slots) is no NIC the
    design buys: no host-link note."""
    catalog = load_catalog(next(p for p in bundled_catalogs() if p.name == "ethernet-budget"))
    servers = {s.sku: s for s in catalog.servers}
    cache = EstimateCache(preset("bert-large"), servers, Confidence.EXPECTED)
    key = TimeKey("AI-A100-SXM4-8NVE", "ethernet", 0, 0, "single_node", 1.0, 0)
    est = cache.estimate(key, 1)
    assert est is not None
    assert not [n for n in est.notes if n.startswith(HOST_LINK_NOTE)]


@pytest.mark.parametrize(
    ("objective", "limits"),
    [
        (Objective.MIN_TIME, {"budget_cents": 250_000_000}),
        (Objective.MIN_COST, {"target_training_hours": 30.0}),
    ],
    ids=["min-time", "min-cost"],
)
def test_rank_one_with_derated_nics_on_offer_is_the_enumerators_optimum(
    objective: Objective, limits: dict[str, object]
) -> None:
    """800G and 400G NICs for a PCIe Gen5 server: the search's bounds (ideal-network floors,
    NIC bandwidth) read the derated rate as the independent enumerator's timing does."""
    gone = _dropped({MI355X.sku}, {"C8180", "MCX75310AAS-NEAT"})
    catalog = replace(
        GEN_2026,
        servers=(MI355X,),
        nics=tuple(n for n in GEN_2026.nics if n.sku not in gone),
        price_breaks=tuple(b for b in GEN_2026.price_breaks if b.sku not in gone),
    )
    spec = OptimizeSpec(
        workload=preset("llama3-70b", training_tokens=2e9),
        constraints=Constraints(max_gpus=6 * 8, **limits),  # type: ignore[arg-type]
        objective=objective,
        allowed_fabrics=("infiniband",),
        time_limit_s=60.0,
    )
    assert_rank_one_is_the_optimum(catalog, spec, max_nodes=6)
