"""Physical layout: racks, rows, the length each link group travels and the parts that reach it.

Model (every default below can be set per request through ``Layout``)
----------------------------------------------------------------------
- Servers fill racks up to the rack's power cap and rack units; switches go to network racks
  packed the same way, tier by tier. Rows hold ``racks_per_row`` racks.
- A link group's length is that of its longest link, so one part choice serves the whole
  group: a switch sits at the centre of the racks it serves (its *span* of R racks), and
  a link runs up from the port to the overhead tray, along the row, across rows and down:
  ``2*vertical_run + rack_width*ceil(min(R, racks_per_row)/2) + row_pitch*floor(rows(R)/2)``;
  a span of one rack (top-of-rack or adjacent network rack) is ``in_rack_link_m``.
- Spans (``LinkGroupSizing.span_kind``: leaf, pod, cluster, neighbours; a family names the
  span of a new link group): node-leaf: the racks of one leaf's nodes; leaf-spine: the whole
  cluster (two tiers) or one pod (three tiers); spine-core and global: the whole cluster;
  intra-group: one dragonfly group; torus (folded, Dally & Towles 2004 section 5.2): at most
  three rack positions along a row, plus two row pitches when the cluster spans rows.
- Reach (hardware.md section 4.1, NVIDIA LinkX): a cable assembly (DAC, AEC/ACC, AOC) serves a
  link when its reach >= the length; optics serve it with two transceivers plus
  ``ceil(length)`` metres of fiber when both reach it. A transceiver is paired with the fiber
  class whose reach is the nearest at or above its own (multimode for SR, single-mode for DR/FR),
  since the catalog has no medium column.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from optimizer.catalog.model import Catalog, Link
from optimizer.errors import InvalidInput
from optimizer.topology.compat import link_fits
from optimizer.topology.network import NetworkSizing

CABLE_KINDS = ("dac", "aec", "aoc")


@dataclass(frozen=True)
class Layout:
    """Data-hall parameters; defaults are modelling assumptions, each sourced or reasoned."""

    # 4 DGX H100 per rack (hardware.md section 5: 40.8 kW) plus their 8 NICs of ~25 W each.
    rack_power_kw: float = 42.0
    # A standard 42U rack, all of it usable for equipment.
    rack_units: int = 42
    # Racks per row (a SuperPOD SU is 8 compute racks plus network racks).
    racks_per_row: int = 10
    # Standard 600 mm wide rack.
    rack_width_m: float = 0.6
    # Row-to-row distance: 1.2 m deep racks plus a 1.2 m aisle and cable slack.
    row_pitch_m: float = 3.0
    # From a port to the overhead tray (or down from it) at one end, with service slack.
    vertical_run_m: float = 1.5
    # A link inside one rack or to the adjacent network rack (passive DAC reach at 400G: 3 m).
    in_rack_link_m: float = 3.0

    def __post_init__(self) -> None:
        for name in (
            "rack_power_kw",
            "rack_width_m",
            "row_pitch_m",
            "vertical_run_m",
            "in_rack_link_m",
        ):
            if not getattr(self, name) > 0:
                msg = f"must be > 0, got {getattr(self, name)}"
                raise InvalidInput(msg, field=f"layout.{name}")
        for name in ("rack_units", "racks_per_row"):
            if getattr(self, name) < 1:
                msg = f"must be a positive integer, got {getattr(self, name)}"
                raise InvalidInput(msg, field=f"layout.{name}")

    def per_rack(self, power_kw: float, rack_units: int, what: str) -> int:
        """How many boxes of this power and height one rack holds; refuses a box that fits none."""
        by_power = math.floor(self.rack_power_kw / power_kw + 1e-9) if power_kw > 0 else math.inf
        by_units = self.rack_units // max(1, rack_units)
        count = min(by_power, by_units)
        if count < 1:
            msg = (
                f"one {what} ({power_kw:g} kW, {rack_units} U) does not fit a rack of "
                f"{self.rack_power_kw:g} kW and {self.rack_units} U"
            )
            binding = "rack_power_kw" if by_power < 1 else "rack_units"
            raise InvalidInput(msg, field=f"layout.{binding}")
        return int(count)

    def span_length_m(self, racks: int) -> float:
        """Longest link from a switch at the centre of ``racks`` racks to one of them."""
        if racks <= 1:
            return self.in_rack_link_m
        rows = math.ceil(racks / self.racks_per_row)
        along_row = self.rack_width_m * math.ceil(min(racks, self.racks_per_row) / 2)
        return 2 * self.vertical_run_m + along_row + self.row_pitch_m * (rows // 2)


@dataclass(frozen=True)
class Placement:
    """Racks, rows and each link group's length for one design."""

    nodes_per_rack: int
    server_racks: int
    network_racks: int
    rows: int
    group_lengths_m: tuple[tuple[str, float], ...]

    @property
    def racks(self) -> int:
        return self.server_racks + self.network_racks

    def length_m(self, group: str) -> float:
        return dict(self.group_lengths_m)[group]


