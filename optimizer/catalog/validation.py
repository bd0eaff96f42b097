"""Whole-catalog validation: every problem in one report, then a Catalog only if none is an error.

Order of checks: reading problems (from ``io``), tables present, headers, row limit, every
cell (``cells.parse_cell``), metadata, SKUs unique across tables, price breaks. Warnings
(expired quote, empty tables, NICs nothing in the catalog can connect) are computed from the
finished Catalog by ``catalog_warnings``, so they appear once the catalog is otherwise valid
and ``catalog show`` can recompute them for a stored catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from optimizer.catalog.cells import CellError, Value, parse_cell
from optimizer.catalog.findings import ERROR, WARNING, error, warning
from optimizer.catalog.io import RawCatalog, RawRow, RawTable
from optimizer.catalog.model import Catalog, CatalogMeta, Nic, Server
from optimizer.catalog.money import format_usd
from optimizer.catalog.records import build_record
from optimizer.catalog.schema import (
    MAX_ROWS_PER_TABLE,
    METADATA,
    METADATA_HEADER,
    METADATA_KEYS,
    REQUIRED_TABLES,
    TABLE_NAMES,
    Column,
    columns_of,
)
from optimizer.errors import CatalogInvalid, Finding
from optimizer.performance.calibration import (
    CALIBRATED_GENERATIONS,
    generation,
    timed_gpu_model,
)
from optimizer.topology.compat import link_fits, ports_at_speed, switch_fits_fabric

ITEM_TABLES = ("servers", "nics", "switches", "links")
"""Tables whose rows are things to buy, each with a SKU unique across all of them."""

Rows = list[tuple[int, dict[str, Value]]]
"""Valid rows of one table: (row number, typed values by column attribute)."""


@dataclass(frozen=True)
class ValidationReport:
    """Every error and warning found; ``catalog`` is None when there is any error."""

    catalog: Catalog | None
    problems: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [p for p in self.problems if p.severity == WARNING]

    def raise_for_errors(self) -> Catalog:
        """The catalog, or CatalogInvalid carrying every problem."""
        if self.catalog is None:
            raise CatalogInvalid(self.problems)
        return self.catalog


def validate(raw: RawCatalog, *, today: date | None = None) -> ValidationReport:
    """Check ``raw`` completely and build its Catalog if nothing is an error.

    ``today`` (default: the current date) decides whether the quote has expired.
    """
    problems = list(raw.problems)
    already_reported = {p.table for p in raw.problems}
    if raw.fmt:
        for table in (*REQUIRED_TABLES, METADATA):
            if table not in raw.tables and table not in already_reported:
                problems.append(error(table, None, None, None, _missing_table(raw.fmt, table)))
    rows = {t: _check_table(raw.tables[t], problems) for t in TABLE_NAMES if t in raw.tables}
    meta = _check_metadata(raw.tables[METADATA], problems) if METADATA in raw.tables else None
    sku_rows = _check_unique_skus(raw, problems)
    if "price_breaks" in rows:
        # An unreadable or missing item table already has its error; do not also report
        # every price break that names one of its SKUs.
        all_skus_known = all(t in raw.tables and "sku" in raw.tables[t].header for t in ITEM_TABLES)
        _check_price_breaks(rows, sku_rows, all_skus_known, problems)
    if "servers" in rows and "nics" in rows:
        _check_builtin_nics(rows["servers"], {str(v["sku"]) for _, v in rows["nics"]}, problems)
    if "servers" in rows:
        _check_scale_up(rows["servers"], problems)
    if "links" in rows:
        _check_link_modules(rows["links"], problems)
    if "nics" in rows:  # issue 16 (fabric800)
        _check_nic_planes(rows["nics"], problems)
    if "switches" in rows:  # issue 16 (fabric800)
        _check_switch_cages(rows["switches"], problems)
        _check_switch_reduction(rows["switches"], problems)  # issue 14 (sharp)
    if "cloud_offers" in rows:
        gpu_models = (
            {str(v["gpu_model"]) for _, v in rows["servers"]} if "servers" in rows else None
        )
        check_cloud_offers(rows["cloud_offers"], gpu_models, problems)
    if meta is None or any(p.severity == ERROR for p in problems):
        return ValidationReport(None, problems)
    # build_record returns the record type of its table, which a plain dict cannot express.
    tables: dict[str, Any] = {
        t: tuple(build_record(t, v) for _, v in rows.get(t, [])) for t in TABLE_NAMES
    }
    catalog = Catalog(meta, **tables)
    row_of = {sku: number for sku, (_, number) in sku_rows.items()}
    problems.extend(catalog_warnings(catalog, today=today, rows=row_of))
    return ValidationReport(catalog, problems)


def _missing_table(fmt: str, table: str) -> str:
    where = {
        "csv": f"{table}.csv",
        "parquet": f"{table}.parquet",
        "xlsx": f"a sheet named {table}",
    }[fmt]
    return f"the {table} table ({where})"


def _header_index(
    table: RawTable, columns: tuple[Column, ...], problems: list[Finding]
) -> dict[str, int]:
    """Position of each known column; reports duplicate, unknown and missing columns."""
    known = {c.name for c in columns}
    index: dict[str, int] = {}
    for i, name in enumerate(table.header):
        if name in index:
            problems.append(error(table.name, table.header_row, name, name, "each column once"))
        elif name not in known:
            problems.append(
                error(
                    table.name,
                    table.header_row,
                    name,
                    name,
                    "a column of " + table.name + ": " + ", ".join(c.name for c in columns),
                )
            )
        else:
            index[name] = i
    for c in columns:
        if c.required and c.name not in index:
            problems.append(
                error(table.name, table.header_row, c.name, None, "this required column")
            )
    return index


def _limited(table: RawTable, problems: list[Finding]) -> tuple[RawRow, ...]:
    """The rows within MAX_ROWS_PER_TABLE; reports the first row beyond it."""
    if len(table.rows) > MAX_ROWS_PER_TABLE:
        problems.append(
            error(
                table.name,
                table.rows[MAX_ROWS_PER_TABLE].number,
                None,
                None,
                f"at most {MAX_ROWS_PER_TABLE} data rows",
            )
        )
    return table.rows[:MAX_ROWS_PER_TABLE]


def _check_table(table: RawTable, problems: list[Finding]) -> Rows:
    columns = columns_of(table.name)
    index = _header_index(table, columns, problems)
    present = [c for c in columns if c.name in index or not c.required]
    valid: Rows = []
    for row in _limited(table, problems):
        values: dict[str, Value] = {}
        ok = True
        for c in present:
            text = row.cells[index[c.name]] if c.name in index else ""
            try:
                values[c.field] = parse_cell(c, text)
            except CellError as e:
                problems.append(error(table.name, row.number, c.name, text, e.expected))
                ok = False
        if ok and len(values) == len(columns):
            valid.append((row.number, values))
    return valid


def _check_metadata(table: RawTable, problems: list[Finding]) -> CatalogMeta | None:
    """The metadata record from ``key,value`` rows; the ``column`` of a finding is the key."""
    if table.header != METADATA_HEADER:
        problems.append(
            error(
                METADATA,
                table.header_row,
                None,
                ",".join(table.header),
                "the header " + ",".join(METADATA_HEADER),
            )
        )
        return None
    keys = {k.name: k for k in METADATA_KEYS}
    values: dict[str, Value] = {}
    rows: dict[str, int] = {}
    for row in _limited(table, problems):
        key, text = row.cells
        if key not in keys:
            problems.append(
                error(METADATA, row.number, "key", key, "one of the keys " + ", ".join(keys))
            )
        elif key in rows:
            problems.append(
                error(METADATA, row.number, key, key, f"each key once (also on row {rows[key]})")
            )
        else:
            rows[key] = row.number
            try:
                values[keys[key].field] = parse_cell(keys[key], text)
            except CellError as e:
                problems.append(error(METADATA, row.number, key, text, e.expected))
    for k in METADATA_KEYS:
        if k.name not in rows:
            if k.required:
                problems.append(error(METADATA, None, k.name, None, f"a row with key {k.name}"))
            else:
                values[k.field] = None
    if len(values) != len(METADATA_KEYS):
        return None
    meta = CatalogMeta(**values)  # type: ignore[arg-type]
    if meta.quote_date and meta.valid_until and meta.valid_until < meta.quote_date:
        problems.append(
            error(
                METADATA,
                rows["valid_until"],
                "valid_until",
                meta.valid_until.isoformat(),
                f"a date on or after quote_date {meta.quote_date.isoformat()}",
            )
        )
    return meta


def _check_unique_skus(raw: RawCatalog, problems: list[Finding]) -> dict[str, tuple[str, int]]:
    """First (table, row) of every SKU of a thing to buy; reports every later use."""
    first: dict[str, tuple[str, int]] = {}
    for name in ITEM_TABLES:
        table = raw.tables.get(name)
        if table is None or "sku" not in table.header:
            continue
        at = table.header.index("sku")
        for row in table.rows[:MAX_ROWS_PER_TABLE]:
            sku = row.cells[at]
            if sku == "":
                continue
            if sku in first:
                where = first[sku]
                problems.append(
                    error(
                        name,
                        row.number,
                        "sku",
                        sku,
                        f"a SKU unique in the catalog (also {where[0]} row {where[1]})",
                    )
                )
            else:
                first[sku] = (name, row.number)
    return first


def _check_link_modules(rows: Rows, problems: list[Finding]) -> None:
    """A module's ports split its speed evenly; only transceivers have a side, only optics
    and fiber an optical connector, only cables two plugs (A/B), and only transceivers and
    fan-out copper or optical cables have several ports (a cable's two ends are fixed;
    fiber is priced per metre)."""
    for number, values in rows:
        ports = values.get("ports_per_module")
        kind, speed = values["kind"], _checked_int(values["speed_gbps"])
        if kind == "fiber" and ports not in (None, 1):
            expected = "empty or 1 for a fiber (priced per metre, it has no ports)"
            problems.append(error("links", number, "ports_per_module", ports, expected))
        elif ports is not None and speed % _checked_int(ports):
            expected = f"a divisor of speed_gbps {speed} (each port runs speed_gbps / ports)"
            problems.append(error("links", number, "ports_per_module", ports, expected))
        if kind != "transceiver" and values.get("side") not in (None, "any"):
            expected = f"empty or any for a {kind} (only a transceiver plugs into one end)"
            problems.append(error("links", number, "side", values["side"], expected))
        if kind not in ("transceiver", "fiber") and values.get("connector"):
            expected = f"empty for a {kind} (only optics and fiber have an optical connector)"
            problems.append(error("links", number, "connector", values["connector"], expected))
        plugs = str(values.get("form_factor") or "").split("/")
        if len(plugs) > 1 and (kind in ("transceiver", "fiber") or len(plugs) > 2 or "" in plugs):
            expected = (
                "one plug, or two as A/B on a cable (its wide end first on a fan-out cable)"
                if kind not in ("transceiver", "fiber")
                else f"one plug for a {kind} (only a cable has two ends of its own)"
            )
            problems.append(error("links", number, "form_factor", values["form_factor"], expected))


def _check_nic_planes(rows: Rows, problems: list[Finding]) -> None:
    """issue 16 (fabric800): each plane takes one of the card's ports."""
    for number, values in rows:
        planes, ports = values.get("planes"), _checked_int(values["ports"])
        if isinstance(planes, int) and ports and planes > ports:
            expected = f"at most ports ({ports}): one port per plane; empty means 1"
            problems.append(error("nics", number, "planes", planes, expected))


