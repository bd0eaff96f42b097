"""Readable and machine output for response messages (tables, JSON, CSV, XLSX).

Everything here works on the protobuf response messages, so embedded and remote runs print the
same thing. Text cells written to CSV/XLSX are made formula-safe.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click
from google.protobuf import json_format
from google.protobuf.message import Message
from rich.console import Console, Group
from rich.table import Table

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.rows import DESIGN_COLUMNS, design_row
from optimizer.topology.export import safe_text

if TYPE_CHECKING:
    import pandas as pd

# Table labels by wire name (sweep tables and plot legends look names up here).
FABRIC: dict[str, str] = FABRICS.labels()
TOPOLOGY: dict[str, str] = {t.name: t.short_label for t in TOPOLOGIES}


@contextmanager
def console(output: str | None = None) -> Iterator[Console]:
    """A console on stdout (colour only on a terminal) or on ``output``, plain."""
    if output:
        with open(output, "w") as fh:
            yield Console(file=fh, width=160, no_color=True, highlight=False)
        return
    tty = sys.stdout.isatty()
    # Piped output is 160 wide unless $COLUMNS says otherwise.
    width = None if tty or os.environ.get("COLUMNS") else 160
    yield Console(highlight=False, no_color=not tty, width=width)


NO_FABRIC = "none"
"""The fabric cell of a design without a scale-out fabric (one node): it buys no fabric,
whichever fabric the search reached it through."""


def fabric_label(fabric: str, topology: str) -> str:
    """A design's fabric for a table: the fabric's label, or ``NO_FABRIC`` when its topology
    has no scale-out fabric (a one-node design cables no NIC and buys no switch)."""
    if topology in TOPOLOGIES and not TOPOLOGIES.get(topology).scale_out:
        return NO_FABRIC
    return FABRIC.get(fabric, fabric)


def shows_scale_up(resp: optimize_pb2.OptimizeResponse) -> bool:
    """The "scale-up" column (GPUs per NVLink or Infinity Fabric domain) is shown when the
    designs differ in it or one reaches beyond an 8-GPU server (a rack-scale NVL72): the wide
    table has no room for a column that says "8" on every row (its JSON always carries
    scaleUpGpus)."""
    domains = {d.scale_up_gpus for d in resp.designs}
    return len(domains) > 1 or any(n > SERVER_DOMAIN_GPUS for n in domains)


SERVER_DOMAIN_GPUS = 8  # the NVLink domain of an HGX/DGX server


def scale_up_label(gpus: int) -> str:
    """A design's scale-up domain: "72" GPUs share NVLink in an NVL72, "8" in an HGX server;
    "-" when the response predates the field."""
    return f"{gpus:,}" if gpus else "-"


def money(usd: float) -> str:
    return f"${usd:,.0f}"


def gbps_per_gpu(value: float) -> str:
    """Scale-out Gb/s per GPU for a table ("-" for a design without scale-out NICs)."""
    return f"{value:,.4g}" if value > 0 else "-"


def to_dict(message: Message) -> dict[str, object]:
    """The protobuf JSON form of ``message`` (proto field names, every field present)."""
    return json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


def hours(value: float) -> str:
    """Training time for a table: whole hours, with a decimal under ten hours."""
    return f"{value:,.1f}" if value < 10 else f"{value:,.0f}"


def dumps(document: object) -> str:
    return json.dumps(document, indent=2)


def to_json(message: Message) -> str:
    return dumps(to_dict(message))


def topology_label(topology: str, ratio: float) -> str:
    """A family's table label, with the down:up ratio where it has an oversubscribed tier;
    an unknown name (a newer server's family) is shown as sent."""
    if topology not in TOPOLOGIES:
        return topology
    return TOPOLOGIES.get(topology).display(ratio)


AT_LIMIT_WIDTH = 20
"""Widest the wide designs table's "at limit" column grows before its words wrap."""


def asks_about_facility(req: optimize_pb2.OptimizeRequest) -> bool:
    """Issue 17 (facility): a rack, floor, rack-density or cooling limit: the tables show each
    design's racks, floor positions, fullest rack and cooling (power is always shown)."""
    c = req.constraints
    return bool(
        c.HasField("max_racks")
        or c.HasField("max_floor_positions")
        or c.HasField("max_rack_kw")
        or c.HasField("rack_power_kw")
        or c.cooling
    )


def facility_cells(d: optimize_pb2.Design) -> tuple[str, str, str, str]:
    """Racks, floor positions, fullest rack (kW) and cooling of ``d``, as table cells."""
    return (f"{d.racks:,}", f"{d.floor_positions:,}", f"{d.rack_kw:,.1f}", d.cooling or "-")


FACILITY_HEADERS = ("racks", "floor pos", "rack kW", "cooling")


def designs_table(
    resp: optimize_pb2.OptimizeResponse,
    title: str,
    *,
    show_tco: bool = False,
    show_facility: bool = False,
) -> Table:
    table = Table(title=title)
    facility = FACILITY_HEADERS if show_facility else ()
    scale_up = shows_scale_up(resp)
    for name, justify in (
        ("rank", "right"),
        ("GPUs", "right"),
        ("server", "left"),
        *((("scale-up", "right"),) if scale_up else ()),  # issue 16
        ("fabric", "left"),
        ("topology", "left"),
        ("capex", "right"),
        ("net capex", "right"),
        ("net time", "right"),
        ("Gb/s/GPU", "right"),
        ("time (h)", "right"),
        ("range (h)", "right"),
        ("power (kW)", "right"),
        # issue 17 (facility): what the design asks of the hall
        *((name, "left" if name == "cooling" else "right") for name in facility),
        ("at limit", "left"),
        *((("TCO", "right"),) if show_tco else ()),  # issue 17 (tco)
    ):
        table.add_column(name, justify=justify)
    # The binding constraints are words that may wrap (a policy name is 20 characters);
    # without a cap they alone push the wide table past 160 columns and every number
    # falls back to the narrow layout.
    table.columns[-2 if show_tco else -1].max_width = AT_LIMIT_WIDTH
    for d in resp.designs:
        table.add_row(
            str(d.rank),
            f"{d.gpus:,}",
            d.server_sku,
            *((scale_up_label(d.scale_up_gpus),) if scale_up else ()),
            fabric_label(d.fabric, d.topology),
            topology_label(d.topology, d.oversubscription),
            money(d.capex_usd),
            f"{d.cost.network_share:.1%}",
            f"{d.network_time_share:.1%}",
            gbps_per_gpu(d.scale_out_gbps_per_gpu),
            hours(d.training_time_hours),
            f"{hours(d.training_time_hours_low)}-{hours(d.training_time_hours_high)}",
            f"{d.power_kw:,.0f}",
            *(facility_cells(d) if show_facility else ()),  # issue 17 (facility)
            ", ".join(d.binding) or "-",
            *((money(d.tco_usd),) if show_tco else ()),  # issue 17 (tco)
        )
    return table


def several_catalogs(design: optimize_pb2.Design) -> bool:
    """Whether the BOM orders from more than one catalog (then each line shows its own)."""
    return len({b.catalog for b in design.bom}) > 1


def bom_table(design: optimize_pb2.Design) -> Table:
    from client.narrow import bom_rows, racks_label

    table = Table(title=f"bill of materials, rank {design.rank}")
    mixed = several_catalogs(design)
    for name, justify in (
        ("category", "left"),
        ("sku", "left"),
        ("vendor", "left"),
        *((("catalog", "left"),) if mixed else ()),
        ("where", "left"),
        ("qty", "right"),
        ("unit", "right"),
        ("extended", "right"),
    ):
        table.add_column(name, justify=justify)
    for row in bom_rows(design):
        line = row.line
        where = (line.catalog,) if mixed else ()
        table.add_row(
            line.category,
            line.sku,
            line.vendor,
            *where,
            *row.cells,
            end_section=row.last_of_category,
        )
    blank = ("",) if mixed else ()
    table.add_row(
        "total", "", "", *blank, racks_label(design), "", "", money(design.capex_usd), style="bold"
    )
    return table


def print_optimize(
    resp: optimize_pb2.OptimizeResponse,
    out: Console,
    *,
    show_tco: bool = False,
    show_facility: bool = False,
) -> None:
    from client.narrow import Fit, narrow_bom_table, narrow_designs_table

    how = f"({resp.status}, {resp.backend}, {resp.solve_time_s:.1f} s)"
    if resp.designs:
        title = f"ranked designs {how}"
        out.print(
            Fit(
                designs_table(resp, title, show_tco=show_tco, show_facility=show_facility),
                narrow_designs_table(resp, title, show_tco=show_tco, show_facility=show_facility),
            )
        )
        if resp.designs[0].workload_times:  # issue 17 (portfolio)
            out.print(workload_times_table(resp))
        best = resp.designs[0]
        out.print(Fit(bom_table(best), narrow_bom_table(best)))
        for d in resp.designs:
            out.print(d.explanation)
    else:
        out.print(f"no design {how}")
    if resp.sensitivity:
        out.print(f"Sensitivity: {resp.sensitivity}")
    print_baseline(resp, out)
    if resp.diagnosis:
        out.print(f"No design: {resp.diagnosis}")
    for w in resp.warnings:
        out.print(f"warning: {w}")
    # issue 17 (rent)
    if resp.rent_quotes:
        out.print(Fit(rent_table(resp), rent_list(resp)))
        for line in rent_lines(resp):
            out.print(line)


# issue 17 (rent) ------------------------------------------------------------------------------


def _opt_money(message: Message, name: str) -> str:
    return money(getattr(message, name)) if message.HasField(name) else "-"


def _rate(message: Message, name: str) -> str:
    return f"${getattr(message, name):,.4g}" if message.HasField(name) else "-"


def _gpu(q: optimize_pb2.RentQuote) -> str:
    """The offer's GPU with the memory its run was timed on (p4d's A100s have 40 GB)."""
    return f"{q.gpu_model} {q.gpu_memory_gb:,.4g} GB" if q.gpu_memory_gb else q.gpu_model


def rent_table(resp: optimize_pb2.OptimizeResponse) -> Table:
    """The request's training run rented from each offer: time and cost at each rate."""
    table = Table(title="Rent vs buy: the same training run rented", title_justify="left")
    for name in ("offer", "GPU", "network", "GPUs", "hours", "on demand", "cost", "committed"):
        table.add_column(
            name, justify="right" if name not in ("offer", "GPU", "network") else "left"
        )
    table.add_column("cost", justify="right")
    table.add_column("priced")
    for q in resp.rent_quotes:
        table.add_row(
            safe_text(f"{q.provider} {q.instance}"),
            _gpu(q),
            f"{q.interconnect} {q.network_gbps_per_gpu:,.4g}G/GPU",
            f"{q.gpus:,}",
            hours(q.training_time_hours) if q.HasField("training_time_hours") else "-",
            _rate(q, "on_demand_usd_per_gpu_hour"),
            _opt_money(q, "on_demand_cost_usd"),
            _rate(q, "committed_usd_per_gpu_hour"),
            _opt_money(q, "committed_cost_usd"),
            q.price_date,
        )
    return table


def rent_list(resp: optimize_pb2.OptimizeResponse) -> Group:
    """The rent table as one wrapping line per offer, for a console too narrow for it."""
    lines: list[str] = ["Rent vs buy: the same training run rented"]
    for q in resp.rent_quotes:
        timed = q.HasField("training_time_hours")
        rates = [
            f"{label} {_rate(q, rate)}/GPU-h = {_opt_money(q, cost)}"
            for label, rate, cost in (
                ("on demand", "on_demand_usd_per_gpu_hour", "on_demand_cost_usd"),
                ("committed", "committed_usd_per_gpu_hour", "committed_cost_usd"),
            )
            if q.HasField(rate)
        ]
        lines.append(
            safe_text(f"  {q.provider} {q.instance}")
            + f" ({q.gpus:,} x {_gpu(q)}, {q.interconnect} {q.network_gbps_per_gpu:,.4g} "
            + f"Gb/s per GPU): {hours(q.training_time_hours) + ' h' if timed else 'not timed'}; "
            + "; ".join(rates)
            + f"; priced {q.price_date}"
        )
    return Group(*lines)


def rent_lines(resp: optimize_pb2.OptimizeResponse) -> list[str]:
    """Untimed offers, each design's break-even utilisation, and the assumptions."""
    lines = [f"  {q.provider} {q.instance}: {q.note}" for q in resp.rent_quotes if q.note]
    for d in resp.designs:
        parts = [
            f"{b.offer} {b.pricing.replace('_', '-')} (${b.usd_per_gpu_hour:,.4g}/GPU-h) "
            + (f"above {b.utilization:.1%} utilisation" if b.HasField("utilization") else "never")
            for b in d.break_evens
        ]
        if parts:
            lines.append(f"  #{d.rank} owning beats renting its GPU-hours from " + "; ".join(parts))
        else:
            lines.append(f"  #{d.rank}: no offer rents its GPU (see below)")
    if resp.rent_note:
        lines.append(resp.rent_note)
    return lines


def designs_frame(resp: optimize_pb2.OptimizeResponse) -> pd.DataFrame:
    import pandas as pd

    rows = [design_row(d, text=safe_text) for d in resp.designs]
    return pd.DataFrame(rows, columns=list(DESIGN_COLUMNS))


def bom_frame(design: optimize_pb2.Design) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "category": b.category,
                "sku": safe_text(b.sku),
                "vendor": safe_text(b.vendor),
                "tier": safe_text(b.tier),
                "catalog": safe_text(b.catalog),
                "length_m": b.length_m or None,
                "quantity": b.quantity,
                "unit_price_usd": b.unit_price_usd,
                "extended_price_usd": b.extended_price_usd,
                "power_kw": b.power_kw,
                "rack_units": b.rack_units,
                "source": safe_text(b.source),
            }
            for b in design.bom
        ]
    )


