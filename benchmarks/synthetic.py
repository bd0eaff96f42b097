"""Synthetic catalogs of any size with realistic spreads, for benchmarks that outgrow ours.

Every SKU is a vendor variant of a real part class (the bundled catalogs' H100/H200/B200/A100
servers, ConnectX/Thor NICs, Quantum-2/Spectrum-4/Tomahawk switches, DAC/AEC/AOC cables,
SR4/DR4/FR4 optics and fiber) with its list price spread log-normally around the class's
anchor (sigma 0.15: resellers' quotes for the same part typically differ by 10-30%), some
volume breaks (3-15% off, as catalogs/*/price_breaks.csv) and occasional stock limits. The
first SKUs of each table walk the classes in order, 400 G first, so a small catalog is a
coherent 400 G one and a large one covers every class. The catalog is written to CSV and
loaded back through validation, so it is a Catalog like any other.
"""

from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from optimizer.catalog import load_catalog
from optimizer.catalog.io import write_catalog
from optimizer.catalog.model import (
    Availability,
    Catalog,
    CatalogMeta,
    Link,
    Nic,
    PriceBreak,
    Server,
    Switch,
)

PRICE_SIGMA = 0.15
VENDORS = ("Acme", "Borealis", "Cobalt", "Dynamo", "Everest", "Fjord", "Granite", "Helios")
QUOTE_DATE = date(2026, 11, 1)
VALID_UNTIL = date(2027, 11, 1)
SOURCE = "synthetic: benchmarks/synthetic.py (price spread around the class anchor)"
# Share of the SKUs in each table (links dominate real catalogs: every length and kind).
SHARES = {"servers": 0.10, "nics": 0.10, "switches": 0.15}


@dataclass(frozen=True)
class _ServerClass:
    gpu_model: str
    bf16_tflops: float
    fp8_tflops: float | None
    memory_gb: float
    nvlink_gbytes_per_s: float
    power_kw: float
    rack_units: int
    price_usd: int


@dataclass(frozen=True)
class _NicClass:
    speed_gbps: int
    protocols: frozenset[str]
    power_w: float
    price_usd: int


@dataclass(frozen=True)
class _SwitchClass:
    family: str
    ports: int
    speed_gbps: int
    breakout: int
    lossless: bool
    latency_ns: float
    power_w: float
    rack_units: int
    price_usd: int


@dataclass(frozen=True)
class _LinkClass:
    kind: str
    speed_gbps: int
    family: str
    reach_m: float
    power_w: float
    price_usd: float


# Anchors: catalogs/*/servers.csv and the sources cited there.
SERVER_CLASSES = (
    _ServerClass("H100", 989, 1979, 80, 900, 10.2, 8, 300_000),
    _ServerClass("H200", 989, 1979, 141, 900, 10.2, 8, 315_000),
    _ServerClass("B200", 2250, 4500, 180, 1800, 14.3, 10, 365_000),
    _ServerClass("A100", 312, None, 80, 600, 6.5, 6, 150_000),
)
_ALL = frozenset({"infiniband", "roce", "ethernet"})
_ETH = frozenset({"roce", "ethernet"})
# Anchors: catalogs/*/nics.csv (ConnectX-7, BlueField-3, Thor2, ConnectX-6, E810).
NIC_CLASSES = (
    _NicClass(400, _ALL, 25, 2200),
    _NicClass(400, _ETH, 25, 1500),
    _NicClass(200, _ALL, 18, 1200),
    _NicClass(100, _ETH, 20, 800),
)
# Anchors: catalogs/*/switches.csv (Quantum-2, Spectrum-4, Tomahawk 5, SN4600).
SWITCH_CLASSES = (
    _SwitchClass("infiniband", 64, 400, 2, True, 150, 1300, 1, 40_000),
    _SwitchClass("ethernet", 64, 800, 2, True, 600, 2800, 2, 50_000),
    _SwitchClass("ethernet", 64, 400, 4, True, 900, 980, 2, 32_000),
    _SwitchClass("ethernet", 64, 400, 4, False, 900, 980, 2, 20_000),
    _SwitchClass("ethernet", 64, 200, 2, True, 450, 700, 2, 24_000),
    _SwitchClass("ethernet", 64, 100, 4, True, 450, 650, 2, 18_000),
    _SwitchClass("infiniband", 40, 200, 2, True, 130, 750, 1, 20_000),
)
# Anchors: catalogs/*/links.csv (per cable, per transceiver, per metre of fiber).
LINK_CLASSES = (
    _LinkClass("dac", 400, "any", 3, 0.1, 200),
    _LinkClass("aoc", 400, "any", 30, 12, 850),
    _LinkClass("transceiver", 400, "any", 500, 9, 700),
    _LinkClass("fiber", 400, "any", 2000, 0, 2.0),
    _LinkClass("aec", 400, "any", 7, 6, 500),
    _LinkClass("transceiver", 400, "any", 50, 8, 550),
    _LinkClass("fiber", 400, "any", 100, 0, 2.5),
    _LinkClass("dac", 800, "any", 3, 0.1, 400),
    _LinkClass("transceiver", 800, "any", 500, 17, 1250),
    _LinkClass("fiber", 800, "any", 2000, 0, 2.0),
    _LinkClass("dac", 200, "any", 3, 0.1, 120),
    _LinkClass("aoc", 200, "any", 30, 6, 500),
    _LinkClass("transceiver", 200, "any", 500, 6, 400),
    _LinkClass("fiber", 200, "any", 2000, 0, 2.0),
    _LinkClass("dac", 100, "any", 3, 0.1, 60),
    _LinkClass("transceiver", 100, "any", 500, 3.5, 150),
    _LinkClass("fiber", 100, "any", 2000, 0, 2.0),
    _LinkClass("aoc", 800, "any", 30, 16, 1400),
    _LinkClass("aoc", 100, "any", 30, 3, 250),
)


