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
  to its rating. A multi-port transceiver (``ports_per_module`` > 1, e.g. a twin-port 2 x 400G
  OSFP rated 800G) also serves links at its per-port speed, one port per link end; it runs
  one link at its full speed only where the fabric bonds its ports (Ethernet's 800GBASE-DR8 on
  a 2 x DR4 module; an InfiniBand port is four lanes, so a twin-port module is two ports).
- A transceiver plugs into the end its ``side`` names (host: a NIC cage, switch: a switch
  cage, any: either); cables and fiber fit any end. Where the switch states
  ``ports_per_cage``, a module at its end fills one cage: speed_gbps = port speed x ports per
  cage (a 1.6T twin-port module in a Q3400, an 800G module in an SN5600).
- A broken-out port (links slower than the switch port, counted ``port_speed / speed`` per
  port by ``ports_at_speed``) takes a part that fills it: a multi-port module or a fan-out
  cable whose wide end runs at the port speed (an 800G OSFP to 2 x 400G splitter, NVIDIA
  MCP7Y00; hardware.md section 4.1). A straight cable takes a whole port, so it is not
  offered there; a fan-out cable has one wide end, so it needs exactly one broken-out end,
  or, from hosts, a one-port cage of its wide end's speed, which it breaks out itself.
- A cage of several ports is shared the same way whatever the tier needs: a Quantum-2 twin-port
  OSFP cage (2 x 400G; QM9700/QM9790, hardware.md section 3) takes a twin-port module, the
  twin-port end of a splitter (800G to 2 x 400G, one cage to two NICs) or a twin-port cable
  (800G, both ends twin-port: two links between the same two switches, bought as one 800G
  cage-to-cage link where every switch pair carries an even count, ``fat_tree.uplink_lanes``
  at the cage bandwidth); never a single-port 400G plug.
