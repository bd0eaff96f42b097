"""``procure serve``: run the gRPC service (docs/service.md).

The service modules (and grpc) are imported only when the command runs: solver workers are
spawned processes that re-import the main module, and they must never load grpc.
"""

from __future__ import annotations

import logging
from pathlib import Path

import click

from client.options import data_dir

_file = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command("serve")
@click.option(
    "--address",
    default="127.0.0.1:50051",
    show_default=True,
    help="host:port to listen on; port 0 picks a free port.",
)
@data_dir
@click.option("--tls-cert", type=_file, default=None, help="Server certificate chain (PEM).")
@click.option("--tls-key", type=_file, default=None, help="Server private key (PEM).")
@click.option(
    "--tls-client-ca",
    type=_file,
    default=None,
    help="Require client certificates signed by this CA (mutual TLS).",
)
@click.option(
    "--tokens",
    "tokens_file",
    type=_file,
    default=None,
    help="Bearer-token file: '<tenant> <token>' per line. Without it every call is "
    "tenant 'default' (loopback only).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    default=0,
    help="Solver worker processes [default: one per CPU].",
)
@click.option(
    "--queue-size",
    type=click.IntRange(min=1),
    default=8,
    show_default=True,
    help="Solves that may wait for a worker; beyond that calls get RESOURCE_EXHAUSTED.",
)
@click.option(
    "--max-concurrent-rpcs",
    type=click.IntRange(min=1),
    default=64,
    show_default=True,
    help="Calls in progress at once; beyond that RESOURCE_EXHAUSTED.",
)
@click.option(
    "--grace",
    "grace_s",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds in-flight calls get to finish on SIGTERM.",
)
@click.option("--no-reflection", is_flag=True, help="Do not serve gRPC server reflection.")
@click.option(
    "--allow-insecure-remote",
    is_flag=True,
    help="Allow a non-loopback address without TLS or tokens (not recommended).",
)
def serve(
    address: str,
    data_dir: str | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    tls_client_ca: Path | None,
    tokens_file: Path | None,
    workers: int,
    queue_size: int,
    max_concurrent_rpcs: int,
    grace_s: float,
    no_reflection: bool,
    allow_insecure_remote: bool,
) -> None:
    """Serve the catalog store, the estimator and the optimizer over gRPC until SIGTERM or
    Ctrl-C, then drain. Logs one JSON line per call on standard error."""
    from optimizer.service.config import ServiceConfig
    from optimizer.service.server import serve as run

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run(
        ServiceConfig(
            address=address,
            data_dir=Path(data_dir) if data_dir else None,
            tls_cert=tls_cert,
            tls_key=tls_key,
            tls_client_ca=tls_client_ca,
            tokens_file=tokens_file,
            workers=workers,
            queue_size=queue_size,
            max_concurrent_rpcs=max_concurrent_rpcs,
            grace_s=grace_s,
            reflection=not no_reflection,
            allow_insecure_remote=allow_insecure_remote,
        )
    )
