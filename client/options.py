"""Options shared by several commands (pip-tools style: defined once, stacked where needed).

The group takes the global options (``procure --server ... --data-dir ... optimize``) and keeps
them in the root context's ``obj``; the per-command ``--data-dir`` and ``--tenant`` fall back to
those, so either position works and both mean the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.shell_completion import CompletionItem

from optimizer.errors import InvalidInput
from optimizer.registry.base import Descriptor, Registry
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.objectives import OBJECTIVES
from optimizer.registry.topologies import TOPOLOGIES

F = TypeVar("F", bound=Callable[..., object])

FORMATS = ("table", "json", "csv", "xlsx")
REPORT_FORMATS = (*FORMATS, "html")  # html: the self-contained report page (needs --output)
PLOT_FORMATS = (".png", ".svg")
DEFAULT_TENANT = "default"


class RegistryChoice(click.ParamType):  # type: ignore[type-arg]
    """A value of a registry (fabric, topology family, objective), typed as the tables print
    it or as the wire spells it, in any case: ``fat-tree``, ``FAT_TREE``. Converts to the wire
    name; the choices, help and completion are the registry's, read when the CLI runs."""

    def __init__(self, registry: Registry[Any]) -> None:
        self.registry = registry
        self.name = registry.kind

    def get_metavar(self, param: click.Parameter, ctx: click.Context | None = None) -> str:
        return "[" + "|".join(self.registry.cli_names()) + "]"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        try:
            descriptor: Descriptor = self.registry.get(str(value))
        except InvalidInput:
            self.fail(
                f"{value!r}: expected one of {', '.join(self.registry.cli_names())}", param, ctx
            )
        return descriptor.name

    def shell_complete(
        self, ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        return [CompletionItem(n) for n in self.registry.cli_names() if n.startswith(incomplete)]


def _listing(registry: Registry[Any]) -> str:
    return ", ".join(registry.cli_names())


def output_format(*choices: str) -> Callable[[F], F]:
    """``--format``: how results are written (default: a readable table)."""
    allowed = choices or FORMATS
    page = (
        "; html is the self-contained report page (needs -o FILE.html)" if "html" in allowed else ""
    )
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(allowed),
        default="table",
        show_default=True,
        help=f"Output format; json is the protobuf JSON of the response message{page}.",
    )


output_file = click.option(
    "--output",
    "-o",
    "output",
    type=click.Path(dir_okay=False, writable=True),
    default=None,
    help="Write to FILE instead of standard output (required for xlsx and html).",
)


def _check_plot(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """Refuse a plot file we cannot write before any solving starts."""
    if value is not None and Path(value).suffix.lower() not in PLOT_FORMATS:
        raise click.BadParameter(f"{value!r}: expected a .png or .svg file name")
    return value


def plot_file(what: str) -> Callable[[F], F]:
    """``--plot FILE.png|svg``: the cost vs training-time frontier and ``what``."""
    return click.option(
        "--plot",
        type=click.Path(dir_okay=False),
        callback=_check_plot,
        default=None,
        help=f"Write the cost vs training-time frontier and {what} to FILE.png or FILE.svg.",
    )


def root_option(ctx: click.Context, key: str, default: object = None) -> object:
    """A global option's value, as the ``procure`` group stored it."""
    return (ctx.find_root().obj or {}).get(key, default)


def _inherit(
    key: str, default: object
) -> Callable[[click.Context, click.Parameter, object], object]:
    def callback(ctx: click.Context, param: click.Parameter, value: object) -> object:
        return value if value is not None else root_option(ctx, key, default)

    return callback


data_dir = click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    envvar="PROCURE_DATA_DIR",
    default=None,
    callback=_inherit("data_dir", None),
    help="Catalog store directory [env PROCURE_DATA_DIR; default ~/.local/share/procure].",
)

