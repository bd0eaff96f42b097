"""Tables that fit an 80-column terminal without ever eliding a headline number.

A wide table squeezed by rich into a narrow terminal cuts every cell to ``$33…``. ``Fit``
prints the wide table when it fits and a narrow one otherwise; the narrow tables merge the
descriptive columns into one cell that wraps and keep capex, time and price cells whole
(``no_wrap``), so the numbers a buyer compares are always readable.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table

from client.render import (
    NO_FABRIC,
    SERVER_DOMAIN_GPUS,
    fabric_label,
    gbps_per_gpu,
    hours,
    money,
    shows_scale_up,
    topology_label,
)
from optimizer._pb.procurement.v1 import optimize_pb2

# Measuring in a console this wide gives a table's natural width (rich clamps to the console).
UNBOUNDED_WIDTH = 10_000
FIBER_UNIT = "m"  # fiber lines are bought by the metre: quantity in m, unit price per m


class Fit:
    """The first of ``choices`` whose natural width fits the console, else the last one."""

    def __init__(self, *choices: RenderableType) -> None:
        if not choices:
            raise ValueError("Fit needs at least one renderable")
        self.choices = choices

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        unbounded = options.update_width(UNBOUNDED_WIDTH)
        for choice in self.choices[:-1]:
            if Measurement.get(console, unbounded, choice).maximum <= options.max_width:
                yield choice
                return
        yield self.choices[-1]


def _numbers(table: Table, *names: str) -> None:
    """Right-aligned columns whose cells are never wrapped or cut."""
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)


def design_label(
    d: optimize_pb2.Design | optimize_pb2.ParetoPoint, *, name_domain: bool = False
) -> str:
    """Size, server, fabric and topology in one cell that can wrap between words; a design
    without a scale-out fabric (one node) names no fabric. ``name_domain``: the cell names its
    scale-up domain (the narrow table's stand-in for the wide table's "scale-up" column, so a
    table that weighs an NVL72 against HGX servers shows the domain of every row)."""
    fabric = fabric_label(d.fabric, d.topology)
    topology = topology_label(d.topology, d.oversubscription)
    domain = getattr(d, "scale_up_gpus", 0)  # issue 16; a ParetoPoint has no domain
    named = domain > SERVER_DOMAIN_GPUS or (name_domain and domain > 0)
    server = f"{d.server_sku} ({domain}-GPU domain)" if named else d.server_sku
    if fabric == NO_FABRIC:
        return f"{d.gpus:,} GPUs {server} {topology} (no fabric)"
    return f"{d.gpus:,} GPUs {server} {fabric} {topology}"


def narrow_designs_table(
    resp: optimize_pb2.OptimizeResponse,
    title: str,
    *,
    show_tco: bool = False,
    show_facility: bool = False,
) -> Table:
    table = Table(title=title)
    table.add_column("#", justify="right")
    table.add_column("design", overflow="fold")
    capex = "capex\nTCO" if show_tco else "capex"  # issue 17 (tco)
    _numbers(table, capex, "network\ncapex/time", "Gb/s/GPU", "time (h)")
    # issue 17 (facility): racks / floor positions and fullest rack / cooling under the kW
    table.add_column("kW\nracks/floor\nrack kW" if show_facility else "kW", justify="right")
    name_domain = shows_scale_up(resp)  # issue 16
    for d in resp.designs:
        at_limit = f" (at limit: {', '.join(d.binding)})" if d.binding else ""
        table.add_row(
            str(d.rank),
            design_label(d, name_domain=name_domain) + at_limit,
            money(d.capex_usd) + (f"\n{money(d.tco_usd)}" if show_tco else ""),
            f"{d.cost.network_share:.1%}\n{d.network_time_share:.1%}",
            gbps_per_gpu(d.scale_out_gbps_per_gpu),
            f"{hours(d.training_time_hours)}\n"
            f"{hours(d.training_time_hours_low)}-{hours(d.training_time_hours_high)}",
            f"{d.power_kw:,.0f}" + (_facility_cell(d) if show_facility else ""),
        )
    return table


def _facility_cell(d: optimize_pb2.Design) -> str:
    """Racks/floor positions and the fullest rack with its cooling, under the power."""
    return f"\n{d.racks:,}/{d.floor_positions:,}\n{d.rack_kw:,.1f} {d.cooling or '-'}"


def quantity(line: optimize_pb2.BomLine) -> str:
    """The quantity with its unit when it is not a count of parts (fiber: metres)."""
    return f"{line.quantity:,} {FIBER_UNIT}" if line.category == "fiber" else f"{line.quantity:,}"


def unit_price(line: optimize_pb2.BomLine) -> str:
    """The unit price, per metre for fiber."""
    per = f"/{FIBER_UNIT}" if line.category == "fiber" else ""
    return f"${line.unit_price_usd:,.2f}{per}"


@dataclass(frozen=True)
class BomRow:
    """A BOM line with the cells every BOM table prints for it."""

    line: optimize_pb2.BomLine
    cells: tuple[str, str, str, str]  # where, quantity, unit price, extended price
    last_of_category: bool  # a rule follows it


BOM_ORDER = ("server", "nic", "switch", "cable", "transceiver", "fiber")


def bom_rows(design: optimize_pb2.Design) -> list[BomRow]:
    """The design's BOM lines by category (servers first), tier and SKU, with their cells."""
    lines = sorted(
        design.bom,
        key=lambda b: (
            BOM_ORDER.index(b.category) if b.category in BOM_ORDER else 99,
            b.tier,
            b.sku,
        ),
    )
    rows = []
    for i, line in enumerate(lines):
        where = line.tier + (f" ({line.length_m:g} m)" if line.length_m else "")
        cells = (where, quantity(line), unit_price(line), money(line.extended_price_usd))
        last = i + 1 == len(lines) or lines[i + 1].category != line.category
        rows.append(BomRow(line, cells, last))
    return rows


def racks_label(design: optimize_pb2.Design) -> str:
    return f"{design.racks} rack" + ("" if design.racks == 1 else "s")


def narrow_bom_table(design: optimize_pb2.Design) -> Table:
    from client.render import several_catalogs

    mixed = several_catalogs(design)
    table = Table(title=f"bill of materials, rank {design.rank}")
    table.add_column("item", overflow="fold")
    table.add_column("where", overflow="fold")
    _numbers(table, "qty", "unit", "extended")
    for row in bom_rows(design):
        line = row.line
        source = f", {line.catalog}" if mixed else ""
        item = f"{line.category}: {line.sku} ({line.vendor}{source})"
        table.add_row(item, *row.cells, end_section=row.last_of_category)
    table.add_row("total", racks_label(design), "", "", money(design.capex_usd), style="bold")
    return table