def _check_switch_cages(rows: Rows, problems: list[Finding]) -> None:
    """issue 16 (fabric800): a switch's ports fill whole cages."""
    for number, values in rows:
        per_cage, ports = values.get("ports_per_cage"), _checked_int(values["ports"])
        if isinstance(per_cage, int) and ports % per_cage:
            expected = f"a divisor of ports ({ports}): every cage holds as many; empty: not stated"
            problems.append(error("switches", number, "ports_per_cage", per_cage, expected))


def _check_switch_reduction(rows: Rows, problems: list[Finding]) -> None:
    """issue 14 (sharp): in-network reduction is modelled as InfiniBand SHARP, so only an
    InfiniBand switch may claim it (the optimizer's ideal-network bound relies on it)."""
    for number, values in rows:
        family = values.get("fabric_family")
        if values.get("in_network_reduction") is True and family != "infiniband":
            expected = f"false for a {family} switch: in-network reduction is InfiniBand SHARP"
            problems.append(error("switches", number, "in_network_reduction", "true", expected))


def _checked_int(value: Value) -> int:
    """A cell of an integer column that its table check has already accepted."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected a checked integer cell, got {value!r}")
    return value


def _check_price_breaks(
    rows: Mapping[str, Rows],
    sku_rows: Mapping[str, tuple[str, int]],
    all_skus_known: bool,
    problems: list[Finding],
) -> None:
    """Breaks name a known SKU, once per quantity, and never raise the unit price."""
    list_price = {v["sku"]: v["price_cents"] for t in ITEM_TABLES for _, v in rows.get(t, [])}
    by_sku: dict[str, list[tuple[int, int, int]]] = {}
    for number, v in rows["price_breaks"]:
        sku = str(v["sku"])
        if sku not in sku_rows:
            if all_skus_known:
                problems.append(
                    error(
                        "price_breaks",
                        number,
                        "sku",
                        sku,
                        "the SKU of a server, NIC, switch or link of this catalog",
                    )
                )
            continue
        by_sku.setdefault(sku, []).append(
            (_checked_int(v["min_quantity"]), number, _checked_int(v["unit_price_cents"]))
        )
    for sku, breaks in by_sku.items():
        previous: tuple[int, str] | None = None
        if sku in list_price:
            previous = (_checked_int(list_price[sku]), "the list price")
        seen: dict[int, int] = {}
        for quantity, number, cents in sorted(breaks):
            if quantity in seen:
                problems.append(
                    error(
                        "price_breaks",
                        number,
                        "min_quantity",
                        quantity,
                        f"one break per quantity for {sku} (also row {seen[quantity]})",
                    )
                )
                continue
            seen[quantity] = number
            if previous is not None and cents > previous[0]:
                problems.append(
                    error(
                        "price_breaks",
                        number,
                        "unit_price_usd",
                        format_usd(cents),
                        f"at most {format_usd(previous[0])}, {previous[1]}: a "
                        "larger quantity may not cost more per unit",
                    )
                )
            else:
                previous = (cents, f"the price from {quantity} units (row {number})")


def check_cloud_offers(offers: Rows, gpu_models: set[str] | None, problems: list[Finding]) -> None:
    """Each offer is priced, unique by provider and instance, and (when ``gpu_models`` is
    given) rents a GPU some servers row describes: the estimator takes the GPU's figures
    from that row, so an offer of an unknown GPU could not be timed."""
    seen: dict[tuple[str, str], int] = {}
    for number, v in offers:
        key = (str(v["provider"]), str(v["instance"]))
        if key in seen:
            expected = f"provider and instance unique together (also row {seen[key]})"
            problems.append(error("cloud_offers", number, "instance", key[1], expected))
        seen.setdefault(key, number)
        if v.get("on_demand_usd_per_gpu_hour") is None and (
            v.get("committed_usd_per_gpu_hour") is None
        ):
            expected = "a rate: on_demand_usd_per_gpu_hour, committed_usd_per_gpu_hour or both"
            problems.append(
                error("cloud_offers", number, "on_demand_usd_per_gpu_hour", "", expected)
            )
        if v.get("commitment_days") is not None and v.get("committed_usd_per_gpu_hour") is None:
            expected = "empty unless committed_usd_per_gpu_hour is given"
            problems.append(
                error("cloud_offers", number, "commitment_days", v["commitment_days"], expected)
            )
        model = str(v["gpu_model"])
        if gpu_models is not None and model not in gpu_models:
            known = ", ".join(sorted(gpu_models)) or "none: the catalog has no servers"
            problems.append(
                error(
                    "cloud_offers",
                    number,
                    "gpu_model",
                    model,
                    f"the gpu_model of a servers row ({known})",
                )
            )


def offer_rows(table: RawTable) -> tuple[list[tuple[int, dict[str, Value]]], list[Finding]]:
    """The valid rows of a cloud_offers table read on its own (the bundled offer table), and
    every problem found; GPU models are matched later, against the request's catalog."""
    problems: list[Finding] = []
    rows = _check_table(table, problems)
    check_cloud_offers(rows, None, problems)
    return rows, problems


