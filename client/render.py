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
from rich.console import Console
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


def designs_table(resp: optimize_pb2.OptimizeResponse, title: str) -> Table:
    table = Table(title=title)
    for name, justify in (
        ("rank", "right"),
        ("GPUs", "right"),
        ("server", "left"),
        ("fabric", "left"),
        ("topology", "left"),
        ("capex", "right"),
        ("net capex", "right"),
        ("net time", "right"),
        ("Gb/s/GPU", "right"),
        ("time (h)", "right"),
        ("range (h)", "right"),
        ("power (kW)", "right"),
        ("at limit", "left"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    # The binding constraints are words that may wrap (a policy name is 20 characters);
    # without a cap they alone push the wide table past 160 columns and every number
    # falls back to the narrow layout.
    table.columns[-1].max_width = AT_LIMIT_WIDTH
    for d in resp.designs:
        table.add_row(
            str(d.rank),
            f"{d.gpus:,}",
            d.server_sku,
            FABRIC.get(d.fabric, d.fabric),
            topology_label(d.topology, d.oversubscription),
            money(d.capex_usd),
            f"{d.cost.network_share:.1%}",
            f"{d.network_time_share:.1%}",
            gbps_per_gpu(d.scale_out_gbps_per_gpu),
            hours(d.training_time_hours),
            f"{hours(d.training_time_hours_low)}-{hours(d.training_time_hours_high)}",
            f"{d.power_kw:,.0f}",
            ", ".join(d.binding) or "-",
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


def print_optimize(resp: optimize_pb2.OptimizeResponse, out: Console) -> None:
    from client.narrow import Fit, narrow_bom_table, narrow_designs_table

    how = f"({resp.status}, {resp.backend}, {resp.solve_time_s:.1f} s)"
    if resp.designs:
        title = f"ranked designs {how}"
        out.print(Fit(designs_table(resp, title), narrow_designs_table(resp, title)))
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


def print_baseline(resp: optimize_pb2.OptimizeResponse, out: Console) -> None:
    """The rule-of-thumb comparison, under the sensitivity line (empty when not computed)."""
    if resp.baseline:
        out.print(f"Baseline: {resp.baseline}")
