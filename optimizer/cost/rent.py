"""Rent vs buy: what the request's training run costs on a cloud offer, and the utilisation at
which owning a design is cheaper than renting the same GPU-hours.

The rented run is timed by the same performance model as the designs, on the offer's GPU
(figures from the catalog's servers row of that GPU model) and the offer's interconnect
(``optimizer.catalog.model.INTERCONNECTS``), on a non-blocking Clos of the design's GPU count
rounded up to whole instances. Its cost is rate x GPUs x hours, exactly (``Decimal``).

Break-even: owning ``years`` costs ``F + u x E`` (optimizer/cost/tco.py: capex, support and
space do not depend on the utilisation ``u``; energy ``E`` at full use scales with it), renting
the same GPU-hours costs ``u x R`` (``R``: every GPU of the design rented every hour of the
years, paid and discounted like the yearly costs). Owning is cheaper above
``u* = F / (R - E)``; when ``R <= E`` or ``u* > 1`` renting is cheaper at every utilisation
("never"). docs/optimizer.md ("Rent vs buy") states the assumptions.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Decimal
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

from optimizer.catalog.io import read_tables_from_bytes
from optimizer.catalog.model import Catalog, CloudOffer, Server
from optimizer.catalog.records import build_record
from optimizer.catalog.resolve import bundled_catalogs, bundled_catalogs_dir
from optimizer.catalog.validation import Rows, offer_rows
from optimizer.cost.tco import (
    HOURS_PER_YEAR,
    CostModel,
    annuity_factor,
    energy_cents_per_year,
    space_cents_per_year,
    tco_prices,
)
from optimizer.errors import CatalogInvalid, InvalidInput
from optimizer.optimize.request import Confidence, OptimizeSpec
from optimizer.performance.cluster import ClusterSpec, server_gpu_model
from optimizer.performance.estimator import Estimate
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.performance.plan import PartialPlan
from optimizer.performance.planner import plan_and_estimate
from optimizer.topology.profile import TopologyProfile
from optimizer.workload.model import Workload

if TYPE_CHECKING:  # result.py holds these records, so it imports this module
    from optimizer.optimize.result import OptimizeResult

ON_DEMAND, COMMITTED = "on_demand", "committed"
CLOS_RADIX = 64
"""Switch radix assumed for a rented cluster's fabric (tiers and hops only; it buys nothing)."""
BUNDLED_OFFERS = "catalogs/cloud_offers.csv"
"""The offer table used when the request's catalogs carry none (package data)."""


@dataclass(frozen=True)
class RentQuote:
    """The request's training run on one offer (money in cents; None: the offer has no such
    rate, or the run could not be timed, which ``note`` says)."""

    provider: str
    instance: str
    gpu_model: str
    interconnect: str
    fabric: str
    network_gbps_per_gpu: float
    gpus: int
    instances: int
    training_time_hours: float | None
    on_demand_usd_per_gpu_hour: float | None
    committed_usd_per_gpu_hour: float | None
    commitment_days: int | None
    on_demand_cost_cents: int | None
    committed_cost_cents: int | None
    price_date: str
    source: str
    note: str = ""
    gpu_memory_gb: float = 0.0  # of each GPU the run was timed on; 0: not timed


@dataclass(frozen=True)
class BreakEven:
    """Owning one design against renting its GPU-hours from one offer at one rate.

    ``own_fixed_cents`` (capex, support, space) and ``own_energy_full_use_cents`` and
    ``rent_full_use_cents`` (every GPU, every hour) are the terms of the equation, net
    present over the cost model's years; ``utilization`` is None when renting is always
    cheaper."""

    offer: str
    pricing: str
    usd_per_gpu_hour: float
    utilization: float | None
    own_fixed_cents: int
    own_energy_full_use_cents: int
    rent_full_use_cents: int


# --- the arithmetic ----------------------------------------------------------------------------