def _check_builtin_nics(servers: Rows, nic_skus: set[str], problems: list[Finding]) -> None:
    """A server's built-in NICs are a nics row, given with their count, within its slots."""
    for number, v in servers:
        sku, count = str(v["builtin_nic_sku"]), _checked_int(v["builtin_nics"])
        if sku and sku not in nic_skus:
            problems.append(
                error("servers", number, "builtin_nic_sku", sku, "the SKU of a nics row")
            )
        if sku and count == 0:
            problems.append(
                error(
                    "servers",
                    number,
                    "builtin_nics",
                    count,
                    f"how many {sku} the server ships with (at least 1; both or neither given)",
                )
            )
        if count and not sku:
            problems.append(
                error(
                    "servers",
                    number,
                    "builtin_nic_sku",
                    "",
                    f"the nics SKU of its {count} built-in NICs (both or neither given)",
                )
            )
        slots = _checked_int(v["max_nics"])
        if count > slots:
            problems.append(
                error("servers", number, "builtin_nics", count, f"at most max_nics ({slots})")
            )


def _check_scale_up(servers: Rows, problems: list[Finding]) -> None:
    """A scale-up domain and a host are each a whole share of the row's GPUs."""
    for number, v in servers:
        gpus = _checked_int(v["gpus_per_node"])
        for column in ("scale_up_gpus", "gpus_per_host"):
            value = v.get(column)
            if isinstance(value, int) and gpus and gpus % value:
                problems.append(
                    error(
                        "servers",
                        number,
                        column,
                        value,
                        f"a divisor of gpus_per_node ({gpus}); empty means gpus_per_node",
                    )
                )


