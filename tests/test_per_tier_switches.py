"""Per-tier switch SKUs: leaf, spine and core may differ and the MIP chooses (issue 13, defect 9).

The scenario: the InfiniBand NDR catalog with only 100 unmanaged Quantum-2 switches
(MQM9790-NS2F) in stock. A fabric of more than 100 switches cannot be all unmanaged; before
per-tier SKUs it had to be all managed (MQM9700-NS2F, dearer). With per-tier SKUs one tier
that fits the stock goes unmanaged and the rest stays managed, which is cheaper.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path

import pytest

from optimizer.catalog import load_catalog
from optimizer.catalog.model import Catalog
from optimizer.optimize.candidates import TimeKey, tier_assignments
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.check import check_bom
from optimizer.workload.presets import preset

CATALOGS = Path(__file__).resolve().parents[1] / "catalogs"
NDR = load_catalog(CATALOGS / "infiniband-ndr")
MANAGED, UNMANAGED = "MQM9700-NS2F", "MQM9790-NS2F"


def _with_unmanaged_stock(catalog: Catalog, units: int) -> Catalog:
    switches = tuple(
        dataclasses.replace(w, availability=dataclasses.replace(w.availability, stock_units=units))
        if w.sku == UNMANAGED
        else w
        for w in catalog.switches
    )
    return dataclasses.replace(catalog, switches=switches)


SHORT = _with_unmanaged_stock(NDR, 100)


def _tiers(bom: BillOfMaterials) -> dict[str, set[str]]:
    by_tier: dict[str, set[str]] = defaultdict(set)
    for line in bom.lines:
        if line.category == "switch":
            by_tier[line.tier].add(line.sku)
    return dict(by_tier)


@pytest.fixture(scope="module")
def big_fat_tree() -> OptimizeSpec:
    return OptimizeSpec(
        workload=preset("llama3-70b", training_tokens=1e12),
        # 1,280 nodes and a core tier (60 h now takes 768 nodes and 80 switches, within stock)
        constraints=Constraints(target_training_hours=40.0),
        top_k=1,
        allowed_fabrics=("infiniband",),
        allowed_topologies=("fat_tree",),
        time_limit_s=60.0,
    )


def test_the_mip_mixes_managed_leaves_with_a_tier_of_unmanaged_switches(
    big_fat_tree: OptimizeSpec,
) -> None:
    result = optimize(SHORT, big_fat_tree)
    best = result.designs[0]
    tiers = _tiers(best.bom)
    assert len(tiers) >= 2, "a fabric this size has several tiers"
    assert all(len(skus) == 1 for skus in tiers.values()), "one SKU per tier"
    used = set().union(*tiers.values())
    assert used == {MANAGED, UNMANAGED}
    unmanaged = sum(
        ln.quantity for ln in best.bom.lines if ln.category == "switch" and ln.sku == UNMANAGED
    )
    assert unmanaged <= 100
    assert check_bom(best.design, best.bom, SHORT) == []
    # The uniform alternative (every tier managed) is the same design at a higher price.
    uniform = dataclasses.replace(best.design, switch_skus=(MANAGED,))
    assert build_bom(uniform, SHORT).capex_cents > best.bom.capex_cents


def test_with_enough_stock_every_tier_takes_the_cheaper_sku(big_fat_tree: OptimizeSpec) -> None:
    result = optimize(_with_unmanaged_stock(NDR, 100_000), big_fat_tree)
    tiers = _tiers(result.designs[0].bom)
    assert set().union(*tiers.values()) == {UNMANAGED}


def test_a_sku_beaten_everywhere_by_an_unlimited_one_is_not_mixed_in() -> None:
    plenty = _with_unmanaged_stock(NDR, None)  # type: ignore[arg-type]
    key = TimeKey("DGX-H100", "infiniband", 400, 8, "fat_tree", 1.0, 64)
    switches = list(plenty.switches)
    assert tier_assignments(key, 64, switches, plenty) == [(MANAGED,), (UNMANAGED,)]


def test_a_stock_limited_sku_is_mixed_per_tier() -> None:
    key = TimeKey("DGX-H100", "infiniband", 400, 8, "fat_tree", 1.0, 64)
    found = tier_assignments(key, 64, list(SHORT.switches), SHORT)
    assert (MANAGED, UNMANAGED) in found and (UNMANAGED, MANAGED) in found
