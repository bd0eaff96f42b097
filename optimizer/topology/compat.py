"""Protocol and speed rules: which NICs, switches and links a fabric may use, and at what radix.

Sources: domain.md sections 1-2 (InfiniBand needs InfiniBand end to end; RoCE needs lossless
Ethernet, PFC/ECN; TCP runs on any Ethernet) and hardware.md sections 3-4 (port breakout, e.g.
one 800G port as 2 x 400G; a link assembly runs at one rate).

Modelling rules
---------------
- Every fabric link runs at the endpoint (NIC) speed; a switch port faster than that serves
  ``port_speed / speed`` links through breakout when that factor is a whole number no larger
  than the switch's ``breakout``; a NIC faster than the switch port is incompatible.
- A cable assembly or transceiver runs at exactly its rated speed; fiber carries any speed up
  to its rating.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the catalog package validates with these rules: no import cycle at run time
    from optimizer.catalog.model import Link, Nic, Switch

FABRICS = ("infiniband", "roce", "ethernet")

# The switch/link family each fabric runs on.
_FAMILY_OF_FABRIC = {"infiniband": "infiniband", "roce": "ethernet", "ethernet": "ethernet"}


def fabric_family(fabric: str) -> str:
    """``infiniband`` for InfiniBand, ``ethernet`` for RoCE and TCP."""
    return _FAMILY_OF_FABRIC[fabric]


def nic_fits_fabric(nic: Nic, fabric: str) -> bool:
    """The NIC speaks the fabric's protocol (a VPI card lists several)."""
    return fabric in nic.protocols


def switch_fits_fabric(switch: Switch, fabric: str) -> bool:
    """InfiniBand needs an InfiniBand switch; RoCE a lossless Ethernet switch; TCP any Ethernet."""
    if switch.fabric_family != fabric_family(fabric):
        return False
    return switch.lossless or fabric != "roce"


def link_fits(link: Link, speed_gbps: int, fabric: str) -> bool:
    """The link part is rated for the fabric family and runs at ``speed_gbps``."""
    if link.fabric_family not in ("any", fabric_family(fabric)):
        return False
    if link.kind == "fiber":
        return link.speed_gbps >= speed_gbps
    return link.speed_gbps == speed_gbps


def ports_at_speed(switch: Switch, speed_gbps: int) -> int:
    """Usable ports at ``speed_gbps`` after breakout; 0 when the switch cannot serve that speed."""
    if speed_gbps <= 0 or speed_gbps > switch.port_speed_gbps:
        return 0
    lanes, rest = divmod(switch.port_speed_gbps, speed_gbps)
    if rest or lanes > max(1, switch.breakout):
        return 0
    return switch.ports * lanes
