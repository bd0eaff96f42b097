"""A small in-memory catalog with InfiniBand and Ethernet parts for the topology and BOM tests.

Figures follow hardware.md sections 2-4 in magnitude; exact values only need to be plausible.
"""

from __future__ import annotations

import dataclasses
from datetime import date

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

SRC = Availability(source="test fixture")


def _switch(
    sku: str,
    family: str,
    ports: int,
    speed: int,
    breakout: int,
    lossless: bool,
    price_usd: int,
    power_w: float = 1300.0,
    rack_units: int = 1,
) -> Switch:
    return Switch(
        sku=sku,
        vendor="Acme",
        fabric_family=family,
        ports=ports,
        port_speed_gbps=speed,
        breakout=breakout,
        lossless=lossless,
        latency_ns=300.0,
        power_w=power_w,
        rack_units=rack_units,
        price_cents=price_usd * 100,
        availability=SRC,
    )


def _link(
    sku: str,
    kind: str,
    speed: int,
    family: str,
    reach_m: float,
    price_cents: int,
    power_w: float = 0.1,
    stock: int | None = None,
    ports: int | None = None,
    side: str | None = None,
) -> Link:
    return Link(
        sku=sku,
        vendor="Acme",
        kind=kind,
        speed_gbps=speed,
        fabric_family=family,
        reach_m=reach_m,
        power_w=power_w,
        price_cents=price_cents,
        availability=Availability(stock_units=stock, source="test fixture"),
        side=side,
        ports_per_module=ports,
    )


def topology_catalog(*, aoc_stock: int | None = 300) -> Catalog:
    """IB NDR and Spectrum/TH5-style Ethernet parts, a lossy switch and an 800G-only NIC."""
    return Catalog(
        meta=CatalogMeta(
            name="topology-fixture",
            vendor="Acme",
            currency="USD",
            quote_date=date(2026, 1, 15),
            valid_until=date(2026, 12, 31),
        ),
        servers=(
            Server(
                sku="SRV-H100",
                vendor="Acme",
                gpu_model="H100",
                gpus_per_node=8,
                gpu_peak_bf16_tflops=989.0,
                gpu_memory_gb=80.0,
                intra_node_gbytes_per_s=900.0,
                max_nics=8,
                power_kw=10.2,
                rack_units=8,
                price_cents=30_000_000,
                availability=SRC,
            ),
        ),
        nics=(
            Nic(
                sku="CX7-400",
                vendor="NVIDIA",
                speed_gbps=400,
                ports=1,
                protocols=frozenset({"infiniband", "roce", "ethernet"}),
                power_w=25.0,
                price_cents=220_000,
                availability=SRC,
            ),
            Nic(
                sku="THOR2-400",
                vendor="Broadcom",
                speed_gbps=400,
                ports=1,
                protocols=frozenset({"roce", "ethernet"}),
                power_w=25.0,
                price_cents=150_000,
                availability=SRC,
            ),
            Nic(
                sku="CX8-800",
                vendor="NVIDIA",
                speed_gbps=800,
                ports=1,
                protocols=frozenset({"infiniband", "roce", "ethernet"}),
                power_w=30.0,
                price_cents=350_000,
                availability=SRC,
            ),
        ),
        switches=(
            _switch("NDR-64", "infiniband", 64, 400, 2, True, 36_000),
            _switch("SN5600", "ethernet", 64, 800, 2, True, 55_000, 2800.0, 2),
            _switch("TH5-LOSSY", "ethernet", 64, 800, 2, False, 33_000, 2200.0, 2),
        ),
        links=(
            _link("IB-DAC-3M", "dac", 400, "infiniband", 3.0, 18_000),
            _link("IB-AOC-30M", "aoc", 400, "infiniband", 30.0, 95_000, 16.0, stock=aoc_stock),
            _link("IB-SR4", "transceiver", 400, "infiniband", 50.0, 45_000, 8.5),
            _link("IB-DR4", "transceiver", 400, "infiniband", 500.0, 62_500, 8.5),
            _link("ETH-DAC-3M", "dac", 400, "ethernet", 3.0, 25_000),
            _link("ETH-AOC-50M", "aoc", 400, "ethernet", 50.0, 80_000, 12.0),
            _link("ETH-SR4", "transceiver", 400, "ethernet", 50.0, 55_000, 8.0),
            _link("ETH-DR4", "transceiver", 400, "ethernet", 500.0, 70_000, 9.0),
            # What fills the 800G switches' broken-out ports: splitters and twin-port modules.
            _link("ETH-DAC-SPLIT-3M", "dac", 800, "ethernet", 3.0, 50_000, ports=2),
            _link("ETH-AOC-SPLIT-50M", "aoc", 800, "ethernet", 50.0, 160_000, 24.0, ports=2),
            _link(
                "ETH-2xSR4",
                "transceiver",
                800,
                "ethernet",
                50.0,
                110_000,
                16.0,
                ports=2,
                side="switch",
            ),
            _link(
                "ETH-2xDR4",
                "transceiver",
                800,
                "ethernet",
                500.0,
                140_000,
                18.0,
                ports=2,
                side="switch",
            ),
            _link("FIBER-OM4", "fiber", 800, "any", 100.0, 250, 0.0),
            _link("FIBER-OS2", "fiber", 800, "any", 2000.0, 200, 0.0),
        ),
        price_breaks=(
            PriceBreak("NDR-64", 64, 3_400_000),
            PriceBreak("IB-SR4", 1000, 41_400),
            PriceBreak("SRV-H100", 128, 29_100_000),
        ),
    )


def forwarding_catalog(catalog: Catalog) -> Catalog:
    """``catalog`` with NICs that relay traffic between their ports (a NIC with a built-in
    switch), the hardware a direct (torus) network of more than two nodes needs."""
    return dataclasses.replace(
        catalog, nics=tuple(dataclasses.replace(n, forwarding=True) for n in catalog.nics)
    )
