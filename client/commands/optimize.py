"""``procure optimize``: the cheapest cluster meeting a target, or the fastest within a budget."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
from google.protobuf import json_format

from client.commands.calibrate import calibration_option, read_profile
from client.exits import EXIT_INFEASIBLE
from client.options import REPORT_FORMATS, output_file, output_format, plot_file, scenario_options
from client.transport import transport_from
from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.optimize.portfolio_spelling import (  # issue 17 (portfolio)
    is_bare,
    parse_workload_flag,
)
from optimizer.request_json import parse_json

# The most training tokens a flag may ask for: about 600 times the largest published run
# (Llama 3 405B, 15.6e12), and far below where the solvers' coefficients overflow (~1e19).
MAX_TRAINING_TOKENS = 1e16


def _check_flags(tokens: float | None, top_k: int | None) -> None:
    """Refuse what the request message cannot carry or the optimizer cannot price, naming the
    request field as the optimizer does: --top-k 0 (0 means "unset" in the message) and a
    token count that is not finite or beyond MAX_TRAINING_TOKENS."""
    if top_k is not None and top_k < 1:
        from optimizer.optimize.convert import MAX_TOP_K

        raise InvalidInput(f"got {top_k}, expected 1 to {MAX_TOP_K}", field="top_k")
    if tokens is not None and not (math.isfinite(tokens) and tokens <= MAX_TRAINING_TOKENS):
        raise InvalidInput(
            f"got {tokens:g}, expected a positive number of at most {MAX_TRAINING_TOKENS:g}",
            field="workload.training_tokens",
        )


def read_optimize_request(path: str) -> optimize_pb2.OptimizeRequest:
    """Parse the protobuf JSON form of an ``OptimizeRequest``; unknown or mistyped fields
    (true in a number field too) are errors, reported on one line."""
    try:
        return parse_json(Path(path).read_text(), optimize_pb2.OptimizeRequest())
    except json_format.ParseError as e:
        raise InvalidInput(" ".join(str(e).split()), field=Path(path).name) from None


def request_from_flags(
    *,
    catalog: str | tuple[str, ...] | None = None,
    workload: str | tuple[str, ...] | None = None,
    tokens: float | None = None,
    budget_usd: float | None = None,
    target_hours: float | None = None,
    max_power_kw: float | None = None,
    max_gpus: int | None = None,
    min_nic_gbps_per_gpu: float | None = None,
    require_fabric: bool = False,
    ranking_only: bool = False,  # issue 19 (batch)
    objective: str | None = None,
    top_k: int | None = None,
    fabric: tuple[str, ...] = (),
    topology: tuple[str, ...] = (),
    vendor: tuple[str, ...] = (),
    exclude_vendor: tuple[str, ...] = (),
    backend: str | None = None,
    time_limit: float | None = None,
    confidence: str | None = None,
    # issue 17 (tco)
    max_tco_usd: float | None = None,
    years: float | None = None,
    utilization: float | None = None,
    pue: float | None = None,
    electricity_usd_per_kwh: float | None = None,
    support_rate: float | None = None,
    rack_usd_per_month: float | None = None,
    discount_rate: float | None = None,
    # issue 17 (facility)
    max_racks: int | None = None,
    max_floor_positions: int | None = None,
    max_rack_kw: float | None = None,
    cooling: str | None = None,
) -> optimize_pb2.OptimizeRequest:
    """An ``OptimizeRequest`` holding only the flags that were given.

    ``catalog`` may name several catalogs (``--catalog A --catalog B``): the first goes in
    ``catalog``, the others in ``catalogs``, and the optimizer works on their union.
    """
    _check_flags(tokens, top_k)
    req = optimize_pb2.OptimizeRequest(
        allowed_fabrics=fabric,
        allowed_topologies=topology,
        allowed_vendors=vendor,
        excluded_vendors=exclude_vendor,
    )
    refs = (catalog,) if isinstance(catalog, str) else catalog or ()
    if refs:
        req.catalog = refs[0]
        req.catalogs.extend(refs[1:])
    if require_fabric:
        req.require_fabric = True
    if ranking_only:  # issue 19 (batch): skip the explanation re-solves
        req.ranking_only = True
    # issue 17 (portfolio): repeated --workload NAME[:TARGET_HOURS][@RUNS/yr]
    names = (workload,) if isinstance(workload, str) else workload or ()
    if names and is_bare(names[0]):
        req.workload.model = names[0]  # today's meaning, with --target-hours
        names = names[1:]
    req.workloads.extend(parse_workload_flag(name) for name in names)
    if req.workloads and tokens is not None:
        raise InvalidInput(
            "applies to one workload; for a portfolio give each workload's training_tokens "
            "in a request file (workloads[i].workload.training_tokens)",
            field="--tokens",
        )
    if tokens is not None:
        req.workload.training_tokens = tokens
    c = req.constraints
    for name, value in (
        ("budget_usd", budget_usd),
        ("target_training_hours", target_hours),
        ("max_power_kw", max_power_kw),
        ("max_gpus", max_gpus),
        ("min_nic_gbps_per_gpu", min_nic_gbps_per_gpu),
    ):
        if value is not None:
            setattr(c, name, value)
    if objective:
        req.objective = objective.replace("-", "_")
    if top_k is not None:
        req.top_k = top_k
    if backend:
        req.solver.backend = backend
    if time_limit is not None:
        req.solver.time_limit_s = time_limit
    if confidence:
        req.confidence = confidence
    # issue 17 (tco)
    if max_tco_usd is not None:
        c.max_tco_usd = max_tco_usd
    for name, value in (
        ("years", years),
        ("utilization", utilization),
        ("pue", pue),
        ("electricity_usd_per_kwh", electricity_usd_per_kwh),
        ("support_rate", support_rate),
        ("rack_usd_per_month", rack_usd_per_month),
        ("discount_rate", discount_rate),
    ):
        if value is not None:
            setattr(req.cost_model, name, value)
    # issue 17 (facility)
    for name, value in (
        ("max_racks", max_racks),
        ("max_floor_positions", max_floor_positions),
        ("max_rack_kw", max_rack_kw),
    ):
        if value is not None:
            setattr(c, name, value)
    if cooling:
        c.cooling = cooling
    return req


def asks_about_tco(req: optimize_pb2.OptimizeRequest) -> bool:
    """Issue 17 (tco): min-tco, a TCO cap or any cost-model field: the tables show the TCO."""
    return (
        req.objective.lower().replace("-", "_") == "min_tco"
        or req.objective_kind == optimize_pb2.OBJECTIVE_MIN_TCO
        or req.constraints.HasField("max_tco_usd")
        or req.HasField("cost_model")
    )


def catalogs_label(req: optimize_pb2.OptimizeRequest) -> str:
    """The request's catalogs for a title: ``A + B`` when it names several."""
    return " + ".join(ref for ref in (req.catalog, *req.catalogs) if ref)


