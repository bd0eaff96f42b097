"""The catalog format as data: every column of every table, its unit, type and allowed values.

Validation, writing and ``docs/catalogs.md`` all read these definitions, so the column list
exists once (after PyPSA's ``component_attrs`` tables).

    python -c "from optimizer.catalog.schema import docs_tables; print(docs_tables())"

prints the documentation tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.catalog.model import (
    FABRIC_FAMILIES,
    INTERCONNECTS,
    LINK_CONNECTORS,
    LINK_FABRICS,
    LINK_KINDS,
    LINK_SIDES,
    NIC_CAGES,
    PROTOCOLS,
    SERVER_COOLING,
    SWITCH_CAGES,
)

# --- Limits (documented in docs/catalogs.md; checked before any parsing work) -------------------
MAX_FILE_BYTES = 16 * 1024 * 1024
"""Largest table file (CSV or Parquet) or workbook accepted, in bytes."""
MAX_XLSX_UNCOMPRESSED_BYTES = 128 * 1024 * 1024
"""Largest total uncompressed size of a workbook's parts (guards against zip bombs)."""
MAX_ROWS_PER_TABLE = 10_000
"""Most data rows one table may hold."""
MAX_PRICE_USD = 100_000_000
"""Largest unit price accepted, in US dollars (10**10 cents)."""
MAX_QUANTITY = 10_000_000
"""Largest quantity (stock, price-break threshold) accepted. MAX_PRICE_USD x MAX_QUANTITY in
cents is 10**17, inside a signed 64-bit integer, so no extended price can overflow."""
MAX_TEXT_CHARS = 500
"""Longest text cell accepted, in characters."""

KINDS = ("text", "int", "decimal", "money", "bool", "enum", "enum_set", "date")
"""Cell types. ``money`` is a decimal USD amount with at most two decimal places, held as cents;
``enum_set`` is a ``;``-separated list of allowed values."""

TABLE_NAMES = ("servers", "nics", "switches", "links", "price_breaks", "cloud_offers")
REQUIRED_TABLES = ("servers", "nics", "switches", "links")
METADATA = "metadata"
FILE_TABLES = (*TABLE_NAMES, METADATA)
"""Every table a catalog may carry, in the order they are read and written."""


@dataclass(frozen=True)
class Column:
    """One column of one table (or one key of the metadata table).

    ``attribute`` is the record field it fills (``price_usd`` fills ``price_cents``).
    ``minimum``/``maximum`` bound numbers; ``exclusive_minimum`` makes the lower bound strict.
    ``note``, when given, replaces the generated wording of what a valid cell is.
    """

    table: str
    name: str
    kind: str
    unit: str
    required: bool
    description: str
    allowed: tuple[str, ...] = ()
    minimum: int | None = None
    exclusive_minimum: bool = False
    maximum: int | None = None
    attribute: str = ""
    note: str = ""
    default: bool | int | str | None = None
    """Value of an empty optional cell (and of a column an older catalog lacks); None: empty."""

    @property
    def field(self) -> str:
        return self.attribute or self.name

    @property
    def constraint(self) -> str:
        """What a valid cell looks like, in words (the ``expected`` of a Finding)."""
        if self.note:
            return self.note
        if self.kind == "enum":
            return "one of " + ", ".join(self.allowed)
        if self.kind == "enum_set":
            return "';'-separated values from " + ", ".join(self.allowed)
        if self.kind == "bool":
            return "true or false"
        if self.kind == "date":
            return "an ISO date YYYY-MM-DD"
        if self.kind == "text":
            return f"plain text of at most {MAX_TEXT_CHARS} characters"
        noun = {
            "int": "an integer",
            "decimal": "a decimal number",
            "money": "a USD amount (at most 2 decimal places)",
        }[self.kind]
        low = (
            ""
            if self.minimum is None
            else (f" {'>' if self.exclusive_minimum else '>='} {self.minimum}")
        )
        high = "" if self.maximum is None else f" <= {self.maximum:_}".replace("_", ",")
        return noun + (low + " and" + high if low and high else low + high)

    @property
    def default_text(self) -> str:
        """The default in words for the documentation ("" when an empty cell stays empty,
        as None or as empty text)."""
        if self.default is None or self.default == "":
            return ""
        if isinstance(self.default, bool):
            return " Empty: " + ("true" if self.default else "false") + "."
        return f" Empty: {self.default}."


