"""The optional cloud_offers catalog table: loaded and checked like the others, invisible to
catalogs that do not use it (their content id is unchanged)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from catalog_files import TODAY, append_row, copy_small, write_rows

from optimizer.catalog import load_catalog, load_catalog_report, write_catalog
from optimizer.catalog.canonical import canonical_json, catalog_from_canonical, content_hash
from optimizer.cost.rent import bundled_offers, offers_from_csv
from optimizer.errors import CatalogInvalid

HEADER = [
    "provider",
    "instance",
    "gpu_model",
    "gpus_per_instance",
    "interconnect",
    "network_gbps_per_gpu",
    "on_demand_usd_per_gpu_hour",
    "committed_usd_per_gpu_hour",
    "commitment_days",
    "price_date",
    "source",
]
P5 = ["AWS", "p5.48xlarge", "H100", "8", "efa", "", "12.29", "", "", "2026-03-31", "a page"]


def _with_offers(tmp_path: Path, *rows: list[str]) -> Path:
    folder = copy_small(tmp_path)
    write_rows(folder, "cloud_offers", [HEADER, *rows])
    return folder


def test_a_catalog_without_offers_keeps_its_content_id_encoding(tmp_path: Path) -> None:
    catalog = load_catalog(copy_small(tmp_path), today=TODAY)
    doc = json.loads(canonical_json(catalog))
    assert catalog.cloud_offers == ()
    assert "cloud_offers" not in doc  # the bytes (and the id) stay those stored before


def test_offers_load_map_their_interconnect_and_round_trip(tmp_path: Path) -> None:
    p4d = ["AWS", "p4d.24xlarge", "A100", "8", "efa", "50", "", "1.844", "1", "2024-12-31", "x"]
    catalog = load_catalog(_with_offers(tmp_path, P5, p4d), today=TODAY)
    by_sku = {o.sku: o for o in catalog.cloud_offers}
    assert by_sku["AWS p5.48xlarge"].fabric == "roce"
    assert by_sku["AWS p5.48xlarge"].gbps_per_gpu == 400.0  # EFA default: 3,200 Gb/s per 8 GPUs
    assert by_sku["AWS p4d.24xlarge"].gbps_per_gpu == 50.0  # the row's own figure wins
    again = catalog_from_canonical(canonical_json(catalog))
    assert again.cloud_offers == tuple(sorted(catalog.cloud_offers, key=lambda o: o.sku))
    written = load_catalog(write_catalog(catalog, tmp_path / "out"), today=TODAY)
    assert content_hash(written) == content_hash(catalog)


def test_an_offer_of_a_gpu_no_server_describes_is_an_error_naming_its_row(tmp_path: Path) -> None:
    mi300 = ["Cloud", "mi300x.8", "MI300X", "8", "roce", "", "3.00", "", "", "2026-01-01", "x"]
    report = load_catalog_report(_with_offers(tmp_path, P5, mi300), today=TODAY)
    [problem] = report.errors
    assert (problem.table, problem.row, problem.column, problem.value) == (
        "cloud_offers",
        3,
        "gpu_model",
        "MI300X",
    )
    assert "gpu_model of a servers row (A100, H100)" in problem.expected


def test_an_offer_without_any_rate_is_an_error(tmp_path: Path) -> None:
    unpriced = ["AWS", "p5.48xlarge", "H100", "8", "efa", "", "", "", "", "2026-03-31", "x"]
    report = load_catalog_report(_with_offers(tmp_path, unpriced), today=TODAY)
    assert [(p.row, p.column) for p in report.errors] == [(2, "on_demand_usd_per_gpu_hour")]


def test_an_unknown_interconnect_names_the_cell_and_the_classes(tmp_path: Path) -> None:
    odd = ["AWS", "p5.48xlarge", "H100", "8", "nvlink", "", "12.29", "", "", "2026-03-31", "x"]
    report = load_catalog_report(_with_offers(tmp_path, odd), today=TODAY)
    [problem] = report.errors
    assert (problem.row, problem.column, problem.value) == (2, "interconnect", "nvlink")
    assert "efa" in problem.expected and "infiniband_ndr" in problem.expected


def test_provider_and_instance_are_unique_together(tmp_path: Path) -> None:
    folder = _with_offers(tmp_path, P5)
    append_row(folder, "cloud_offers", P5)
    report = load_catalog_report(folder, today=TODAY)
    assert [(p.row, p.column) for p in report.errors] == [(3, "instance")]


def test_the_bundled_offer_table_is_valid_and_every_row_has_a_source_and_a_rate() -> None:
    offers = bundled_offers()
    assert offers
    for offer in offers:
        assert "http" in offer.source
        assert (offer.on_demand_usd_per_gpu_hour or offer.committed_usd_per_gpu_hour) is not None


def test_a_bad_standalone_offer_table_raises_naming_the_cell() -> None:
    text = ",".join(HEADER) + "\nAWS,p5,H100,0,efa,,12.29,,,2026-03-31,x\n"
    with pytest.raises(CatalogInvalid) as caught:
        offers_from_csv(text.encode())
    assert "cloud_offers, row 2, column gpus_per_instance" in str(caught.value)
