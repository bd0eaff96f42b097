"""Build, start, drain and stop the server (docs/service.md, "Lifecycle").

Order matters: the worker pool is started before ``grpc.server`` exists, because a process that
runs gRPC threads must not fork (reliability.md B1). Health reports NOT_SERVING until the store
is open and a solver smoke test has passed in a worker (A8); reflection can be switched off (A9).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from concurrent import futures
from pathlib import Path
from types import FrameType

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from optimizer._pb.procurement.v1 import (
    catalog_pb2,
    catalog_pb2_grpc,
    service_pb2,
    service_pb2_grpc,
)
from optimizer.catalog.store import CatalogStore
from optimizer.errors import InvalidInput
from optimizer.service.auth import load_tokens
from optimizer.service.config import ServiceConfig
from optimizer.service.interceptors import ServiceInterceptor
from optimizer.service.limits import MAX_MESSAGE_BYTES
from optimizer.service.metrics import Metrics
from optimizer.service.pool import WorkerPool
from optimizer.service.servicers import CatalogServicer, OptimizerServicer

SERVICE_NAMES = (
    catalog_pb2.DESCRIPTOR.services_by_name["CatalogService"].full_name,
    service_pb2.DESCRIPTOR.services_by_name["OptimizerService"].full_name,
)
# Threads beyond max_concurrent_rpcs, so a call admitted by gRPC always finds one.
_SPARE_THREADS = 4
# Calls gRPC admits beyond max_concurrent_rpcs: health checks (never refused for capacity) and
# the calls the interceptor refuses as busy, which need a thread to be refused on.
HEALTH_RESERVE = 16
_SMOKE_TIMEOUT_S = 120.0
SHUTDOWN_MARGIN_S = 5.0
"""How long after the grace period closing may still take before it is abandoned."""
EXIT_ABANDONED = 1
"""``procure serve``'s exit status when its shutdown had to be abandoned."""
# Clients may ping every 60 s without a call in flight (reliability.md A10).
_KEEPALIVE_OPTIONS = [
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 60_000),
]

log = logging.getLogger("procure.service")


