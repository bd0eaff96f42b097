"""Typed, validated catalog records: what every later stage works on.

Prices are integer US cents (exact; the MIP needs integers). A ``Catalog`` is only
ever built by validation, so code downstream may trust every field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from functools import cached_property

from optimizer.registry.fabrics import FABRICS

# What the catalog may name is what the registered fabrics need (optimizer/registry/fabrics.py).
FABRIC_FAMILIES = tuple(dict.fromkeys(f.switch_family for f in FABRICS))
PROTOCOLS = tuple(dict.fromkeys(f.nic_protocol for f in FABRICS))
LINK_KINDS = ("dac", "aec", "aoc", "transceiver", "fiber")
LINK_FABRICS = (*FABRIC_FAMILIES, "any")
LINK_SIDES = ("host", "switch", "any")
# Switch cage form factors (hardware.md section 3); OSFP800/OSFP224 are OSFP cages and
# QSFP-DD800 a QSFP-DD cage by mechanics, named as the datasheets name them.
SWITCH_CAGES = (
    "OSFP",
    "OSFP800",
    "OSFP224",
    "QSFP-DD",
    "QSFP-DD800",
    "QSFP112",
    "QSFP56",
    "QSFP28",
)
LINK_CONNECTORS = ("MPO-12", "MPO-16", "LC")
"""Optical connector of a transceiver's port and of the fiber run that mates it: MPO-12 for
parallel SR4/DR4 (IEEE 802.3bs/cm 400GBASE-DR4/SR4; NVIDIA LinkX NDR twin-port modules
take two), MPO-16 for 8-lane SR8/DR8 (IEEE 802.3cm 400GBASE-SR8; an 800G QSFP-DD DR8),
LC duplex for wavelength-multiplexed CWDM4/FR4 (100G CWDM4 MSA; NVIDIA MMS4X50-NM 2xFR4)."""
SERVER_COOLING = ("air", "liquid", "either")
"""How a server is cooled: air only, liquid only (direct-to-chip cold plates), or either way
(one SKU sold in both variants); a facility without liquid cooling takes air and either."""
NIC_CAGES = ("OSFP-twin",)
"""A server's own cage for its built-in NICs' ports (``servers.nic_cage``): ``OSFP-twin``, a
twin-port OSFP cage of two NIC ports (the DGX H100/B200 "Cedar" modules: 8 ConnectX-7 400G
ports in 4 twin-port OSFP cages, NVIDIA DGX H100 and DGX B200 user guides), which takes a
whole finned twin-port plug as a Quantum-2 switch cage does."""
"""Which end a transceiver plugs into: a NIC cage (flat-top OSFP, QSFP112), a switch cage
(finned twin-port OSFP) or either (docs/catalogs.md)."""
TABLES = ("servers", "nics", "switches", "links", "price_breaks", "cloud_offers")
INTERCONNECTS: dict[str, tuple[str, float]] = {
    # class: (fabric the estimator models it as, scale-out Gb/s per GPU where a row gives none)
    "efa": ("roce", 400.0),  # AWS EFA v2 on p5: 3,200 Gb/s per 8 GPUs; RDMA-like, OS bypass
    "infiniband_ndr": ("infiniband", 400.0),  # one ConnectX-7 NDR 400G port per GPU
    "infiniband_hdr": ("infiniband", 200.0),
    "roce": ("roce", 400.0),
    "ethernet": ("ethernet", 100.0),
}
"""Interconnect classes of the cloud_offers table and how the performance model sees them
(docs/catalogs.md)."""


@dataclass(frozen=True)
class Availability:
    """Optional per-row supply facts shared by every table."""

    stock_units: int | None = None
    lead_time_days: int | None = None
    source: str = ""


@dataclass(frozen=True)
class Server:
    """A GPU server. ``forwarding``: it relays traffic between its NIC ports (may be a node of
    a direct network). ``builtin_nics`` x ``builtin_nic_sku`` ship inside it, priced in
    ``price_cents`` (DGX); 0 and "" when its NICs are bought separately."""

    sku: str
    vendor: str
    gpu_model: str
    gpus_per_node: int
    gpu_peak_bf16_tflops: float
    gpu_memory_gb: float
    intra_node_gbytes_per_s: float
    max_nics: int
    power_kw: float
    rack_units: int
    price_cents: int
    gpu_peak_fp8_tflops: float | None = None
    availability: Availability = field(default_factory=Availability)
    forwarding: bool = False
    builtin_nic_sku: str = ""
    builtin_nics: int = 0
    support_rate: float | None = None  # per year, fraction of the price (None: request's)
    # issue 17 (facility): air | liquid | either (SERVER_COOLING); older catalogs: air.
    cooling: str = "air"
    # issue 16 (scale-up domain): None means gpus_per_node (one domain, one host per row).
    scale_up_gpus: int | None = None
    gpus_per_host: int | None = None
    # issue 14 (host link): the line rate one NIC slot's PCIe link carries; None: any NIC's.
    nic_slot_gbps: int | None = None
    # The cage its built-in NICs' ports sit in (NIC_CAGES); None: the NIC row's own cage.
    nic_cage: str | None = None

    @property
    def nic_ports_per_cage(self) -> int:
        """NIC ports one of the server's cages holds: 2 in a twin-port cage, else 1."""
        return 2 if self.nic_cage == "OSFP-twin" else 1

    def nic_rate_gbps(self, nic_speed_gbps: float) -> float:
        """What a NIC of ``nic_speed_gbps`` moves in this server: no more than its slot's
        host link carries (an 800G NIC in a PCIe Gen5 x16 slot moves about 400 Gb/s)."""
        if self.nic_slot_gbps is None:
            return nic_speed_gbps
        return min(nic_speed_gbps, self.nic_slot_gbps)

    @property
    def scale_up_domain_gpus(self) -> int:
        """GPUs that share one scale-up fabric (the whole server unless the row says less)."""
        return self.scale_up_gpus or self.gpus_per_node

    @property
    def host_gpus(self) -> int:
        """GPUs per host: the estimator's ``gpus_per_node`` for this row."""
        return self.gpus_per_host or self.gpus_per_node

    @property
    def rack_scale(self) -> bool:
        """Several hosts bought as one unit (GB200 NVL72: 18 trays of 4 GPUs): the row is a
        whole rack, placed alone in a rack position of its own at its own power."""
        return self.host_gpus < self.gpus_per_node


