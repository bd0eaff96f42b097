"""A design as one flat row: the single place a ``Design`` message becomes table columns.

``procure optimize --format csv|xlsx`` writes one row per ranked design, ``procure sweep``
and the batch runner one row per scenario with its rank-1 design; all three call
``design_row`` (or ``rank1_row``), so a column means the same thing in every output and a new
column is added once. Plain Python on the protobuf messages: no pandas at import, so the CLI
can import it while it starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from optimizer._pb.procurement.v1 import optimize_pb2

# issue 17 (tco): the design's lifetime cost; the breakdown columns read its ``tco`` message.
TCO_COLUMNS: tuple[str, ...] = (
    "tco_usd",
    "tco_energy_usd",
    "tco_support_usd",
    "tco_space_usd",
    "tco_depreciation_usd_per_year",
)

# issue 17 (facility): what the design asks of the hall beyond power and racks.
FACILITY_COLUMNS: tuple[str, ...] = ("floor_positions", "cooling", "rack_kw")

# Every column a design flattens to, in table order; units are in the names.
DESIGN_COLUMNS: tuple[str, ...] = (
    "rank",
    "gpus",
    "nodes",
    "server_sku",
    "nic_sku",
    "fabric",
    "topology",
    "oversubscription",
    "capex_usd",
    "network_share",
    "network_time_share",
    "scale_out_gbps_per_gpu",
    "training_time_hours",
    "training_time_hours_low",
    "training_time_hours_high",
    "power_kw",
    "racks",
    "binding",
    # issue 17 (tco): the lifetime cost and its terms (net present cost over the years)
    *TCO_COLUMNS,
    # issue 17 (facility): what the design asks of the hall.
    *FACILITY_COLUMNS,
    # issue 17 (portfolio): empty/0 for one workload
    "workload_hours",  # each workload's own time: "NAME=HOURS;NAME=HOURS"
    "worst_time_over_target",
    "year_share",
)
# Columns holding catalog text (SKU names): the ones a CSV writer must make formula-safe.
TEXT_COLUMNS = frozenset({"server_sku", "nic_sku", "workload_hours"})

Value = str | int | float | None


def _same(text: str) -> str:
    return text


def _value(design: optimize_pb2.Design, column: str) -> Value:
    if column == "network_share":
        return design.cost.network_share
    if column == "binding":
        return ";".join(design.binding)
    if column in TCO_COLUMNS[1:]:  # issue 17 (tco)
        value_usd: float = getattr(design.tco, column.removeprefix("tco_"))
        return value_usd
    if column == "workload_hours":  # issue 17 (portfolio)
        return ";".join(f"{w.workload}={w.training_time_hours:.6g}" for w in design.workload_times)
    value: Value = getattr(design, column)
    return value


def design_row(
    design: optimize_pb2.Design | None,
    columns: Sequence[str] = DESIGN_COLUMNS,
    *,
    text: Callable[[str], str] = _same,
) -> dict[str, Value]:
    """``design`` as ``{column: value}`` for ``columns``; every value None when there is no
    design (a scenario that found none), so the row keeps its shape.

    ``text`` transforms the catalog-text columns (pass ``safe_text`` for CSV/XLSX output).
    Raises ``KeyError`` naming a column that is not one of ``DESIGN_COLUMNS``.
    """
    unknown = [c for c in columns if c not in DESIGN_COLUMNS]
    if unknown:
        raise KeyError(f"unknown design column {unknown[0]!r}; expected one of {DESIGN_COLUMNS}")
    if design is None:
        return dict.fromkeys(columns)
    row: dict[str, Value] = {}
    for column in columns:
        value = _value(design, column)
        row[column] = text(value) if column in TEXT_COLUMNS and isinstance(value, str) else value
    return row


def rank1_row(
    response: optimize_pb2.OptimizeResponse | None,
    columns: Sequence[str] = DESIGN_COLUMNS,
    *,
    text: Callable[[str], str] = _same,
) -> dict[str, Value]:
    """The rank-1 design of ``response`` as a row (all None when it has no design)."""
    best = response.designs[0] if response is not None and response.designs else None
    return design_row(best, columns, text=text)