def _identity(table: str, what: str) -> tuple[Column, ...]:
    return (
        Column(
            table,
            "sku",
            "text",
            "",
            True,
            f"Vendor part number of the {what}; unique across all tables of the catalog.",
        ),
        Column(table, "vendor", "text", "", True, "Who sells it."),
    )


def _supply(table: str, price_unit: str) -> tuple[Column, ...]:
    return (
        Column(
            table,
            "price_usd",
            "money",
            price_unit,
            True,
            "List unit price before volume breaks.",
            minimum=0,
            exclusive_minimum=True,
            maximum=MAX_PRICE_USD,
            attribute="price_cents",
        ),
        Column(
            table,
            "stock_units",
            "int",
            "units",
            False,
            "Units the vendor can ship now (empty: unknown).",
            minimum=0,
            maximum=MAX_QUANTITY,
        ),
        Column(
            table,
            "lead_time_days",
            "int",
            "days",
            False,
            "Days from order to delivery (empty: unknown).",
            minimum=0,
            maximum=3650,
        ),
        Column(
            table,
            "source",
            "text",
            "",
            False,
            "Where the price came from, with its date (URL, quote number).",
        ),
    )


def _positive(
    table: str,
    name: str,
    kind: str,
    unit: str,
    description: str,
    maximum: int,
    *,
    required: bool = True,
) -> Column:
    return Column(
        table,
        name,
        kind,
        unit,
        required,
        description,
        minimum=0,
        exclusive_minimum=True,
        maximum=maximum,
    )


def _non_negative(
    table: str, name: str, kind: str, unit: str, description: str, maximum: int
) -> Column:
    return Column(table, name, kind, unit, True, description, minimum=0, maximum=maximum)


def _support_rate(table: str) -> Column:
    """Issue 17 (tco): a row's own support contract, for the lifetime cost (docs/optimizer.md)."""
    return Column(
        table,
        "support_rate",
        "decimal",
        "per year",
        False,
        "Support and maintenance per year as a fraction of the price (0.08: 8 %); empty: the "
        "request's --support-rate.",
        minimum=0,
        maximum=1,
    )


