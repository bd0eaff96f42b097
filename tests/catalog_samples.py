"""Small, valid catalogs built in code, for tests that must not depend on files or the loader."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

from optimizer.catalog.model import (
    Availability,
    Catalog,
    CatalogMeta,
    CloudOffer,
    Link,
    Nic,
    PriceBreak,
    Server,
    Switch,
)


def sample_catalog(
    name: str = "sample", *, variant: int = 0, links: int = 3, link_sku_prefix: str = "LNK"
) -> Catalog:
    """A buildable one-fabric catalog; ``variant`` changes one price so content (and id) differ."""
    src = Availability(source="test fixture")
    return Catalog(
        meta=CatalogMeta(
            name=name,
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
                price_cents=29_664_400 + variant,
                gpu_peak_fp8_tflops=1979.0,
                availability=Availability(stock_units=12, lead_time_days=60, source="test fixture"),
            ),
        ),
        nics=(
            Nic(
                sku="NIC-400",
                vendor="Acme",
                speed_gbps=400,
                ports=1,
                protocols=frozenset({"infiniband", "roce", "ethernet"}),
                power_w=25.0,
                price_cents=220_000,
                availability=src,
            ),
        ),
        switches=(
            Switch(
                sku="SW-64",
                vendor="Acme",
                fabric_family="infiniband",
                ports=64,
                port_speed_gbps=400,
                breakout=2,
                lossless=True,
                latency_ns=150.0,
                power_w=1300.0,
                rack_units=1,
                price_cents=3_600_000,
                availability=src,
            ),
        ),
        links=tuple(
            Link(
                sku=f"{link_sku_prefix}-{i:04d}",
                vendor="Acme",
                kind="dac",
                speed_gbps=400,
                fabric_family="infiniband",
                reach_m=2.0 + i,
                power_w=0.1,
                price_cents=15_000 + i,
                availability=src,
            )
            for i in range(links)
        ),
        price_breaks=(PriceBreak(sku="SW-64", min_quantity=64, unit_price_cents=3_420_000),),
    )


def sample_offer(**changes: object) -> CloudOffer:
    """An 8-GPU H100 instance on NDR InfiniBand at $2 per GPU-hour on demand, with
    ``changes``."""
    base = CloudOffer(
        provider="Cloud",
        instance="gpu.8x",
        gpu_model="H100",
        gpus_per_instance=8,
        interconnect="infiniband_ndr",
        price_date=date(2026, 1, 1),
        source="test",
        on_demand_usd_per_gpu_hour=2.0,
    )
    return replace(base, **changes)  # type: ignore[arg-type]
