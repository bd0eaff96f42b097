"""Optimising over several catalogs (``--catalog A --catalog B``, the request's ``catalogs``):
the union's rules, a design that mixes two quotes when that is cheapest, and BOM lines that name
their catalog (issue 13)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from catalog_files import SMALL
from cli_support import run
from google.protobuf import json_format

from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog import load_catalog
from optimizer.catalog.io import write_catalog
from optimizer.catalog.model import Catalog
from optimizer.catalog.union import CatalogUnion, union_catalogs
from optimizer.errors import InvalidInput

NETWORK_TABLES = ("nics", "switches", "links")
# BERT-Large in 4 h on the small catalog: two nodes, so every design has a scale-out network.
WORKLOAD = ("--workload", "bert-large", "--tokens", "2e10", "--target-hours", "4")


def _quote(name: str, dearer: tuple[str, ...], factor: int = 3) -> Catalog:
    """The small catalog renamed ``name`` with the rows of ``dearer`` tables (and their volume
    prices) ``factor`` times as expensive."""
    small = load_catalog(SMALL)
    skus = {row.sku for table in dearer for row in getattr(small, table)}
    tables = {
        table: tuple(replace(r, price_cents=r.price_cents * factor) for r in getattr(small, table))
        for table in dearer
    }
    breaks = tuple(
        replace(pb, unit_price_cents=pb.unit_price_cents * factor) if pb.sku in skus else pb
        for pb in small.price_breaks
    )
    return replace(small, meta=replace(small.meta, name=name), price_breaks=breaks, **tables)


@pytest.fixture(scope="module")
def quotes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two vendors' quotes on disk: one cheap on servers, the other cheap on the network."""
    tmp = tmp_path_factory.mktemp("quotes")
    servers = write_catalog(_quote("server-quote", NETWORK_TABLES), tmp / "server-quote")
    fabric = write_catalog(_quote("fabric-quote", ("servers",)), tmp / "fabric-quote")
    return servers, fabric


def _request(*catalogs: Path) -> optimize_pb2.OptimizeRequest:
    return optimize_pb2.OptimizeRequest(
        catalog=str(catalogs[0]),
        catalogs=[str(c) for c in catalogs[1:]],
        top_k=1,
        workload=estimate_pb2.Workload(model="bert-large", training_tokens=2e10),
        constraints=optimize_pb2.Constraints(target_training_hours=4),
    )


# --------------------------------------------------------------------------- the union's rules
def test_a_sku_in_two_catalogs_is_two_offers_named_catalog_colon_sku() -> None:
    union = union_catalogs(
        [
            ("catalog", "a", _quote("a", ("servers",))),
            ("catalogs[0]", "b", _quote("b", NETWORK_TABLES)),
        ]
    )
    servers = {s.sku: s.price_cents for s in union.servers}
    assert servers["b:SRV-H100"] * 3 == servers["a:SRV-H100"]
    assert isinstance(union, CatalogUnion)
    assert union.origin("a:SRV-H100") == "a" and union.origin("b:NIC-CX7-400") == "b"


def test_a_sku_only_one_catalog_lists_keeps_its_name() -> None:
    small = load_catalog(SMALL)
    other = replace(
        small,
        meta=replace(small.meta, name="other"),
        servers=tuple(replace(s, sku=f"{s.sku}-X") for s in small.servers),
    )
    union = union_catalogs([("catalog", "s", small), ("catalogs[0]", "o", other)])
    assert {s.sku for s in union.servers} == {
        "SRV-H100",
        "SRV-A100",
        "SRV-H100-X",
        "SRV-A100-X",
    }