# --- warnings -----------------------------------------------------------------------------------


def catalog_warnings(
    catalog: Catalog, *, today: date | None = None, rows: Mapping[str, int] | None = None
) -> list[Finding]:
    """Findings that do not stop a catalog from being used: an expired quote, empty tables,
    NICs that no switch or link in the catalog matches. ``rows`` maps SKU to row number."""
    found: list[Finding] = []
    today = today or date.today()
    until = catalog.meta.valid_until
    if until is not None and until < today:
        found.append(
            warning(
                METADATA,
                None,
                "valid_until",
                until.isoformat(),
                f"a quote still valid on {today.isoformat()}; prices may have "
                "changed since it expired",
            )
        )
    for table in REQUIRED_TABLES:
        if not getattr(catalog, table):
            found.append(
                warning(
                    table, None, None, None, "at least one row; nothing of this kind can be bought"
                )
            )
    for nic in catalog.nics:
        found.extend(_nic_warnings(catalog, nic, (rows or {}).get(nic.sku)))
    found.extend(
        _gpu_warning(server, (rows or {}).get(server.sku))
        for server in catalog.servers
        if generation(server.gpu_model).name == "default"
    )
    return found


def _gpu_warning(server: Server, row: int | None) -> Finding:
    """A GPU no generation of the time model is calibrated for: timed as the generation its
    peak and memory identify (timed_gpu_model), else with the default generation's constants."""
    timed = timed_gpu_model(server.gpu_model, server.gpu_peak_bf16_tflops, server.gpu_memory_gb)
    known = ", ".join(CALIBRATED_GENERATIONS)
    how = (
        f"timed as {generation(timed).name}, whose dense BF16 peak and memory this row states"
        if timed != server.gpu_model
        else "no calibrated generation has this row's peak and memory: timed with the default "
        "generation (H100's efficiency, a wider range)"
    )
    return warning("servers", row, "gpu_model", server.gpu_model, f"a GPU of {known}; {how}")


def _nic_warnings(catalog: Catalog, nic: Nic, row: int | None) -> list[Finding]:
    """The units check: for at least one protocol the NIC speaks, some switch must serve its
    speed (directly or by breakout) and some link must carry it, by the topology module's
    compatibility rules, which the optimizer applies in full."""
    speed = nic.speed_gbps
    for fabric in nic.protocols:
        if any(
            switch_fits_fabric(s, fabric) and ports_at_speed(s, speed) > 0 for s in catalog.switches
        ) and any(link_fits(k, speed, fabric) for k in catalog.links):
            return []
    return [
        warning(
            "nics",
            row,
            "speed_gbps",
            speed,
            f"a switch port (or breakout) and a link of {speed} Gb/s for a protocol "
            f"{nic.sku} speaks ({', '.join(sorted(nic.protocols))}; RoCE needs a "
            "lossless switch): nothing in this catalog can connect it",
        )
    ]
