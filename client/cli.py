"""Entry point of `procure`. Errors are turned into one stderr line and an exit code here only.

Exit codes: 0 ok; 1 internal error; 2 usage; 3 invalid input (bad file, field or catalog);
4 infeasible scenario (with --fail-on-infeasible); 5 server unavailable or refused credentials.
"""

from __future__ import annotations

import sys

import click

from optimizer import __version__
from optimizer.errors import ProcurementError

EXIT_USAGE = 2
EXIT_INFEASIBLE = 4


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="procure")
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Plan GPU training clusters: estimate training time, optimize fabric, topology and
    SKUs against a budget and a target, and manage vendor price catalogs."""
    ctx.obj = {"debug": debug}


def _register() -> None:
    from client.commands import catalog

    cli.add_command(catalog.catalog)
    from client.commands import estimate
    cli.add_command(estimate.estimate)
    from client.commands import serve
    cli.add_command(serve.serve)
    from client.commands import optimize
    cli.add_command(optimize.optimize)
    from client.commands import batch
    cli.add_command(batch.batch)


_register()


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; never let a traceback reach the user unless --debug was given."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        rv = cli.main(args=args, prog_name="procure", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(1)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except ProcurementError as e:
        if debug:
            raise
        click.echo(f"error: {e}", err=True)
        sys.exit(e.exit_code)
    except OSError as e:
        if debug:
            raise
        click.echo(f"error: {e.filename or ''}: {e.strerror or e}", err=True)
        sys.exit(3)
    except Exception as e:  # last resort: one line, never a traceback
        if debug:
            raise
        click.echo(f"internal error: {type(e).__name__}: {e} (run with --debug for details)",
                   err=True)
        sys.exit(1)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