def test_price_breaks_and_stock_stay_with_their_catalog() -> None:
    a, b = _quote("a", ("servers",)), _quote("b", NETWORK_TABLES)
    union = union_catalogs([("catalog", "a", a), ("catalogs[0]", "b", b)])
    switch = "SW-QM9790"
    list_b = next(w.price_cents for w in b.switches if w.sku == switch)
    for name, quote in (("a", a), ("b", b)):
        sku = f"{name}:{switch}"
        assert union.unit_price_cents(sku, 64, list_b) == quote.unit_price_cents(switch, 64, 0)
    stock = {s.sku: s.availability.stock_units for s in union.servers}
    assert stock["a:SRV-H100"] == stock["b:SRV-H100"] == 12


def test_the_same_catalog_twice_is_refused_naming_the_field() -> None:
    small = load_catalog(SMALL)
    with pytest.raises(InvalidInput) as e:
        union_catalogs([("catalog", "x", small), ("catalogs[0]", "x", small)])
    assert e.value.field == "catalogs[0]"


def test_catalogs_in_different_currencies_are_refused_naming_both() -> None:
    small = load_catalog(SMALL)
    euros = replace(small, meta=replace(small.meta, name="eu", currency="EUR"))
    with pytest.raises(InvalidInput) as e:
        union_catalogs([("catalog", "s", small), ("catalogs[0]", "eu", euros)])
    assert e.value.field == "catalogs[0]"
    assert "EUR" in str(e.value) and "USD" in str(e.value) and "small-test" in str(e.value)


def test_a_repeated_reference_in_the_request_is_refused(quotes: tuple[Path, Path]) -> None:
    servers, _ = quotes
    with pytest.raises(InvalidInput) as e:
        api.optimize(_request(servers, servers))
    assert e.value.field == "catalogs[0]"


# --------------------------------------------------------------------------- optimising
def test_rank_1_mixes_servers_of_one_quote_with_the_fabric_of_another(
    quotes: tuple[Path, Path],
) -> None:
    servers, fabric = quotes
    mixed = api.optimize(_request(servers, fabric)).designs[0]
    by_category = {b.category: b.catalog for b in mixed.bom}
    assert by_category.pop("server") == "server-quote"
    assert by_category and set(by_category.values()) == {"fabric-quote"}
    alone = [api.optimize(_request(q)).designs[0].capex_usd for q in quotes]
    assert mixed.capex_usd < min(alone)


def test_every_bom_line_of_a_single_catalog_names_it() -> None:
    resp = api.optimize(_request(SMALL))
    assert {b.catalog for d in resp.designs for b in d.bom} == {"small-test"}


def test_repeated_catalog_flag_optimises_over_the_union(
    capsys: pytest.CaptureFixture[str], quotes: tuple[Path, Path]
) -> None:
    """Before issue 13 the last --catalog silently won: every line came from fabric-quote."""
    servers, fabric = quotes
    result = run(
        capsys,
        "optimize",
        "--catalog",
        str(servers),
        "--catalog",
        str(fabric),
        *WORKLOAD,
        "--top-k",
        "1",
        "--format",
        "json",
    )
    assert result.code == 0, result.err
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert {b.catalog for b in resp.designs[0].bom} == {"server-quote", "fabric-quote"}


def test_table_shows_each_line_catalog_when_the_bom_spans_several(
    capsys: pytest.CaptureFixture[str], quotes: tuple[Path, Path]
) -> None:
    servers, fabric = quotes
    result = run(capsys, "optimize", "--catalog", str(servers), "--catalog", str(fabric), *WORKLOAD)
    assert result.code == 0, result.err
    assert "server-quote" in result.out and "fabric-quote" in result.out


def test_catalog_flags_replace_the_request_file_catalogs(
    capsys: pytest.CaptureFixture[str], quotes: tuple[Path, Path], tmp_path: Path
) -> None:
    servers, fabric = quotes
    file = tmp_path / "request.json"
    file.write_text(json_format.MessageToJson(_request(servers, fabric)))
    result = run(capsys, "optimize", str(file), "--catalog", str(SMALL), "--format", "json")
    assert result.code == 0, result.err
    resp = json_format.Parse(result.out, optimize_pb2.OptimizeResponse())
    assert {b.catalog for b in resp.designs[0].bom} == {"small-test"}
