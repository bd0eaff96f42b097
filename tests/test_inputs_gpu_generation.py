"""A missing gpu_model is inferred from gpu_peak_tflops, or the notes say what was used
(issue 14, defect 1): an A100 request without a model name must not get H100 constants."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2 as pb
from optimizer.api import estimate
from optimizer.performance.calibration import generation, generation_from_hardware
from optimizer.performance.convert import cluster_from_proto

WORKLOAD: dict[str, Any] = {"model": "llama3-8b", "training_tokens": 1e11}


def _cluster(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "gpus": 64,
        "gpus_per_node": 8,
        "gpu_memory_gb": 80,
        "intra_node_gbytes_per_s": 300,
        "fabric": "infiniband",
        "nic_gbps_per_node": 1600,
    }
    return {**base, **fields}


@pytest.mark.parametrize(
    ("peak_tflops", "expected"), [(312, "A100"), (989, "H100"), (989.4, "H100"), (2250, "B200")]
)
def test_the_peak_names_the_generation(peak_tflops: float, expected: str) -> None:
    c = cluster_from_proto(ParseDict(_cluster(gpu_peak_tflops=peak_tflops), pb.Cluster()))

    assert generation(c.gpu_model).name == expected


def test_an_a100_peak_gets_a100_efficiency_and_a_note() -> None:
    request = ParseDict(
        {"workload": WORKLOAD, "cluster": _cluster(gpu_peak_tflops=312)}, pb.EstimateRequest()
    )

    notes = list(estimate(request).notes)

    assert any("A100 inferred from gpu_peak_tflops 312" in n for n in notes)
    assert not any("default generation" in n for n in notes)


def test_a_named_gpu_model_wins_over_the_peak() -> None:
    c = cluster_from_proto(
        ParseDict(_cluster(gpu_peak_tflops=312, gpu_model="H100 SXM5"), pb.Cluster())
    )

    assert c.gpu_model == "H100 SXM5"


def test_an_unknown_peak_says_the_default_generation_was_used() -> None:
    request = ParseDict(
        {"workload": WORKLOAD, "cluster": _cluster(gpu_peak_tflops=500)}, pb.EstimateRequest()
    )

    notes = list(estimate(request).notes)

    assert any("gpu_peak_tflops 500 matches no calibrated generation" in n for n in notes)


def test_a_peak_shared_by_differently_calibrated_generations_is_not_guessed() -> None:
    assert generation_from_hardware(2500, 288) is None  # GB300 (0.55) and MI355X (0.45)


# The memory tells apart generations of one peak (an H200 is an H100 die with 141 GB).
@pytest.mark.parametrize(
    ("peak_tflops", "memory_gb", "expected"),
    [(989, 141, "H200"), (2250, 288, "B300"), (2500, 186, "GB200"), (1307, 256, "MI325X")],
)
def test_the_memory_tells_apart_generations_of_one_peak(
    peak_tflops: float, memory_gb: float, expected: str
) -> None:
    cluster = _cluster(gpu_peak_tflops=peak_tflops, gpu_memory_gb=memory_gb)

    c = cluster_from_proto(ParseDict(cluster, pb.Cluster()))

    assert generation(c.gpu_model).name == expected


def test_an_h200_note_says_the_memory_decided() -> None:
    cluster = _cluster(gpu_peak_tflops=989, gpu_memory_gb=141)
    request = ParseDict({"workload": WORKLOAD, "cluster": cluster}, pb.EstimateRequest())

    notes = list(estimate(request).notes)

    assert any(
        "H200 inferred from gpu_peak_tflops 989 and gpu_memory_gb 141 (its dense BF16 peak is "
        "989.4 TFLOP/s, its memory 141 GB)" in n
        for n in notes
    )


def test_a_memory_no_generation_of_the_peak_has_is_said() -> None:
    cluster = _cluster(gpu_peak_tflops=989, gpu_memory_gb=96)
    request = ParseDict({"workload": WORKLOAD, "cluster": cluster}, pb.EstimateRequest())

    notes = list(estimate(request).notes)

    assert any("gpu_memory_gb 96 matches none of H100 80 GB, H200 141 GB" in n for n in notes)
