"""The cost-time Pareto frontier over designs from one or many optimize responses.

Designs are only comparable for the same training run, so a sweep over several workloads has
one frontier per workload (``Front``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from optimizer._pb.procurement.v1 import optimize_pb2


@dataclass(frozen=True)
class Front:
    """The frontier of one workload: its label and its points, cheapest first."""

    workload: str
    points: list[optimize_pb2.ParetoPoint]


def workload_label(request: optimize_pb2.OptimizeRequest) -> str:
    """What the training run is, for a legend or a column: preset name and token count."""
    w = request.workload
    if request.workloads:  # issue 17 (portfolio): every workload, each with its tokens
        first = [w] if request.HasField("workload") else []
        each = [optimize_pb2.OptimizeRequest(workload=m) for m in first]
        each += [optimize_pb2.OptimizeRequest(workload=e.workload) for e in request.workloads]
        return " + ".join(workload_label(r) for r in each)
    name = w.model or "custom workload"
    return f"{name}, {w.training_tokens:.3g} tokens" if w.training_tokens else name


def point_of(design: optimize_pb2.Design) -> optimize_pb2.ParetoPoint:
    """A design as a point in the cost-time plane, with what the plot labels it by."""
    return optimize_pb2.ParetoPoint(
        capex_usd=design.capex_usd,
        training_time_hours=design.training_time_hours,
        gpus=design.gpus,
        server_sku=design.server_sku,
        fabric=design.fabric,
        topology=design.topology,
        oversubscription=design.oversubscription,
        fabric_kind=design.fabric_kind,
        topology_family=design.topology_family,
    )


def point_key(point: optimize_pb2.ParetoPoint) -> bytes:
    """Equal for the same design (where it sits and what labels it); hashable. A figure
    derived from it is left out: a frontier point carries ``tco_usd``, a ranked design's
    point does not, and keyed on it the same design was drawn twice, the frontier-only copy
    on top of the ranked one, whose bill of materials no click then reached."""
    bare = optimize_pb2.ParetoPoint()
    bare.CopyFrom(point)
    bare.ClearField("tco_usd")
    return bare.SerializeToString(deterministic=True)


def points_of(responses: Iterable[optimize_pb2.OptimizeResponse]) -> list[optimize_pb2.ParetoPoint]:
    """Every ranked design and every frontier point the responses report, without repeats."""
    seen: set[bytes] = set()
    points = []
    for resp in responses:
        for point in [*(point_of(d) for d in resp.designs), *resp.pareto]:
            key = point_key(point)
            if key not in seen:
                seen.add(key)
                points.append(point)
    return points


def frontier(points: Iterable[optimize_pb2.ParetoPoint]) -> list[optimize_pb2.ParetoPoint]:
    """The non-dominated points (no other point is both cheaper-or-equal and faster-or-equal
    and better in one), cheapest first."""
    ordered = sorted(
        points,
        key=lambda p: (
            p.capex_usd,
            p.training_time_hours,
            p.gpus,
            p.server_sku,
            p.fabric,
            p.topology,
        ),
    )
    front: list[optimize_pb2.ParetoPoint] = []
    best_hours = math.inf
    for point in ordered:
        if point.training_time_hours < best_hours:
            front.append(point)
            best_hours = point.training_time_hours
    return front
