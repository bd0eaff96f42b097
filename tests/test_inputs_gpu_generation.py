"""A missing gpu_model is inferred from gpu_peak_tflops, or the notes say what was used
(issue 14, defect 1): an A100 request without a model name must not get H100 constants."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict

from optimizer._pb.procurement.v1 import estimate_pb2 as pb
from optimizer.api import estimate
from optimizer.catalog import load_catalog
from optimizer.catalog.model import Server
from optimizer.performance.calibration import generation, generation_from_hardware
from optimizer.performance.cluster import server_cluster, server_gpu_model
from optimizer.performance.convert import cluster_from_proto
from optimizer.performance.planner import plan_and_estimate
from optimizer.topology.sizing import size_network
from optimizer.workload.presets import preset

WORKLOAD: dict[str, Any] = {"model": "llama3-8b", "training_tokens": 1e11}
SMALL = Path(__file__).parent / "data" / "catalog_small"


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


def _generation_of(**fields: Any) -> str:
    """The generation the cluster with these fields is timed as."""
    c = cluster_from_proto(ParseDict(_cluster(**fields), pb.Cluster()))
    return generation(c.gpu_model).name


def _notes(**fields: Any) -> list[str]:
    request = ParseDict({"workload": WORKLOAD, "cluster": _cluster(**fields)}, pb.EstimateRequest())
    return list(estimate(request).notes)


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
    assert _generation_of(gpu_peak_tflops=peak_tflops, gpu_memory_gb=memory_gb) == expected


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


# A model name no generation is calibrated for: the export versions of the A100 and the H100
# (A800, H800: the same compute die, a slower NVLink the request states) were timed with the
# default generation, H100's constants with a wider range, an A800 10 % slower than an A100.
@pytest.mark.parametrize(
    ("gpu_model", "peak_tflops", "expected"),
    [("A800 SXM4 80GB", 312, "A100"), ("H800 SXM5 80GB", 989.4, "H100")],
)
def test_an_uncalibrated_model_is_timed_as_the_generation_its_peak_and_memory_identify(
    gpu_model: str, peak_tflops: float, expected: str
) -> None:
    assert _generation_of(gpu_model=gpu_model, gpu_peak_tflops=peak_tflops) == expected


def test_an_a800_estimate_is_an_a100_estimate() -> None:
    def hours(gpu_model: str) -> tuple[float, float, float]:
        cluster = _cluster(gpu_model=gpu_model, gpu_peak_tflops=312)
        r = estimate(ParseDict({"workload": WORKLOAD, "cluster": cluster}, pb.EstimateRequest()))
        return r.training_time_hours_low, r.training_time_hours, r.training_time_hours_high

    assert hours("A800 SXM4 80GB") == hours("A100 SXM4 80GB")


def test_the_notes_say_which_generation_an_uncalibrated_model_is_timed_as() -> None:
    notes = _notes(gpu_model="A800 SXM4 80GB", gpu_peak_tflops=312)

    assert any(
        "cluster.gpu_model 'A800 SXM4 80GB' names no calibrated generation: GPU generation A100 "
        "inferred from gpu_peak_tflops 312" in n
        for n in notes
    )
    assert not any("default generation" in n for n in notes)


def test_an_uncalibrated_model_no_peak_identifies_keeps_the_default_generation() -> None:
    notes = _notes(gpu_model="L40S", gpu_peak_tflops=362, gpu_memory_gb=48)

    assert any("no calibrated kernel efficiency for GPU 'L40S'" in n for n in notes)
    assert not any("names no calibrated generation" in n for n in notes)


def test_a_catalog_row_of_an_uncalibrated_model_is_timed_as_its_generation() -> None:
    """The optimizer's clusters (server_cluster) and bounds read the same model the estimate
    does: an H800 row of a user's catalog times as the H100 row it copies."""
    h100 = next(s for s in load_catalog(SMALL).servers if s.gpu_model == "H100")
    h800 = replace(h100, sku="SRV-H800", gpu_model="H800")
    profile = size_network("fat_tree", 64, 64, rails=8).profile

    def hours(server: Server) -> float:
        cluster = server_cluster(
            server, nodes=8, fabric="infiniband", nic_gbps=400, nics_per_node=8, topology=profile
        )
        return plan_and_estimate(preset("llama3-8b"), cluster).training_time_hours

    assert server_gpu_model(h800) == "H800 (as H100)"
    assert hours(h800) == hours(h100)


def test_the_notes_name_the_server_whose_gpu_is_timed_as_another_generation() -> None:
    small = load_catalog(SMALL)
    h800 = replace(
        next(s for s in small.servers if s.gpu_model == "H100"), sku="SRV-H800", gpu_model="H800"
    )
    catalog = replace(small, servers=(*small.servers, h800))
    cluster = {k: v for k, v in _cluster().items() if not k.startswith("gpu_")}
    cluster.pop("intra_node_gbytes_per_s")
    request = ParseDict(
        {"workload": WORKLOAD, "cluster": {**cluster, "server_sku": "SRV-H800"}},
        pb.EstimateRequest(),
    )

    notes = list(estimate(request, catalog=catalog).notes)

    assert any(
        "cluster.server_sku 'SRV-H800' has GPU 'H800', no calibrated one: GPU generation H100" in n
        for n in notes
    )
