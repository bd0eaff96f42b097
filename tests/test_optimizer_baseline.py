"""The optimizer never does worse than the seed's rule of thumb or the vendor reference design.

Both baselines are searched in the same design space (one NIC per GPU, non-blocking, the
cheapest compatible switch, greedy links) and priced by the same BOM code, so a cheaper
baseline would mean the optimizer missed a design it considers.
"""

from __future__ import annotations

import pytest
from optimizer_fixtures import small_workload, spec_for, tiny_catalog

from optimizer.catalog import load_catalog
from optimizer.catalog.resolve import bundled_catalogs
from optimizer.optimize.baseline import reference_design, rule_of_thumb
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.solve import optimize
from optimizer.workload.presets import preset


def _never_worse(catalog, spec: OptimizeSpec) -> None:
    result = optimize(catalog, spec)
    for baseline in (rule_of_thumb(catalog, spec), reference_design(catalog, spec)):
        if baseline is None:
            continue
        assert baseline.time_hours <= spec.constraints.target_training_hours
        assert result.designs, "the baseline meets the target, so the optimizer must too"
        assert result.designs[0].bom.capex_cents <= baseline.bom.capex_cents


@pytest.mark.parametrize("target", [2.0, 5.0, 20.0])
def test_tiny_catalog_never_worse_than_the_rules(target: float) -> None:
    _never_worse(
        tiny_catalog(),
        spec_for(target_hours=target, topologies=(), max_nodes=64, workload=small_workload(2e11)),
    )


@pytest.mark.parametrize("path", bundled_catalogs(), ids=lambda p: p.name)
def test_bundled_catalogs_never_worse_than_the_rules(path) -> None:
    catalog = load_catalog(path)
    spec = OptimizeSpec(
        workload=preset("llama3-8b", training_tokens=2e12),
        constraints=Constraints(target_training_hours=500.0),
        top_k=1,
    )
    _never_worse(catalog, spec)
