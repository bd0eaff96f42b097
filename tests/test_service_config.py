"""Service configuration, tokens and limits: the checks that run before any server exists."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

from optimizer import request_limits
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.errors import InvalidInput, LimitExceeded, Unauthenticated
from optimizer.service import limits
from optimizer.service.auth import parse_tokens
from optimizer.service.config import ServiceConfig, is_loopback
from optimizer.service.errors import DeadlineExceeded

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "s3cret-token-0123456789"


@pytest.mark.parametrize(
    ("address", "loopback"),
    [
        ("127.0.0.1:50051", True),
        ("localhost:1", True),
        ("[::1]:0", True),
        ("127.1.2.3:9", True),
        ("0.0.0.0:50051", False),
        ("[::]:50051", False),
        ("10.0.0.5:50051", False),
        ("example.com:443", False),
    ],
)
def test_loopback_addresses_are_recognised(address: str, loopback: bool) -> None:
    assert is_loopback(address) is loopback


def test_a_remote_address_without_tls_is_refused() -> None:
    with pytest.raises(InvalidInput, match="without TLS") as e:
        ServiceConfig(address="0.0.0.0:50051", tokens_file=Path("t")).check()
    assert e.value.field == "address"


def test_a_remote_address_without_tokens_is_refused() -> None:
    with pytest.raises(InvalidInput, match="without --tokens"):
        ServiceConfig(address="0.0.0.0:1", tls_cert=Path("c"), tls_key=Path("k")).check()


def test_a_remote_address_is_allowed_when_asked_explicitly() -> None:
    ServiceConfig(address="0.0.0.0:50051", allow_insecure_remote=True).check()


def test_a_certificate_without_its_key_is_refused() -> None:
    with pytest.raises(InvalidInput) as e:
        ServiceConfig(tls_cert=Path("c")).check()
    assert e.value.field == "tls_key"


def test_mutual_tls_needs_a_server_certificate() -> None:
    with pytest.raises(InvalidInput) as e:
        ServiceConfig(tls_client_ca=Path("ca")).check()
    assert e.value.field == "tls_client_ca"


def test_concurrent_rpcs_must_leave_room_beyond_the_solve_slots() -> None:
    with pytest.raises(InvalidInput) as e:
        ServiceConfig(workers=4, queue_size=4, max_concurrent_rpcs=8).check()
    assert e.value.field == "max_concurrent_rpcs"


def test_serve_refuses_a_public_address_before_starting_anything() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "client.cli", "serve", "--address", "0.0.0.0:0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 3
    assert "refusing to serve 0.0.0.0:0 without TLS" in out.stderr


def test_a_token_maps_to_its_tenant() -> None:
    table = parse_tokens(
        ["# comment", "", f"acme {TOKEN}", "globex other-token-0123456789"], "tokens"
    )
    assert table.tenant_for(f"Bearer {TOKEN}") == "acme"
    assert table.tenant_for(f"bearer {TOKEN}") == "acme"


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (None, "missing credentials; expected metadata 'authorization: Bearer <token>'"),
        (f"Basic {TOKEN}", "expected metadata 'authorization: Bearer <token>'"),
        ("Bearer wrong-token-0123456789", "invalid bearer token"),
        (f"Bearer {TOKEN}x", "invalid bearer token"),
    ],
)
def test_missing_or_wrong_credentials_are_unauthenticated(header: str | None, message: str) -> None:
    table = parse_tokens([f"acme {TOKEN}"], "tokens")
    with pytest.raises(Unauthenticated) as e:
        table.tenant_for(header)
    assert str(e.value) == message


@pytest.mark.parametrize(
    ("lines", "field"),
    [
        (["acme"], "tokens:1"),
        (["acme short"], "tokens:1"),
        ([f"acme {TOKEN}", f"globex {TOKEN}"], "tokens:2"),
        (["# only a comment"], "tokens"),
    ],
)
def test_a_bad_token_file_names_the_line_but_never_the_token(lines: list[str], field: str) -> None:
    with pytest.raises(InvalidInput) as e:
        parse_tokens(lines, "tokens")
    assert e.value.field == field
    assert TOKEN not in str(e.value) and "short" not in str(e.value)


def test_the_solver_limit_is_cut_to_the_calls_remaining_time() -> None:
    request = optimize_pb2.OptimizeRequest(solver=optimize_pb2.SolverOptions(time_limit_s=60))
    capped = limits.with_solver_deadline(request, 10.0)
    assert capped.solver.time_limit_s == pytest.approx(10.0 - limits.DEADLINE_MARGIN_S)
    assert request.solver.time_limit_s == 60  # the caller's message is not modified


def test_a_shorter_requested_limit_or_no_deadline_is_kept() -> None:
    request = optimize_pb2.OptimizeRequest(solver=optimize_pb2.SolverOptions(time_limit_s=2))
    assert limits.with_solver_deadline(request, 30.0) is request
    assert limits.with_solver_deadline(request, None) is request


def test_a_deadline_too_short_to_solve_fails_at_once() -> None:
    with pytest.raises(DeadlineExceeded, match=r"leaves 0.30 s"):
        limits.with_solver_deadline(optimize_pb2.OptimizeRequest(), 0.3)


@pytest.mark.parametrize(
    ("field", "lo", "hi"),
    [
        ("gpu_peak_tflops", 0.001, 100_000.0),
        ("oversubscription", 1.0, 1000.0),
        ("gpus_per_node", 1, 1024),
    ],
)
def test_numbers_at_their_bounds_pass_and_one_past_is_invalid_naming_the_field(
    field: str, lo: float, hi: float
) -> None:
    for ok in (lo, hi):
        request_limits.check_estimate(estimate_pb2.EstimateRequest(cluster={field: ok}))
    step = 1 if isinstance(hi, int) else hi * 1e-9
    for bad in (hi + step, math.inf, -math.inf, math.nan) if isinstance(hi, float) else (hi + 1,):
        with pytest.raises(InvalidInput) as e:
            request_limits.check_estimate(estimate_pb2.EstimateRequest(cluster={field: bad}))
        assert e.value.field == f"cluster.{field}"


def test_batch_runs_are_limited() -> None:
    limits.check_batch_runs(limits.MAX_BATCH_RUNS)
    with pytest.raises(LimitExceeded):
        limits.check_batch_runs(limits.MAX_BATCH_RUNS + 1)


def test_solver_workers_never_import_grpc() -> None:
    code = (
        "import sys, optimizer.service.jobs as j; j.JobRunner(None); print('grpc' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.stdout.strip() == "False", out.stderr
