"""Topology families: how a family is sized, verified, offered by the search and shown.

Adding a family is one ``TopologyFamily`` here plus its sizing module under
``optimizer/topology/`` (``size``, ``max_endpoints``, ``required``); the dispatcher
(``optimizer.topology.sizing``), the verifier, the search, the baselines, explanations,
tables, plots and CLI help all read this record. docs/architecture.md shows the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from optimizer.registry.base import Registry
from optimizer.topology import (
    dragonfly,
    fat_tree,
    rail_optimized,
    single_node,
    single_switch,
    torus,
)
from optimizer.topology.network import NetworkSizing, Requirement, SizingArgs
from optimizer.topology.profile import TopologyProfile

SINGLE_SWITCH_NAME = "single_switch"
BACK_TO_BACK_NODES = 2
"""Nodes a direct network may have without forwarding hardware: two, cabled back to back."""


def one_node_is_a_single_switch(
    nodes: int, nics_per_node: int, profile: TopologyProfile
) -> tuple[str, ...]:
    """Any family on one node builds the same hardware as a single switch."""
    return (SINGLE_SWITCH_NAME,) if nodes == 1 else ()


@dataclass(frozen=True)
class TopologyFamily:
    """One topology family.

    Attributes
    ----------
    name, label, proto_value:
        Wire name, display name in prose (explanations), ``procurement.v1.TopologyFamily``
        number.
    short_label:
        Display name in table cells and legends.
    size:
        Switches, links and profile for ``SizingArgs`` (raises InvalidInput naming the field).
    max_endpoints:
        Largest endpoint count ``size`` accepts with these arguments (``endpoints`` is
        ignored); None when any count works.
    required:
        The verifier's independent count of switches, links and ports (check.py).
    oversubscribable:
        Has an oversubscribed tier: the search offers ratios above 1:1 and tables show it.
    switchless:
        A direct network: no switch SKUs, candidates without a switch (radix 0).
    params:
        Names of the topology parameters it takes (others are refused).
    plot_marker:
        Matplotlib marker of its points.
    twins:
        The simpler families whose hardware a design of this family equals at this size
        (nodes, NICs per node, profile): the search drops it when one of them is allowed.
    needs_forwarding:
        A direct network whose nodes relay traffic between their NIC ports: buildable only
        where the NIC or the server forwards (catalog column ``forwarding``), or from exactly
        two nodes cabled back to back (every rail a direct cable to the peer).
    max_nodes:
        Most nodes the family builds (None: no such cap).
    scale_out:
        Has a scale-out fabric; False for the one-node design, which cables no NIC (a server's
        built-in NICs stay spare) and buys none.
    """

    name: str
    label: str
    short_label: str
    proto_value: int
    size: Callable[[SizingArgs], NetworkSizing]
    max_endpoints: Callable[[SizingArgs], int | None]
    required: Callable[[SizingArgs], Requirement]
    oversubscribable: bool = False
    switchless: bool = False
    params: tuple[str, ...] = ()
    plot_marker: str = "o"
    twins: Callable[[int, int, TopologyProfile], tuple[str, ...]] = one_node_is_a_single_switch
    needs_forwarding: bool = False
    max_nodes: int | None = None
    scale_out: bool = True

    def node_cap(self, forwarding: bool) -> int | None:
        """Most nodes it builds where the hardware does (or does not) forward between ports."""
        if self.needs_forwarding and not forwarding:
            return BACK_TO_BACK_NODES
        return self.max_nodes

    def display(self, oversubscription: float, *, short: bool = True) -> str:
        """Its label, with the down:up ratio where the family has an oversubscribed tier."""
        label = self.short_label if short else self.label
        return f"{label} {oversubscription:g}:1" if self.oversubscribable else label


TOPOLOGIES: Registry[TopologyFamily] = Registry("topology family", "topology")


def _no_twins(nodes: int, nics_per_node: int, profile: TopologyProfile) -> tuple[str, ...]:
    return ()


def _fat_tree_twins(nodes: int, nics_per_node: int, profile: TopologyProfile) -> tuple[str, ...]:
    """A fat-tree that fits one switch is the single switch."""
    return (SINGLE_SWITCH_NAME,) if nodes == 1 or profile.tiers == 1 else ()


def _dragonfly_twins(nodes: int, nics_per_node: int, profile: TopologyProfile) -> tuple[str, ...]:
    """A dragonfly of one router (every path crosses one switch) is the single switch."""
    return (SINGLE_SWITCH_NAME,) if nodes == 1 or profile.max_switch_hops == 1 else ()


def _rail_twins(nodes: int, nics_per_node: int, profile: TopologyProfile) -> tuple[str, ...]:
    """One rail is a plain fat-tree."""
    return (
        *one_node_is_a_single_switch(nodes, nics_per_node, profile),
        *(("fat_tree",) if nics_per_node == 1 else ()),
    )


SINGLE_SWITCH = TOPOLOGIES.register(
    TopologyFamily(
        SINGLE_SWITCH_NAME,
        "single switch",
        "single switch",
        1,
        size=lambda a: single_switch.size_single_switch(
            a.endpoints, a.radix, oversubscription=a.oversubscription
        ),
        max_endpoints=lambda a: single_switch.max_endpoints(a.radix),
        required=single_switch.required,
        plot_marker="o",
        twins=_no_twins,
    )
)
FAT_TREE = TOPOLOGIES.register(
    TopologyFamily(
        "fat_tree",
        "fat-tree",
        "fat-tree",
        2,
        size=lambda a: fat_tree.size_fat_tree(
            a.endpoints,
            a.radix,
            oversubscription=a.oversubscription,
            oversubscribed_tier=a.oversubscribed_tier,
            lanes=a.port_lanes,
        ),
        max_endpoints=lambda a: fat_tree.max_endpoints(
            a.radix, a.oversubscription, a.oversubscribed_tier, lanes=a.port_lanes
        ),
        required=fat_tree.required,
        oversubscribable=True,
        plot_marker="s",
        twins=_fat_tree_twins,
    )
)
RAIL_OPTIMIZED = TOPOLOGIES.register(
    TopologyFamily(
        "rail_optimized",
        "rail-optimized fat-tree",
        "rail-optimized",
        3,
        size=lambda a: rail_optimized.size_rail_optimized(
            a.endpoints,
            a.radix,
            rails=a.rails,
            oversubscription=a.oversubscription,
            oversubscribed_tier=a.oversubscribed_tier,
            lanes=a.port_lanes,
        ),
        max_endpoints=lambda a: rail_optimized.max_endpoints(
            a.radix, a.rails, a.oversubscription, a.oversubscribed_tier, a.port_lanes
        ),
        required=rail_optimized.required,
        oversubscribable=True,
        plot_marker="^",
        twins=_rail_twins,
    )
)
DRAGONFLY = TOPOLOGIES.register(
    TopologyFamily(
        "dragonfly",
        "dragonfly",
        "dragonfly",
        4,
        size=lambda a: dragonfly.size_dragonfly(
            a.endpoints, a.radix, oversubscription=a.oversubscription, params=a.params_map
        ),
        max_endpoints=lambda a: dragonfly.max_endpoints(a.radix, a.params_map),
        required=dragonfly.required,
        params=("p", "a", "h"),
        plot_marker="D",
        twins=_dragonfly_twins,
    )
)
TORUS = TOPOLOGIES.register(
    TopologyFamily(
        "torus",
        "torus",
        "torus",
        5,
        size=lambda a: torus.size_torus(
            a.endpoints, rails=a.rails, oversubscription=a.oversubscription, params=a.params_map
        ),
        max_endpoints=lambda a: None,  # any node count forms a torus; ports per node limit it
        required=torus.required,
        switchless=True,
        params=("dims",),
        plot_marker="P",
        needs_forwarding=True,
    )
)
SINGLE_NODE = TOPOLOGIES.register(
    TopologyFamily(
        single_node.NAME,
        "single node without a scale-out fabric",
        "one node",
        6,
        size=single_node.size_single_node,
        max_endpoints=lambda a: None,  # one node; its record caps the node count
        required=single_node.required,
        switchless=True,
        plot_marker="*",
        twins=_no_twins,
        max_nodes=1,
        scale_out=False,
    )
)


def topology(name: str, field: str = "topology") -> TopologyFamily:
    """The family ``name`` (any case, ``fat-tree`` or ``fat_tree``), or InvalidInput."""
    return TOPOLOGIES.get(name, field)
