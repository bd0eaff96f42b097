"""Entry point of `procure`. Errors are turned into one stderr line and an exit code here only.

Exit codes: 0 ok; 1 internal error; 2 usage; 3 invalid input (bad file, field or catalog);
4 infeasible scenario (with --fail-on-infeasible); 5 server unavailable or refused credentials;
6 batch engine (Dask scheduler) unreachable or lost.

Global options (before the command) choose where requests go: embedded by default, a server
with ``--server``. Shell completion: ``procure completion bash|zsh|fish``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

import client
import optimizer
from client.exits import EXIT_INTERNAL
from client.options import DEFAULT_TENANT
from optimizer import __version__
from optimizer.errors import InvalidInput, ProcurementError

EPILOG = (
    "Exit status: 0 ok, 1 internal error, 2 usage, 3 invalid input, 4 infeasible "
    "scenario (with --fail-on-infeasible), 5 server unavailable or credentials refused, "
    "6 batch engine unreachable or lost."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EPILOG)
@click.version_option(__version__, prog_name="procure")
@click.option(
    "--server",
    metavar="HOST:PORT",
    envvar="PROCURE_SERVER",
    default=None,
    help="Send requests to this procure server instead of running them here [env PROCURE_SERVER].",
)
@click.option(
    "--tls-ca",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Use TLS to --server, trusting this CA certificate (PEM).",
)
@click.option(
    "--tls-cert",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Client certificate chain (PEM) for a server that requires mutual TLS.",
)
@click.option(
    "--tls-key",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Private key (PEM) of --tls-cert.",
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="File holding the bearer token for --server [or env PROCURE_TOKEN]; the "
    "token is never printed.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    envvar="PROCURE_DATA_DIR",
    default=None,
    help="Embedded catalog store directory [env PROCURE_DATA_DIR; default ~/.local/share/procure].",
)
@click.option(
    "--tenant",
    envvar="PROCURE_TENANT",
    default=DEFAULT_TENANT,
    show_default=True,
    help="Tenant of the embedded store (a server takes it from the token).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress bars or notes on stderr.")
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected errors.")
@click.pass_context
def cli(
    ctx: click.Context,
    server: str | None,
    tls_ca: str | None,
    tls_cert: str | None,
    tls_key: str | None,
    token_file: str | None,
    data_dir: str | None,
    tenant: str,
    quiet: bool,
    debug: bool,
) -> None:
    """Plan GPU training clusters: estimate training time, optimize fabric, topology and
    SKUs against a budget and a target, sweep budget scenarios, and manage vendor price
    catalogs."""
    if (tls_cert is None) != (tls_key is None):
        raise click.UsageError("--tls-cert and --tls-key go together")
    if tls_cert and not tls_ca:
        raise click.UsageError("--tls-cert needs --tls-ca (client certificates need TLS)")
    ctx.obj = {
        "server": server,
        "tls_ca": tls_ca,
        "tls_cert": tls_cert,
        "tls_key": tls_key,
        "token_file": token_file,
        "data_dir": data_dir,
        "tenant": tenant,
        "quiet": quiet,
        "debug": debug,
    }


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
    from client.commands import sweep

    cli.add_command(sweep.sweep)
    from client.commands import completion

    cli.add_command(completion.completion)
    from client.commands import workloads

    cli.add_command(workloads.workloads)
    from client.commands import calibrate

    cli.add_command(calibrate.calibrate)


_register()


def _program_folders() -> list[Path]:
    """Where the program's own files live: the packages, and the bundled catalogs that
    ``optimizer/catalogs`` links to in a checkout."""
    packages = [Path(str(m.__file__)).resolve().parent for m in (optimizer, client)]
    return [*packages, (packages[0] / "catalogs").resolve()]


def _is_users_file(e: OSError) -> bool:
    """An OSError is the user's to fix (exit 3) when it names a file outside the program's
    own files: one they named on the command line or in a spec, or a folder they chose.
    A missing or unreadable file of our own is a broken installation, not bad input."""
    names = [os.fsdecode(n) for n in (e.filename, e.filename2) if isinstance(n, str | bytes)]
    if not names:
        return False
    ours = _program_folders()
    for name in names:
        path = Path(name).resolve()
        if any(path == root or root in path.parents for root in ours):
            return False
    return True


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; never let a traceback reach the user unless --debug was given."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        rv = cli.main(args=args, prog_name="procure", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(EXIT_INTERNAL)
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
        if _is_users_file(e):
            click.echo(f"error: {e.filename}: {e.strerror or e}", err=True)
            sys.exit(InvalidInput.exit_code)
        if e.filename:  # a file of the program itself: data missing from the installation
            what = f"{e.filename}: {e.strerror or e} (a file of procure itself; reinstall it)"
        else:
            what = f"{type(e).__name__}: {e}"
        click.echo(f"internal error: {what} (run with --debug for details)", err=True)
        sys.exit(EXIT_INTERNAL)
    except Exception as e:  # last resort: one line, never a traceback
        if debug:
            raise
        click.echo(
            f"internal error: {type(e).__name__}: {e} (run with --debug for details)", err=True
        )
        sys.exit(EXIT_INTERNAL)
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