def write_frames(frames: Sequence[tuple[str, pd.DataFrame]], fmt: str, output: str | None) -> None:
    """CSV of the first frame (stdout or file), or an XLSX workbook with one sheet per frame."""
    if fmt == "csv":
        text = frames[0][1].to_csv(index=False)
        if output:
            Path(output).write_text(text)
        else:
            click.echo(text, nl=False)
        return
    if not output:
        raise InvalidInput(
            "xlsx output needs a file; expected --output FILE.xlsx", field="--output"
        )
    import pandas as pd

    with pd.ExcelWriter(output, engine="openpyxl") as writer:
        for name, frame in frames:
            frame.to_excel(writer, sheet_name=name[:31], index=False)


def emit_text(text: str, output: str | None) -> None:
    if output:
        Path(output).write_text(text + "\n")
    else:
        click.echo(text)


# issue 17 (portfolio)
def workload_times_table(resp: optimize_pb2.OptimizeResponse) -> Table:
    """Each workload's predicted time on each ranked design, beside what the request asks."""
    table = Table(title="workloads on each design (portfolio)", caption=resp.portfolio_measure)
    for name in ("rank", "workload", "time (h)", "target (h)", "time/target", "runs/yr", "h/yr"):
        table.add_column(name, justify="left" if name == "workload" else "right")
    for d in resp.designs:
        for w in d.workload_times:
            table.add_row(
                str(d.rank),
                w.workload,
                f"{w.training_time_hours:,.1f}",
                f"{w.target_training_hours:,.1f}" if w.target_training_hours else "-",
                f"{w.time_over_target:.2f}" if w.target_training_hours else "-",
                f"{w.runs_per_year:g}" if w.runs_per_year else "-",
                f"{w.hours_per_year:,.0f}" if w.runs_per_year else "-",
            )
        if d.year_share:
            table.add_row(str(d.rank), "year's share", "", "", f"{d.year_share:.2f}", "", "")
    return table


def print_baseline(resp: optimize_pb2.OptimizeResponse, out: Console) -> None:
    """The rule-of-thumb comparison, under the sensitivity line (empty when not computed)."""
    if resp.baseline:
        out.print(f"Baseline: {resp.baseline}")
