"""An InfiniBand twin-port module is two ports, never one link at its aggregate speed.

An InfiniBand port is four lanes (NDR 4 x 100G = 400G, XDR 4 x 200G = 800G): a Quantum-2
twin-port OSFP module (MMA4Z00-NS, MMS4X00-NM: 2 x 400G) serves two NDR ports, and no
InfiniBand port bonds them into an 800G link (docs.nvidia.com cablemanagfaq and
400g100gpam4ovpub, the catalog rows' sources). Ethernet may: an 800G OSFP 2 x DR4 module runs
800GBASE-DR8 on its eight lanes. Found reading the gen-2026 catalog's XDR designs as an
architect: every 800G node-leaf link of a GB300 NVL72 cluster had an NDR twin module at the
switch end facing an OSFP224 800G DR4 (4 x 200G lanes) at the NIC, which cannot link up.
"""

from __future__ import annotations

import dataclasses

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs_dir
from optimizer.topology.bom import BomLine, build_bom
from optimizer.topology.check import check_bom
from optimizer.topology.compat import link_fits
from optimizer.topology.design import Design

GEN_2026 = load_catalog(bundled_catalogs_dir() / "gen-2026")
LINKS = {lk.sku: lk for lk in GEN_2026.links}
NDR_TWINS = ("MMA4Z00-NS", "MMS4X00-NM")


def _xdr_design() -> Design:
    return Design(
        server_sku="GB300-NVL72",
        nodes=4,
        nic_sku="C8180",
        nics_per_node=72,
        fabric="infiniband",
        topology="fat_tree",
        switch_skus=("Q3400-RA",),
    )


def test_an_ndr_twin_module_serves_400g_ports_and_no_800g_infiniband_link() -> None:
    for sku in NDR_TWINS:
        assert link_fits(LINKS[sku], 400, "infiniband")
        assert not link_fits(LINKS[sku], 800, "infiniband")


def test_an_ethernet_twin_module_still_runs_one_800g_link() -> None:
    assert link_fits(LINKS["OSFP-800G-2xDR4"], 800, "roce")
    assert link_fits(LINKS["OSFP-800G-2xDR4"], 400, "roce")


def test_an_xdr_cluster_buys_xdr_optics_at_its_switches() -> None:
    bom = build_bom(_xdr_design(), GEN_2026)
    optics = {ln.sku for ln in bom.lines if ln.category == "transceiver"}
    assert optics and not optics & set(NDR_TWINS)
    assert check_bom(_xdr_design(), bom, GEN_2026) == []


def test_check_bom_refuses_an_ndr_twin_module_on_an_800g_infiniband_link() -> None:
    bom = build_bom(_xdr_design(), GEN_2026)
    swapped = [
        dataclasses.replace(ln, sku="MMS4X00-NM")
        if ln.category == "transceiver" and LINKS[ln.sku].fits_side == "switch"
        else ln
        for ln in bom.lines
    ]
    assert any(isinstance(ln, BomLine) and ln.sku == "MMS4X00-NM" for ln in swapped)
    problems = check_bom(_xdr_design(), dataclasses.replace(bom, lines=tuple(swapped)), GEN_2026)
    assert any("MMS4X00-NM" in v.message and v.code == "speed" for v in problems)


def test_the_optimizer_never_recommends_an_ndr_twin_module_on_xdr() -> None:
    request = optimize_pb2.OptimizeRequest(
        catalog="gen-2026",
        workload=estimate_pb2.Workload(model="bert-large"),
        constraints=optimize_pb2.Constraints(budget_usd=6e8, target_training_hours=8000),
        objective="min_time",
        top_k=3,
    )
    designs = api.optimize(request).designs
    assert any(d.scale_out_gbps_per_gpu * d.gpus / d.nodes >= 800 * 72 for d in designs)
    for design in designs:
        assert not {ln.sku for ln in design.bom} & set(NDR_TWINS), design.explanation
