"""One self-contained, interactive HTML page per answer, sweep or batch.

The page is built from the request and response messages only, so a run against a server
(``--server``) gives the same page as an embedded one. Plotly draws the charts; its script
and the data are inlined, so the file opens offline and can be forwarded as it is. A few
lines of glue script open a design's bill of materials when its point (or table row) is
clicked and sort the tables.

Plotly is imported inside ``render_html``: the CLI starts without it.
"""

from __future__ import annotations

import html
import itertools
import json
import math
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from google.protobuf import json_format

from optimizer.errors import InvalidInput
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.reporting.frontier import point_of
from optimizer.reporting.model import (
    DesignPoint,
    Scenario,
    design_points,
    frontier,
    point_key,
    top_designs,
)
from optimizer.reporting.ticks import log_ticks, tick_label, wants_log

HTML_SUFFIXES = (".html", ".htm")
# Bars in the cost breakdown.
MAX_BREAKDOWN_DESIGNS = 8
# Page-size limits for big batches: designs whose bill of materials is inlined, rows of the
# designs table, requests listed in full. Every design is still a point on the chart.
MAX_BOM_DESIGNS = 1000
MAX_TABLE_ROWS = 1000
MAX_LISTED_REQUESTS = 50

FABRIC = {"infiniband": "InfiniBand", "roce": "RoCE", "ethernet": "TCP Ethernet"}
TOPOLOGY = {
    "single_switch": "single switch",
    "fat_tree": "fat-tree",
    "rail_optimized": "rail-optimized",
    "dragonfly": "dragonfly",
    "torus": "torus",
    "single_node": "one node",
}
FABRIC_SYMBOLS = {"infiniband": "circle", "roce": "square", "ethernet": "diamond"}
NO_FABRIC = "none"
"""The fabric shown for a design without a scale-out fabric (one node): it buys none,
whichever fabric the search reached it through."""
NO_FABRIC_SYMBOL = "star"
# Catalog colours (Plotly's default qualitative palette).
CATALOG_COLOURS = (
    "#636EFA",
    "#EF553B",
    "#00CC96",
    "#AB63FA",
    "#FFA15A",
    "#19D3F3",
    "#FF6692",
    "#B6E880",
    "#FF97FF",
    "#FECB52",
)
FRONT_DASHES = ("solid", "dash", "dashdot", "dot")
# BomLine category order in a bill of materials.
BOM_ORDER = ("server", "nic", "switch", "cable", "transceiver", "fiber")
# CostBreakdown field -> bar label; the network parts get their own axis.
NETWORK_PARTS = (
    ("switches_usd", "switches"),
    ("nics_usd", "NICs"),
    ("cables_usd", "cables"),
    ("optics_usd", "optics"),
)


def tool_version() -> str:
    """The installed package's version (the source tree's when not installed)."""
    try:
        return metadata.version("cluster-procurement-optimizer")
    except metadata.PackageNotFoundError:
        from optimizer import __version__

        return __version__


def write_html(
    path: str | None,
    scenarios: Sequence[Scenario],
    *,
    title: str,
    generated_at: datetime | None = None,
) -> Path:
    """Write the report page of ``scenarios`` to ``path`` (.html); the path written."""
    if not path:
        raise InvalidInput(
            "html output needs a file; expected --output FILE.html", field="--output"
        )
    out = Path(path)
    if out.suffix.lower() not in HTML_SUFFIXES:
        raise InvalidInput(f"{path!r}: expected a file name ending in .html", field="--output")
    out.write_text(render_html(scenarios, title=title, generated_at=generated_at), "utf-8")
    return out


