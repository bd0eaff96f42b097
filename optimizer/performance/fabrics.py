"""Fabric profiles as data: efficiency, latency and host-CPU cost per protocol family.

The defaults live in ``fabrics.csv``, package data of this module (read through
``importlib.resources``, so an installed wheel finds it), each row with its source. Users may
pass their own table (same columns) to ``load_fabrics``; every default is a range
(low / expected / high) so the estimator can report a range of training times.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from optimizer.errors import InvalidInput

DEFAULT_FABRICS_CSV: Traversable = files("optimizer.performance") / "fabrics.csv"
SCENARIOS = ("expected", "optimistic", "pessimistic")


@dataclass(frozen=True, eq=False)  # identity hash: profiles key the estimator's scenario cache
class FabricProfile:
    """How one protocol family turns line rate into delivered bandwidth and latency.

    ``efficiency`` is delivered / line-rate bandwidth (the seed article's efficiency factor);
    ``host_cpu_cycles_per_byte`` is the kernel-stack cost of TCP (0 for RDMA), spent on
    ``host_network_cpu_ghz_per_node`` of host CPU.
    """

    fabric: str
    efficiency_low: float
    efficiency_expected: float
    efficiency_high: float
    base_latency_us_low: float
    base_latency_us_expected: float
    base_latency_us_high: float
    per_hop_latency_ns: float
    host_cpu_cycles_per_byte_low: float
    host_cpu_cycles_per_byte_expected: float
    host_cpu_cycles_per_byte_high: float
    host_network_cpu_ghz_per_node: float
    source: str = ""
    # issue 14: the switches spread flows over their uplinks per packet or per flowlet
    # (InfiniBand adaptive routing, Spectrum-X) instead of hashing each flow onto one (ECMP).
    adaptive_routing: bool = False

    def efficiency(self, scenario: str) -> float:
        """Bandwidth efficiency in a scenario (optimistic = high efficiency)."""
        return {
            "expected": self.efficiency_expected,
            "optimistic": self.efficiency_high,
            "pessimistic": self.efficiency_low,
        }[scenario]

    def base_latency_s(self, scenario: str) -> float:
        return (
            1e-6
            * {
                "expected": self.base_latency_us_expected,
                "optimistic": self.base_latency_us_low,
                "pessimistic": self.base_latency_us_high,
            }[scenario]
        )

    def host_cpu_s_per_byte(self, scenario: str) -> float:
        """Host CPU seconds a node spends per byte it sends (0 for RDMA fabrics)."""
        cycles = {
            "expected": self.host_cpu_cycles_per_byte_expected,
            "optimistic": self.host_cpu_cycles_per_byte_low,
            "pessimistic": self.host_cpu_cycles_per_byte_high,
        }[scenario]
        return cycles / (self.host_network_cpu_ghz_per_node * 1e9)


FabricTable = dict[str, FabricProfile]

_FLOAT_COLUMNS = [
    f
    for f in FabricProfile.__dataclass_fields__
    if f not in ("fabric", "source", "adaptive_routing")
]
_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no")


# Fabrics whose switches route adaptively when a table does not say (an older table, or a
# request's fabric_profiles row, which has no such field): InfiniBand's adaptive routing is
# a property of the family (NVIDIA Quantum switches); Ethernet families hash flows (ECMP).
ADAPTIVE_ROUTING_BY_DEFAULT = frozenset({"infiniband"})


def _flag(row: Mapping[str, object], column: str, where: str, field: str, default: bool) -> bool:
    """An optional yes/no column (absent or empty: ``default``), so older tables keep
    loading."""
    raw = row.get(column)
    if isinstance(raw, bool):
        return raw
    text = str(raw if raw is not None else "").strip().lower()
    if not text:
        return default
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    msg = f"{where}, column {column}: expected 1/0, true/false or yes/no, got {raw!r}"
    raise InvalidInput(msg, field=field)


def profile_from_mapping(row: Mapping[str, object], where: str, field: str) -> FabricProfile:
    """Validate one fabric row (a CSV row or a request's override) into a profile.

    ``where`` locates the row in messages (e.g. "fabrics.csv, row 3"); ``field`` is the
    request field reported in the error.
    """
    fabric = str(row.get("fabric") or "").strip().lower()
    if not fabric:
        raise InvalidInput(f"{where}: fabric name is required", field=field)
    values: dict[str, float] = {}
    for col in _FLOAT_COLUMNS:
        raw = row.get(col)
        try:
            value = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            value = float("nan")
        if not value >= 0:
            msg = f"{where}, column {col}: expected a number >= 0, got {raw!r}"
            raise InvalidInput(msg, field=field)
        values[col] = value
    for kind in ("efficiency", "base_latency_us", "host_cpu_cycles_per_byte"):
        low, mid, high = (values[f"{kind}_{x}"] for x in ("low", "expected", "high"))
        if not low <= mid <= high:
            msg = f"{where}: expected {kind}_low <= {kind}_expected <= {kind}_high"
            raise InvalidInput(msg, field=field)
    if not (values["efficiency_low"] > 0 and values["efficiency_high"] <= 1):
        raise InvalidInput(f"{where}: efficiencies must lie in (0, 1]", field=field)
    if values["host_network_cpu_ghz_per_node"] <= 0:
        msg = f"{where}: host_network_cpu_ghz_per_node must be > 0"
        raise InvalidInput(msg, field=field)
    return FabricProfile(
        fabric=fabric,
        source=str(row.get("source") or ""),
        adaptive_routing=_flag(
            row, "adaptive_routing", where, field, fabric in ADAPTIVE_ROUTING_BY_DEFAULT
        ),
        **values,
    )


def load_fabrics(path: Path | str | Traversable = DEFAULT_FABRICS_CSV) -> FabricTable:
    """Read a fabric table (CSV with the columns of ``fabrics.csv``)."""
    if isinstance(path, str):
        path = Path(path)
    text = path.read_text(encoding="utf-8-sig")  # a spreadsheet's export may start with a BOM
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    table = {
        p.fabric: p
        for p in (
            profile_from_mapping(r, f"{path.name}, row {i + 2}", "fabrics")
            for i, r in enumerate(rows)
        )
    }
    if not table:
        raise InvalidInput(f"{path.name} has no rows", field="fabrics")
    return table


def fabric_profile(fabrics: FabricTable, fabric: str) -> FabricProfile:
    try:
        return fabrics[fabric]
    except KeyError:
        msg = f"unknown fabric {fabric!r}; expected one of {', '.join(sorted(fabrics))}"
        raise InvalidInput(msg, field="cluster.fabric") from None


DEFAULT_FABRICS: FabricTable = load_fabrics()
