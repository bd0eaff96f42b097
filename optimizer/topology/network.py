"""What a topology family's sizing returns: switches per tier, links per group, the profile.

Counts are exact integers for one fabric; the physical plan turns them into SKUs, lengths and
prices, and the estimator reads ``profile``. Kept apart from the dispatcher (``sizing``) so the
family modules can build these records without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from optimizer.errors import InvalidInput
from optimizer.topology.profile import TopologyProfile

TIER_NAMES = ("leaf", "spine", "core", "router")
LINK_GROUPS = ("node-leaf", "leaf-spine", "spine-core", "intra-group", "global", "torus")
# Where a group's links run, which sets their length (optimizer.topology.layout.place):
# within one leaf's racks, within a pod (a dragonfly group; the whole cluster when it has one
# pod), across the cluster, or between torus neighbours (folded layout).
SPANS = ("leaf", "pod", "cluster", "neighbours")
NIC_ENDS_PER_LINK = {"node-leaf": 1, "torus": 2}
"""NIC ports each link of a group ends on (the others join switches): the count that says
whether every NIC port bought is cabled."""
GROUP_SPANS = {
    "node-leaf": "leaf",
    "leaf-spine": "pod",
    "spine-core": "cluster",
    "intra-group": "pod",
    "global": "cluster",
    "torus": "neighbours",
}


# issue 16 (fabric800): the switch tier each end of a known group plugs into ("host": a NIC,
# "first": the family's first switch tier, a leaf or a dragonfly router).
GROUP_END_TIERS = {
    "node-leaf": ("host", "first"),
    "leaf-spine": ("leaf", "spine"),
    "spine-core": ("spine", "core"),
    "intra-group": ("router", "router"),
    "global": ("router", "router"),
    "torus": ("host", "host"),
}


@dataclass(frozen=True)
class TierSizing:
    """One switch tier. Port counts are totals over the tier's switches.

    ``ports_per_switch`` is the usable radix at the endpoint speed (after breakout);
    ``busiest_switch_ports_used`` is the most ports any one switch of the tier uses, so
    ``busiest_switch_ports_used <= ports_per_switch`` is the no-overflow rule.
    """

    name: str
    switches: int
    ports_per_switch: int
    down_ports_used: int
    up_ports_used: int
    busiest_switch_ports_used: int

    @property
    def ports_free(self) -> int:
        return self.switches * self.ports_per_switch - self.down_ports_used - self.up_ports_used


@dataclass(frozen=True)
class LinkGroupSizing:
    """Links of one kind (same ends, hence same length class), e.g. all leaf-spine links.

    ``span`` (one of ``SPANS``) says where they run; a family naming a new group sets it, the
    known groups take theirs from ``GROUP_SPANS``."""

    name: str
    count: int
    span: str = ""

    @property
    def span_kind(self) -> str:
        span = self.span or GROUP_SPANS.get(self.name, "")
        if span not in SPANS:
            msg = f"link group {self.name!r} needs a span, one of {', '.join(SPANS)}"
            raise ValueError(msg)
        return span


@dataclass(frozen=True)
class NetworkSizing:
    """Exact switch and link counts of one fabric plus the profile the estimator reads."""

    family: str
    endpoints: int
    tiers: tuple[TierSizing, ...]
    link_groups: tuple[LinkGroupSizing, ...]
    bisection_links: int
    profile: TopologyProfile
    pods: int = 1  # pods of a three-tier fat-tree, groups of a dragonfly; 1 otherwise
    # issue 16 (fabric800): identical independent planes; tier and link counts are totals
    # over all planes, ``profile``, ``pods`` and ``busiest_switch_ports_used`` one plane's.
    planes: int = 1

    @property
    def switches(self) -> int:
        return sum(t.switches for t in self.tiers)

    def tier(self, name: str) -> TierSizing | None:
        return next((t for t in self.tiers if t.name == name), None)

    def links(self, group: str) -> int:
        return sum(g.count for g in self.link_groups if g.name == group)


@dataclass(frozen=True)
class SizingArgs:
    """What a family's sizing reads besides its own rules (``sizing.size_network``'s arguments).

    ``radix`` is usable ports per switch at the endpoint speed (unused by switchless
    families); ``rails`` the NIC ports per node; ``params`` the family parameters by name.
    """

    endpoints: int
    radix: int
    oversubscription: float = 1.0
    rails: int = 1
    oversubscribed_tier: str = "leaf"
    params: tuple[tuple[str, int], ...] = ()
    # Endpoint ports per switch cage (a broken-out port's lanes: 2 for an 800G port at
    # 400G): a tier's down and up ports are split in whole cages (fat_tree.split_ports).
    port_lanes: int = 1

    @property
    def params_map(self) -> dict[str, int]:
        return dict(self.params)

    @property
    def nodes(self) -> int:
        return self.endpoints // max(1, self.rails)


@dataclass(frozen=True)
class Requirement:
    """The verifier's minimum: switches per tier, links per group, and which link groups end on
    each tier (group, ends per link on that tier) for its port count."""

    switches: dict[str, int] = field(default_factory=dict)
    links: dict[str, int] = field(default_factory=dict)
    ports: dict[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)


def in_planes(one_plane: NetworkSizing, planes: int) -> NetworkSizing:
    """issue 16 (fabric800): ``planes`` copies of ``one_plane``, each NIC feeding one port
    into each (a multi-plane fabric). Switches, port totals, links and bisection add up over
    the planes; the profile stays one plane's, whose size sets the hops (every NIC reaches
    every other through each plane; the estimator adds the planes' bandwidth itself)."""
    require_positive(planes, "nics.planes")
    if planes == 1:
        return one_plane
    tiers = tuple(
        replace(
            t,
            switches=t.switches * planes,
            down_ports_used=t.down_ports_used * planes,
            up_ports_used=t.up_ports_used * planes,
        )
        for t in one_plane.tiers
    )
    groups = tuple(replace(g, count=g.count * planes) for g in one_plane.link_groups)
    return replace(
        one_plane,
        tiers=tiers,
        link_groups=groups,
        bisection_links=one_plane.bisection_links * planes,
        planes=planes,
    )