tenant = click.option(
    "--tenant",
    envvar="PROCURE_TENANT",
    default=None,
    callback=_inherit("tenant", DEFAULT_TENANT),
    help=f"Tenant that owns catalogs in the embedded store [env PROCURE_TENANT; default "
    f"{DEFAULT_TENANT}].",
)


def scenario_options(*, top_k_default: int | None = None) -> Callable[[F], F]:
    """The request flags ``optimize`` and ``sweep`` share (everything but the scenario axes)."""
    options = [
        click.option("--tokens", type=float, help="Training tokens (overrides the preset's)."),
        click.option(
            "--objective",
            type=RegistryChoice(OBJECTIVES),
            help="; ".join(f"{o.label}: {o.help}" for o in OBJECTIVES) + ".",
        ),
        click.option(
            "--top-k",
            type=int,
            default=top_k_default,
            help=f"Distinct designs per scenario [default: {top_k_default or 3}].",
        ),
        click.option(
            "--fabric",
            type=RegistryChoice(FABRICS),
            multiple=True,
            help=f"Allowed fabric (repeatable): {_listing(FABRICS)}.",
        ),
        click.option(
            "--topology",
            type=RegistryChoice(TOPOLOGIES),
            multiple=True,
            help=f"Allowed topology family (repeatable): {_listing(TOPOLOGIES)}.",
        ),
        click.option("--vendor", multiple=True, help="Allowed vendor (repeatable)."),
        click.option("--exclude-vendor", multiple=True, help="Excluded vendor (repeatable)."),
        click.option("--max-power-kw", type=float, help="Facility power cap in kW."),
        click.option("--max-gpus", type=int, help="Largest cluster to consider, in GPUs."),
        click.option(
            "--min-nic-gbps-per-gpu",
            type=float,
            help="Policy: scale-out bandwidth per GPU (NIC rate x NICs per node / GPUs per "
            "node) of at least this many Gb/s, e.g. 400.",
        ),
        click.option("--backend", type=click.Choice(["cpsat", "cbc", "highs"]), help="Solver."),
        click.option("--time-limit", type=float, help="Solver time limit in seconds."),
        click.option(
            "--confidence",
            type=click.Choice(["expected", "pessimistic"]),
            help="pessimistic: meet the target under the estimator's high time.",
        ),
        # issue 17 (tco): the lifetime cost (docs/optimizer.md, "Lifetime cost")
        click.option("--max-tco-usd", type=float, help="Cap on the lifetime cost (TCO) in USD."),
        click.option("--years", type=float, help="Lifetime for the TCO [default: 4]."),
        click.option(
            "--utilization",
            type=float,
            help="Fraction of hours the cluster draws its rated IT power [default: 0.8].",
        ),
        click.option("--pue", type=float, help="Facility PUE [default: 1.3]."),
        click.option(
            "--electricity-usd-per-kwh", type=float, help="Tariff in USD per kWh [default: 0.10]."
        ),
        click.option(
            "--support-rate",
            type=float,
            help="Support per year as a fraction of the price, where a catalog row has no "
            "support_rate [default: 0.08].",
        ),
        click.option(
            "--rack-usd-per-month", type=float, help="Space per rack per month [default: 1500]."
        ),
        click.option(
            "--discount-rate",
            type=float,
            help="Yearly discount rate for the net present cost [default: 0].",
        ),
        # issue 17 (facility)
        click.option("--max-racks", type=int, help="Facility cap on racks (server and network)."),
        click.option(
            "--max-floor-positions",
            type=int,
            help="Facility floor positions: racks plus one in-row CDU per row of "
            "liquid-cooled servers.",
        ),
        click.option(
            "--max-rack-kw",
            type=float,
            help="Power cap per rack in kW [default: 42; 30 with --cooling air].",
        ),
        click.option(
            "--cooling",
            help="Facility cooling: air (excludes liquid-only servers) or liquid.",
        ),
    ]

    def decorate(f: F) -> F:
        for option in reversed(options):
            f = option(f)
        return f

    return decorate
