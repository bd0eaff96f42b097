"""Fabrics: the protocol a cluster's scale-out network speaks, and what it needs from parts.

Adding a fabric (e.g. an 800G Ethernet variant with its own efficiency) is one ``FabricKind``
here, its row in ``optimizer/performance/fabrics.csv`` (efficiency, latency, host CPU) and
catalog rows whose ``protocols`` / ``fabric_family`` name it; the compatibility rules
(``optimizer.topology.compat``), the search, explanations, tables and plots read this record.
"""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.registry.base import Registry


@dataclass(frozen=True)
class FabricKind:
    """One fabric.

    Attributes
    ----------
    name:
        Wire name (request and response strings, catalog protocol lists, fabrics.csv rows).
    label:
        Display name in tables, explanations and plots.
    proto_value:
        Its number in the ``procurement.v1.Fabric`` enum.
    nic_protocol:
        The protocol a NIC must list to join this fabric (a VPI card lists several).
    switch_family:
        ``fabric_family`` of the switches and links it runs on (catalog ``switches`` and
        ``links`` tables; links rated ``any`` fit every family).
    lossless_switch:
        The switches must be lossless (PFC/ECN): RoCE's RDMA does not survive drops.
    plot_colour:
        Matplotlib colour of its points on the cost/time plot.
    bonds_module_ports:
        One link may run at a multi-port module's full speed: an Ethernet 800G OSFP 2 x DR4
        module carries 800GBASE-DR8 on its eight lanes. An InfiniBand port is four lanes
        (NDR 4 x 100G, XDR 4 x 200G), so a twin-port module is two ports and never one link
        (docs.nvidia.com cablemanagfaq and 400g100gpam4ovpub).
    """

    name: str
    label: str
    proto_value: int
    nic_protocol: str
    switch_family: str
    lossless_switch: bool
    plot_colour: str
    bonds_module_ports: bool = True

    @property
    def switch_wording(self) -> str:
        """The switch it needs, in an error message: "a lossless ethernet", "an infiniband"."""
        if self.lossless_switch:
            return f"a lossless {self.switch_family}"
        article = "an" if self.switch_family[:1] in "aeiou" else "a"
        return f"{article} {self.switch_family}"


FABRICS: Registry[FabricKind] = Registry("fabric", "fabric")

# Sources: domain.md sections 1-2 (InfiniBand end to end; RoCE over lossless Ethernet with
# PFC/ECN; TCP over any Ethernet).
INFINIBAND = FABRICS.register(
    FabricKind("infiniband", "InfiniBand", 1, "infiniband", "infiniband", False, "tab:blue", False)
)
ROCE = FABRICS.register(FabricKind("roce", "RoCE", 2, "roce", "ethernet", True, "tab:orange"))
ETHERNET = FABRICS.register(
    FabricKind("ethernet", "TCP Ethernet", 3, "ethernet", "ethernet", False, "tab:green")
)


def fabric(name: str, field: str = "fabric") -> FabricKind:
    """The fabric ``name`` (any case), or InvalidInput naming ``field``."""
    return FABRICS.get(name, field)