COLUMNS: tuple[Column, ...] = (
    *_identity("servers", "server"),
    Column(
        "servers",
        "gpu_model",
        "text",
        "",
        True,
        "GPU name, e.g. H100-SXM5-80GB. The time model's generation is the one the name "
        "holds (A100, H100, H200, B200, B300, GB200, GB300, MI300X, MI325X, MI355X); a name "
        "holding none (A800, H800, L40S) is timed as the generation its peak and memory "
        "identify, else with the default one, and the check warns.",
    ),
    _positive(
        "servers",
        "gpus_per_node",
        "int",
        "GPUs",
        "GPUs in one server, or in one rack-scale unit bought whole (72 for a GB200 NVL72).",
        1_152,
    ),
    _positive(
        "servers",
        "gpu_peak_bf16_tflops",
        "decimal",
        "TFLOP/s",
        "Dense BF16 peak of one GPU (no sparsity).",
        100_000,
    ),
    _positive("servers", "gpu_memory_gb", "decimal", "GB", "Memory of one GPU.", 100_000),
    _positive(
        "servers",
        "intra_node_gbytes_per_s",
        "decimal",
        "GB/s",
        "NVLink (or PCIe) bandwidth per GPU, one direction.",
        1_000_000,
    ),
    _positive(
        "servers",
        "max_nics",
        "int",
        "NICs",
        "Scale-out NIC slots in one server (a rack-scale system: in the whole rack).",
        1_152,
    ),
    _positive("servers", "power_kw", "decimal", "kW", "Maximum power draw of one server.", 1_000),
    _positive("servers", "rack_units", "int", "U", "Height in rack units.", 60),
    *_supply("servers", "USD per server"),
    _positive(
        "servers",
        "gpu_peak_fp8_tflops",
        "decimal",
        "TFLOP/s",
        "Dense FP8 peak of one GPU (empty: no FP8).",
        100_000,
        required=False,
    ),
    Column(
        "servers",
        "forwarding",
        "bool",
        "",
        False,
        "The server relays traffic between its NIC ports (a node of a direct, switchless "
        "network); false for GPU servers, whose NICs only send and receive.",
        default=False,
    ),
    Column(
        "servers",
        "builtin_nic_sku",
        "text",
        "",
        False,
        "SKU of the nics row the server ships with (DGX: 8 ConnectX-7); its price is inside "
        "the server's. Empty: NICs are bought separately.",
        note="the SKU of a nics row, given together with builtin_nics",
    ),
    Column(
        "servers",
        "builtin_nics",
        "int",
        "NICs",
        False,
        "How many builtin_nic_sku NICs the server ships with (at most max_nics).",
        minimum=0,
        maximum=1_152,
        default=0,
    ),
    _support_rate("servers"),
    # issue 17 (facility)
    Column(
        "servers",
        "cooling",
        "enum",
        "",
        False,
        "How the server is cooled: air, liquid (direct-to-chip only, e.g. GB200 NVL72) or "
        "either (sold in both variants). A facility without liquid cooling "
        "(--cooling air) excludes liquid-only servers.",
        allowed=SERVER_COOLING,
        default="air",
    ),
    # issue 16 (scale-up domain)
    Column(
        "servers",
        "scale_up_gpus",
        "int",
        "GPUs",
        False,
        "GPUs that share one scale-up (NVLink / Infinity Fabric) domain: 8 for HGX and "
        "MI300-class servers, 72 for a GB200/GB300 NVL72 rack. It divides gpus_per_node. "
        "Empty: gpus_per_node (the whole server is one domain).",
        minimum=1,
        maximum=1_152,
    ),
    Column(
        "servers",
        "gpus_per_host",
        "int",
        "GPUs",
        False,
        "GPUs per host (one OS image, its CPUs and PCIe) when a row is a rack-scale system "
        "bought whole: 4 for a GB200 NVL72 compute tray. It divides gpus_per_node. Empty: "
        "gpus_per_node (the row is one host).",
        minimum=1,
        maximum=1_152,
    ),
    # issue 14 (host link)
    Column(
        "servers",
        "nic_slot_gbps",
        "int",
        "Gb/s",
        False,
        "Line rate one scale-out NIC slot's host link carries: 200 for PCIe Gen4 x16, 400 for "
        "Gen5 x16, 800 for Gen6 x16. A faster NIC moves no more than this (its traffic is "
        "bottlenecked by PCIe), and the time is estimated at it. Empty: the NIC's own rate.",
        minimum=1,
        maximum=100_000,
    ),
    Column(
        "servers",
        "nic_cage",
        "enum",
        "",
        False,
        "The cage its built-in NICs' ports sit in where it is not the NIC card's own: "
        "OSFP-twin, a twin-port OSFP cage of two NIC ports (DGX H100/B200: 8 ConnectX-7 400G "
        "in 4 twin-port OSFP cages, NVIDIA DGX user guides). Such a cage takes only a whole "
        "twin-port plug: a twin-port module (MMA4Z00-NS) or a twin-port cable, never a single "
        "400G plug nor a splitter's narrow end. Empty: the NIC row's cage (nics.form_factor).",
        allowed=NIC_CAGES,
    ),
    *_identity("nics", "NIC"),
    _positive("nics", "speed_gbps", "int", "Gb/s", "Line rate of one port.", 100_000),
    _positive("nics", "ports", "int", "ports", "Network ports on the card.", 16),
    Column(
        "nics", "protocols", "enum_set", "", True, "Protocols the NIC speaks.", allowed=PROTOCOLS
    ),
    _non_negative("nics", "power_w", "decimal", "W", "Power draw of one NIC.", 10_000),
    *_supply("nics", "USD per NIC"),
    Column(
        "nics",
        "forwarding",
        "bool",
        "",
        False,
        "The NIC relays traffic between its ports (a NIC with a built-in switch); false for "
        "ConnectX HCAs and Ethernet NICs, which do not forward between ports.",
        default=False,
    ),
    _support_rate("nics"),
    # issue 16 (fabric800)
    Column(
        "nics",
        "planes",
        "int",
        "planes",
        False,
        "Independent fabric planes the card's ports feed, one port in each at speed_gbps: 2 "
        "for a ConnectX-8 in Ethernet mode (2 x 400GbE; single-port 800GbE is not supported "
        "per its firmware notes), whose two ports run two separate leaf/spine networks. At "
        "most ports. Empty: 1 (one port cabled per NIC, the others spare).",
        minimum=1,
        maximum=16,
    ),
    Column(
        "nics",
        "form_factor",
        "text",
        "",
        False,
        "Cage form factor of its ports, e.g. OSFP (a ConnectX-7 MCX75310AAS-NEAT, which takes "
        "flat-top OSFP modules), QSFP112, QSFP56. A cable or host-side module plugs in only "
        "with that form factor (links.form_factor; a QSFP-DD cage also takes QSFP plugs). "
        "Empty: not stated, any fits.",
    ),
    *_identity("switches", "switch"),
    Column(
        "switches",
        "fabric_family",
        "enum",
        "",
        True,
        "Protocol family of the switch.",
        allowed=FABRIC_FAMILIES,
    ),
    _positive(
        "switches", "ports", "int", "ports", "Physical ports (radix at port speed).", 100_000
    ),
    _positive("switches", "port_speed_gbps", "int", "Gb/s", "Line rate of one port.", 100_000),
    _positive(
        "switches",
        "breakout",
        "int",
        "ports",
        "Lower-speed ports one port splits into (1: no breakout); each runs at "
        "port_speed_gbps / breakout. A broken-out port takes a part that fills it: a fan-out "
        "cable or a multi-port module (links.ports_per_module); a straight cable takes the "
        "whole port.",
        16,
    ),
    # issue 16 (fabric800)
    Column(
        "switches",
        "ports_per_cage",
        "int",
        "ports",
        False,
        "Ports one transceiver cage holds: 2 for a Quantum-2 QM9700 (64 x 400G from 32 "
        "twin-port OSFP cages) or a Quantum-X800 Q3400 (144 x 800G from 72), 1 for an SN5600 "
        "(64 x 800G OSFP). A switch-side module must fill a cage: its speed_gbps = "
        "port_speed_gbps x ports_per_cage (a 1.6T 2 x 800G module fits the Q3400, not the "
        "SN5600). A cage of 2 or more ports takes only plugs that fill it: a splitter's wide "
        "end (links.ports_per_module) to NICs, or a cable of the cage's speed between two "
        "such cages (an 800G twin-port DAC carries two 400G links); never a 400G plug. It "
        "divides ports. Empty: not stated, any switch-side module fits.",
        minimum=1,
        maximum=16,
    ),
    Column(
        "switches",
        "form_factor",
        "enum",
        "",
        False,
        "Form factor of its cages, as its datasheet names it: OSFP (SN5600, Quantum-2), "
        "OSFP800 (Edgecore AS9817-64O), QSFP-DD800 (AS9817-64D), QSFP-DD, QSFP112, QSFP56, "
        "QSFP28. A cable or module at the switch plugs in only with that form factor "
        "(links.form_factor; OSFP800 and OSFP224 cages are OSFP, a QSFP-DD800 cage is "
        "QSFP-DD and takes QSFP plugs too). Empty: not stated, any fits.",
        allowed=SWITCH_CAGES,
    ),
    Column(
        "switches",
        "lossless",
        "bool",
        "",
        True,
        "PFC/ECN capable, as RoCE requires (InfiniBand is lossless by design).",
    ),
    # issue 14 (sharp)
    Column(
        "switches",
        "in_network_reduction",
        "bool",
        "",
        False,
        "The switch reduces all-reduce data in the network (InfiniBand SHARP: Quantum-2 "
        "QM9700/QM9790 SHARPv3, Quantum-X800 Q3400 SHARPv4); InfiniBand switches only. A "
        "design is estimated with in-network reduction only when every one of its switches "
        "offers it.",
        default=False,
    ),
    _non_negative("switches", "latency_ns", "decimal", "ns", "Port-to-port latency.", 1_000_000),
    _non_negative("switches", "power_w", "decimal", "W", "Typical power draw.", 1_000_000),
    _positive("switches", "rack_units", "int", "U", "Height in rack units.", 60),
    *_supply("switches", "USD per switch"),
    _support_rate("switches"),
    *_identity("links", "cable, transceiver or fiber"),
    Column(
        "links",
        "kind",
        "enum",
        "",
        True,
        "Cable assembly (dac, aec, aoc: priced per cable), transceiver (per module) or "
        "fiber (per metre).",
        allowed=LINK_KINDS,
    ),
    _positive("links", "speed_gbps", "int", "Gb/s", "Line rate carried.", 100_000),
    Column(
        "links",
        "fabric_family",
        "enum",
        "",
        True,
        "Fabric it is qualified for; any fits both.",
        allowed=LINK_FABRICS,
    ),
    _positive(
        "links",
        "reach_m",
        "decimal",
        "m",
        "Longest supported length (a cable's length for fixed-length assemblies).",
        100_000,
    ),
    _non_negative(
        "links",
        "power_w",
        "decimal",
        "W",
        "Power per cable end pair or per transceiver (0 for passive copper, fiber).",
        1_000,
    ),
    *_supply("links", "USD per cable, per transceiver, or per metre of fiber"),
    Column(
        "links",
        "side",
        "enum",
        "",
        False,
        "Which end a transceiver plugs into: host (a NIC cage, e.g. flat-top OSFP), switch "
        "(a switch cage, e.g. finned twin-port OSFP) or any (empty: any).",
        allowed=LINK_SIDES,
    ),
    Column(
        "links",
        "form_factor",
        "text",
        "",
        False,
        "Plug form factor, e.g. OSFP, OSFP-flat, QSFP112: a cable's or module's must fit the "
        "cage it plugs into (nics.form_factor, switches.form_factor; OSFP-flat and "
        "OSFP-finned are OSFP plugs). A cable with different plugs at its ends states both "
        "as A/B, a fan-out cable's wide end first (OSFP-finned/QSFP112-flat: NVIDIA MCP7Y10, "
        "a twin-port OSFP to two 400G QSFP112 ends); each end's plug must fit its cage. "
        "Empty: not stated, fits any cage.",
    ),
    _positive(
        "links",
        "ports_per_module",
        "int",
        "ports",
        "Links one transceiver serves at speed_gbps / ports_per_module each (2: a twin-port "
        "2x400G OSFP on 800G speed_gbps); the whole module also runs one link at speed_gbps. "
        "On a dac, aec or aoc: a fan-out cable, one speed_gbps end that fills a switch cage "
        "and ports_per_module ends at speed_gbps / ports_per_module (an 800G OSFP to 2 x 400G "
        "splitter: 800, 2), priced per cable; the only cable that serves a broken-out port, "
        "or NICs at a twin-port cage (switches.ports_per_cage). Empty: 1.",
        8,
        required=False,
    ),
    Column(
        "links",
        "connector",
        "enum",
        "",
        False,
        "Optical connector of a transceiver's port, or the one a fiber row's runs are "
        "terminated with: MPO-12 (SR4, DR4 and twin-port 2xSR4/2xDR4 modules, one per port), "
        "MPO-16 (SR8, DR8), LC (duplex: CWDM4, FR4). An optic takes only fiber of its "
        "connector, the nearest reach at or above its own. Empty: not stated, mates any; only "
        "on a transceiver or a fiber.",
        allowed=LINK_CONNECTORS,
        default="",
    ),
    Column("price_breaks", "sku", "text", "", True, "SKU of a row in another table."),
    Column(
        "price_breaks",
        "min_quantity",
        "int",
        "units",
        True,
        "Smallest order quantity the price applies to.",
        minimum=2,
        maximum=MAX_QUANTITY,
    ),
    Column(
        "price_breaks",
        "unit_price_usd",
        "money",
        "USD per unit",
        True,
        "Unit price at or above min_quantity.",
        minimum=0,
        exclusive_minimum=True,
        maximum=MAX_PRICE_USD,
        attribute="unit_price_cents",
    ),
    Column("price_breaks", "source", "text", "", False, "Where the break came from."),
    Column("cloud_offers", "provider", "text", "", True, "Cloud that rents the instance."),
    Column(
        "cloud_offers",
        "instance",
        "text",
        "",
        True,
        "Instance type or size, e.g. p5.48xlarge; provider and instance are unique together.",
    ),
    Column(
        "cloud_offers",
        "gpu_model",
        "text",
        "",
        True,
        "GPU of the instance; must be the gpu_model of a servers row (its GPU figures are "
        "taken from that row; for the bundled offer table, from a bundled catalog's row "
        "when the request's catalog has none).",
        note="the gpu_model of a servers row",
    ),
    _positive("cloud_offers", "gpus_per_instance", "int", "GPUs", "GPUs in one instance.", 64),
    _positive(
        "cloud_offers",
        "gpu_memory_gb",
        "decimal",
        "GB",
        "Memory of one of the instance's GPUs where it differs from the servers row's (p4d: "
        "40 GB A100s); empty: the row's.",
        100_000,
        required=False,
    ),
    _positive(
        "cloud_offers",
        "max_instances",
        "int",
        "instances",
        "Most instances rented together as one cluster (empty: no stated limit); a larger "
        "run is timed on this many.",
        1_000_000,
        required=False,
    ),
    Column(
        "cloud_offers",
        "interconnect",
        "enum",
        "",
        True,
        "Scale-out network class, mapped to a fabric the performance model knows "
        "(efa: roce at 400 Gb/s per GPU; infiniband_ndr: 400; infiniband_hdr: 200; "
        "roce: 400; ethernet: 100).",
        allowed=tuple(INTERCONNECTS),
    ),
    _positive(
        "cloud_offers",
        "network_gbps_per_gpu",
        "decimal",
        "Gb/s",
        "Scale-out bandwidth per GPU (e.g. 50 for 400 Gb/s EFA on 8 GPUs). Empty: the "
        "interconnect's default.",
        100_000,
        required=False,
    ),
    _positive(
        "cloud_offers",
        "on_demand_usd_per_gpu_hour",
        "decimal",
        "USD per GPU-hour",
        "Pay-as-you-go rate (empty: not offered or not sourced).",
        100_000,
        required=False,
    ),
    _positive(
        "cloud_offers",
        "committed_usd_per_gpu_hour",
        "decimal",
        "USD per GPU-hour",
        "Rate under a reservation or commitment (empty: not offered or not sourced).",
        100_000,
        required=False,
    ),
    _positive(
        "cloud_offers",
        "commitment_days",
        "int",
        "days",
        "Shortest term the committed rate requires (empty: not stated).",
        3650,
        required=False,
    ),
    Column("cloud_offers", "price_date", "date", "", True, "Date the rates were published."),
    Column(
        "cloud_offers",
        "source",
        "text",
        "",
        True,
        "Where the rates came from (URL), with what they cover.",
    ),
)
"""Every column, table by table, in the order files are written."""

