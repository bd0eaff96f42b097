"""The scale-up domain (issue 16): groups that fit the NVLink domain stay off the network."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from google.protobuf.json_format import ParseDict

from client.cli import main
from optimizer import api
from optimizer._pb.procurement.v1 import estimate_pb2
from optimizer.catalog import load_catalog
from optimizer.errors import InvalidInput
from optimizer.performance.cluster import ClusterSpec
from optimizer.performance.convert import cluster_from_proto
from optimizer.performance.estimator import StepModel, estimate, plan_traffic
from optimizer.performance.fabrics import DEFAULT_FABRICS
from optimizer.performance.plan import ParallelPlan, PartialPlan
from optimizer.performance.planner import plan_and_estimate, tensor_degrees
from optimizer.topology.sizing import size_network
from optimizer.workload.presets import preset
from tests.estimator_fixtures import cluster

RACK_SCALE = Path(__file__).parent / "data" / "catalog_rack_scale"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def nvl72(racks: int = 2, *, domain: int | None = 72) -> ClusterSpec:
    """GB200 NVL72 racks as the estimator sees them: 4-GPU hosts, one 400G NIC per GPU,
    one 72-GPU NVLink domain per rack (``domain`` 4: the same hosts without the rack)."""
    hosts = racks * 18
    profile = size_network("fat_tree", hosts * 4, 64, rails=4).profile
    return ClusterSpec(
        gpus=racks * 72,
        gpus_per_node=4,
        gpu_peak_tflops=2500.0,
        gpu_memory_gb=186.0,
        intra_node_gbytes_per_s=900.0,
        fabric="infiniband",
        nic_gbps_per_node=1600.0,
        nics_per_node=4,
        topology=profile,
        gpu_model="B200",
        gpu_peak_fp8_tflops=5000.0,
        scale_up_gpus=domain,
    )


MOE = preset("mixtral-8x7b", experts=64, experts_per_token=4)
EP64 = ParallelPlan(tensor=1, pipeline=1, data=128, expert=64, zero_stage=1)


def test_an_expert_group_inside_the_domain_has_no_network_all_to_all() -> None:
    c = replace(nvl72(2, domain=64), gpus=128)
    step = StepModel(MOE, c, EP64, DEFAULT_FABRICS["infiniband"])
    assert step.a2a_net is None
    assert step.a2a_nv_s > 0


def test_the_same_expert_group_on_a_host_sized_domain_crosses_the_network() -> None:
    c = replace(nvl72(2, domain=None), gpus=128)
    step = StepModel(MOE, c, EP64, DEFAULT_FABRICS["infiniband"])
    assert step.a2a_net is not None
    assert plan_traffic(MOE, EP64, 4, 4).all_to_all.remote_share == pytest.approx(1 - 4 / 64)


def test_an_expert_group_straddling_two_domains_counts_only_the_ranks_it_always_shares() -> None:
    """Groups of 64 tile 72-GPU racks at offsets 0, 64, 128...: 8 ranks always share one."""
    part = plan_traffic(MOE, EP64, 4, 72).all_to_all
    assert part is not None and part.remote_share == pytest.approx(1 - 8 / 64)


def test_tensor_group_larger_than_the_host_stays_on_nvlink_inside_the_domain() -> None:
    w = preset("llama3-70b")
    plan = ParallelPlan(tensor=8, pipeline=1, data=18, zero_stage=3)
    assert plan_traffic(w, plan, 4, 72).tensor.remote_share == 0.0
    assert plan_traffic(w, plan, 4, 4).tensor.remote_share == 1.0


def test_pipeline_neighbours_inside_one_domain_use_nvlink() -> None:
    """Four stages of 16 GPUs fit one 72-GPU domain; eight span two, and every micro-batch
    crosses the domain edge between them (session 32: counted on NVLink before)."""
    w = preset("llama3-70b")
    plan = ParallelPlan(tensor=4, pipeline=4, data=4, virtual_pipeline=2)
    traffic = plan_traffic(w, plan, 4, 72)
    assert traffic.p2p is not None and traffic.p2p.remote_share == 0.0
    assert plan_traffic(w, plan, 4, 4).p2p.remote_share == 1.0  # type: ignore[union-attr]
    wider = plan_traffic(w, replace(plan, pipeline=8), 4, 72).p2p
    assert wider is not None and wider.remote_share == 1.0


@pytest.mark.parametrize(
    ("name", "gpus", "network", "plan", "old_step_s"),
    [
        # Step times of the estimator before the scale-up domain existed (commit e7367af),
        # moved by issue 14's network model (identical for a domain of None and 8): compute
        # slowed 10 % while a reduction overlaps it (8x7b, 70b), pipeline sends counted at
        # their leaf-crossing stride (70b) and, on the dragonfly, data-parallel rings sharing
        # a router's global links with the pipeline sends while their bytes are on the wire (8x22b).
        # re-pinned for issue 14 (pipeline): the slowest stage's compute (uneven layers, the
        # output layer on the last stage) and 25 us per micro-batch chunk pass now count.
        ("mixtral-8x7b", 64, {}, ParallelPlan(2, 1, 32, 8, 1, 1, 1), 15.708348307869482),
        (
            "mixtral-8x7b",
            128,
            {"nics_per_node": 4, "nic_gbps_per_node": 1600, "oversubscription": 2.0},
            ParallelPlan(1, 4, 32, 8, 4, 1, 1),
            7.777532076694342,
        ),
        ("llama3-70b", 128, {}, ParallelPlan(8, 4, 4, 1, 4, 1, 1), 43.17365527766308),
        (
            "mixtral-8x22b",
            256,
            {"topology": "dragonfly"},
            ParallelPlan(4, 4, 16, 8, 2, 1, 1),
            13.594820365070133,
        ),
    ],
)
def test_a_domain_equal_to_the_node_reproduces_the_old_estimates(
    name: str, gpus: int, network: dict[str, object], plan: ParallelPlan, old_step_s: float
) -> None:
    # Issue 14's compute model moved every step time (old_step_s is the pre-issue-14 value,
    # kept for reference): the law is that a domain of one node times exactly as no domain.
    c = cluster(gpus, **network)  # type: ignore[arg-type]
    w = preset(name)
    if name == "llama3-70b":  # the preset's batch was 512 sequences (4M tokens) then
        w = replace(w, global_batch_size=512)
    steps_s = [
        estimate(w, replace(c, scale_up_gpus=domain), plan).step_time_s for domain in (None, 8)
    ]
    assert steps_s[0] == pytest.approx(steps_s[1], rel=1e-12)
    assert steps_s[0] == pytest.approx(old_step_s, rel=0.5)


def test_tensor_degrees_divide_the_domain_and_stop_at_16_beyond_the_host() -> None:
    w128, w96 = preset("llama3-405b"), preset("gpt3-175b")  # 128 and 96 heads
    assert tensor_degrees(w128, 144, 4, 72) == [1, 2, 4, 8]
    assert tensor_degrees(w96, 144, 4, 72) == [1, 2, 3, 4, 6, 8, 12]
    assert tensor_degrees(preset("mpt-70b"), 128, 4, 64) == [1, 2, 4, 8, 16]  # 64 K/V heads
    assert tensor_degrees(w128, 128, 4, 64) == [1, 2, 4, 8]  # 8 K/V heads (test_tensor_split)
    assert tensor_degrees(w128, 64, 8, 8) == [1, 2, 4, 8]


def test_the_planner_may_leave_8_gpus_of_each_nvl72_idle_so_expert_groups_tile_it() -> None:
    w = preset("deepseek-v3")
    est = plan_and_estimate(w, nvl72(8), PartialPlan(expert=64))
    assert est.breakdown.all_to_all_network_s == 0.0
    assert est.gpus_used == 8 * 64
    assert est.scale_up_gpus == 72
    assert any("64 of the 72 GPUs of each scale-up domain" in n for n in est.notes)


def test_large_expert_parallelism_is_faster_in_an_nvl72_than_on_hosts_alone() -> None:
    w, fixed = preset("deepseek-v3"), PartialPlan(expert=64)
    rack = plan_and_estimate(w, nvl72(8), fixed)
    hosts = plan_and_estimate(w, nvl72(8, domain=None), fixed)
    assert rack.step_time_s < hosts.step_time_s
    assert hosts.breakdown.all_to_all_network_s > 0.0


def _estimate_request(**cluster_changes: object) -> estimate_pb2.EstimateRequest:
    spec = json.loads((EXAMPLES / "estimate-llama3-70b.json").read_text())
    spec["cluster"].update(cluster_changes)
    return ParseDict(spec, estimate_pb2.EstimateRequest())


def test_estimate_request_accepts_cluster_scale_up_gpus() -> None:
    c = cluster_from_proto(_estimate_request(scale_up_gpus=16).cluster)
    assert c.scale_up_domain_gpus == 16 and c.gpus_per_node == 8


def test_a_bad_scale_up_gpus_is_invalid_argument_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as e:
        api.estimate(_estimate_request(scale_up_gpus=12))
    assert e.value.field == "cluster.scale_up_gpus"
    assert e.value.grpc_code == "INVALID_ARGUMENT"


def test_procure_estimate_refuses_a_bad_scale_up_gpus_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = json.loads((EXAMPLES / "estimate-llama3-70b.json").read_text())
    spec["cluster"]["scale_up_gpus"] = 12
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    with pytest.raises(SystemExit) as done:
        main(["estimate", str(path), "--format", "json"])
    assert done.value.code == 3
    assert "cluster.scale_up_gpus" in capsys.readouterr().err


def test_a_rack_scale_server_stands_in_as_hosts_of_one_domain() -> None:
    msg = estimate_pb2.Cluster(
        gpus=144, server_sku="RACK-GB200-NVL72", fabric="infiniband", nic_gbps_per_node=1600
    )
    c = cluster_from_proto(msg, load_catalog(RACK_SCALE))
    assert (c.gpus_per_node, c.nics_per_node, c.scale_up_domain_gpus) == (4, 4, 72)


def test_a_rows_built_in_nics_set_the_line_rate_a_request_leaves_out() -> None:
    """The rack ships 72 400G NICs (the catalog's builtin_nic_sku): 4 a host, 1,600 Gb/s."""
    catalog = load_catalog(RACK_SCALE)
    stated = estimate_pb2.Cluster(
        gpus=144, server_sku="RACK-GB200-NVL72", fabric="infiniband", nic_gbps_per_node=1600
    )
    left_out = estimate_pb2.Cluster(gpus=144, server_sku="RACK-GB200-NVL72", fabric="infiniband")
    assert cluster_from_proto(left_out, catalog) == cluster_from_proto(stated, catalog)


def test_a_request_states_fewer_built_in_nics_and_their_rate_follows() -> None:
    msg = estimate_pb2.Cluster(
        gpus=144, server_sku="RACK-GB200-NVL72", fabric="infiniband", nics_per_node=2
    )
    c = cluster_from_proto(msg, load_catalog(RACK_SCALE))
    assert (c.nics_per_node, c.nic_gbps_per_node) == (2, 800)


def test_one_more_rack_never_slows_a_plan_that_tiles_the_domains() -> None:
    """Llama 3 405B on 672 NVL72 racks runs TP16 groups in 64 of each rack's 72 GPUs; on 673
    racks the same plan leaves whole racks idle, which the planner may do (it took 764 h on
    673 racks against 551 h on 672 before the tilings' smaller sizes were searched)."""
    w = preset("llama3-405b")
    fewer, more = (plan_and_estimate(w, nvl72(racks)).training_time_hours for racks in (672, 673))
    assert more <= fewer


def test_a_group_that_does_not_divide_the_domain_straddles_two() -> None:
    """Tensor 7 on 8-GPU hosts: the group of GPUs 7 to 13 spans two hosts, and the step
    waits for it; counted as NVLink whenever t <= domain, its time did not move when the NIC
    was slowed 64x (found by a randomised hunt)."""
    w = preset("mpt-30b", attention_heads=56, kv_heads=56, sequence_length=7168)
    plan = ParallelPlan(tensor=7, pipeline=1, data=8)
    assert plan_traffic(w, plan, 8, 8).tensor.remote_share == 1.0
    assert plan_traffic(w, replace(plan, tensor=4, data=14), 8, 8).tensor.remote_share == 0.0
    ring = plan_traffic(w, ParallelPlan(tensor=2, pipeline=1, data=8, context=3), 8, 8).context
    assert ring is not None and ring.remote_share == 1.0  # 6-GPU rings on 8-GPU hosts