def tier_ends(
    sizing: NetworkSizing, group: str, switch_ends: dict[str, str], host: str = "host"
) -> tuple[str, str] | None:
    """issue 16 (fabric800): the two ends of ``group``'s links as ``fits_end`` reads them,
    each switch end as its tier's SKU offers it (``switch_ends``: tier -> ``switch`` or
    ``switch:C`` with its cage bandwidth); None for a group of unknown ends."""
    tiers = GROUP_END_TIERS.get(group)
    if tiers is None:
        return None
    first = sizing.tiers[0].name if sizing.tiers else ""

    def end(tier: str) -> str:
        if tier == "host":
            return host  # the NIC's end: ``host`` or ``host:F``, its cage's form factor
        return switch_ends.get(first if tier == "first" else tier, "switch")

    return end(tiers[0]), end(tiers[1])


def bisection_ratio(bisection_links: int, endpoints: int) -> float:
    """Bisection links over the non-blocking bisection ``floor(E/2)`` (1.0 when E < 2)."""
    if endpoints < 2:
        return 1.0
    return min(1.0, bisection_links / (endpoints // 2))


def require_positive(value: int, field: str) -> None:
    """Refuse a non-positive count with the field named."""
    if value < 1:
        msg = f"must be a positive integer, got {value}"
        raise InvalidInput(msg, field=field)


def refuse_oversubscription(family: str, oversubscription: float) -> None:
    """Families without an oversubscribed tier take only the non-blocking ratio 1."""
    if oversubscription != 1.0:
        msg = f"{family} has no oversubscribed tier; got {oversubscription}, expected 1"
        raise InvalidInput(msg, field="oversubscription")
