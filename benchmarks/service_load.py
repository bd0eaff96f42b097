"""Load test of the gRPC service: for each client count (8, 32, 64 by default), that many
concurrent clients, spread over several tenants, issue mixed Estimate/Optimize calls for a
fixed time against ``procure serve`` on loopback. Prints, per client count, goodput (calls
answered OK per second) and OK-call p50/p99 latency, with busy refusals (RESOURCE_EXHAUSTED
carrying a RetryInfo hint: the server shedding load as designed) counted apart from errors
(anything else, which must be zero), and the server's memory (server + workers RSS).

    python benchmarks/service_load.py --clients 8,32,64 --duration 20 --workers 2

Clients do not retry a busy refusal here (the CLI does): the point is to count them. Not part
of the test suite; docs/service.md records the figures.
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
from collections import Counter, defaultdict
from dataclasses import dataclass, field
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
from optimizer.service.rpc_status import from_trailers  # noqa: E402
from tests.service_support import Stubs, spawn_server, wait_serving  # noqa: E402

CATALOGS = ["infiniband-ndr", "roce-spectrum", "ethernet-budget"]


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


def _server_rss_mib(pid: int) -> float:
    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        try:
            total += child.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


@dataclass
class Tally:
    """What the clients of one run saw, by call kind."""

    ok_latencies_s: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    busy: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _client(
    address: str, token: str, until: float, optimize_share: float, seed: int, tally: Tally
) -> None:
    rng = random.Random(seed)
    estimate = _estimate()
    optimize = {c: _optimize(c) for c in CATALOGS}
    metadata = (("authorization", f"Bearer {token}"),)
    with grpc.insecure_channel(address) as channel:
        stub = service_pb2_grpc.OptimizerServiceStub(channel)
        while time.monotonic() < until:
            kind = "Optimize" if rng.random() < optimize_share else "Estimate"
            started = time.perf_counter()
            try:
                if kind == "Optimize":
                    stub.Optimize(optimize[rng.choice(CATALOGS)], metadata=metadata, timeout=60)
                else:
                    stub.Estimate(estimate, metadata=metadata, timeout=60)
            except grpc.RpcError as e:
                hint = from_trailers(e.trailing_metadata()).retry_after_s  # type: ignore[attr-defined]
                busy = e.code() is grpc.StatusCode.RESOURCE_EXHAUSTED and hint is not None  # type: ignore[attr-defined]
                with tally.lock:
                    if busy:
                        tally.busy[kind] += 1
                    else:
                        tally.errors.append(f"{kind}: {e.code().name}: {e.details()}")  # type: ignore[attr-defined]
                if busy:  # back off a little, as a polite client would, without retrying
                    time.sleep(min(hint or 0.0, 0.1))
                continue
            with tally.lock:
                tally.ok_latencies_s[kind].append(time.perf_counter() - started)


def _percentile_ms(values: list[float], q: int) -> float:
    if len(values) == 1:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def run(
    address: str, tokens: list[str], clients: int, duration_s: float, optimize_share: float
) -> tuple[Tally, float]:
    tally = Tally()
    started = time.monotonic()
    until = started + duration_s
    threads = [
        threading.Thread(
            target=_client,
            args=(address, tokens[i % len(tokens)], until, optimize_share, i, tally),
        )
        for i in range(clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally, time.monotonic() - started


def report(clients: int, tally: Tally, elapsed_s: float) -> None:
    every = [x for values in tally.ok_latencies_s.values() for x in values]
    busy = sum(tally.busy.values())
    print(
        f"clients {clients:3d}: goodput {len(every) / elapsed_s:6.1f} OK calls/s "
        f"({len(every)} in {elapsed_s:.1f} s), busy refusals {busy} "
        f"({dict(tally.busy)}), errors {len(tally.errors)}"
    )
    for kind, values in sorted({"all": every, **tally.ok_latencies_s}.items()):
        if values:
            print(
                f"    {kind:9s} n={len(values):5d}  p50 {_percentile_ms(values, 50):8.1f} ms"
                f"  p99 {_percentile_ms(values, 99):8.1f} ms"
            )
    for line in tally.errors[:5]:
        print("    error:", line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", default="8,32,64", help="comma-separated client counts")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load per count")
    parser.add_argument("--workers", type=int, default=2, help="server solver processes")
    parser.add_argument("--tenants", type=int, default=4, help="tenants the clients spread over")
    parser.add_argument(
        "--optimize-share",
        type=float,
        default=0.3,
        help="fraction of calls that are Optimize (the rest Estimate)",
    )
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    tokens = [f"load-test-token-{i:04d}-abcdefgh" for i in range(args.tenants)]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        tokens_file = Path(tmp) / "tokens.txt"
        tokens_file.write_text("".join(f"tenant-{i} {t}\n" for i, t in enumerate(tokens)))
        proc, address = spawn_server(
            Path(tmp) / "data",
            "--tokens",
            str(tokens_file),
            log_path=Path(tmp) / "server.log",
            workers=args.workers,
        )
        try:
            with grpc.insecure_channel(address) as channel:
                wait_serving(Stubs(channel))
                stub = service_pb2_grpc.OptimizerServiceStub(channel)
                warm = (("authorization", f"Bearer {tokens[0]}"),)
                for c in CATALOGS * args.workers:  # each worker decodes each catalog once
                    stub.Optimize(_optimize(c), metadata=warm, timeout=60)
            rss_before = _server_rss_mib(proc.pid)
            print(
                f"server workers {args.workers}, tenants {args.tenants}, cpus {os.cpu_count()}, "
                f"{args.duration:g} s per client count, Optimize share {args.optimize_share:g}"
            )
            for clients in counts:
                tally, elapsed = run(address, tokens, clients, args.duration, args.optimize_share)
                report(clients, tally, elapsed)
                failed |= bool(tally.errors)
            rss_after = _server_rss_mib(proc.pid)
        finally:
            proc.terminate()
            proc.wait(60)
    print(f"server RSS (server + workers): before {rss_before:.0f} MiB, after {rss_after:.0f} MiB")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
