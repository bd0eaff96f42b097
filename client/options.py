"""Options shared by several commands (pip-tools style: defined once, stacked where needed).

The group takes the global options (``procure --server ... --data-dir ... optimize``) and keeps
them in the root context's ``obj``; the per-command ``--data-dir`` and ``--tenant`` fall back to
those, so either position works and both mean the same thing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

FORMATS = ("table", "json", "csv", "xlsx")
DEFAULT_TENANT = "default"


def output_format(*choices: str) -> Callable[[F], F]:
    """``--format``: how results are written (default: a readable table)."""
    allowed = choices or FORMATS
    return click.option(
        "--format", "fmt", type=click.Choice(allowed), default="table", show_default=True,
        help="Output format; json is the protobuf JSON of the response message.",
    )


output_file = click.option(
    "--output", "-o", "output", type=click.Path(dir_okay=False, writable=True), default=None,
    help="Write to FILE instead of standard output (required for xlsx).",
)


def root_option(ctx: click.Context, key: str, default: object = None) -> object:
    """A global option's value, as the ``procure`` group stored it."""
    return (ctx.find_root().obj or {}).get(key, default)


def _inherit(key: str, default: object) -> Callable[[click.Context, click.Parameter, object],
                                                    object]:
    def callback(ctx: click.Context, param: click.Parameter, value: object) -> object:
        return value if value is not None else root_option(ctx, key, default)

    return callback


data_dir = click.option(
    "--data-dir", type=click.Path(file_okay=False), envvar="PROCURE_DATA_DIR", default=None,
    callback=_inherit("data_dir", None),
    help="Catalog store directory [env PROCURE_DATA_DIR; default ~/.local/share/procure].",
)

tenant = click.option(
    "--tenant", envvar="PROCURE_TENANT", default=None,
    callback=_inherit("tenant", DEFAULT_TENANT),
    help=f"Tenant that owns catalogs in the embedded store [env PROCURE_TENANT; default "
         f"{DEFAULT_TENANT}].",
)
