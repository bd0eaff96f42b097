"""The request field ``calibration`` over gRPC: it changes the estimate, and a malformed
profile is refused as INVALID_ARGUMENT naming ``calibration.<field>``."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from service_support import TOKEN_A, Stubs, bearer, small_estimate, start, write_tokens

from optimizer._pb.procurement.v1 import estimate_pb2


@pytest.fixture(scope="module")
def stubs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stubs]:
    folder = tmp_path_factory.mktemp("server")
    service, address = start(folder, tokens_file=write_tokens(folder))
    with grpc.insecure_channel(address) as channel:
        yield Stubs(channel)
    service.shutdown(grace_s=0)


def test_a_calibrated_request_gets_a_different_estimate(stubs: Stubs) -> None:
    plain = small_estimate()  # BERT-Large on 64 A100s over Ethernet
    base = stubs.optimizer.Estimate(plain, metadata=bearer(TOKEN_A), timeout=30)
    # The same plan on both sides: half the kernel speed may move the planner to another
    # plan (less data parallelism, more compute per GPU), which would blur the comparison;
    # the plan may leave GPUs idle, so the calibrated request names the GPUs it occupies.
    calibrated = small_estimate()
    calibrated.parallelism.CopyFrom(base.parallelism)
    calibrated.cluster.gpus = base.gpus_used
    calibrated.calibration.CopyFrom(
        estimate_pb2.CalibrationProfile(gpu_generation="A100", kernel_efficiency_scale=0.5)
    )
    slower = stubs.optimizer.Estimate(calibrated, metadata=bearer(TOKEN_A), timeout=30)
    assert slower.breakdown.compute_s > 1.5 * base.breakdown.compute_s
    assert slower.training_time_hours > base.training_time_hours


def test_a_malformed_profile_is_invalid_argument_naming_the_field(stubs: Stubs) -> None:
    request = small_estimate()
    request.calibration.CopyFrom(estimate_pb2.CalibrationProfile(collective_efficiency=3.0))
    with pytest.raises(grpc.RpcError) as e:
        stubs.optimizer.Estimate(request, metadata=bearer(TOKEN_A), timeout=30)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    assert "calibration.collective_efficiency" in e.value.details()  # type: ignore[attr-defined]