def render_html(
    scenarios: Sequence[Scenario], *, title: str, generated_at: datetime | None = None
) -> str:
    """The whole page as one string: charts, tables, data and scripts inline."""
    import plotly
    import plotly.io as pio
    from plotly.offline import get_plotlyjs

    when = (generated_at or datetime.now(UTC)).astimezone(UTC)
    points = design_points(scenarios)
    bom_ids = _bom_ids(points)
    config = {"displaylogo": False, "responsive": True}
    frontier_div = pio.to_html(
        frontier_figure(scenarios, points, bom_ids),
        full_html=False,
        include_plotlyjs=False,
        div_id="frontier",
        config=config,
        post_script="procureReport.attachChart(document.getElementById('{plot_id}'));",
    )
    top = top_designs(scenarios, MAX_BREAKDOWN_DESIGNS)
    breakdown_div = (
        pio.to_html(
            breakdown_figure(top),
            full_html=False,
            include_plotlyjs=False,
            div_id="breakdown",
            config=config,
        )
        if top
        else "<p>No design to break down.</p>"
    )
    data = {
        "boms": {str(bom_ids[i]): _bom_document(p) for i, p in enumerate(points) if i in bom_ids},
        "points": len(points),
    }
    statuses: dict[str, int] = {}
    for s in scenarios:
        status = "ERROR" if s.error else s.response.status  # type: ignore[union-attr]
        statuses[status] = statuses.get(status, 0) + 1
    summary = (
        f"{len(scenarios):,} scenario{'s' if len(scenarios) != 1 else ''} "
        f"({', '.join(f'{k} {v:,}' for k, v in sorted(statuses.items()))}), "
        f"{len(points):,} designs evaluated, {len(bom_ids):,} with a bill of materials."
    )
    e = html.escape
    return _PAGE.format(
        title=e(title),
        summary=e(summary),
        generated=e(when.strftime("%Y-%m-%d %H:%M:%S UTC")),
        tool_version=e(tool_version()),
        plotly_version=e(plotly.__version__),
        style=_STYLE,
        plotlyjs=get_plotlyjs(),
        glue=_GLUE,
        data=_script_json(data),
        frontier=frontier_div,
        designs_table=_designs_table(scenarios, points, bom_ids),
        breakdown=breakdown_div,
        scenarios_table=_scenarios_table(scenarios),
        requests=_requests_section(scenarios),
    )


def _bom_ids(points: Sequence[DesignPoint]) -> dict[int, int]:
    """Point index -> id of its inlined bill of materials (the first MAX_BOM_DESIGNS)."""
    with_bom = [i for i, p in enumerate(points) if p.design is not None]
    return {i: n for n, i in enumerate(with_bom[:MAX_BOM_DESIGNS])}


def _money(usd: float) -> str:
    return f"${usd:,.0f}"


def _hours(value: float) -> str:
    return f"{value:,.1f}" if value < 10 else f"{value:,.0f}"


def _fabric_key(fabric: str, topology: str) -> str:
    """The fabric a design buys: its wire name, or ``NO_FABRIC`` for a topology without a
    scale-out fabric (a one-node design cables no NIC and buys no switch)."""
    if topology in TOPOLOGIES and not TOPOLOGIES.get(topology).scale_out:
        return NO_FABRIC
    return fabric


def _fabric(fabric: str, topology: str) -> str:
    """The fabric's label for a design (``NO_FABRIC`` for a one-node design)."""
    key = _fabric_key(fabric, topology)
    return FABRIC.get(key, key)


def _topology(topology: str, ratio: float) -> str:
    name = TOPOLOGY.get(topology, topology)
    return f"{name} {ratio:g}:1" if topology in ("fat_tree", "rail_optimized") else name


def _hover(p: DesignPoint, scenario: str, has_bom: bool) -> str:
    e = html.escape
    time = f"{_hours(p.training_time_hours)} h"
    low, high = p.training_time_hours_low, p.training_time_hours_high
    if low and high:
        time += f" ({_hours(low)}-{_hours(high)} h)"
    lines = [
        f"<b>{e(p.catalog)}</b>",
        f"GPUs: {p.gpus:,}",
        f"server: {e(p.server_sku)}",
        f"fabric: {e(_fabric(p.fabric, p.topology))}",
        f"topology: {e(_topology(p.topology, p.oversubscription))}",
        f"capex: {_money(p.capex_usd)}",
    ]
    if p.tco_usd is not None:
        lines.append(f"TCO: {_money(p.tco_usd)}")
    lines.append(f"time: {time}")
    if p.design is not None:
        lines.append(f"rank {p.design.rank} of scenario {e(scenario)}")
    lines.append(
        "click for its bill of materials"
        if has_bom
        else "frontier point only: no bill of materials in the response"
        if p.design is None
        else "bill of materials left out (page size limit)"
    )
    return "<br>".join(lines)


