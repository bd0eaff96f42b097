"""Where a command's requests go: the embedded core (default) or a server (``--server``).

Both return the same response messages, so every command prints the same output either way.
"""

from __future__ import annotations

from typing import Protocol

import click

from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2


class Transport(Protocol):
    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse: ...

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse: ...


class Embedded:
    """Calls optimizer.api in this process; catalogs resolve against the local store."""

    def __init__(self, data_dir: str | None = None, tenant: str = "default") -> None:
        self.data_dir = data_dir
        self.tenant = tenant

    def estimate(self, req: estimate_pb2.EstimateRequest) -> estimate_pb2.EstimateResponse:
        from optimizer import api

        return api.estimate(req)

    def optimize(self, req: optimize_pb2.OptimizeRequest) -> optimize_pb2.OptimizeResponse:
        from optimizer import api

        return api.optimize(req, data_dir=self.data_dir, tenant=self.tenant)


def transport_from(ctx: click.Context) -> Transport:
    """The transport the global options chose."""
    obj = ctx.find_root().obj or {}
    return Embedded(obj.get("data_dir"), obj.get("tenant", "default"))
