"""The one core API that the service and the CLI call."""

from __future__ import annotations

from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.performance.convert import request_from_proto, response_to_proto
from optimizer.performance.planner import plan_and_estimate


def estimate(request: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse:
    """Training time of the request's workload on its cluster; the planner fills any
    parallel degree the request leaves out.

    Raises ``InvalidInput`` (naming the field) for a bad request and ``PlanInfeasible`` when
    no plan fits in GPU memory.
    """
    workload, cluster, fixed, fabrics = request_from_proto(request)
    return response_to_proto(plan_and_estimate(workload, cluster, fixed, fabrics))
