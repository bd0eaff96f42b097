"""The one core API that the service and the CLI call."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.catalog.canonical import content_hash
from optimizer.catalog.model import Catalog, Nic, Server
from optimizer.catalog.resolve import resolve_catalog
from optimizer.catalog.union import request_catalog_refs, union_catalogs
from optimizer.cost.rent import with_rent_vs_buy
from optimizer.optimize.candidates import (
    SearchSpace,
    nics_per_node_options,
    scale_out_gbps_per_gpu,
    with_catalog_vendors,
)
from optimizer.optimize.convert import fixed_plan_from_proto, response_from_result, spec_from_proto
from optimizer.optimize.portfolio import with_measure  # issue 17 (portfolio)
from optimizer.optimize.request import OptimizeSpec
from optimizer.optimize.solve import optimize as run_optimizer
from optimizer.performance.convert import (
    options_from_proto,
    request_from_proto,
    response_to_proto,
)
from optimizer.performance.planner import plan_and_estimate
from optimizer.request_limits import check_estimate, check_optimize
from optimizer.topology.compat import nic_fits_fabric


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
    options = options_from_proto(request)
    return response_to_proto(plan_and_estimate(workload, cluster, fixed, fabrics, options))


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

    ``catalog`` overrides the request's catalog references (the batch runner ships catalog
    content to workers); otherwise ``request.catalog`` and each of ``request.catalogs`` is
    resolved as a path, a bundled catalog name, or a stored catalog of ``tenant``, and the
    optimizer works on their union (optimizer.catalog.union). ``stop`` cancels; ``progress``
    receives the optimizer's progress events (optimizer.optimize.solve.optimize).
    ``request.ranking_only`` skips the explanation re-solves (the proto field says what is left
    out). Infeasible is a status in the response, not an error; bad input raises
    ``InvalidInput`` naming the field.
    """
    check_optimize(request)
    spec = spec_from_proto(request)
    if catalog is None:
        refs = request_catalog_refs(request.catalog, request.catalogs)
        catalog = union_catalogs(
            [(f, ref, resolve_catalog(ref, data_dir=data_dir, tenant=tenant)) for f, ref in refs]
        )
    result = run_optimizer(
        catalog,
        spec,
        fixed=fixed_plan_from_proto(request),
        stop=stop,
        progress=progress,
        explain=not spec.ranking_only,  # issue 19 (batch): screening reads only the ranks
    )
    result = with_measure(result, spec)  # issue 17 (portfolio)
    if not result.designs:
        result = replace(result, diagnosis=nic_policy_diagnosis(catalog, spec, result.diagnosis))
    # issue 17 (rent): under the request's cost model (spec.cost_model), as the TCO
    result = with_rent_vs_buy(result, catalog, spec, fixed_plan_from_proto(request))
    return response_from_result(result, content_hash(catalog), catalog)


def nic_policy_diagnosis(catalog: Catalog, spec: OptimizeSpec, diagnosis: str) -> str:
    """``diagnosis`` in the light of the ``min_nic_gbps_per_gpu`` policy: when no server and
    NIC of the catalog can reach it, that alone is the reason (with the most they reach); else
    the search's reason holds for designs that meet the policy, and says so. Where only the
    request's vendor, lead-time or fabric filters keep the policy out of reach, the search's
    reason names them: blaming the catalog's NICs would send the buyer to the wrong fix."""
    floor = spec.constraints.min_nic_gbps_per_gpu
    if floor is None:
        return diagnosis
    policy = f"{floor:,.4g} Gb/s per GPU (constraints.min_nic_gbps_per_gpu)"
    allowed = _best_offer(catalog, with_catalog_vendors(catalog, spec))
    unfiltered = replace(
        spec,
        allowed_vendors=(),
        excluded_vendors=(),
        allowed_fabrics=(),
        constraints=replace(spec.constraints, max_lead_time_days=None),
    )
    if _reaches(allowed, floor) or _reaches(_best_offer(catalog, unfiltered), floor):
        return f"{diagnosis} (among designs with at least {policy})" if diagnosis else diagnosis
    most = (
        "the catalog offers no NIC for the allowed servers and fabrics"
        if allowed is None
        else f"the most the allowed parts reach is {allowed[0]:,.4g} Gb/s per GPU "
        f"({allowed[1]} x {allowed[2].sku} at {allowed[2].line_gbps}G on {allowed[3].sku}, "
        f"{allowed[3].gpus_per_node} GPUs per node)"
    )
    return f"no design reaches the policy of {policy}: {most}"


def _reaches(offer: tuple[float, int, Nic, Server] | None, floor: float) -> bool:
    return offer is not None and offer[0] >= floor


def _best_offer(catalog: Catalog, spec: OptimizeSpec) -> tuple[float, int, Nic, Server] | None:
    """The most scale-out Gb/s per GPU a server and NIC the request allows reach, with the
    NICs per node, the NIC and the server (fewest NICs among equals); None without a pair."""
    space = SearchSpace(catalog, spec)
    offers = [
        (scale_out_gbps_per_gpu(server, nic.line_gbps, npn), npn, nic, server)
        for server in space.servers
        for nic in space.nics
        if any(nic_fits_fabric(nic, fabric) for fabric in space.fabrics)
        for npn in nics_per_node_options(server)
    ]
    return max(offers, key=lambda o: (o[0], -o[1]), default=None)