- A cable or module plugs into a NIC or a switch only with the form factor of its cage
  (hardware.md section 2: a ConnectX-7 MCX75310AAS-NEAT has an OSFP cage for flat-top OSFP
  modules, an MCX653105A-HDAT a QSFP56 one; section 3: an SN5600 has OSFP cages, an
  Edgecore AS9817-64O OSFP800, an AS9817-64D QSFP-DD800); a QSFP-DD cage also takes
  QSFP28/56/112 plugs (the QSFP-DD MSA's backward compatibility), and OSFP800/OSFP224 are
  OSFP cages and plugs (the OSFP MSA). Where either side is not stated, it fits.
- A cable may have different plugs at its ends (``links.form_factor`` ``A/B``): a fan-out
  cable's wide end A at the broken-out switch cage, its narrow ends B elsewhere (NVIDIA
  MCP7Y10: a twin-port OSFP to two 400G QSFP112 ends for ConnectX-7/BlueField-3 QSFP112
  cages); a straight one either way round, each plug in a cage it fits (``plugs_fit``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from optimizer.registry.fabrics import FABRICS as FABRIC_REGISTRY
from optimizer.registry.fabrics import FabricKind

if TYPE_CHECKING:  # the catalog package validates with these rules: no import cycle at run time
    from collections.abc import Iterable

    from optimizer.catalog.model import Link, Nic, Server, Switch


def fabric_family(fabric: str) -> str:
    """The switch/link family the fabric runs on: ``infiniband`` for InfiniBand, ``ethernet``
    for RoCE and TCP (its registry record)."""
    return _kind(fabric).switch_family


def nic_fits_fabric(nic: Nic, fabric: str) -> bool:
    """The NIC speaks the fabric's protocol (a VPI card lists several)."""
    return _kind(fabric).nic_protocol in nic.protocols


def switch_fits_fabric(switch: Switch, fabric: str) -> bool:
    """The switch is of the fabric's family, and lossless where the fabric needs it (RoCE)."""
    kind = _kind(fabric)
    if switch.fabric_family != kind.switch_family:
        return False
    return switch.lossless or not kind.lossless_switch


def link_fits(link: Link, speed_gbps: int, fabric: str) -> bool:
    """The link part is rated for the fabric family and runs at ``speed_gbps``."""
    if link.fabric_family not in ("any", fabric_family(fabric)):
        return False
    if link.kind == "fiber":
        return link.speed_gbps >= speed_gbps
    if link.module_ports > 1 and link.port_speed_gbps == speed_gbps:
        return True  # a twin-port module or a fan-out cable: one of its ports per link end
    # A whole module may run one link at its full speed where the fabric bonds its ports
    # (not InfiniBand: a twin-port module is two 4-lane ports); a fan-out cable's ends differ.
    if link.module_ports > 1 and not (
        link.kind == "transceiver" and _kind(fabric).bonds_module_ports
    ):
        return False
    return link.speed_gbps == speed_gbps


def fits_end(link: Link, end: str, plug: str | None = None) -> bool:
    """The part may sit at a link end of this kind (``host`` or ``switch``; ``host:F``: a NIC
    whose cage is of form factor F; ``switch:C``: a switch whose cage holds C Gb/s, where a
    module must fill the cage; ``switch:CxN``: the same cage of N ports, which a module fills
    only with N ports of its own; ``switch:F`` or ``switch:C:F``: a switch whose cages are of
    form factor F; ``...@P``: a cage of P Gb/s shared by slower links, a twin-port cage or a
    broken-out port, which only a part of speed P fills; see ``switch_end`` and
    ``host_end``)."""
    kind, cage, per_cage, form, shared_gbps = _end_fields(end)
    if link.kind == "fiber":
        return True
    if shared_gbps and link.speed_gbps != int(shared_gbps):
        return False
    # A host cage of several ports (a DGX's twin-port OSFP cage, ``servers.nic_cage``) takes
    # what a Quantum-2 twin-port cage takes: a finned twin-port module (MMA4Z00-NS, NVIDIA
    # DGX H100/B200 user guides) or a twin-port plug of a cable, never a single-port plug.
    like = "switch" if kind == "switch" or (per_cage and int(per_cage) > 1) else "host"
    plug = link.form_factor if plug is None else plug
    if not fits_cage(plug, form, top="finned" if like == "switch" else "flat"):
        return False
    if link.kind != "transceiver":
        return True
    if link.fits_side not in ("any", like):
        return False
    # A module that fills a cage of several ports is as many ports: a Quantum-2 cage is two
    # NDR ports, which a twin-port module fills and gen-2026's XDR OSFP224-800G-DR4 (one
    # 4 x 200G port) does not. (A catalog cable states no lanes: an 800G cable row at such a
    # cage stands for the twin-port cable, NDR-ACC-800G-TWIN-5M.)
    if per_cage and link.module_ports != int(per_cage):
        return False
    return kind == "host" or not cage or link.speed_gbps == int(cage)


_QSFP_PLUGS = frozenset({"QSFP28", "QSFP56", "QSFP112"})
_MECHANICAL = {"OSFP800": "OSFP", "OSFP224": "OSFP", "QSFP-DD800": "QSFP-DD"}
"""Cages and plugs named by their rate that are mechanically the older form factor (the
OSFP MSA's OSFP800/OSFP224, the QSFP-DD MSA's QSFP-DD800); the rate is ``speed_gbps``'s
to check."""


def fits_cage(form_factor: str, cage: str, *, top: str = "flat") -> bool:
    """A plug of ``form_factor`` goes into a cage of ``cage`` (either unstated: it fits). A
    module's ``top`` fits its cage: a NIC's OSFP cage takes a flat-top OSFP module
    (``-flat``), a switch's a finned one (``-finned``, ``top="finned"``). OSFP800 and
    OSFP224 are OSFP; a QSFP-DD cage, QSFP-DD800 included, also takes QSFP plugs."""
    if not form_factor or not cage:
        return True
    plug, cage = _mechanical(form_factor.removesuffix(f"-{top}")), _mechanical(cage)
    return plug == cage or (cage == "QSFP-DD" and plug in _QSFP_PLUGS)


def connectors_mate(a: Link, b: Link) -> bool:
    """Two optical parts mate: the same connector (``links.connector``), or one of them not
    stated. An MPO-12 trunk does not plug into an MPO-16 DR8 module nor an LC duplex FR4."""
    return not a.connector or not b.connector or a.connector == b.connector


def _mechanical(form_factor: str) -> str:
    return _MECHANICAL.get(form_factor, form_factor)


def host_end(nic: Nic | None, server: Server | None = None, *, one_switch: bool = False) -> str:
    """The link end a NIC offers: ``host``, or ``host:F`` with F its cage's form factor; in a
    server that puts its NICs' ports in cages of N ports (``servers.nic_cage``: a DGX's
    twin-port OSFP cage, 2 x 400G) ``host:CxN:OSFP@C`` with C the cage's Gb/s, a cage shared
    by N links that only a whole twin-port plug fills (as ``switch_end`` for a Quantum-2);
    ``...:OSFP:pair@C`` where every NIC port lands on one switch (``one_switch``), so both
    ports of a cage reach one switch cage and a twin-port cable (both ends twin) fits."""
    if nic is None:
        return "host"
    builtin = server is not None and server.builtin_nic_sku == nic.sku
    per_cage = server.nic_ports_per_cage if server is not None and builtin else 1
    if per_cage > 1:
        cage = nic.speed_gbps * per_cage
        return f"host:{cage}x{per_cage}:OSFP{':pair' if one_switch else ''}@{cage}"
    return "host" if not nic.form_factor else f"host:{nic.form_factor}"


def _end_fields(end: str) -> tuple[str, str, str, str, str]:
    """A link end's (kind, cage Gb/s, ports per cage, form factor, shared Gb/s), each "" where
    the end does not name it (the spelling ``fits_end`` reads)."""
    head, _, shared_gbps = end.partition("@")
    kind, *stated = head.split(":")
    cage, _, per_cage = next((s for s in stated if s[:1].isdigit()), "").partition("x")
    form = next((s for s in stated if not s[:1].isdigit()), "")
    return kind, cage, per_cage, form, shared_gbps


def cage_of_end(end: str) -> int | None:
    """The Gb/s of the cage a link end names (``switch:C``, ``switch:CxN``, ``host:CxN``;
    see ``fits_end``), None where it names none."""
    cage = _end_fields(end)[1]
    return int(cage) if cage else None


def cable_fits_ends(cable: Link, ends: tuple[str, str]) -> bool:
    """A straight cable plugs into ports at its own speed at both ends; a fan-out cable's wide
    end fills exactly one shared switch cage (its narrow ends plug in at their speed): a
    broken-out port, or, from hosts, a one-port cage of its wide end's speed that the tier
    does not break out (what sits in a cage breaks it out, as a twin-port module does)."""
    if cable.module_ports == 1:
        return not any("@" in end for end in ends) and plugs_fit(cable, ends)
    return wide_end(cable, ends) is not None and plugs_fit(cable, ends)


def wide_end(cable: Link, ends: tuple[str, str]) -> int | None:
    """Which of ``ends`` a fan-out cable's wide end fills: the shared one (``@``), or else,
    between a host and a switch, the switch's one-port cage of the cable's speed."""
    shared = [i for i, end in enumerate(ends) if "@" in end]
    if len(shared) == 1:
        return shared[0]
    if shared or not any(end.startswith("host") for end in ends):
        return None
    return next(
        (
            i
            for i, end in enumerate(ends)
            if end.startswith("switch") and cage_of_end(end) == cable.speed_gbps
        ),
        None,
    )


def cable_orientations(cable: Link) -> tuple[tuple[str, str], ...]:
    """The ways a cable's plugs (``Link.plugs``) may sit at (the first end, the other end):
    a fan-out cable's wide plug at its broken-out end only; a straight cable's either way."""
    wide, narrow = cable.plugs
    if cable.module_ports > 1 or wide == narrow:
        return ((wide, narrow),)
    return ((wide, narrow), (narrow, wide))


def plugs_fit(cable: Link, ends: tuple[str, str]) -> bool:
    """Each of the cable's plugs fits the end it sits at, in one of its orientations (a
    fan-out cable's wide plug at the end it fills, ``wide_end``, when one is)."""
    first, second = ends
    if cable.module_ports > 1 and wide_end(cable, ends) == 1:
        first, second = second, first
    return any(
        fits_end(cable, first, a) and fits_end(cable, second, b)
        for a, b in cable_orientations(cable)
    )


# issue 16 (fabric800)
def cage_gbps(switch: Switch) -> int:
    """What one of the switch's cages carries: port speed x ``ports_per_cage`` (a Quantum-2
    twin-port cage 2 x 400G = 800, a Q3400 1600, an SN5600 800); the port speed where the
    catalog does not state its cages."""
    return switch.port_speed_gbps * (switch.ports_per_cage or 1)


def switch_end(switch: Switch, speed_gbps: int | None = None, *, broken_out: bool = False) -> str:
    """The link end ``switch`` offers to links at ``speed_gbps``: ``switch``, or ``switch:C``
    with C its cage bandwidth (``cage_gbps``) when the catalog states it, so a module that
    does not fill the cage is not offered (``switch:CxN`` for a cage of N ports, which only a
    module of N ports fills), and ``:F`` its cages' form factor where stated
    (``switches.form_factor``: a QSFP-DD plug does not go into an OSFP800 cage). Links
    slower than the cage share it, ``@C``, and only a part of speed C fills it
    (``fits_end``): always at a cage of several ports (a Quantum-2 twin-port cage takes a
    twin-port module, a splitter's twin-port end or a twin-port cable, never a single 400G
    plug; hardware.md sections 3-4), and at a one-port cage where the tier breaks its ports
    out (``broken_out``)."""
    cage, ports = cage_gbps(switch), switch.ports_per_cage
    end = "switch" if ports is None else f"switch:{cage}" + (f"x{ports}" if ports > 1 else "")
    if switch.form_factor:
        end = f"{end}:{switch.form_factor}"
    shared = broken_out or (switch.ports_per_cage or 1) > 1
    if speed_gbps is not None and speed_gbps < cage and shared:
        end = f"{end}@{cage}"
    return end


def ports_per_end(link: Link, speed_gbps: int) -> int:
    """Module ports one link end at ``speed_gbps`` takes: 1 at the per-port speed, all of the
    module's ports when the link runs at the module's full speed (an 800G link on a twin-port
    2 x 400G module)."""
    if link.port_speed_gbps == speed_gbps:
        return 1
    return link.module_ports


def port_lanes(switches: Iterable[Switch], speed_gbps: int) -> int:
    """Endpoint ports one cage of these switches holds at ``speed_gbps`` (the most of any):
    a broken-out port's lanes (an 800G port at 400G: 2) times the ports a cage holds (a
    Quantum-2 twin-port cage: 2). A tier's ports are split in whole cages (topology sizing)."""
    return max(
        (
            switch.port_speed_gbps // speed_gbps * (switch.ports_per_cage or 1)
            for switch in switches
            if ports_at_speed(switch, speed_gbps)
        ),
        default=1,
    )


def ports_at_speed(switch: Switch, speed_gbps: int) -> int:
    """Usable ports at ``speed_gbps`` after breakout; 0 when the switch cannot serve that speed."""
    if speed_gbps <= 0 or speed_gbps > switch.port_speed_gbps:
        return 0
    lanes, rest = divmod(switch.port_speed_gbps, speed_gbps)
    if rest or lanes > max(1, switch.breakout):
        return 0
    return switch.ports * lanes


def _kind(fabric: str) -> FabricKind:
    return FABRIC_REGISTRY.get(fabric, "fabric")
