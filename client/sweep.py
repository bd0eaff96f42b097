"""Budget scenario sweeps: many optimize requests, one row per scenario, one frontier per
workload.

Scenarios come from a grid (catalogs x workloads x budgets x targets) or from a scenario file
in the batch spec format (optimizer.batch.spec: JSON, YAML or CSV). They run through the
transport's ``batch_optimize`` (in this process, or BatchOptimize on a server), so a sweep
against a server gives the same rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from client.render import fabric_label, hours, money, to_dict, topology_label
from client.transport import Transport
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.reporting.frontier import (
    Front,
    frontier,
    point_key,
    point_of,
    points_of,
    workload_label,
)
from optimizer.rows import FACILITY_COLUMNS, TCO_COLUMNS, design_row
from optimizer.topology.export import safe_text

if TYPE_CHECKING:
    import pandas as pd

# The rank-1 design's columns of a scenario row.
DESIGN_COLUMNS = (
    "gpus",
    "server_sku",
    "fabric",
    "topology",
    "oversubscription",
    "capex_usd",
    "training_time_hours",
    "network_share",
    # issue 17 (tco)
    *TCO_COLUMNS,
    *FACILITY_COLUMNS,  # issue 17 (facility)
)


@dataclass(frozen=True)
class Outcome:
    """One scenario and what came of it: a response, or the input error that stopped it."""

    index: int  # 1-based, as printed
    request: optimize_pb2.OptimizeRequest
    response: optimize_pb2.OptimizeResponse | None
    error: str = ""

    @property
    def best(self) -> optimize_pb2.Design | None:
        return self.response.designs[0] if self.response and self.response.designs else None

    @property
    def reason(self) -> str:
        """Why there is no design (empty when there is one)."""
        if self.error:
            return self.error
        assert self.response is not None
        return "" if self.response.designs else self.response.diagnosis or self.response.status

    @property
    def status(self) -> str:
        return "ERROR" if self.response is None else self.response.status

    def row(self) -> dict[str, object]:
        """The scenario's inputs and its rank-1 design, flat, with units in the names."""
        req, best = self.request, self.best
        c = req.constraints
        return {
            "scenario": self.index,
            "catalog": safe_text(req.catalog),
            "workload": safe_text(req.workload.model or "custom"),
            "training_tokens": req.workload.training_tokens or None,
            "objective": req.objective or "min_cost",
            "budget_usd": c.budget_usd if c.HasField("budget_usd") else None,
            "target_training_hours": (
                c.target_training_hours if c.HasField("target_training_hours") else None
            ),
            "status": self.status,
            **design_row(best, DESIGN_COLUMNS, text=safe_text),
            "reason": safe_text(self.reason) or None,
        }


def grid_requests(
    base: optimize_pb2.OptimizeRequest,
    *,
    catalogs: Sequence[str] = (),
    workloads: Sequence[str] = (),
    budgets_usd: Sequence[float] = (),
    targets_hours: Sequence[float] = (),
) -> list[optimize_pb2.OptimizeRequest]:
    """``base`` under every combination of the given axes (an empty axis keeps base's value).

    Without an explicit objective a grid with targets minimises cost and a budget-only grid
    minimises time, so every cell is a well-posed question.
    """
    requests = []
    unset: list[None] = [None]  # an empty axis: one cell that keeps base's value
    for catalog, workload, budget, target in itertools.product(
        catalogs or unset, workloads or unset, budgets_usd or unset, targets_hours or unset
    ):
        req = optimize_pb2.OptimizeRequest()
        req.CopyFrom(base)
        if catalog is not None:
            req.catalog = catalog
        if workload is not None:
            req.workload.model = workload
        if budget is not None:
            req.constraints.budget_usd = budget
        if target is not None:
            req.constraints.target_training_hours = target
        if not req.objective:
            has_target = req.constraints.HasField("target_training_hours")
            req.objective = "min_cost" if has_target else "min_time"
        requests.append(req)
    return requests


