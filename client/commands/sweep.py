"""``procure sweep``: what each budget (or target) buys, one row per scenario, plus the
cost-time frontier over all of them."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import click

from client.commands.calibrate import calibration_option, read_profile
from client.commands.optimize import request_from_flags
from client.exits import EXIT_INFEASIBLE
from client.options import REPORT_FORMATS, output_file, output_format, plot_file, scenario_options
from optimizer.errors import InvalidInput
from optimizer.optimize.portfolio_spelling import is_bare

if TYPE_CHECKING:
    _ParamType = click.ParamType[tuple[float, ...]]
else:  # click < 8.2 has no generic ParamType at run time
    _ParamType = click.ParamType


class NumberList(_ParamType):
    """``1e6,2e6,5e6`` or ``START:STOP:COUNT`` (COUNT evenly spaced values, ends included)."""

    name = "list"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> tuple[float, ...]:
        if isinstance(value, tuple):
            return value
        try:
            if value.count(":") == 2:
                start, stop, count = value.split(":")
                n = int(count)
                if n < 2:
                    self.fail(f"{value!r}: COUNT must be at least 2", param, ctx)
                a, b = float(start), float(stop)
                return tuple(a + (b - a) * i / (n - 1) for i in range(n))
            numbers = tuple(float(v) for v in value.split(",") if v.strip())
        except ValueError:
            self.fail(
                f"{value!r}: expected numbers separated by commas, or START:STOP:COUNT", param, ctx
            )
        if not numbers:
            self.fail("expected at least one number", param, ctx)
        return numbers


@click.command("sweep")
@click.option(
    "--catalog",
    "catalogs",
    multiple=True,
    help="Catalog (repeatable: every scenario runs against each).",
)
@click.option(
    "--workload",
    "workloads",
    multiple=True,
    help="Workload preset (repeatable), e.g. llama3-8b; not optimize's NAME:TARGET_HOURS.",
)
@click.option(
    "--budgets",
    "budgets_usd",
    type=NumberList(),
    default=None,
    help="Budgets in USD: 1e6,2e6,5e6 or 1e6:2e7:20.",
)
@click.option(
    "--targets",
    "targets_hours",
    type=NumberList(),
    default=None,
    help="Target training times in hours: 720,1440 or 240:2400:10.",
)
@click.option(
    "--scenarios",
    "scenario_file",
    type=click.Path(exists=True, dir_okay=False),
    help="Scenario file (JSON, YAML or CSV in the `procure batch` spec format) "
    "instead of --catalog/--workload/--budgets/--targets.",
)
@scenario_options(top_k_default=1)
@plot_file("the cost breakdown of the frontier's designs")
@click.option(
    "--fail-on-infeasible",
    is_flag=True,
    help=f"Exit with status {EXIT_INFEASIBLE} when any scenario has no design.",
)
@output_format(*REPORT_FORMATS)
@output_file
@calibration_option
@click.pass_context
def sweep(
    ctx: click.Context,
    /,
    catalogs: tuple[str, ...],
    workloads: tuple[str, ...],
    budgets_usd: tuple[float, ...] | None,
    targets_hours: tuple[float, ...] | None,
    scenario_file: str | None,
    plot: str | None,
    fail_on_infeasible: bool,
    fmt: str,
    output: str | None,
    calibration: str | None,
    **flags: Any,
) -> None:
    """Sweep budgets and/or target times (and workloads, catalogs): the rank-1 design of
    every scenario (or why none exists) and the cost-time Pareto frontier of each workload.

    Without --objective, scenarios with a target minimise cost and budget-only scenarios
    minimise time.
    """
    from client import render
    from client.progress import progress_bar
    from client.sweep import (
        file_requests,
        frontier_frame,
        grid_requests,
        print_sweep,
        run_sweep,
        scenarios_frame,
        sweep_document,
        sweep_fronts,
        sweep_points,
        top_designs,
    )
    from client.transport import transport_from

    for spelled in workloads:  # issue 17 (portfolio): the optimize-only spelling
        if not is_bare(spelled):
            raise InvalidInput(
                f"got {spelled!r}, expected a workload preset name (e.g. llama3-8b): a sweep "
                "times one workload per scenario against --targets; the portfolio spelling "
                "NAME:TARGET_HOURS or NAME@RUNS/yr is for `procure optimize`",
                field="--workload",
            )
    base = request_from_flags(**flags)
    if calibration:  # issue 14: every scenario timed with a profile from `procure calibrate`
        base.calibration.CopyFrom(read_profile(calibration))
    for flag, values in (("--budgets", budgets_usd), ("--targets", targets_hours)):
        for number in values or ():
            if not (math.isfinite(number) and number > 0):
                raise InvalidInput(f"got {number:g}, expected a positive number", field=flag)
    if scenario_file:
        given = [
            name
            for name, value in (
                ("--catalog", catalogs),
                ("--workload", workloads),
                ("--budgets", budgets_usd),
                ("--targets", targets_hours),
            )
            if value
        ]
        if given:
            raise click.UsageError(f"{given[0]}: not with --scenarios; put it in the scenario file")
        requests = file_requests(scenario_file, base)
    else:
        for name, value in (("--catalog", catalogs), ("--workload", workloads)):
            if not value:
                raise click.UsageError(f"missing {name} (or give --scenarios FILE)")
        if not budgets_usd and not targets_hours:
            raise click.UsageError("missing --budgets or --targets (or give --scenarios FILE)")
        requests = grid_requests(
            base,
            catalogs=catalogs,
            workloads=workloads,
            budgets_usd=budgets_usd or (),
            targets_hours=targets_hours or (),
        )
    transport = transport_from(ctx)
    with progress_bar(ctx, "scenarios", len(requests)) as update:
        outcomes = run_sweep(requests, transport, update)
    fronts = sweep_fronts(outcomes)
    if fmt == "json":
        render.emit_text(render.dumps(sweep_document(outcomes, fronts)), output)
    elif fmt in ("csv", "xlsx"):
        render.write_frames(
            [("scenarios", scenarios_frame(outcomes)), ("frontier", frontier_frame(fronts))],
            fmt,
            output,
        )
    elif fmt == "html":
        from optimizer.reporting import Scenario, write_html  # plotly only for a report

        scenarios = [Scenario(o.request, o.response, o.error, str(o.index)) for o in outcomes]
        write_html(output, scenarios, title=f"budget sweep: {len(outcomes):,} scenarios")
    else:
        with render.console(output) as out:
            print_sweep(outcomes, fronts, out)
    if plot:
        from client.plots import catalogs_of, write_plot  # matplotlib only for a plot

        write_plot(
            plot,
            sweep_points(outcomes),
            fronts,
            top_designs(outcomes, fronts),
            requests,
            title=f"budget sweep: {len(outcomes):,} scenarios",
            point_catalogs=catalogs_of((o.request, o.response) for o in outcomes),
        )
    if fail_on_infeasible and any(o.best is None for o in outcomes):
        ctx.exit(EXIT_INFEASIBLE)