def rented_cost_cents(usd_per_gpu_hour: float, gpus: int, hours: float) -> int:
    """rate x GPUs x hours in cents, computed in decimal so the product is exact before the
    one rounding to a whole cent."""
    cents = Decimal(repr(usd_per_gpu_hour)) * 100 * gpus * Decimal(repr(hours))
    return int(cents.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def own_fixed_cents(
    capex_cents: int,
    racks: int,
    model: CostModel,
    support_cents_per_year: float | None = None,
) -> float:
    """Net present cost of owning that does not depend on utilisation: capex, support and
    space. ``support_cents_per_year`` is the BOM's lines at their catalog support rates (as the
    TCO counts them); without it, the model's rate x capex."""
    factor = annuity_factor(model.years, model.discount_rate)
    support = (
        model.support_rate * capex_cents
        if support_cents_per_year is None
        else support_cents_per_year
    )
    return capex_cents + (support + space_cents_per_year(racks, model)) * factor


def own_energy_full_use_cents(it_power_kw: float, model: CostModel) -> float:
    """Net present energy bill of the design drawing its rated power every hour."""
    factor = annuity_factor(model.years, model.discount_rate)
    return energy_cents_per_year(it_power_kw, replace(model, utilization=1.0)) * factor


def rent_full_use_cents(usd_per_gpu_hour: float, gpus: int, model: CostModel) -> float:
    """Net present cost of renting ``gpus`` every hour of the model's years (yearly bills,
    discounted like the owner's)."""
    factor = annuity_factor(model.years, model.discount_rate)
    return usd_per_gpu_hour * 100.0 * gpus * HOURS_PER_YEAR * factor


def break_even_utilization(
    fixed_cents: float, energy_full_use_cents: float, rent_full_use_cents: float
) -> float | None:
    """The ``u`` solving ``fixed + u x energy = u x rent``; None ("never") when renting is
    cheaper at every utilisation up to 100%."""
    slope = rent_full_use_cents - energy_full_use_cents
    if slope <= 0:
        return None
    u = fixed_cents / slope
    return u if u <= 1.0 else None


def break_even(
    offer: CloudOffer,
    pricing: str,
    *,
    capex_cents: int,
    it_power_kw: float,
    racks: int,
    gpus: int,
    model: CostModel,
    support_cents_per_year: float | None = None,
) -> BreakEven | None:
    """Owning a design (its capex, IT power, racks, GPUs) against renting from ``offer`` at
    ``pricing``; None when the offer has no such rate."""
    rate = _rate(offer, pricing)
    if rate is None:
        return None
    fixed = own_fixed_cents(capex_cents, racks, model, support_cents_per_year)
    energy = own_energy_full_use_cents(it_power_kw, model)
    rent = rent_full_use_cents(rate, gpus, model)
    return BreakEven(
        offer=offer.sku,
        pricing=pricing,
        usd_per_gpu_hour=rate,
        utilization=break_even_utilization(fixed, energy, rent),
        own_fixed_cents=round(fixed),
        own_energy_full_use_cents=round(energy),
        rent_full_use_cents=round(rent),
    )


# --- timing the rented run ---------------------------------------------------------------------


def rented_gpus(offer: CloudOffer, gpus: int) -> tuple[int, int]:
    """(GPUs, instances): ``gpus`` rounded up to whole instances of the offer, at most the
    offer's ``max_instances``."""
    instances = max(1, math.ceil(gpus / offer.gpus_per_instance))
    if offer.max_instances is not None:
        instances = min(instances, offer.max_instances)
    return instances * offer.gpus_per_instance, instances


def offer_topology(instances: int, nics_per_instance: int) -> TopologyProfile:
    """The rented fabric as the estimator sees it: a non-blocking, rail-optimised Clos of
    radix ``CLOS_RADIX`` (providers do not publish their oversubscription), or no scale-out
    network for one instance."""
    if instances == 1:
        return TopologyProfile("single_node", 0, 0, 0, 1.0, 1.0, 0)
    endpoints = instances * nics_per_instance
    down = CLOS_RADIX // 2
    tiers = 1 if endpoints <= CLOS_RADIX else 2 if endpoints <= CLOS_RADIX * down else 3
    per_leaf = endpoints if tiers == 1 else down
    return TopologyProfile(
        family="rail_optimized",
        endpoints=endpoints,
        tiers=tiers,
        max_switch_hops=2 * tiers - 1,
        oversubscription=1.0,
        bisection_ratio=1.0,
        endpoints_per_leaf=per_leaf,
        rail_optimized=True,
    )


def offer_cluster(offer: CloudOffer, server: Server, gpus: int) -> ClusterSpec:
    """The rented cluster: ``server``'s GPU figures (the offer's GPU memory where it states
    one), the offer's instance size and network."""
    total, instances = rented_gpus(offer, gpus)
    per_instance = offer.gpus_per_instance
    memory_gb = offer.gpu_memory_gb or server.gpu_memory_gb
    return ClusterSpec(
        gpus=total,
        gpus_per_node=per_instance,
        gpu_peak_tflops=server.gpu_peak_bf16_tflops,
        gpu_memory_gb=memory_gb,
        intra_node_gbytes_per_s=server.intra_node_gbytes_per_s,
        fabric=offer.fabric,
        nic_gbps_per_node=offer.gbps_per_gpu * per_instance,
        nics_per_node=per_instance,  # one scale-out port per GPU (rails)
        topology=offer_topology(instances, per_instance),
        gpu_model=server_gpu_model(server, memory_gb),
        gpu_peak_fp8_tflops=server.gpu_peak_fp8_tflops,
    )


def quote_offer(
    offer: CloudOffer,
    server: Server | None,
    gpus: int,
    workload: Workload,
    fixed: PartialPlan | None = None,
    *,
    pessimistic: bool = False,
    options: ModelOptions = DEFAULT_OPTIONS,
    figures_from: str = "",
) -> RentQuote:
    """The training run on ``offer`` at ``gpus`` (rounded up to whole instances), priced at
    each rate the offer has, timed under the request's ``options`` (its calibration and
    reliability, as the designs it is compared with). ``server`` gives the GPU's figures;
    None: the run cannot be timed (the note says why). ``figures_from``: where ``server``
    came from when not the request's catalog (the note says so)."""
    total, instances = rented_gpus(offer, gpus)
    hours: float | None = None
    memory_gb = 0.0
    note = ""
    if total < gpus:
        note = f"capped at the offer's {instances:,} instances ({total:,} GPUs); "
    if figures_from:
        note += f"GPU figures from {figures_from}; "
    if server is None:
        note += f"no servers row of GPU {offer.gpu_model} in the catalog to take its figures from"
    else:
        try:
            cluster = offer_cluster(offer, server, gpus)
            memory_gb = cluster.gpu_memory_gb
            est: Estimate = plan_and_estimate(workload, cluster, fixed, options=options)
            hours = est.training_time_hours_high if pessimistic else est.training_time_hours
        except InvalidInput as e:  # PlanInfeasible included: no plan fits in memory
            note += f"the workload does not run on {total} x {offer.gpu_model}: {e}"
    return RentQuote(
        provider=offer.provider,
        instance=offer.instance,
        gpu_model=offer.gpu_model,
        interconnect=offer.interconnect,
        fabric=offer.fabric,
        network_gbps_per_gpu=offer.gbps_per_gpu,
        gpus=total,
        instances=instances,
        training_time_hours=hours,
        on_demand_usd_per_gpu_hour=offer.on_demand_usd_per_gpu_hour,
        committed_usd_per_gpu_hour=offer.committed_usd_per_gpu_hour,
        commitment_days=offer.commitment_days,
        on_demand_cost_cents=_cost(offer.on_demand_usd_per_gpu_hour, total, hours),
        committed_cost_cents=_cost(offer.committed_usd_per_gpu_hour, total, hours),
        price_date=offer.price_date.isoformat(),
        source=offer.source,
        note=note.removesuffix("; "),
        gpu_memory_gb=memory_gb,
    )


def _cost(rate: float | None, gpus: int, hours: float | None) -> int | None:
    return None if rate is None or hours is None else rented_cost_cents(rate, gpus, hours)


def server_of_gpu(catalog: Catalog, gpu_model: str, prefer: str = "") -> Server | None:
    """The servers row whose GPU figures stand for ``gpu_model`` (``prefer``: a SKU to take
    when it has that GPU, e.g. the design's own server)."""
    rows = [s for s in catalog.servers if s.gpu_model == gpu_model]
    return next((s for s in rows if s.sku == prefer), rows[0] if rows else None)


def _figures(catalog: Catalog, gpu_model: str, *, bundled: bool) -> tuple[Server | None, str]:
    """The servers row whose GPU figures time an offer of ``gpu_model``, and where it came
    from when not ``catalog``: the bundled offer table (``bundled``) rents GPUs the request's
    catalog may not sell (gen-2026 has no H100 server, and its H100 offers went untimed), so
    their figures come from a bundled catalog's row of that GPU."""
    server = server_of_gpu(catalog, gpu_model)
    if server is not None or not bundled:
        return server, ""
    for name, row in _bundled_servers(bundled_catalogs_dir()):
        if row.gpu_model == gpu_model:
            where = f"the bundled {name} catalog's {row.sku} row"
            return row, f"{where} (the request's catalog has no {gpu_model} server)"
    return None, ""


@functools.cache
def _bundled_servers(root: Path) -> tuple[tuple[str, Server], ...]:
    """(catalog name, row) of every servers row of the bundled catalogs under ``root``."""
    from optimizer.catalog import load_catalog  # the loader imports the offer table's rules

    return tuple(
        (folder.name, server)
        for folder in bundled_catalogs(root)
        for server in load_catalog(folder).servers
    )


def design_break_evens(
    offers: Iterable[CloudOffer],
    gpu_model: str,
    *,
    gpu_memory_gb: float,
    capex_cents: int,
    it_power_kw: float,
    racks: int,
    gpus: int,
    model: CostModel,
    support_cents_per_year: float | None = None,
) -> tuple[BreakEven, ...]:
    """Break-even against the cheapest offer of the design's GPU at each pricing: owning must
    beat the cheapest way to rent the same GPU (an offer stating other memory, p4d's 40 GB
    A100s against an 80 GB A100 design, is another GPU). Empty when no offer rents it."""
    same = [
        o for o in offers if o.gpu_model == gpu_model and o.gpu_memory_gb in (None, gpu_memory_gb)
    ]
    out: list[BreakEven] = []
    for pricing in (ON_DEMAND, COMMITTED):
        priced = [(o, _rate(o, pricing)) for o in same]
        cheapest = min(
            ((r, o.sku, o) for o, r in priced if r is not None), default=None, key=lambda t: t[:2]
        )
        if cheapest is None:
            continue
        found = break_even(
            cheapest[2],
            pricing,
            capex_cents=capex_cents,
            it_power_kw=it_power_kw,
            racks=racks,
            gpus=gpus,
            model=model,
            support_cents_per_year=support_cents_per_year,
        )
        if found is not None:
            out.append(found)
    return tuple(out)


def _rate(offer: CloudOffer, pricing: str) -> float | None:
    if pricing == ON_DEMAND:
        return offer.on_demand_usd_per_gpu_hour
    return offer.committed_usd_per_gpu_hour


# --- the offer table ---------------------------------------------------------------------------


def offers_from_csv(data: bytes) -> tuple[CloudOffer, ...]:
    """The offers of a cloud_offers CSV read on its own; CatalogInvalid names every bad cell."""
    raw = read_tables_from_bytes({"cloud_offers.csv": data})
    problems = list(raw.problems)
    table = raw.tables.get("cloud_offers")
    rows: Rows = []
    if table is not None:
        checked, found = offer_rows(table)
        rows, problems = checked, problems + found
    if any(p.severity == "error" for p in problems):
        raise CatalogInvalid(problems)
    offers = (build_record("cloud_offers", v) for _, v in rows)
    return tuple(o for o in offers if isinstance(o, CloudOffer))


@functools.cache
def bundled_offers() -> tuple[CloudOffer, ...]:
    """The bundled offer table (``catalogs/cloud_offers.csv``, shipped as package data)."""
    path = files("optimizer") / BUNDLED_OFFERS
    return offers_from_csv(path.read_bytes())


# --- the answer --------------------------------------------------------------------------------


def with_rent_vs_buy(
    result: OptimizeResult,
    catalog: Catalog,
    spec: OptimizeSpec,
    fixed: PartialPlan | None = None,
) -> OptimizeResult:
    """``result`` with the rent-vs-buy answer: a quote per offer for the request's run at the
    rank-1 design's GPU count, and each design's break-even utilisation under the request's
    cost model (``spec.cost_model``: years, PUE, tariff, support, rent, discount; the same
    model and per-row support rates as the designs' TCO). The offers are the catalog's
    ``cloud_offers`` or, when it has none, the bundled table."""
    model = spec.cost_model
    prices = tco_prices((*catalog.servers, *catalog.nics, *catalog.switches), model)
    offers, origin = (
        (catalog.cloud_offers, "the catalog's cloud_offers table")
        if catalog.cloud_offers
        else (bundled_offers(), f"the bundled offer table {BUNDLED_OFFERS}")
    )
    if not result.designs:
        note = f"Rent vs buy: no design to compare ({len(offers)} offers in {origin})."
        return replace(result, rent_note=note)
    top = result.designs[0]
    pessimistic = spec.confidence is Confidence.PESSIMISTIC
    quotes: list[RentQuote] = []
    for o in offers:
        server, figures_from = _figures(catalog, o.gpu_model, bundled=not catalog.cloud_offers)
        quotes.append(
            quote_offer(
                o,
                server,
                top.gpus,
                spec.workload,
                fixed,
                pessimistic=pessimistic,
                options=spec.model_options,
                figures_from=figures_from,
            )
        )
    designs = []
    unrented: dict[str, list[int]] = {}  # GPU model -> ranks no offer rents
    for d in result.designs:
        server = next((s for s in catalog.servers if s.sku == d.design.server_sku), None)
        evens = (
            design_break_evens(
                offers,
                server.gpu_model,
                gpu_memory_gb=server.gpu_memory_gb,
                capex_cents=d.bom.capex_cents,
                it_power_kw=d.bom.power_kw,
                racks=d.bom.racks,
                gpus=d.gpus,
                model=model,
                support_cents_per_year=sum(
                    prices.support_rate(line.sku) * line.extended_price_cents
                    for line in d.bom.lines
                ),
            )
            if server is not None
            else ()
        )
        designs.append(replace(d, break_evens=evens))
        if not evens:
            model_name = server.gpu_model if server is not None else d.design.server_sku
            if server is not None and any(o.gpu_model == server.gpu_model for o in offers):
                model_name += f" {server.gpu_memory_gb:g} GB"  # offered with other memory
            unrented.setdefault(model_name, []).append(d.rank)
    note = (
        f"Rent vs buy: offers from {origin}; rented run at rank 1's {top.gpus:,} GPUs rounded "
        f"up to whole instances; break-even over {model.years:g} years at PUE {model.pue:g}, "
        f"${model.electricity_usd_per_kwh:g}/kWh, support {model.support_rate:.0%} of capex "
        f"per year (or the catalog row's rate), ${model.rack_usd_per_month:,.0f} per "
        f"rack-month, discount rate {model.discount_rate:.0%}."
    )
    for gpu, ranks in unrented.items():
        which = ", ".join(str(r) for r in ranks)
        note += f" No offer rents {gpu} (rank {which}): no break-even for it."
    return replace(result, designs=tuple(designs), rent_quotes=tuple(quotes), rent_note=note)