METADATA_KEYS: tuple[Column, ...] = (
    Column(METADATA, "name", "text", "", True, "Catalog name, e.g. infiniband-ndr."),
    Column(METADATA, "vendor", "text", "", True, "Vendor, reseller or quote reference."),
    Column(
        METADATA,
        "currency",
        "enum",
        "",
        True,
        "Currency of every price.",
        allowed=("USD",),
        note="USD (the only currency until conversion exists)",
    ),
    Column(METADATA, "quote_date", "date", "", False, "Date the prices were quoted."),
    Column(
        METADATA,
        "valid_until",
        "date",
        "",
        False,
        "Last day the quote holds; an expired quote is a warning.",
    ),
)
"""Keys of the ``metadata`` table (``key,value`` rows)."""
METADATA_HEADER = ("key", "value")


def columns_of(table: str) -> tuple[Column, ...]:
    """The columns of ``table`` (or the keys of ``metadata``) in file order."""
    if table == METADATA:
        return METADATA_KEYS
    return tuple(c for c in COLUMNS if c.table == table)


def markdown_table(table: str) -> str:
    """The documentation table of ``table``; docs/catalogs.md embeds these verbatim."""
    first = "key" if table == METADATA else "column"
    lines = [
        f"| {first} | required | type | unit | allowed values | description |",
        "|---|---|---|---|---|---|",
    ]
    for c in columns_of(table):
        lines.append(
            f"| `{c.name}` | {'yes' if c.required else 'no'} | {c.kind} | "
            f"{c.unit} | {c.constraint} | {c.description}{c.default_text} |"
        )
    return "\n".join(lines)


def docs_tables() -> str:
    """Every documentation table, as docs/catalogs.md lays them out."""
    return "\n\n".join(f"### {table}\n\n{markdown_table(table)}" for table in FILE_TABLES)
