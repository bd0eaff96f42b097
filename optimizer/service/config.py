"""How the server is started: address, store, TLS, tokens, workers, and their safety checks."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from optimizer.errors import InvalidInput

DEFAULT_ADDRESS = "127.0.0.1:50051"
DEFAULT_GRACE_S = 30.0
DEFAULT_QUEUE_SIZE = 8
DEFAULT_MAX_CONCURRENT_RPCS = 64
DEFAULT_JOBS_PER_WORKER = 500
DEFAULT_MAX_CALLS_PER_TENANT = 16
DEFAULT_UPLOAD_IDLE_S = 10.0


def default_workers() -> int:
    """One solver process per core: each solve uses one thread (backends.Limits.threads)."""
    return max(1, os.cpu_count() or 1)


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` or ``[v6]:port`` into its host and port."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise InvalidInput(f"got {address!r}, expected host:port", field="address")
    return host.strip("[]"), int(port)


def is_loopback(address: str) -> bool:
    host, _ = split_address(address)
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost may resolve anywhere
        return False


@dataclass(frozen=True)
class ServiceConfig:
    """Everything ``procure serve`` can set. ``check`` refuses unsafe or inconsistent choices."""

    address: str = DEFAULT_ADDRESS
    data_dir: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = None  # require client certificates signed by this CA (mTLS)
    # mTLS: the client certificate's common name is the caller's tenant (and must be the
    # tenant of its bearer token, when tokens are in use).
    tenant_from_cert: bool = False
    tokens_file: Path | None = None
    workers: int = 0  # 0: default_workers()
    queue_size: int = DEFAULT_QUEUE_SIZE
    max_concurrent_rpcs: int = DEFAULT_MAX_CONCURRENT_RPCS
    max_calls_per_tenant: int = DEFAULT_MAX_CALLS_PER_TENANT
    upload_idle_s: float = DEFAULT_UPLOAD_IDLE_S  # an upload silent this long is cancelled
    cheap_workers: int = 1  # the lane for estimates and upload parsing (0: they queue with solves)
    warm_spare: bool = True  # keep one started worker to replace a killed one at once
    jobs_per_worker: int = DEFAULT_JOBS_PER_WORKER
    reflection: bool = True
    allow_insecure_remote: bool = False
    grace_s: float = DEFAULT_GRACE_S

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    @property
    def worker_count(self) -> int:
        return self.workers or default_workers()

    def check(self) -> None:
        """Raise InvalidInput (naming the flag) for a configuration the server must not run."""
        split_address(self.address)
        if (self.tls_cert is None) != (self.tls_key is None):
            raise InvalidInput(
                "give both --tls-cert and --tls-key, or neither",
                field="tls_key" if self.tls_cert else "tls_cert",
            )
        if self.tls_client_ca is not None and not self.tls:
            raise InvalidInput("mutual TLS needs --tls-cert and --tls-key", field="tls_client_ca")
        if self.tenant_from_cert and self.tls_client_ca is None:
            raise InvalidInput(
                "needs mutual TLS (--tls-client-ca): the tenant is read from the client "
                "certificate",
                field="tenant_from_cert",
            )
        if not is_loopback(self.address) and not self.allow_insecure_remote:
            if not self.tls:
                raise InvalidInput(
                    f"refusing to serve {self.address} without TLS: anyone on the network could "
                    "read catalogs and prices; give --tls-cert/--tls-key, bind a loopback "
                    "address, or pass --allow-insecure-remote",
                    field="address",
                )
            if self.tokens_file is None:
                raise InvalidInput(
                    f"refusing to serve {self.address} without --tokens: every caller would "
                    "share one tenant; pass --allow-insecure-remote to do so anyway",
                    field="address",
                )
        for name, limit in (
            ("workers", self.workers),
            ("queue_size", self.queue_size),
            ("max_concurrent_rpcs", self.max_concurrent_rpcs),
            ("jobs_per_worker", self.jobs_per_worker),
            ("max_calls_per_tenant", self.max_calls_per_tenant),
            ("cheap_workers", self.cheap_workers),
        ):
            if limit < (0 if name in ("workers", "cheap_workers") else 1):
                raise InvalidInput(f"got {limit}, expected a positive number", field=name)
        if self.max_concurrent_rpcs <= self.worker_count + self.queue_size:
            raise InvalidInput(
                f"must exceed workers + queue_size ({self.worker_count + self.queue_size}) so "
                "that health checks and catalog calls still get through while every solve slot "
                "is taken",
                field="max_concurrent_rpcs",
            )
        if self.max_calls_per_tenant > self.max_concurrent_rpcs:
            raise InvalidInput(
                f"got {self.max_calls_per_tenant}, expected at most max_concurrent_rpcs "
                f"({self.max_concurrent_rpcs})",
                field="max_calls_per_tenant",
            )
        if not self.upload_idle_s > 0:
            raise InvalidInput(
                f"got {self.upload_idle_s}, expected seconds > 0", field="upload_idle_s"
            )
        if self.grace_s < 0:
            raise InvalidInput(f"got {self.grace_s}, expected seconds >= 0", field="grace_s")
