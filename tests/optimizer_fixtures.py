"""Small catalogs and workloads for the optimizer's tests: a fixed one and a hypothesis strategy.

Sizes are kept tiny (at most two NICs per node, four nodes) so that brute force
(optimizer.optimize.exhaustive) can enumerate every design and every link mix.
"""

from __future__ import annotations

from datetime import date

from hypothesis import strategies as st

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
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.workload.model import Workload
from optimizer.workload.presets import preset

SRC = Availability(source="test fixture")
META = CatalogMeta(
    name="tiny",
    vendor="Acme",
    currency="USD",
    quote_date=date(2026, 1, 1),
    valid_until=date(2027, 1, 1),
)


def server(
    sku: str,
    price_usd: int,
    *,
    max_nics: int = 2,
    stock: int | None = None,
    gpu: str = "H100",
    peak: float = 989.0,
) -> Server:
    return Server(
        sku=sku,
        vendor="Acme",
        gpu_model=gpu,
        gpus_per_node=8,
        gpu_peak_bf16_tflops=peak,
        gpu_memory_gb=80.0,
        intra_node_gbytes_per_s=450.0,
        max_nics=max_nics,
        power_kw=10.2,
        rack_units=8,
        price_cents=price_usd * 100,
        availability=Availability(stock_units=stock, source="test fixture"),
    )


def nic(sku: str, price_usd: int, protocols: tuple[str, ...]) -> Nic:
    return Nic(
        sku=sku,
        vendor="Acme",
        speed_gbps=400,
        ports=1,
        protocols=frozenset(protocols),
        power_w=25.0,
        price_cents=price_usd * 100,
        availability=SRC,
    )


def switch(
    sku: str, family: str, price_usd: int, *, lossless: bool = True, ports: int = 64
) -> Switch:
    return Switch(
        sku=sku,
        vendor="Acme",
        fabric_family=family,
        ports=ports,
        port_speed_gbps=400,
        breakout=1,
        lossless=lossless,
        latency_ns=300.0,
        power_w=1300.0,
        rack_units=1,
        price_cents=price_usd * 100,
        availability=SRC,
    )


def link(
    sku: str,
    kind: str,
    reach_m: float,
    price_cents: int,
    *,
    family: str = "any",
    stock: int | None = None,
) -> Link:
    return Link(
        sku=sku,
        vendor="Acme",
        kind=kind,
        speed_gbps=400,
        fabric_family=family,
        reach_m=reach_m,
        power_w=1.0 if kind != "fiber" else 0.0,
        price_cents=price_cents,
        availability=Availability(stock_units=stock, source="test fixture"),
    )


def tiny_catalog(*, aoc_stock: int | None = None, breaks: tuple[PriceBreak, ...] = ()) -> Catalog:
    """Two H100 servers, an IB/RoCE NIC, an IB and a lossless Ethernet switch, all link kinds."""
    return Catalog(
        meta=META,
        servers=(server("SRV-A", 250_000), server("SRV-B", 280_000, max_nics=1)),
        nics=(nic("NIC-VPI", 2_000, ("infiniband", "roce", "ethernet")),),
        switches=(switch("SW-IB", "infiniband", 30_000), switch("SW-ETH", "ethernet", 20_000)),
        links=(
            link("DAC-3M", "dac", 3.0, 20_000),
            link("AOC-30M", "aoc", 30.0, 90_000, stock=aoc_stock),
            link("XCVR-500M", "transceiver", 500.0, 60_000),
            link("FIBER", "fiber", 2000.0, 300),
        ),
        price_breaks=breaks,
    )


def small_workload(tokens: float = 4e10) -> Workload:
    """BERT-Large-sized work: a few nodes matter, every solve is fast."""
    return preset("bert-large", training_tokens=tokens)


def spec_for(
    *,
    target_hours: float | None = None,
    budget_usd: float | None = None,
    objective: Objective = Objective.MIN_COST,
    top_k: int = 3,
    backend: str = "cpsat",
    max_nodes: int = 4,
    fabrics: tuple[str, ...] = (),
    topologies: tuple[str, ...] = ("single_switch", "fat_tree"),
    workload: Workload | None = None,
    **constraints: object,
) -> OptimizeSpec:
    return OptimizeSpec(
        workload=workload or small_workload(),
        constraints=Constraints(
            target_training_hours=target_hours,
            budget_cents=None if budget_usd is None else round(budget_usd * 100),
            max_gpus=max_nodes * 8,
            **constraints,
        ),  # type: ignore[arg-type]
        objective=objective,
        top_k=top_k,
        backend=backend,
        allowed_fabrics=fabrics,
        allowed_topologies=topologies,
        time_limit_s=30.0,
    )


@st.composite
def random_catalogs(draw: st.DrawFn) -> Catalog:
    """Random small, internally consistent catalogs with stock limits and volume breaks."""
    family = draw(st.sampled_from(["infiniband", "ethernet"]))
    protocols = ("infiniband",) if family == "infiniband" else ("roce", "ethernet")
    servers = [
        server(
            f"SRV-{i}",
            draw(st.integers(150_000, 400_000)),
            max_nics=draw(st.integers(1, 2)),
            stock=draw(st.one_of(st.none(), st.integers(2, 4))),
        )
        for i in range(draw(st.integers(1, 2)))
    ]
    switches = [
        switch(
            f"SW-{i}",
            family,
            draw(st.integers(5_000, 60_000)),
            ports=draw(st.sampled_from([32, 64])),
        )
        for i in range(draw(st.integers(1, 2)))
    ]
    links = [
        link("DAC", "dac", 3.0, draw(st.integers(5_000, 40_000))),
        link(
            "AOC",
            "aoc",
            30.0,
            draw(st.integers(20_000, 120_000)),
            stock=draw(st.one_of(st.none(), st.integers(0, 8))),
        ),
        link("XCVR", "transceiver", 500.0, draw(st.integers(20_000, 90_000))),
        link("FIBER", "fiber", 2000.0, draw(st.integers(50, 800))),
    ]
    breaks = []
    for s in servers:
        if draw(st.booleans()):
            unit = s.price_cents * draw(st.integers(80, 99)) // 100
            breaks.append(PriceBreak(s.sku, draw(st.integers(2, 4)), unit))
    if draw(st.booleans()):
        breaks.append(
            PriceBreak(
                "DAC",
                draw(st.integers(2, 12)),
                links[0].price_cents * draw(st.integers(50, 95)) // 100,
            )
        )
    return Catalog(
        meta=META,
        servers=tuple(servers),
        nics=(nic("NIC", draw(st.integers(500, 4_000)), protocols),),
        switches=tuple(switches),
        links=tuple(links),
        price_breaks=tuple(breaks),
    )