@click.command("optimize")
@click.argument("request_file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--catalog",
    multiple=True,
    help="Catalog: a path, a bundled name (infiniband-ndr, "
    "roce-spectrum, ethernet-budget) or a stored id. Repeat it to optimise over the union "
    "of several quotes (servers from one, fabric from another).",
)
@click.option(
    "--workload",
    multiple=True,
    help="Workload preset, e.g. llama3-70b (see `procure estimate`). Repeat it for a portfolio "
    "the cluster must serve, each as NAME:TARGET_HOURS (llama3-70b:720), NAME@RUNS/yr "
    "(llama3-70b@4/yr: runs a year sharing the cluster's usable hours) or both; a bare NAME "
    "takes --target-hours.",
)
@click.option("--budget-usd", type=float, help="Capex budget in US dollars.")
@click.option("--target-hours", type=float, help="Target training time in hours.")
@scenario_options()
@click.option(
    "--require-fabric",
    is_flag=True,
    default=False,
    help="One-node clusters too get a scale-out fabric (default: the switchless one-node "
    "design is offered as well).",
)
@click.option(
    "--ranking-only",
    is_flag=True,
    default=False,
    help="Rank only: skip the explanation re-solves (rank 1's binding constraints, "
    "sensitivity, an infeasible request's diagnosis, the rule-of-thumb baseline, the TCO "
    "comparison). Designs, BOMs and times are the same; for screening many scenarios.",
)
@click.option(
    "--fail-on-infeasible",
    is_flag=True,
    help=f"Exit with status {EXIT_INFEASIBLE} when no design meets the constraints.",
)
@plot_file("the ranked designs' cost breakdown")
@output_format(*REPORT_FORMATS)
@output_file
@calibration_option
@click.pass_context
def optimize(
    ctx: click.Context,
    /,
    request_file: str | None,
    fmt: str,
    output: str | None,
    fail_on_infeasible: bool,
    plot: str | None,
    calibration: str | None,
    **flags: Any,
) -> None:
    """Choose fabric, topology, size and SKUs: ranked, verified bills of materials.

    Give a REQUEST_FILE (an OptimizeRequest as JSON) or flags; flags given with a file override
    its fields.
    """
    req = read_optimize_request(request_file) if request_file else optimize_pb2.OptimizeRequest()
    flagged = request_from_flags(**flags)
    if flagged.catalog:  # --catalog replaces the file's catalogs, it does not add to them
        req.ClearField("catalogs")
    if flags.get("workload"):  # issue 17 (portfolio): --workload replaces the file's portfolio
        req.ClearField("workloads")
        if not flagged.HasField("workload"):
            req.ClearField("workload")
    req.MergeFrom(flagged)
    if calibration:  # issue 14: a profile from `procure calibrate`
        req.calibration.CopyFrom(read_profile(calibration))
    from client import render
    from optimizer.reporting.frontier import Front, frontier, points_of, workload_label

    resp = transport_from(ctx).optimize(req)
    if fmt == "json":
        render.emit_text(render.to_json(resp), output)
    elif fmt in ("csv", "xlsx"):
        frames = [("designs", render.designs_frame(resp))]
        if resp.designs:
            frames.append(("bom_rank1", render.bom_frame(resp.designs[0])))
        render.write_frames(frames, fmt, output)
    elif fmt == "html":
        from optimizer.reporting import Scenario, write_html  # plotly only for a report

        write_html(
            output, [Scenario(req, resp)], title=f"{workload_label(req)} on {catalogs_label(req)}"
        )
    else:
        with render.console(output) as out:
            render.print_optimize(
                resp,
                out,
                show_tco=asks_about_tco(req),
                show_facility=render.asks_about_facility(req),  # issue 17 (facility)
            )
    if plot:
        from client.plots import write_plot  # matplotlib only when a plot is asked for

        points = points_of([resp])
        write_plot(
            plot,
            points,
            [Front(workload_label(req), frontier(points))],
            resp.designs,
            [req],
            title=f"{workload_label(req)} on {catalogs_label(req)}",
        )
    if fail_on_infeasible and not resp.designs:
        ctx.exit(EXIT_INFEASIBLE)