def place(
    layout: Layout,
    sizing: NetworkSizing,
    *,
    nodes: int,
    nodes_per_rack: int,
    nodes_per_leaf: int,
    network_racks: int,
) -> Placement:
    """Racks and link lengths of ``sizing`` for ``nodes`` servers, ``nodes_per_rack`` to a rack.

    ``nodes_per_leaf`` is how many nodes one first-tier switch serves (the node-leaf span).
    """
    server_racks = math.ceil(nodes / nodes_per_rack)
    racks = server_racks + network_racks
    rows = math.ceil(racks / layout.racks_per_row)
    leaf_span = min(server_racks, math.ceil(nodes_per_leaf / nodes_per_rack))
    spans = {"leaf": leaf_span, "pod": math.ceil(racks / sizing.pods), "cluster": racks}
    lengths: list[tuple[str, float]] = []
    for group in sizing.link_groups:
        if group.span_kind == "neighbours":
            row_hops = 2 * layout.row_pitch_m if rows > 1 else 0.0
            length = layout.span_length_m(min(server_racks, 3)) + row_hops
        else:
            length = layout.span_length_m(spans[group.span_kind])
        lengths.append((group.name, round(length, 3)))
    return Placement(nodes_per_rack, server_racks, network_racks, rows, tuple(lengths))


@dataclass(frozen=True)
class LinkOption:
    """One way to build a link of a given length: a cable assembly, or two optics plus fiber.

    ``parts`` lists (SKU, quantity per link); ``unit_cost_cents`` is the per-link cost at list
    price and ``power_w`` the per-link power.
    """

    kind: str  # "cable" | "optics"
    parts: tuple[tuple[str, int], ...]
    reach_m: float
    unit_cost_cents: int
    power_w: float

    @property
    def label(self) -> str:
        return " + ".join(f"{qty} x {sku}" for sku, qty in self.parts)


def link_options(
    group_length_m: float, speed_gbps: int, fabric: str, catalog: Catalog
) -> list[LinkOption]:
    """Every catalog way to build a link of ``group_length_m`` at ``speed_gbps``, cheapest first."""
    fitting = [lk for lk in catalog.links if link_fits(lk, speed_gbps, fabric)]
    options = [
        LinkOption("cable", ((lk.sku, 1),), lk.reach_m, lk.price_cents, lk.power_w)
        for lk in fitting
        if lk.kind in CABLE_KINDS and lk.reach_m >= group_length_m
    ]
    fibers = [lk for lk in fitting if lk.kind == "fiber"]
    fiber_m = fiber_metres(group_length_m)
    for tx in (lk for lk in fitting if lk.kind == "transceiver" and lk.reach_m >= group_length_m):
        fiber = matching_fiber(tx, fibers)
        if fiber is None or fiber.reach_m < group_length_m:
            continue
        options.append(
            LinkOption(
                "optics",
                ((tx.sku, 2), (fiber.sku, fiber_m)),
                min(tx.reach_m, fiber.reach_m),
                2 * tx.price_cents + fiber_m * fiber.price_cents,
                2 * tx.power_w,
            )
        )
    return sorted(options, key=lambda o: (o.unit_cost_cents, o.label))


def fiber_metres(length_m: float) -> int:
    """Fiber bought per link: the length rounded up to whole metres (at least one)."""
    return max(1, math.ceil(length_m - 1e-9))


def matching_fiber(transceiver: Link, fibers: list[Link]) -> Link | None:
    """The fiber class for ``transceiver``: the nearest reach at or above the optic's own."""
    candidates = [f for f in fibers if f.reach_m >= transceiver.reach_m]
    return min(candidates, key=lambda f: (f.reach_m, f.price_cents, f.sku), default=None)
