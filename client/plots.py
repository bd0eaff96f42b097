"""Pictures of a result: the cost vs training-time frontier and the cost split of top designs.

matplotlib runs on the non-interactive Agg backend, so plots work without a display. One figure,
two panels, a fixed size (FIGURE_SIZE_IN at DPI) so the image is the same on every machine.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes

from client.options import PLOT_FORMATS
from client.render import NO_FABRIC, TOPOLOGY, fabric_label, money, topology_label
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.reporting.frontier import Front, point_key, points_of
from optimizer.reporting.ticks import readable_log_axis

FIGURE_SIZE_IN = (13.0, 5.5)
DPI = 100  # -> 1300 x 550 pixels
MAX_BARS = 8


def fabric_colour(fabric: str, topology: str = "") -> str:
    """Its registry colour; grey for a name this client does not know and for a design that
    buys no scale-out fabric (one node), which must not look like the fabric it came through."""
    if topology and fabric_label(fabric, topology) == NO_FABRIC:
        return "tab:gray"
    return FABRICS.get(fabric).plot_colour if fabric in FABRICS else "tab:gray"


def topology_marker(topology: str) -> str:
    """Its registry marker; a cross for a name this client does not know."""
    return TOPOLOGIES.get(topology).plot_marker if topology in TOPOLOGIES else "x"


CATALOG_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
FRONT_STYLES = ("-", "--", "-.", ":")  # one per workload
# CostBreakdown field -> bar label, bottom of the stack first.
COST_PARTS = (
    ("servers_usd", "servers"),
    ("nics_usd", "NICs"),
    ("switches_usd", "switches"),
    ("cables_usd", "cables"),
    ("optics_usd", "optics"),
)


def write_plot(
    path: str,
    points: Sequence[optimize_pb2.ParetoPoint],
    fronts: Sequence[Front],
    designs: Sequence[optimize_pb2.Design],
    requests: Sequence[optimize_pb2.OptimizeRequest],
    title: str = "",
    point_catalogs: Mapping[bytes, str] | None = None,
) -> None:
    """Write to ``path`` (.png or .svg): ``points`` with each workload's frontier and the
    requests' budget and target lines, beside the cost breakdown of ``designs``. With
    ``point_catalogs`` (``catalogs_of``) naming more than one catalog, points are coloured
    by catalog rather than fabric."""
    suffix = Path(path).suffix.lower()
    if suffix not in PLOT_FORMATS:
        raise InvalidInput(f"got {suffix or 'no suffix'!r}, expected .png or .svg", field="--plot")
    c = [r.constraints for r in requests]
    budgets_usd = sorted({x.budget_usd for x in c if x.HasField("budget_usd")})
    targets_hours = sorted(
        {x.target_training_hours for x in c if x.HasField("target_training_hours")}
    )
    fig, (left, right) = plt.subplots(
        1, 2, figsize=FIGURE_SIZE_IN, dpi=DPI, gridspec_kw={"width_ratios": (3, 2)}
    )
    try:
        _frontier_panel(left, points, fronts, budgets_usd, targets_hours, point_catalogs or {})
        _breakdown_panel(right, designs[:MAX_BARS])
        if title:
            fig.suptitle(title)
        fig.tight_layout()
        fig.savefig(path, format=suffix[1:], dpi=DPI)
    finally:
        plt.close(fig)


def _frontier_panel(
    ax: Axes,
    points: Sequence[optimize_pb2.ParetoPoint],
    fronts: Sequence[Front],
    budgets_usd: Sequence[float],
    targets_hours: Sequence[float],
    point_catalogs: Mapping[bytes, str],
) -> None:
    catalog_of = {point_key(p): point_catalogs.get(point_key(p), "") for p in points}
    catalogs = sorted(set(catalog_of.values()))
    by_catalog = len(catalogs) > 1  # several catalogs: colour says which one, not the fabric
    colours = dict(zip(catalogs, itertools.cycle(CATALOG_COLOURS), strict=False))
    for catalog in catalogs:
        mine = [p for p in points if catalog_of[point_key(p)] == catalog]
        for fabric, topology in sorted({(p.fabric, p.topology) for p in mine}):
            group = [p for p in mine if p.fabric == fabric and p.topology == topology]
            what = f"{fabric_label(fabric, topology)}, {TOPOLOGY.get(topology, topology)}"
            ax.scatter(
                [p.training_time_hours for p in group],
                [p.capex_usd / 1e6 for p in group],
                c=colours[catalog] if by_catalog else fabric_colour(fabric, topology),
                marker=topology_marker(topology),
                alpha=0.75,
                s=36,
                label=f"{catalog}: {what}" if by_catalog else what,
            )
    for front, style in zip(fronts, itertools.cycle(FRONT_STYLES)):
        # Fastest first: each step runs right at a design's cost to the next slower, cheaper
        # one, so everything above and to the right of the line is dominated.
        steps = sorted(front.points, key=lambda p: p.training_time_hours)
        ax.step(
            [p.training_time_hours for p in steps],
            [p.capex_usd / 1e6 for p in steps],
            where="post",
            color="black",
            linestyle=style,
            linewidth=1,
            label=f"frontier: {front.workload}",
        )
    for i, budget in enumerate(budgets_usd):
        ax.axhline(
            budget / 1e6,
            color="tab:red",
            linestyle="--",
            linewidth=0.8,
            label="budget" if i == 0 else None,
        )
    for i, target in enumerate(targets_hours):
        ax.axvline(
            target,
            color="tab:purple",
            linestyle=":",
            linewidth=0.8,
            label="target time" if i == 0 else None,
        )
    hours = [p.training_time_hours for p in points] + list(targets_hours)
    if hours and min(hours) > 0 and max(hours) / min(hours) > 20:
        ax.set_xscale("log")
        readable_log_axis(ax.xaxis, hours)  # 200, 500, 1,000 rather than a bare 10^3
    ax.set_xlabel("training time (hours)")
    ax.set_ylabel("capex (million USD)")
    ax.set_title("cost vs training time")
    ax.grid(True, alpha=0.3)
    if points or budgets_usd or targets_hours:
        ax.legend(fontsize=7, loc="best")


def _breakdown_panel(ax: Axes, designs: Sequence[optimize_pb2.Design]) -> None:
    labels = [
        f"{d.gpus:,} GPUs\n{fabric_label(d.fabric, d.topology)}\n"
        f"{topology_label(d.topology, d.oversubscription)}"
        for d in designs
    ]
    bottoms = [0.0] * len(designs)
    for field, name in COST_PARTS:
        heights = [getattr(d.cost, field) / 1e6 for d in designs]
        ax.bar(range(len(designs)), heights, bottom=bottoms, label=name)
        bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    for x, d in enumerate(designs):
        ax.annotate(
            f"{money(d.capex_usd)}\n{d.cost.network_share:.0%} network",
            (x, bottoms[x]),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    ax.set_xticks(range(len(designs)), labels, fontsize=7)
    ax.set_ylabel("capex (million USD)")
    ax.set_title("cost breakdown of the top designs")
    if designs:
        ax.set_ylim(0, max(bottoms) * 1.2)  # room for the labels above the bars
    if designs:
        ax.legend(fontsize=8, loc="upper left")
    else:
        ax.text(0.5, 0.5, "no design", ha="center", va="center", transform=ax.transAxes)


def catalogs_of(
    answers: Iterable[tuple[optimize_pb2.OptimizeRequest, optimize_pb2.OptimizeResponse | None]],
) -> dict[bytes, str]:
    """Point key -> the catalog whose response first reported it (for ``point_catalogs``)."""
    out: dict[bytes, str] = {}
    for request, response in answers:
        for point in points_of([response] if response is not None else []):
            out.setdefault(point_key(point), request.catalog)
    return out
