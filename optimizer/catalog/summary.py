"""What a catalog offers at a glance: rows per table, price range per BOM category, warnings."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from optimizer.catalog.findings import WARNING
from optimizer.catalog.model import Catalog
from optimizer.catalog.money import cents_to_usd
from optimizer.catalog.schema import TABLE_NAMES
from optimizer.errors import Finding

CABLE_KINDS = ("dac", "aec", "aoc")
CATEGORY_UNITS = {
    "server": "USD per server",
    "nic": "USD per NIC",
    "switch": "USD per switch",
    "cable": "USD per cable",
    "transceiver": "USD per transceiver",
    "fiber": "USD per metre",
}
"""BOM categories (as in BomLine.category) and what one unit of each costs."""


@dataclass(frozen=True)
class PriceRange:
    category: str
    count: int
    min_price_cents: int
    max_price_cents: int

    @property
    def unit(self) -> str:
        return CATEGORY_UNITS[self.category]

    @property
    def min_price_usd(self) -> Decimal:
        return cents_to_usd(self.min_price_cents)

    @property
    def max_price_usd(self) -> Decimal:
        return cents_to_usd(self.max_price_cents)


@dataclass(frozen=True)
class CatalogSummary:
    name: str
    vendor: str
    currency: str
    quote_date: date | None
    valid_until: date | None
    rows: dict[str, int]
    price_ranges: tuple[PriceRange, ...]
    gpu_models: tuple[str, ...]
    switch_fabrics: tuple[str, ...]
    warnings: tuple[Finding, ...]

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form; prices as exact decimal strings in USD."""
        return {
            "name": self.name,
            "vendor": self.vendor,
            "currency": self.currency,
            "quote_date": self.quote_date.isoformat() if self.quote_date else None,
            "valid_until": self.valid_until.isoformat() if self.valid_until else None,
            "rows": self.rows,
            "price_ranges": [
                {
                    "category": r.category,
                    "count": r.count,
                    "unit": r.unit,
                    "min_price_usd": str(r.min_price_usd),
                    "max_price_usd": str(r.max_price_usd),
                }
                for r in self.price_ranges
            ],
            "gpu_models": list(self.gpu_models),
            "switch_fabrics": list(self.switch_fabrics),
            "warnings": [dataclasses.asdict(p) for p in self.warnings],
        }


def _category_prices(catalog: Catalog) -> dict[str, list[int]]:
    prices: dict[str, list[int]] = {c: [] for c in CATEGORY_UNITS}
    prices["server"] = [s.price_cents for s in catalog.servers]
    prices["nic"] = [n.price_cents for n in catalog.nics]
    prices["switch"] = [s.price_cents for s in catalog.switches]
    for link in catalog.links:
        prices["cable" if link.kind in CABLE_KINDS else link.kind].append(link.price_cents)
    return prices


def summarize(catalog: Catalog, problems: list[Finding]) -> CatalogSummary:
    """Summary of ``catalog``; only the warnings among ``problems`` are kept."""
    meta = catalog.meta
    ranges = tuple(
        PriceRange(category, len(prices), min(prices), max(prices))
        for category, prices in _category_prices(catalog).items()
        if prices
    )
    return CatalogSummary(
        name=meta.name,
        vendor=meta.vendor,
        currency=meta.currency,
        quote_date=meta.quote_date,
        valid_until=meta.valid_until,
        rows={
            t: len(getattr(catalog, t))
            for t in TABLE_NAMES
            if t != "cloud_offers" or catalog.cloud_offers  # optional table: shown when used
        },
        price_ranges=ranges,
        gpu_models=tuple(sorted({s.gpu_model for s in catalog.servers})),
        switch_fabrics=tuple(sorted({s.fabric_family for s in catalog.switches})),
        warnings=tuple(p for p in problems if p.severity == WARNING),
    )