@dataclass(frozen=True)
class Nic:
    """A scale-out NIC. ``forwarding``: it relays traffic between its ports (a NIC with a
    built-in switch); ConnectX HCAs and Ethernet NICs do not."""

    sku: str
    vendor: str
    speed_gbps: int
    ports: int
    protocols: frozenset[str]
    power_w: float
    price_cents: int
    availability: Availability = field(default_factory=Availability)
    forwarding: bool = False
    support_rate: float | None = None  # per year, fraction of the price (None: request's)
    # issue 16 (fabric800): independent fabric planes the ports feed, one port each (2: a
    # ConnectX-8 in Ethernet mode, 2 x 400GbE); None: one plane, one port cabled per NIC.
    planes: int | None = None
    # The cage form factor of its ports (OSFP, QSFP112, QSFP56, ...); "" where not stated.
    form_factor: str = ""

    @property
    def plane_count(self) -> int:
        """Fabric planes, one cabled port in each (1 unless the row says more)."""
        return self.planes or 1

    @property
    def line_gbps(self) -> int:
        """What one NIC sends at line rate over all its planes (2 x 400G planes: 800): each
        plane is a whole copy of the network and carries its share of every collective."""
        return self.speed_gbps * self.plane_count


@dataclass(frozen=True)
class Switch:
    sku: str
    vendor: str
    fabric_family: str
    ports: int
    port_speed_gbps: int
    breakout: int
    lossless: bool
    latency_ns: float
    power_w: float
    rack_units: int
    price_cents: int
    availability: Availability = field(default_factory=Availability)
    support_rate: float | None = None  # per year, fraction of the price (None: request's)
    # issue 16 (fabric800): ports one cage (and so one switch-side module) holds: 2 for a
    # Q3400's twin-port OSFP, 1 for an SN5600's 800G OSFP; None: not stated, any module fits.
    ports_per_cage: int | None = None
    # The form factor of its cages (SWITCH_CAGES: OSFP, OSFP800, QSFP-DD, ...); None where
    # not stated, any plug fits.
    form_factor: str | None = None
    # issue 14 (sharp): the switch reduces all-reduce data in the network (InfiniBand SHARP:
    # Quantum-2, Quantum-X800); a design gets the credit only when every switch offers it.
    in_network_reduction: bool = False


