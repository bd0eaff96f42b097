"""A cluster design: what to buy, before quantities, lengths and link parts are worked out."""

from __future__ import annotations

from dataclasses import dataclass, field

from optimizer.topology.layout import Layout


@dataclass(frozen=True)
class Design:
    """Server, NIC and switch SKUs, node count, fabric and topology of one candidate cluster.

    ``switch_skus`` lists the switch SKU per tier from the leaf upward; one entry serves every
    tier; empty for the switchless torus. ``topology_params`` holds family parameters such as
    ``(("dims", 3),)`` for a torus. ``oversubscription`` is the down:up ratio at
    ``oversubscribed_tier`` ("leaf" or "aggregation").
    """

    server_sku: str
    nodes: int
    nic_sku: str
    nics_per_node: int
    fabric: str
    topology: str
    oversubscription: float = 1.0
    switch_skus: tuple[str, ...] = ()
    layout: Layout = field(default_factory=Layout)
    topology_params: tuple[tuple[str, int], ...] = ()
    oversubscribed_tier: str = "leaf"

    @property
    def endpoints(self) -> int:
        """Endpoint ports: one cabled port per NIC (domain.md section 3: E = nodes x NICs)."""
        return self.nodes * self.nics_per_node