def _read(path: Path, flag: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise InvalidInput(f"cannot read {path} ({e.strerror})", field=flag) from None


def _credentials(config: ServiceConfig) -> grpc.ServerCredentials | None:
    if config.tls_cert is None or config.tls_key is None:
        return None
    ca = None if config.tls_client_ca is None else _read(config.tls_client_ca, "tls_client_ca")
    return grpc.ssl_server_credentials(
        [(_read(config.tls_key, "tls_key"), _read(config.tls_cert, "tls_cert"))],
        root_certificates=ca,
        require_client_auth=ca is not None,
    )


class Service:
    """A started server with its pool, store and health; ``shutdown`` drains it."""

    def __init__(
        self,
        config: ServiceConfig,
        server: grpc.Server,
        pool: WorkerPool,
        store: CatalogStore,
        health_servicer: health.HealthServicer,
        interceptor: ServiceInterceptor,
    ) -> None:
        self.config = config
        self.grpc_server = server
        self._pool, self._store = pool, store
        self._health, self._interceptor = health_servicer, interceptor
        self.ready = threading.Event()
        self._stopped = threading.Event()
        self._stage = "running"

    def _become_ready(self) -> None:
        """Run the smoke test in a worker, then report SERVING for every service."""
        try:
            job = self._pool.submit(
                "smoke", b"", "-", wait=True, deadline=time.monotonic() + _SMOKE_TIMEOUT_S
            )
            job.result()
        except Exception as e:
            log.error(
                json.dumps({"event": "not_ready", "type": type(e).__name__, "reason": str(e)})
            )
            return
        for name in ("", *SERVICE_NAMES):
            self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self.ready.set()
        log.info(json.dumps({"event": "ready"}))

    def shutdown(
        self, grace_s: float | None = None, *, margin_s: float = SHUTDOWN_MARGIN_S
    ) -> bool:
        """Drain: health NOT_SERVING and new calls UNAVAILABLE at once; calls in progress get
        up to ``grace_s`` to finish; then the server, the workers and the store close.

        Bounded: if closing has not finished ``margin_s`` after the grace period (gRPC's stop
        has been seen to hang), the workers are killed, a ``shutdown_abandoned`` line says
        what was left, and False is returned (``serve`` then exits regardless)."""
        if self._stopped.is_set():
            return True
        self._stopped.set()
        grace = self.config.grace_s if grace_s is None else grace_s
        started = time.monotonic()
        done = threading.Event()
        closing = threading.Thread(
            target=self._close, args=(grace, started, done), name="shutdown", daemon=True
        )
        closing.start()
        if done.wait(grace + margin_s):
            return True
        self._pool.kill_all()
        log.error(
            json.dumps(
                {
                    "event": "shutdown_abandoned",
                    "after_s": round(time.monotonic() - started, 2),
                    "calls_in_flight": self._interceptor.in_flight(),
                    "workers_busy": self._pool.stats().busy,
                    "stuck_in": self._stage,
                }
            )
        )
        return False

    def _close(self, grace: float, started: float, done: threading.Event) -> None:
        self._stage = "draining"
        self._interceptor.draining.set()
        self._health.enter_graceful_shutdown()
        log.info(json.dumps({"event": "draining", "grace_s": grace}))
        drained = self._interceptor.wait_idle(grace)
        left = max(0.0, grace - (time.monotonic() - started))
        self._stage = "grpc_stop"
        self.grpc_server.stop(min(left, 1.0) if drained else 0).wait()
        self._stage = "workers"
        self._pool.close()
        self._stage = "store"
        self._store.close()
        self._stage = "stopped"
        log.info(
            json.dumps(
                {
                    "event": "stopped",
                    "drained": drained,
                    "duration_s": round(time.monotonic() - started, 2),
                }
            )
        )
        done.set()

    def wait_for_termination(self) -> None:
        self.grpc_server.wait_for_termination()


def create_server(config: ServiceConfig) -> tuple[Service, int]:
    """Start the service described by ``config``; returns it and the port it listens on.

    Raises InvalidInput for a configuration that must not run (see ServiceConfig.check) or an
    address that cannot be bound.
    """
    config.check()
    tokens = None if config.tokens_file is None else load_tokens(config.tokens_file)
    credentials = _credentials(config)
    store = CatalogStore(config.data_dir)
    data_dir = store.data_dir
    pool = WorkerPool(
        config.worker_count,
        config.queue_size,
        data_dir,
        jobs_per_worker=config.jobs_per_worker,
        cheap_workers=config.cheap_workers,
        warm_spare=config.warm_spare,
    )
    pool.start()  # before grpc.server(): no fork once gRPC threads exist
    try:
        metrics = Metrics()
        interceptor = ServiceInterceptor(
            tokens,
            metrics,
            max_calls=config.max_concurrent_rpcs,
            max_calls_per_tenant=config.max_calls_per_tenant,
            tenant_from_cert=config.tenant_from_cert,
        )
        server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=config.max_concurrent_rpcs + HEALTH_RESERVE + _SPARE_THREADS,
                thread_name_prefix="grpc-handler",
            ),
            interceptors=[interceptor],
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
                ("grpc.so_reuseport", 0),  # a port in use is an error, not shared
                *_KEEPALIVE_OPTIONS,
            ],
            maximum_concurrent_rpcs=config.max_concurrent_rpcs + HEALTH_RESERVE,
        )
        catalog_pb2_grpc.add_CatalogServiceServicer_to_server(  # type: ignore[no-untyped-call]
            CatalogServicer(store, pool, upload_idle_s=config.upload_idle_s), server
        )
        service_pb2_grpc.add_OptimizerServiceServicer_to_server(  # type: ignore[no-untyped-call]
            OptimizerServicer(pool, metrics, store), server
        )
        health_servicer = health.HealthServicer()
        for name in ("", *SERVICE_NAMES):
            health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        if config.reflection:
            reflection.enable_server_reflection(
                (*SERVICE_NAMES, health.SERVICE_NAME, reflection.SERVICE_NAME), server
            )
        try:
            port = (
                server.add_secure_port(config.address, credentials)
                if credentials
                else server.add_insecure_port(config.address)
            )
        except RuntimeError:
            port = 0
        if port == 0:
            raise InvalidInput(f"cannot listen on {config.address}", field="address")
        server.start()
    except BaseException:
        pool.close()
        store.close()
        raise
    service = Service(config, server, pool, store, health_servicer, interceptor)
    threading.Thread(target=service._become_ready, name="readiness", daemon=True).start()
    return service, port


def serve(config: ServiceConfig) -> None:
    """Run until SIGTERM or SIGINT, then drain (``procure serve``)."""
    service, port = create_server(config)
    host = config.address.rpartition(":")[0]
    mode = ("mutual TLS" if config.tls_client_ca else "TLS") if config.tls else "insecure"
    log.info(
        json.dumps(
            {
                "event": "listening",
                "address": f"{host}:{port}",
                "transport": mode,
                "workers": config.worker_count,
                "reflection": config.reflection,
                "auth": "tokens" if config.tokens_file else "none",
            }
        )
    )
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not stop.wait(1.0):
        pass
    if not service.shutdown():
        logging.shutdown()
        os._exit(EXIT_ABANDONED)  # threads stuck in gRPC must not keep the process alive