def file_requests(
    path: str, overrides: optimize_pb2.OptimizeRequest
) -> list[optimize_pb2.OptimizeRequest]:
    """The scenarios of a batch-format spec file, each with ``overrides`` merged on top."""
    from optimizer.batch.spec import load_spec, union_parts

    requests = []
    for row in load_spec(path).rows:
        req = optimize_pb2.OptimizeRequest()
        req.CopyFrom(row.request)
        req.catalog, *more = union_parts(row.catalog_ref)  # a union: catalog + catalogs
        req.catalogs.extend(more)
        req.MergeFrom(overrides)
        requests.append(req)
    return requests


def run_sweep(
    requests: Sequence[optimize_pb2.OptimizeRequest],
    transport: Transport,
    progress: Callable[[int], None] = lambda done: None,
) -> list[Outcome]:
    """Solve every scenario (one batch through ``transport``); outcomes in request order.

    A scenario whose values the optimizer rejects becomes an error row; any other error (a
    missing catalog, an unreachable server) stops the sweep, embedded or remote alike.
    """
    outcomes: dict[int, Outcome] = {}
    for item in transport.batch_optimize(requests):
        if item.error is not None and not isinstance(item.error, InvalidInput):
            raise item.error
        error = "" if item.error is None else str(item.error)
        outcomes[item.index] = Outcome(item.index + 1, requests[item.index], item.response, error)
        progress(len(outcomes))
    return [outcomes[i] for i in sorted(outcomes)]


def sweep_points(outcomes: Sequence[Outcome]) -> list[optimize_pb2.ParetoPoint]:
    """Every design any scenario reported (ranked or on its own frontier), once each."""
    return points_of(o.response for o in outcomes if o.response is not None)


def sweep_fronts(outcomes: Sequence[Outcome]) -> list[Front]:
    """One frontier per workload, over every design its scenarios reported."""
    by_workload: dict[str, list[optimize_pb2.OptimizeResponse]] = {}
    for o in outcomes:
        if o.response is not None:
            by_workload.setdefault(workload_label(o.request), []).append(o.response)
    return [
        Front(label, frontier(points_of(responses))) for label, responses in by_workload.items()
    ]


def top_designs(outcomes: Sequence[Outcome], fronts: Sequence[Front]) -> list[optimize_pb2.Design]:
    """The distinct rank-1 designs that lie on a frontier (all of them if none does),
    cheapest first: the ones worth a cost breakdown."""
    distinct: dict[bytes, optimize_pb2.Design] = {}
    for o in outcomes:
        if o.best is not None:
            distinct.setdefault(point_key(point_of(o.best)), o.best)
    on_front = {point_key(p) for f in fronts for p in f.points}
    designs = sorted(distinct.values(), key=lambda d: (d.capex_usd, d.training_time_hours))
    return [d for d in designs if point_key(point_of(d)) in on_front] or designs


def scenarios_frame(outcomes: Sequence[Outcome]) -> pd.DataFrame:
    import pandas as pd

    # Nullable integers: a scenario without a design leaves them empty, not 8.0-style floats.
    return pd.DataFrame([o.row() for o in outcomes]).astype({"gpus": "Int64"})