def _spread(rng: random.Random, anchor_usd: float) -> int:
    """A variant's list price in cents: the anchor times a log-normal factor."""
    return max(1, round(anchor_usd * 100 * rng.lognormvariate(0.0, PRICE_SIGMA)))


def _counts(skus: int) -> dict[str, int]:
    counts = {t: max(1, round(skus * share)) for t, share in SHARES.items()}
    counts["links"] = skus - sum(counts.values())
    if counts["links"] < 4:
        msg = f"a synthetic catalog needs at least 7 SKUs (3 parts and 4 link kinds); got {skus}"
        raise ValueError(msg)
    return counts


def _availability(
    rng: random.Random, stock_share: float, stock_range: tuple[int, int]
) -> Availability:
    stock = rng.randint(*stock_range) if rng.random() < stock_share else None
    return Availability(
        stock_units=stock, lead_time_days=rng.choice((14, 30, 60, 90)), source=SOURCE
    )


def synthetic_records(skus: int, seed: int = 0) -> Catalog:
    """The records of a ``skus``-SKU catalog (unvalidated; ``synthetic_catalog`` validates)."""
    rng = random.Random(seed)
    n = _counts(skus)

    def pick(classes: tuple, i: int) -> object:
        return classes[i] if i < len(classes) else rng.choice(classes)

    servers = []
    for i in range(n["servers"]):
        c: _ServerClass = pick(SERVER_CLASSES, i)  # type: ignore[assignment]
        servers.append(
            Server(
                sku=f"SRV-{c.gpu_model}-{i:04d}",
                vendor=rng.choice(VENDORS),
                gpu_model=c.gpu_model,
                gpus_per_node=8,
                gpu_peak_bf16_tflops=float(c.bf16_tflops),
                gpu_memory_gb=float(c.memory_gb),
                intra_node_gbytes_per_s=float(c.nvlink_gbytes_per_s),
                max_nics=8,
                power_kw=float(c.power_kw),
                rack_units=c.rack_units,
                price_cents=_spread(rng, c.price_usd),
                gpu_peak_fp8_tflops=None if c.fp8_tflops is None else float(c.fp8_tflops),
                availability=_availability(rng, 0.1, (64, 4096)),
            )
        )
    nics = []
    for i in range(n["nics"]):
        nc: _NicClass = pick(NIC_CLASSES, i)  # type: ignore[assignment]
        nics.append(
            Nic(
                sku=f"NIC-{nc.speed_gbps}G-{i:04d}",
                vendor=rng.choice(VENDORS),
                speed_gbps=nc.speed_gbps,
                ports=1,
                protocols=nc.protocols,
                power_w=float(nc.power_w),
                price_cents=_spread(rng, nc.price_usd),
                availability=_availability(rng, 0.1, (512, 32768)),
            )
        )
    switches = []
    for i in range(n["switches"]):
        sc: _SwitchClass = pick(SWITCH_CLASSES, i)  # type: ignore[assignment]
        switches.append(
            Switch(
                sku=f"SW-{sc.family[:3].upper()}-{sc.ports}x{sc.speed_gbps}G-{i:04d}",
                vendor=rng.choice(VENDORS),
                fabric_family=sc.family,
                ports=sc.ports,
                port_speed_gbps=sc.speed_gbps,
                breakout=sc.breakout,
                lossless=sc.lossless,
                latency_ns=float(sc.latency_ns),
                power_w=float(sc.power_w),
                rack_units=sc.rack_units,
                price_cents=_spread(rng, sc.price_usd),
                availability=_availability(rng, 0.1, (64, 4096)),
            )
        )
    links = []
    for i in range(n["links"]):
        lc: _LinkClass = pick(LINK_CLASSES, i)  # type: ignore[assignment]
        links.append(
            Link(
                sku=f"LNK-{lc.kind.upper()}-{lc.speed_gbps}G-{lc.reach_m:g}M-{i:04d}",
                vendor=rng.choice(VENDORS),
                kind=lc.kind,
                speed_gbps=lc.speed_gbps,
                fabric_family=lc.family,
                reach_m=float(lc.reach_m),
                power_w=float(lc.power_w),
                price_cents=_spread(rng, lc.price_usd),
                availability=_availability(rng, 0.05 if lc.kind != "fiber" else 0.0, (1024, 65536)),
            )
        )
    breaks = []
    for part in (*servers, *nics, *switches, *links):
        if part.price_cents >= 100 and rng.random() < 0.2:
            for min_qty, off in (
                (rng.choice((16, 64, 128)), rng.uniform(0.03, 0.08)),
                (rng.choice((512, 1024, 8192)), rng.uniform(0.09, 0.15)),
            ):
                breaks.append(
                    PriceBreak(part.sku, min_qty, round(part.price_cents * (1 - off)), SOURCE)
                )
    meta = CatalogMeta(
        name=f"synthetic-{skus}",
        vendor="synthetic",
        currency="USD",
        quote_date=QUOTE_DATE,
        valid_until=VALID_UNTIL,
    )
    return Catalog(meta, tuple(servers), tuple(nics), tuple(switches), tuple(links), tuple(breaks))


def synthetic_catalog(skus: int, seed: int = 0) -> Catalog:
    """A validated ``skus``-SKU catalog: written as CSV and loaded back like any catalog."""
    with tempfile.TemporaryDirectory(prefix="procure-synthetic-") as tmp:
        folder = write_catalog(synthetic_records(skus, seed), Path(tmp) / "catalog")
        return load_catalog(folder, today=QUOTE_DATE)