@dataclass(frozen=True)
class Link:
    """A cable assembly (priced per cable), a transceiver (per module) or fiber (per metre)."""

    sku: str
    vendor: str
    kind: str
    speed_gbps: int
    fabric_family: str
    reach_m: float
    power_w: float
    price_cents: int
    availability: Availability = field(default_factory=Availability)
    # Optional columns (None where a catalog leaves them out): the end a transceiver fits,
    # its cage form factor, and how many links' ends one module serves (2: twin-port OSFP,
    # or a fan-out cable's narrow ends: an 800G to 2 x 400G splitter); the optical connector
    # of a transceiver's port or of a fiber run ("": not stated, mates any).
    side: str | None = None
    form_factor: str = ""
    ports_per_module: int | None = None
    connector: str = ""

    @property
    def fits_side(self) -> str:
        """``host``, ``switch`` or ``any`` (the default when the catalog does not say)."""
        return self.side or "any"

    @property
    def plugs(self) -> tuple[str, str]:
        """The plugs at its two ends: ``form_factor`` at both, or ``A/B`` stated apart (a
        fan-out cable's wide end first: MCP7Y10's twin-port OSFP and 400G QSFP112 ends)."""
        first, _, second = self.form_factor.partition("/")
        return first, second or first

    @property
    def module_ports(self) -> int:
        """Link ends one module (or fan-out cable) serves at ``port_speed_gbps`` (1 unless
        twin-port or fan-out)."""
        return self.ports_per_module or 1

    @property
    def port_speed_gbps(self) -> int:
        """Speed of each of a module's ports: a twin-port 800G module runs 2 x 400G."""
        return self.speed_gbps // self.module_ports


@dataclass(frozen=True)
class PriceBreak:
    sku: str
    min_quantity: int
    unit_price_cents: int
    source: str = ""


@dataclass(frozen=True)
class CloudOffer:
    """A cloud instance type rented by the GPU-hour (optional ``cloud_offers`` table).

    Rates are US dollars per GPU per hour; an offer gives at least one of them. ``None`` for
    ``network_gbps_per_gpu`` means the interconnect class's default (``INTERCONNECTS``)."""

    provider: str
    instance: str
    gpu_model: str
    gpus_per_instance: int
    interconnect: str
    price_date: date
    source: str
    network_gbps_per_gpu: float | None = None
    on_demand_usd_per_gpu_hour: float | None = None
    committed_usd_per_gpu_hour: float | None = None
    commitment_days: int | None = None
    max_instances: int | None = None  # most instances one customer can rent together
    gpu_memory_gb: float | None = None  # where the instance's GPUs differ from the servers row's

    @property
    def sku(self) -> str:
        """The offer's identity (provider and instance), the key its table is sorted and
        compared by, as SKUs are elsewhere."""
        return f"{self.provider} {self.instance}"

    @property
    def fabric(self) -> str:
        return INTERCONNECTS[self.interconnect][0]

    @property
    def gbps_per_gpu(self) -> float:
        if self.network_gbps_per_gpu is not None:
            return self.network_gbps_per_gpu
        return INTERCONNECTS[self.interconnect][1]


@dataclass(frozen=True)
class CatalogMeta:
    name: str
    vendor: str
    currency: str
    quote_date: date | None
    valid_until: date | None


@dataclass(frozen=True)
class Catalog:
    meta: CatalogMeta
    servers: tuple[Server, ...]
    nics: tuple[Nic, ...]
    switches: tuple[Switch, ...]
    links: tuple[Link, ...]
    price_breaks: tuple[PriceBreak, ...] = ()
    cloud_offers: tuple[CloudOffer, ...] = ()

    def unit_price_cents(self, sku: str, quantity: int, list_price_cents: int) -> int:
        """Unit price at ``quantity`` after the deepest volume break that applies."""
        price = list_price_cents
        best_min = 0
        for pb in self._breaks_of.get(sku, ()):
            if best_min < pb.min_quantity <= quantity:
                price, best_min = pb.unit_price_cents, pb.min_quantity
        return price

    def list_price_cents(self, sku: str) -> int:
        """The list price of the part ``sku`` (a SKU is unique across the tables)."""
        return self._list_prices[sku]

    # The optimizer prices tens of thousands of BOMs per request from one catalog.
    @cached_property
    def _breaks_of(self) -> dict[str, list[PriceBreak]]:
        breaks: dict[str, list[PriceBreak]] = {}
        for pb in self.price_breaks:
            breaks.setdefault(pb.sku, []).append(pb)
        return breaks

    @cached_property
    def _list_prices(self) -> dict[str, int]:
        return {
            part.sku: part.price_cents
            for table in (self.servers, self.nics, self.switches, self.links)
            for part in table
        }

    def breaks_for(self, sku: str) -> tuple[PriceBreak, ...]:
        return tuple(sorted(self._breaks_of.get(sku, ()), key=lambda pb: pb.min_quantity))
