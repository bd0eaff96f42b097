"""Load test of the gRPC service: N concurrent clients issue mixed Estimate/Optimize calls for a
fixed time against ``procure serve`` on loopback, then print throughput, p50/p99 latency, errors
(must be zero) and the server's memory (server + workers RSS) before and after.

    python benchmarks/service_load.py --clients 8 --duration 30 --workers 2

Not part of the test suite; docs/service.md records the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import grpc
import psutil
from google.protobuf import json_format

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from optimizer._pb.procurement.v1 import (  # noqa: E402
    estimate_pb2,
    optimize_pb2,
    service_pb2_grpc,
)
from tests.service_support import Stubs, spawn_server, wait_serving  # noqa: E402


def _estimate() -> estimate_pb2.EstimateRequest:
    text = (ROOT / "examples" / "estimate-bert-large-ethernet.json").read_text()
    return json_format.Parse(text, estimate_pb2.EstimateRequest())


def _optimize(catalog: str) -> optimize_pb2.OptimizeRequest:
    return optimize_pb2.OptimizeRequest(
        catalog=catalog,
        workload=estimate_pb2.Workload(model="bert-large", training_tokens=1e9),
        constraints=optimize_pb2.Constraints(target_training_hours=24),
        top_k=1,
    )


def _server_rss_mb(pid: int) -> float:
    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


def _client(
    address: str,
    until: float,
    optimize_share: float,
    catalogs: list[str],
    seed: int,
    latencies: dict[str, list[float]],
    errors: list[str],
    lock: threading.Lock,
) -> None:
    rng = random.Random(seed)
    estimate = _estimate()
    optimize = {c: _optimize(c) for c in catalogs}
    with grpc.insecure_channel(address) as channel:
        stub = service_pb2_grpc.OptimizerServiceStub(channel)
        while time.monotonic() < until:
            kind = "Optimize" if rng.random() < optimize_share else "Estimate"
            started = time.perf_counter()
            try:
                if kind == "Optimize":
                    stub.Optimize(optimize[rng.choice(catalogs)], timeout=60)
                else:
                    stub.Estimate(estimate, timeout=60)
            except grpc.RpcError as e:
                with lock:
                    errors.append(f"{kind}: {e.code().name}: {e.details()}")
                continue
            with lock:
                latencies[kind].append(time.perf_counter() - started)


def _percentile(values: list[float], q: float) -> float:
    return (
        statistics.quantiles(values, n=100, method="inclusive")[q - 1]
        if len(values) > 1
        else values[0]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=30.0, help="seconds of load")
    parser.add_argument("--workers", type=int, default=2, help="server solver processes")
    parser.add_argument(
        "--optimize-share",
        type=float,
        default=0.3,
        help="fraction of calls that are Optimize (the rest Estimate)",
    )
    args = parser.parse_args()
    catalogs = ["infiniband-ndr", "roce-spectrum", "ethernet-budget"]
    with tempfile.TemporaryDirectory() as tmp:
        proc, address = spawn_server(
            Path(tmp) / "data", log_path=Path(tmp) / "server.log", workers=args.workers
        )
        try:
            with grpc.insecure_channel(address) as channel:
                wait_serving(Stubs(channel))
                # One warm-up call per catalog so that each worker has them decoded.
                stub = service_pb2_grpc.OptimizerServiceStub(channel)
                for c in catalogs * args.workers:
                    stub.Optimize(_optimize(c), timeout=60)
            rss_before = _server_rss_mb(proc.pid)
            latencies: dict[str, list[float]] = defaultdict(list)
            errors: list[str] = []
            lock = threading.Lock()
            started = time.monotonic()
            until = started + args.duration
            threads = [
                threading.Thread(
                    target=_client,
                    args=(
                        address,
                        until,
                        args.optimize_share,
                        catalogs,
                        i,
                        latencies,
                        errors,
                        lock,
                    ),
                )
                for i in range(args.clients)
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.monotonic() - started
            rss_after = _server_rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(60)
    every = [x for values in latencies.values() for x in values]
    print(
        f"clients {args.clients}, server workers {args.workers}, duration {elapsed:.1f} s, "
        f"cpus {os.cpu_count()}"
    )
    print(
        f"calls {len(every)}, throughput {len(every) / elapsed:.1f} calls/s, errors {len(errors)}"
    )
    for kind, values in sorted({"all": every, **latencies}.items()):
        if values:
            print(
                f"  {kind:9s} n={len(values):5d}  p50 {_percentile(values, 50) * 1000:8.1f} ms"
                f"  p99 {_percentile(values, 99) * 1000:8.1f} ms"
            )
    print(f"server RSS (server + workers): before {rss_before:.0f} MiB, after {rss_after:.0f} MiB")
    for line in errors[:10]:
        print("error:", line)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