def _axis(values: list[float], title: str, prefix: str = "") -> dict[str, Any]:
    axis: dict[str, Any] = {"title": {"text": title}, "gridcolor": "#e5e5e5", "zeroline": False}
    if wants_log(values):
        positive = [v for v in values if v > 0]
        ticks = log_ticks(min(positive), max(positive))
        axis.update(
            type="log",
            # From the first labelled tick to the last, so both ends of the axis read.
            range=[math.log10(ticks[0]), math.log10(ticks[-1])],
            tickmode="array",
            tickvals=ticks,
            ticktext=[tick_label(t, prefix) for t in ticks],
        )
    elif prefix:
        axis.update(tickprefix=prefix, tickformat="~s")
    else:
        axis.update(tickformat=",~r")
    return axis


def frontier_figure(
    scenarios: Sequence[Scenario], points: Sequence[DesignPoint], bom_ids: dict[int, int]
) -> Any:
    """Every design a point (colour: catalog, shape: fabric, open: no BOM), each workload's
    frontier as a staircase, and the budget and target lines; a ``plotly`` Figure."""
    import plotly.graph_objects as go

    fig = go.Figure()
    catalogs = list(dict.fromkeys(p.catalog for p in points))
    colours = dict(zip(catalogs, itertools.cycle(CATALOG_COLOURS), strict=False))
    for catalog in catalogs:
        fabrics = {_fabric_key(p.fabric, p.topology) for p in points if p.catalog == catalog}
        for fabric in sorted(fabrics):
            group = [
                (i, p)
                for i, p in enumerate(points)
                if p.catalog == catalog and _fabric_key(p.fabric, p.topology) == fabric
            ]
            symbol = (
                NO_FABRIC_SYMBOL
                if fabric == NO_FABRIC
                else FABRIC_SYMBOLS.get(fabric, "triangle-up")
            )
            label = "no fabric" if fabric == NO_FABRIC else FABRIC.get(fabric, fabric)
            fig.add_trace(
                go.Scatter(
                    x=[p.training_time_hours for _, p in group],
                    y=[p.capex_usd for _, p in group],
                    mode="markers",
                    name=f"{catalog} · {label}",
                    legendgroup=catalog,
                    marker={
                        "color": colours[catalog],
                        "size": 11,
                        "symbol": [
                            symbol if p.design is not None else f"{symbol}-open" for _, p in group
                        ],
                        "line": {"width": 1.5, "color": colours[catalog]},
                        "opacity": 0.85,
                    },
                    customdata=[[bom_ids.get(i, -1)] for i, _ in group],
                    hovertext=[
                        _hover(p, scenarios[p.scenario].label or str(p.scenario + 1), i in bom_ids)
                        for i, p in group
                    ],
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
    hours = [p.training_time_hours for p in points]
    capex = [p.capex_usd for p in points]
    requests = [s.request.constraints for s in scenarios]
    budgets = sorted({c.budget_usd for c in requests if c.HasField("budget_usd")})
    targets = sorted(
        {c.target_training_hours for c in requests if c.HasField("target_training_hours")}
    )
    all_hours, all_capex = hours + targets, capex + budgets
    workloads = list(dict.fromkeys(p.workload for p in points))
    for workload, dash in zip(workloads, itertools.cycle(FRONT_DASHES), strict=False):
        steps = sorted(
            frontier(p for p in points if p.workload == workload),
            key=lambda p: p.training_time_hours,
        )
        fig.add_trace(
            go.Scatter(
                x=[p.training_time_hours for p in steps],
                y=[p.capex_usd for p in steps],
                mode="lines",
                line={"shape": "hv", "color": "#222", "width": 1.2, "dash": dash},
                name=f"frontier: {workload}",
                hoverinfo="skip",
            )
        )
    if all_hours and all_capex:
        x_span = [min(all_hours) * 0.9, max(all_hours) * 1.1]
        y_span = [min(all_capex) * 0.95, max(all_capex) * 1.05]
        for n, budget in enumerate(budgets):
            fig.add_trace(_rule(x_span, [budget, budget], "budget", "#d62728", "dash", n == 0))
        for n, target in enumerate(targets):
            fig.add_trace(_rule([target, target], y_span, "target time", "#9467bd", "dot", n == 0))
    fig.update_layout(
        template="plotly_white",
        title={"text": "Cost vs training time: every evaluated design"},
        xaxis=_axis(all_hours, "training time (hours)"),
        yaxis=_axis(all_capex, "capex (USD)", "$"),
        hovermode="closest",
        # Below the chart: catalog names with vendors are long and would squeeze it.
        legend={"font": {"size": 11}, "orientation": "h", "yanchor": "top", "y": -0.18},
        margin={"l": 70, "r": 20, "t": 50, "b": 40},
        height=620,
    )
    return fig


def _rule(x: list[float], y: list[float], name: str, colour: str, dash: str, legend: bool) -> Any:
    import plotly.graph_objects as go

    return go.Scatter(
        x=x,
        y=y,
        mode="lines",
        line={"color": colour, "dash": dash, "width": 1},
        name=name,
        legendgroup=name,
        showlegend=legend,
        hoverinfo="skip",
    )


def breakdown_figure(top: Sequence[DesignPoint]) -> Any:
    """Servers and network per design above; the network alone, split into switches, NICs,
    cables and optics, on its own axis below (beside servers it is a sliver)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    designs = [p.design for p in top if p.design is not None]
    labels = [
        f"{n}. {d.gpus:,} GPUs {_fabric(d.fabric, d.topology)}<br>"
        f"{_topology(d.topology, d.oversubscription)}"
        for n, d in enumerate(designs, start=1)
    ]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.12,
        subplot_titles=(
            "capex: servers and network",
            "the network alone: switches, NICs, cables, optics",
        ),
    )
    network = [d.capex_usd - d.cost.servers_usd for d in designs]
    fig.add_trace(
        go.Bar(x=labels, y=[d.cost.servers_usd for d in designs], name="servers"), row=1, col=1
    )
    fig.add_trace(
        go.Bar(
            x=labels,
            y=network,
            name="network",
            text=[f"{d.cost.network_share:.1%}" for d in designs],
            textposition="outside",
        ),
        row=1,
        col=1,
    )
    for field, name in NETWORK_PARTS:
        fig.add_trace(
            go.Bar(x=labels, y=[getattr(d.cost, field) for d in designs], name=name), row=2, col=1
        )
    fig.update_layout(
        template="plotly_white",
        barmode="stack",
        height=620,
        margin={"l": 70, "r": 20, "t": 60, "b": 90},
        title={"text": "Cost breakdown of the top designs"},
    )
    fig.update_yaxes(tickprefix="$", tickformat="~s")
    return fig


def _bom_document(p: DesignPoint) -> dict[str, Any]:
    d = p.design
    assert d is not None
    lines = sorted(
        d.bom,
        key=lambda b: (
            BOM_ORDER.index(b.category) if b.category in BOM_ORDER else len(BOM_ORDER),
            b.tier,
            b.sku,
        ),
    )
    return {
        "title": f"{d.gpus:,} x GPU on {d.nodes:,} x {d.server_sku}, "
        f"{_fabric(d.fabric, d.topology)} {_topology(d.topology, d.oversubscription)}",
        "catalog": p.catalog,
        "capex_usd": d.capex_usd,
        "racks": d.racks,
        "lines": [
            {
                "category": b.category,
                "sku": b.sku,
                "vendor": b.vendor,
                "where": b.tier + (f" ({b.length_m:g} m)" if b.length_m else ""),
                "quantity": b.quantity,
                "unit_price_usd": b.unit_price_usd,
                "extended_price_usd": b.extended_price_usd,
            }
            for b in lines
        ],
    }


def _script_json(document: object) -> str:
    """JSON safe inside a <script> element: no '<' can close it."""
    return json.dumps(document, separators=(",", ":")).replace("<", "\\u003c")


def _cell(text: str, sort: object = None, cls: str = "") -> str:
    key = text if sort is None else sort
    attrs = f' data-sort="{html.escape(str(key))}"' + (f' class="{cls}"' if cls else "")
    return f"<td{attrs}>{html.escape(text)}</td>"


def _head(*names: str) -> str:
    return "<thead><tr>" + "".join(f"<th>{html.escape(n)}</th>" for n in names) + "</tr></thead>"


def _designs_table(
    scenarios: Sequence[Scenario], points: Sequence[DesignPoint], bom_ids: dict[int, int]
) -> str:
    index = {point_key(p.catalog, point_of(p.design)): i for i, p in enumerate(points) if p.design}
    rows: list[str] = []
    total = sum(len(s.response.designs) for s in scenarios if s.response is not None)
    for n, s in enumerate(scenarios, start=1):
        if s.response is None:
            continue
        for d in s.response.designs:
            if len(rows) >= MAX_TABLE_ROWS:
                break
            bom = bom_ids.get(index[point_key(s.catalog, point_of(d))], -1)
            low, high = d.training_time_hours_low, d.training_time_hours_high
            cells = [
                _cell(s.label or str(n), n),
                _cell(s.catalog),
                _cell(str(d.rank), d.rank),
                _cell(f"{d.gpus:,}", d.gpus),
                _cell(d.server_sku),
                _cell(_fabric(d.fabric, d.topology)),
                _cell(_topology(d.topology, d.oversubscription)),
                _cell(_money(d.capex_usd), d.capex_usd),
                _cell(f"{d.cost.network_share:.1%}", d.cost.network_share),
                _cell(_hours(d.training_time_hours), d.training_time_hours),
                _cell(f"{_hours(low)}-{_hours(high)}" if high else "", high),
                _cell(f"{d.power_kw:,.0f}", d.power_kw),
                _cell(", ".join(d.binding) or "nothing at its limit"),
                _cell(d.explanation, cls="why"),
                _cell(s.response.sensitivity, cls="why"),
            ]
            rows.append(f'<tr data-bom="{bom}">' + "".join(cells) + "</tr>")
    if not rows:
        return "<p>No scenario has a design.</p>"
    note = (
        f"<p class='note'>The first {MAX_TABLE_ROWS:,} of {total:,} designs.</p>"
        if total > len(rows)
        else ""
    )
    head = _head(
        "scenario",
        "catalog",
        "rank",
        "GPUs",
        "server",
        "fabric",
        "topology",
        "capex",
        "network",
        "time (h)",
        "range (h)",
        "power (kW)",
        "what binds it",
        "why it ranks there",
        "price sensitivity",
    )
    return (
        f'{note}<table id="designs" class="sortable">{head}<tbody>'
        + "".join(rows)
        + "</tbody></table>"
    )


def _scenarios_table(scenarios: Sequence[Scenario]) -> str:
    rows = []
    for n, s in enumerate(scenarios, start=1):
        c, r = s.request.constraints, s.response
        status = "ERROR" if s.error else r.status if r is not None else ""
        rows.append(
            "<tr>"
            + "".join(
                [
                    _cell(s.label or str(n), n),
                    _cell(s.catalog),
                    _cell(r.catalog_id if r is not None else "", cls="id"),
                    _cell(s.request.workload.model or "custom"),
                    _cell(
                        f"{s.request.workload.training_tokens:.3g}"
                        if s.request.workload.training_tokens
                        else "preset",
                        s.request.workload.training_tokens,
                    ),
                    _cell((s.request.objective or "min_cost").replace("_", "-")),
                    _cell(
                        _money(c.budget_usd) if c.HasField("budget_usd") else "-",
                        c.budget_usd if c.HasField("budget_usd") else -1,
                    ),
                    _cell(
                        _hours(c.target_training_hours)
                        if c.HasField("target_training_hours")
                        else "-",
                        c.target_training_hours if c.HasField("target_training_hours") else -1,
                    ),
                    _cell(status),
                    _cell(r.backend if r is not None else ""),
                    _cell(
                        f"{r.solve_time_s:.2f}" if r is not None else "",
                        r and r.solve_time_s,
                        cls="seconds",
                    ),
                    _cell(
                        "; ".join([s.reason, *(r.warnings if r is not None else [])]).strip("; "),
                        cls="why",
                    ),
                ]
            )
            + "</tr>"
        )
    head = _head(
        "scenario",
        "catalog (as asked)",
        "catalog id (content hash)",
        "workload",
        "tokens",
        "objective",
        "budget",
        "target (h)",
        "status",
        "solver",
        "solve (s)",
        "no design because / warnings",
    )
    return (
        f'<table id="scenarios" class="sortable">{head}<tbody>' + "".join(rows) + "</tbody></table>"
    )


def _requests_section(scenarios: Sequence[Scenario]) -> str:
    shown = scenarios[:MAX_LISTED_REQUESTS]
    docs = [json_format.MessageToDict(s.request, preserving_proto_field_name=True) for s in shown]
    note = (
        f" (the first {len(shown):,} of {len(scenarios):,})" if len(scenarios) > len(shown) else ""
    )
    body = html.escape(json.dumps(docs[0] if len(docs) == 1 else docs, indent=2))
    return (
        f"<details><summary>OptimizeRequest{'s' if len(docs) != 1 else ''} as protobuf JSON"
        f"{note}</summary><pre>{body}</pre></details>"
    )


_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;
background:#fafafa}
header{padding:16px 24px;background:#1f2a44;color:#fff}
header h1{margin:0 0 4px;font-size:20px}
header p{margin:2px 0;color:#d6dcea}
main{padding:12px 24px}
section{background:#fff;border:1px solid #e3e3e3;border-radius:6px;padding:12px;margin:12px 0}
h2{font-size:16px;margin:4px 0 10px}
.top{display:grid;grid-template-columns:minmax(0,3fr) minmax(320px,2fr);gap:12px}
.top section{margin:0}
#bom table,.sortable{border-collapse:collapse;width:100%;font-size:12.5px}
th,td{border-bottom:1px solid #eee;padding:3px 6px;text-align:left;vertical-align:top}
td[data-sort]:not(.why):not(.id){white-space:nowrap}
.sortable th{cursor:pointer;background:#f3f4f7;position:sticky;top:0}
.sortable th:after{content:" \\2195";color:#999}
.sortable tbody tr{cursor:pointer}
.sortable tbody tr:hover{background:#f0f5ff}
td.why{font-size:11.5px;color:#444;min-width:260px}
.num{text-align:right}
td.id{font:11px monospace;word-break:break-all;min-width:140px}
.bom-total td{font-weight:600;border-top:2px solid #999}
.note{color:#666;font-size:12px}
pre{font-size:11.5px;overflow:auto;max-height:420px;background:#f6f6f6;padding:8px}
.scroll{overflow:auto;max-height:560px}
"""

# Glue only: the charts are Plotly's. Opens a design's bill of materials on a click on its
# point or table row, and sorts a table by the clicked column.
_GLUE = """
window.procureReport = (function () {
  var data = JSON.parse(document.getElementById("report-data").textContent);
  function usd(x) { return "$" + Math.round(x).toLocaleString("en-US"); }
  function cell(row, text, cls) {
    var td = document.createElement("td"); td.textContent = text;
    if (cls) { td.className = cls; } row.appendChild(td); return td;
  }
  function showBom(id) {
    var panel = document.getElementById("bom-body"); panel.textContent = "";
    var bom = data.boms[String(id)];
    var head = document.createElement("p");
    if (!bom) {
      head.textContent = "This design was reported on the frontier only; its response " +
        "carries no bill of materials. Re-run with its constraints to get one.";
      panel.appendChild(head); return;
    }
    head.textContent = bom.title + " (" + bom.catalog + "), " + bom.racks +
      (bom.racks === 1 ? " rack" : " racks");
    panel.appendChild(head);
    var table = document.createElement("table"); table.id = "bom-table";
    var hr = document.createElement("tr");
    ["category", "sku", "vendor", "where", "qty", "unit", "extended"].forEach(function (h) {
      var th = document.createElement("th"); th.textContent = h; hr.appendChild(th); });
    table.appendChild(hr);
    bom.lines.forEach(function (l) {
      var tr = document.createElement("tr"); tr.className = "bom-line";
      tr.dataset.extendedUsd = l.extended_price_usd;
      cell(tr, l.category); cell(tr, l.sku); cell(tr, l.vendor); cell(tr, l.where);
      cell(tr, l.quantity.toLocaleString("en-US"), "num");
      cell(tr, usd(l.unit_price_usd), "num"); cell(tr, usd(l.extended_price_usd), "num");
      table.appendChild(tr);
    });
    var total = document.createElement("tr"); total.className = "bom-total";
    total.dataset.capexUsd = bom.capex_usd;
    cell(total, "total"); cell(total, ""); cell(total, ""); cell(total, "");
    cell(total, ""); cell(total, ""); cell(total, usd(bom.capex_usd), "num");
    table.appendChild(total); panel.appendChild(table);
  }
  function attachChart(div) {
    div.on("plotly_click", function (ev) {
      var p = ev.points && ev.points[0];
      if (p && p.customdata) { showBom(p.customdata[0]); }
    });
  }
  function sortBy(table, col, th) {
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    var asc = th.dataset.dir !== "asc"; th.dataset.dir = asc ? "asc" : "desc";
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.sort, y = b.cells[col].dataset.sort;
      var nx = parseFloat(x), ny = parseFloat(y), c;
      c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("table.sortable").forEach(function (table) {
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
        th.addEventListener("click", function () { sortBy(table, col, th); });
      });
    });
    document.querySelectorAll("#designs tbody tr").forEach(function (tr) {
      tr.addEventListener("click", function () { showBom(tr.dataset.bom); });
    });
  });
  return {showBom: showBom, attachChart: attachChart, data: data};
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="procure {tool_version}">
<title>{title}</title>
<style>{style}</style>
<script type="text/javascript">{plotlyjs}</script>
<script type="application/json" id="report-data">{data}</script>
<script type="text/javascript">{glue}</script>
</head>
<body>
<header>
<h1>{title}</h1>
<p>{summary}</p>
<p>Generated {generated} by procure {tool_version} (Plotly {plotly_version}).</p>
</header>
<main>
<div class="top">
<section><h2>Cost vs training time</h2>
<p class="note">Colour: catalog; shape: fabric; open markers: frontier points reported
without a bill of materials. Lines: each workload's cost-time frontier, the budgets and
the target times. Hover a point for the design, click it for its bill of materials.</p>
{frontier}</section>
<section id="bom"><h2>Bill of materials</h2>
<div id="bom-body"><p>Click a point or a row of the designs table.</p></div></section>
</div>
<section><h2>Ranked designs</h2>
<p class="note">Click a column to sort, a row for its bill of materials.</p>
<div class="scroll">{designs_table}</div></section>
<section><h2>Cost breakdown</h2>{breakdown}</section>
<section><h2>What was asked</h2>
<div class="scroll">{scenarios_table}</div>
{requests}</section>
</main>
</body>
</html>
"""
