"""What a report page shows, as plain records built from the response messages.

A report is a list of ``Scenario`` (a request and its response, or the error that stopped it).
``design_points`` turns them into the points of the cost-time chart: every design a response
reports, ranked (with its bill of materials) or only on its frontier (without one), once per
catalog. Nothing here imports a plotting library.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.reporting.frontier import point_key as frontier_point_key
from optimizer.reporting.frontier import point_of, workload_label

# The Design field a total-cost-of-ownership figure would use; shown on hover when a
# response carries it (no current response does).
TCO_FIELD = "tco_usd"


@dataclass(frozen=True)
class Scenario:
    """One question and its answer: a response, or the error that stopped it."""

    request: optimize_pb2.OptimizeRequest
    response: optimize_pb2.OptimizeResponse | None
    error: str = ""
    label: str = ""  # how tables name it: "1", a batch scenario id, ...
    vendor: str = ""  # the catalog's vendor, where the caller knows it (batch)

    @property
    def catalog(self) -> str:
        """The catalog as the page labels it: the reference asked for, with its vendor."""
        ref = self.request.catalog or "(no catalog)"
        return f"{ref} ({self.vendor})" if self.vendor else ref

    @property
    def reason(self) -> str:
        """Why there is no design (empty when there is one)."""
        if self.error:
            return self.error
        assert self.response is not None
        if self.response.designs:
            return ""
        return self.response.diagnosis or self.response.status


@dataclass(frozen=True)
class DesignPoint:
    """One design in the cost-time plane and what the page says about it."""

    scenario: int  # index into the report's scenarios (the first that reported it)
    catalog: str
    workload: str
    capex_usd: float
    training_time_hours: float
    gpus: int
    server_sku: str
    fabric: str
    topology: str
    oversubscription: float
    design: optimize_pb2.Design | None  # None: reported on the frontier only, no BOM

    @property
    def training_time_hours_low(self) -> float | None:
        return self.design.training_time_hours_low if self.design is not None else None

    @property
    def training_time_hours_high(self) -> float | None:
        return self.design.training_time_hours_high if self.design is not None else None

    @property
    def tco_usd(self) -> float | None:
        """Total cost of ownership when the response carries one."""
        d = self.design
        if d is None or TCO_FIELD not in d.DESCRIPTOR.fields_by_name:
            return None
        value = getattr(d, TCO_FIELD)
        return float(value) if value else None


def point_key(catalog: str, p: optimize_pb2.ParetoPoint) -> tuple[str, bytes]:
    """Equal for the same design in the same catalog; hashable."""
    return catalog, frontier_point_key(p)


def design_points(scenarios: Sequence[Scenario]) -> list[DesignPoint]:
    """Every design the responses report, once per catalog: ranked designs first (they carry
    a bill of materials), then frontier points no ranked design repeats."""
    seen: set[tuple[str, bytes]] = set()
    points: list[DesignPoint] = []

    def add(
        i: int, s: Scenario, p: optimize_pb2.ParetoPoint, d: optimize_pb2.Design | None
    ) -> None:
        key = point_key(s.catalog, p)
        if key in seen:
            return
        seen.add(key)
        points.append(
            DesignPoint(
                scenario=i,
                catalog=s.catalog,
                workload=workload_label(s.request),
                capex_usd=p.capex_usd,
                training_time_hours=p.training_time_hours,
                gpus=p.gpus,
                server_sku=p.server_sku,
                fabric=p.fabric,
                topology=p.topology,
                oversubscription=p.oversubscription,
                design=d,
            )
        )

    answered = [(i, s, s.response) for i, s in enumerate(scenarios) if s.response is not None]
    for i, s, resp in answered:
        for d in resp.designs:
            add(i, s, point_of(d), d)
    for i, s, resp in answered:
        for p in resp.pareto:
            add(i, s, p, None)
    return points


def frontier(points: Iterable[DesignPoint]) -> list[DesignPoint]:
    """The points no other point beats on both capex and training time, cheapest first."""
    ordered = sorted(points, key=lambda p: (p.capex_usd, p.training_time_hours))
    front: list[DesignPoint] = []
    best_hours = math.inf
    for p in ordered:
        if p.training_time_hours < best_hours:
            front.append(p)
            best_hours = p.training_time_hours
    return front


def top_designs(scenarios: Sequence[Scenario], limit: int) -> list[DesignPoint]:
    """The designs worth a cost breakdown, cheapest first: one scenario's ranked designs;
    of many scenarios, the distinct rank-1 designs on a workload's frontier (all rank-1
    designs when none is)."""
    points = design_points(scenarios)
    with_bom = [p for p in points if p.design is not None]
    if sum(s.response is not None for s in scenarios) == 1:
        return with_bom[:limit]
    on_front = {
        id(p)
        for workload in {p.workload for p in points}
        for p in frontier(q for q in points if q.workload == workload)
    }
    rank1 = [p for p in with_bom if p.design is not None and p.design.rank == 1]
    chosen = [p for p in rank1 if id(p) in on_front] or rank1
    return sorted(chosen, key=lambda p: (p.capex_usd, p.training_time_hours))[:limit]


def batch_scenarios(responses_jsonl: str | Path, vendors: dict[str, str]) -> list[Scenario]:
    """The scenarios of a batch directory's ``responses.jsonl`` (one JSON document a line:
    request, response or error); ``vendors`` maps catalog id to vendor name."""
    path = Path(responses_jsonl)
    scenarios = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
                request = json_format.ParseDict(
                    doc["request"], optimize_pb2.OptimizeRequest(), ignore_unknown_fields=True
                )
                request.catalog = doc.get("catalog") or request.catalog
                response = (
                    json_format.ParseDict(
                        doc["response"], optimize_pb2.OptimizeResponse(), ignore_unknown_fields=True
                    )
                    if doc.get("response") is not None
                    else None
                )
            except (ValueError, KeyError, json_format.ParseError) as e:
                raise InvalidInput(
                    f"line {n}: expected a batch response document ({e})", field=path.name
                ) from None
            scenarios.append(
                Scenario(
                    request=request,
                    response=response,
                    error=doc.get("error") or "",
                    label=str(doc.get("scenario_id", n))[:12],  # a prefix to grep for
                    vendor=vendors.get(doc.get("catalog_id", ""), "") or "",
                )
            )
    return scenarios
