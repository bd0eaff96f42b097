"""Options shared by several commands (pip-tools style: defined once, stacked where needed).

The group takes the global options (``procure --server ... --data-dir ... optimize``) and keeps
them in the root context's ``obj``; the per-command ``--data-dir`` and ``--tenant`` fall back to
those, so either position works and both mean the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

FORMATS = ("table", "json", "csv", "xlsx")
REPORT_FORMATS = (*FORMATS, "html")  # html: the self-contained report page (needs --output)
PLOT_FORMATS = (".png", ".svg")
DEFAULT_TENANT = "default"


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
            type=click.Choice(["min-cost", "min-time"]),
            help="min-cost: cheapest meeting the target; min-time: fastest within the budget.",
        ),
        click.option(
            "--top-k",
            type=int,
            default=top_k_default,
            help=f"Distinct designs per scenario [default: {top_k_default or 3}].",
        ),
        click.option(
            "--fabric",
            multiple=True,
            help="Allowed fabric (repeatable): infiniband, roce, ethernet.",
        ),
        click.option("--topology", multiple=True, help="Allowed topology (repeatable)."),
        click.option("--vendor", multiple=True, help="Allowed vendor (repeatable)."),
        click.option("--exclude-vendor", multiple=True, help="Excluded vendor (repeatable)."),
        click.option("--max-power-kw", type=float, help="Facility power cap in kW."),
        click.option("--max-gpus", type=int, help="Largest cluster to consider, in GPUs."),
        click.option("--backend", type=click.Choice(["cpsat", "cbc", "highs"]), help="Solver."),
        click.option("--time-limit", type=float, help="Solver time limit in seconds."),
        click.option(
            "--confidence",
            type=click.Choice(["expected", "pessimistic"]),
            help="pessimistic: meet the target under the estimator's high time.",
        ),
    ]

    def decorate(f: F) -> F:
        for option in reversed(options):
            f = option(f)
        return f

    return decorate