def frontier_frame(fronts: Sequence[Front]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame([{"workload": f.workload, **to_dict(p)} for f in fronts for p in f.points])


def sweep_document(outcomes: Sequence[Outcome], fronts: Sequence[Front]) -> dict[str, object]:
    """The sweep as JSON: each scenario's OptimizeRequest and OptimizeResponse (or error) in
    protobuf JSON, and each workload's frontier as ParetoPoint messages."""
    return {
        "scenarios": [
            {
                "scenario": o.index,
                "request": to_dict(o.request),
                **({"response": to_dict(o.response)} if o.response else {}),
                **({"error": o.error} if o.error else {}),
            }
            for o in outcomes
        ],
        "frontier": [
            {"workload": f.workload, "points": [to_dict(p) for p in f.points]} for f in fronts
        ],
    }


def sweep_table(outcomes: Sequence[Outcome]) -> Table:
    table = Table(title=f"budget sweep: {len(outcomes):,} scenarios, rank-1 design each")
    for name, justify in (
        ("#", "right"),
        ("catalog", "left"),
        ("workload", "left"),
        ("budget", "right"),
        ("target (h)", "right"),
        ("objective", "left"),
        ("GPUs", "right"),
        ("fabric", "left"),
        ("topology", "left"),
        ("capex", "right"),
        ("time (h)", "right"),
        ("network", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for o in outcomes:
        c, best = o.request.constraints, o.best
        inputs = [
            str(o.index),
            o.request.catalog,
            o.request.workload.model or "custom",
            money(c.budget_usd) if c.HasField("budget_usd") else "-",
            hours(c.target_training_hours) if c.HasField("target_training_hours") else "-",
            (o.request.objective or "min_cost").replace("_", "-"),
        ]
        if best is None:
            table.add_row(*inputs, "-", "no design", "", "", "", "", style="dim")
            continue
        table.add_row(
            *inputs,
            f"{best.gpus:,}",
            fabric_label(best.fabric, best.topology),
            topology_label(best.topology, best.oversubscription),
            money(best.capex_usd),
            hours(best.training_time_hours),
            f"{best.cost.network_share:.1%}",
        )
    return table


def narrow_sweep_table(outcomes: Sequence[Outcome]) -> Table:
    """The sweep table for a narrow terminal: inputs and design wrap, numbers stay whole."""
    from client.narrow import design_label

    table = Table(title=f"budget sweep: {len(outcomes):,} scenarios, rank-1 design each")
    table.add_column("#", justify="right")
    table.add_column("scenario", overflow="fold")
    table.add_column("design", overflow="fold")
    for name in ("capex", "time (h)", "network"):
        table.add_column(name, justify="right", no_wrap=True)
    for o in outcomes:
        c, best = o.request.constraints, o.best
        scenario = " ".join(
            [
                o.request.catalog,
                o.request.workload.model or "custom",
                *([f"budget {money(c.budget_usd)}"] if c.HasField("budget_usd") else []),
                *(
                    [f"target {hours(c.target_training_hours)} h"]
                    if c.HasField("target_training_hours")
                    else []
                ),
                (o.request.objective or "min_cost").replace("_", "-"),
            ]
        )
        if best is None:
            table.add_row(str(o.index), scenario, "no design", "", "", "", style="dim")
            continue
        table.add_row(
            str(o.index),
            scenario,
            design_label(best),
            money(best.capex_usd),
            hours(best.training_time_hours),
            f"{best.cost.network_share:.1%}",
        )
    return table


def frontier_table(front: Front) -> Table:
    table = Table(
        title=f"cost-time Pareto frontier of {front.workload} ({len(front.points)} designs)"
    )
    for name in ("capex", "time (h)", "GPUs"):
        table.add_column(name, justify="right", no_wrap=True)
    for name in ("server", "fabric", "topology"):
        table.add_column(name, overflow="fold")
    for p in front.points:
        table.add_row(
            money(p.capex_usd),
            hours(p.training_time_hours),
            f"{p.gpus:,}",
            p.server_sku,
            fabric_label(p.fabric, p.topology),
            topology_label(p.topology, p.oversubscription),
        )
    return table


def print_sweep(outcomes: Sequence[Outcome], fronts: Sequence[Front], out: Console) -> None:
    from client.narrow import Fit

    out.print(Fit(sweep_table(outcomes), narrow_sweep_table(outcomes)))
    for o in outcomes:
        if o.best is None:
            out.print(f"scenario {o.index}: no design: {o.reason}")
    for front in fronts:
        out.print(frontier_table(front))
