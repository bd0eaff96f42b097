"""The one core API that the service and the CLI call."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog.canonical import content_hash
from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import resolve_catalog
from optimizer.errors import InvalidInput
from optimizer.optimize.convert import fixed_plan_from_proto, response_from_result, spec_from_proto
from optimizer.optimize.solve import optimize as run_optimizer
from optimizer.performance.convert import request_from_proto, response_to_proto
from optimizer.performance.planner import plan_and_estimate
from optimizer.request_limits import check_estimate, check_optimize


def estimate(
    request: estimate_pb2.EstimateRequest,
    *,
    data_dir: str | None = None,
    tenant: str = "default",
    catalog: Catalog | None = None,
) -> estimate_pb2.EstimateResponse:
    """Training time of the request's workload on its cluster; the planner fills any
    parallel degree the request leaves out.

    ``cluster.server_sku`` is looked up in ``catalog`` or, when not given, in the request's
    catalog reference resolved for ``tenant``. Raises ``InvalidInput`` (naming the field) for
    a bad request and ``PlanInfeasible`` when no plan fits in GPU memory.
    """
    check_estimate(request)
    if catalog is None and request.cluster.server_sku and request.catalog:
        catalog = resolve_catalog(request.catalog, data_dir=data_dir, tenant=tenant)
    workload, cluster, fixed, fabrics = request_from_proto(request, catalog)
    return response_to_proto(plan_and_estimate(workload, cluster, fixed, fabrics))


def optimize(
    request: optimize_pb2.OptimizeRequest,
    *,
    data_dir: str | None = None,
    tenant: str = "default",
    catalog: Catalog | None = None,
    stop: threading.Event | None = None,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> optimize_pb2.OptimizeResponse:
    """Ranked, verified designs for the request over its catalog.

    ``catalog`` overrides the request's catalog reference (the batch runner ships catalog
    content to workers); otherwise ``request.catalog`` is resolved as a path, a bundled catalog
    name, or a stored catalog of ``tenant``. ``stop`` cancels; ``progress`` receives the
    optimizer's progress events (optimizer.optimize.solve.optimize). Infeasible is a status in
    the response, not an error; bad input raises ``InvalidInput`` naming the field.
    """
    check_optimize(request)
    spec = spec_from_proto(request)
    if catalog is None:
        if not request.catalog:
            raise InvalidInput(
                "missing; expected a catalog path, bundled name or stored id", field="catalog"
            )
        catalog = resolve_catalog(request.catalog, data_dir=data_dir, tenant=tenant)
    result = run_optimizer(
        catalog, spec, fixed=fixed_plan_from_proto(request), stop=stop, progress=progress
    )
    return response_from_result(result, content_hash(catalog))
