"""Link options are computed once per catalog and link class (the size search prices
thousands of greedy BOMs over a handful of classes), and never leak between catalogs."""

from __future__ import annotations

import dataclasses

import pytest

from optimizer.topology import layout
from optimizer.topology.layout import link_options
from tests.topology_fixtures import topology_catalog


def test_each_link_class_is_worked_out_once_per_catalog(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = topology_catalog()
    calls: list[float] = []
    compute = layout._link_options

    def counted(length_m: float, *args: object) -> list[layout.LinkOption]:
        calls.append(length_m)
        return compute(length_m, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(layout, "_link_options", counted)
    first = link_options(5.0, 400, "infiniband", catalog)
    again = link_options(5.0, 400, "infiniband", catalog)
    assert again == first and again is not first  # callers get their own list
    link_options(40.0, 400, "infiniband", catalog)
    assert calls == [5.0, 40.0]


def test_another_catalog_gets_its_own_options() -> None:
    catalog = topology_catalog()
    before = link_options(5.0, 400, "infiniband", catalog)
    assert before
    cheapest = before[0].parts[0][0]
    fewer = dataclasses.replace(
        catalog, links=tuple(lk for lk in catalog.links if lk.sku != cheapest)
    )
    after = link_options(5.0, 400, "infiniband", fewer)
    assert all(sku != cheapest for option in after for sku, _ in option.parts)
    assert link_options(5.0, 400, "infiniband", catalog) == before
