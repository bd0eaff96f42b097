"""The registries are the one place the vocabulary lives: spelling, proto enums, extension.

Adding a topology family is a descriptor plus its sizing: the toy family below is registered
here only, and the search offers it, the optimizer builds and verifies it, the CLI parser and
the request converter accept it, and the table prints it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from optimizer_fixtures import spec_for, tiny_catalog

from client.commands.optimize import optimize as optimize_command
from client.commands.sweep import sweep as sweep_command
from client.options import RegistryChoice
from client.render import topology_label
from optimizer._pb.procurement.v1 import estimate_pb2, optimize_pb2
from optimizer.errors import InvalidInput
from optimizer.optimize.candidates import SearchSpace
from optimizer.optimize.convert import spec_from_proto
from optimizer.optimize.request import Objective
from optimizer.optimize.solve import optimize
from optimizer.performance.convert import cluster_from_proto
from optimizer.registry.base import canonical
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.objectives import OBJECTIVES
from optimizer.registry.topologies import TOPOLOGIES, TopologyFamily
from optimizer.topology import single_switch
from optimizer.topology.network import NetworkSizing, SizingArgs
from optimizer.topology.sizing import size_network


@pytest.mark.parametrize(
    ("registry", "enum", "prefix"),
    [
        (FABRICS, estimate_pb2.Fabric, "FABRIC_"),
        (TOPOLOGIES, estimate_pb2.TopologyFamily, "TOPOLOGY_FAMILY_"),
        (OBJECTIVES, optimize_pb2.Objective, "OBJECTIVE_"),
    ],
)
def test_every_registered_name_is_its_proto_enum_value(registry, enum, prefix) -> None:
    in_proto = {
        name.removeprefix(prefix).lower(): number for name, number in enum.items() if number != 0
    }
    assert in_proto == {d.name: d.proto_value for d in registry}


def test_the_objective_enum_of_the_core_names_the_registered_objectives() -> None:
    assert {o.value for o in Objective} == set(OBJECTIVES.names())


@pytest.mark.parametrize("typed", ["fat_tree", "fat-tree", "FAT-TREE", " Fat_Tree ", "fat tree"])
def test_a_family_is_accepted_as_the_table_prints_it_in_any_case(typed: str) -> None:
    assert TOPOLOGIES.normalize(typed) == "fat_tree"
    assert canonical(typed) == "fat_tree"


def test_an_unknown_name_is_refused_naming_the_field_and_the_allowed_values() -> None:
    with pytest.raises(InvalidInput) as e:
        FABRICS.normalize("myrinet", "allowed_fabrics[0]")
    assert e.value.field == "allowed_fabrics[0]"
    assert "infiniband, roce, ethernet" in str(e.value)


def test_a_request_may_spell_choices_as_strings_in_any_form_or_as_enums() -> None:
    req = optimize_pb2.OptimizeRequest(
        objective="Min-Time",
        allowed_topologies=["Rail-Optimized"],
        allowed_topology_families=[estimate_pb2.TOPOLOGY_FAMILY_TORUS],
        allowed_fabric_kinds=[estimate_pb2.FABRIC_ROCE],
    )
    req.workload.model = "bert-large"
    req.constraints.budget_usd = 1e6
    spec = spec_from_proto(req)
    assert spec.objective is Objective.MIN_TIME
    assert spec.allowed_topologies == ("rail_optimized", "torus")
    assert spec.allowed_fabrics == ("roce",)


def test_a_string_and_an_enum_that_disagree_are_refused_naming_the_enum_field() -> None:
    req = optimize_pb2.OptimizeRequest(
        objective="min_cost", objective_kind=optimize_pb2.OBJECTIVE_MIN_TIME
    )
    req.workload.model = "bert-large"
    req.constraints.budget_usd = 1e6
    with pytest.raises(InvalidInput) as e:
        spec_from_proto(req)
    assert e.value.field == "objective_kind"


def test_the_estimator_cluster_takes_the_family_and_fabric_as_enum_or_any_spelling() -> None:
    base = {"gpus": 64, "gpu_peak_tflops": 989.0, "gpu_memory_gb": 80.0}
    by_text = estimate_pb2.Cluster(
        **base,
        intra_node_gbytes_per_s=450.0,
        fabric="RoCE",
        nic_gbps_per_node=3200.0,
        topology="Rail-Optimized",
    )
    by_enum = estimate_pb2.Cluster(
        **base,
        intra_node_gbytes_per_s=450.0,
        fabric_kind=estimate_pb2.FABRIC_ROCE,
        nic_gbps_per_node=3200.0,
        topology_family=estimate_pb2.TOPOLOGY_FAMILY_RAIL_OPTIMIZED,
    )
    assert cluster_from_proto(by_text) == cluster_from_proto(by_enum)
    assert cluster_from_proto(by_text).topology.family == "rail_optimized"
    assert cluster_from_proto(by_text).fabric == "roce"


# A toy family: one switch under another name, registered by this test alone.
def _toy_size(args: SizingArgs) -> NetworkSizing:
    sizing = single_switch.size_single_switch(args.endpoints, args.radix)
    return dataclasses.replace(
        sizing, family="toy_star", profile=dataclasses.replace(sizing.profile, family="toy_star")
    )


TOY = TopologyFamily(
    "toy_star",
    "toy star",
    "toy star",
    99,
    size=_toy_size,
    max_endpoints=lambda a: a.radix,
    required=single_switch.required,
    plot_marker="*",
)


@pytest.fixture
def toy() -> Iterator[TopologyFamily]:
    with TOPOLOGIES.registered(TOY) as family:
        yield family


def test_a_registered_family_is_sized_through_the_one_entry_point(toy) -> None:
    assert size_network("Toy-Star", 8, 64).profile.family == "toy_star"


def test_a_registered_family_is_offered_by_the_search_and_built_by_the_optimizer(toy) -> None:
    spec = spec_for(target_hours=40.0, topologies=("toy_star",), top_k=1)
    keys = SearchSpace(tiny_catalog(), spec).keys()
    assert {key.topology for key, _ in keys} == {"toy_star"}
    result = optimize(tiny_catalog(), spec)
    assert result.designs and result.designs[0].design.topology == "toy_star"
    assert "toy star" in result.designs[0].explanation


def test_a_registered_family_is_accepted_by_the_cli_and_the_request(toy) -> None:
    ctx = optimize_command.make_context("optimize", ["--topology", "Toy-Star"])
    assert ctx.params["topology"] == ("toy_star",)
    req = optimize_pb2.OptimizeRequest(allowed_topologies=["toy-star"])
    req.workload.model = "bert-large"
    req.constraints.target_training_hours = 10.0
    assert spec_from_proto(req).allowed_topologies == ("toy_star",)
    assert topology_label("toy_star", 1.0) == "toy star"


def test_the_cli_refuses_an_unregistered_family_listing_the_choices() -> None:
    with pytest.raises(Exception, match="single-switch, fat-tree"):
        RegistryChoice(TOPOLOGIES).convert("mesh", None, None)


def test_a_family_leaves_the_registry_with_its_with_block() -> None:
    with TOPOLOGIES.registered(TOY):
        assert "toy_star" in TOPOLOGIES
    assert "toy_star" not in TOPOLOGIES


def test_a_second_record_with_a_taken_name_or_enum_number_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        TOPOLOGIES.register(dataclasses.replace(TOY, name="torus"))
    with pytest.raises(ValueError, match="proto value 5"):
        TOPOLOGIES.register(dataclasses.replace(TOY, proto_value=5))
    with pytest.raises(ValueError, match="not canonical"):
        TOPOLOGIES.register(dataclasses.replace(TOY, name="Toy-Star"))


def test_an_objective_names_the_constraint_it_lacks() -> None:
    with pytest.raises(InvalidInput) as e:
        OBJECTIVES.get("min_time").check_constraints({"target_training_hours"})
    assert e.value.field == "constraints.budget_usd"
    assert "min_time needs a budget" in str(e.value)


def test_the_objective_record_orders_the_ranking_value() -> None:
    assert OBJECTIVES.get("min_cost").ranking_value(100, 7) == (100, 7)
    assert OBJECTIVES.get("min_time").ranking_value(100, 7) == (7, 100)


@pytest.mark.parametrize("command", [optimize_command, sweep_command], ids=["optimize", "sweep"])
def test_every_command_takes_choices_as_the_table_prints_them_or_as_the_wire_spells_them(
    command,
) -> None:
    args = ["--objective", "MIN_TIME", "--fabric", "RoCE", "--topology", "Fat-Tree"]
    args += ["--topology", "single_switch"]
    params = command.make_context(command.name, args).params
    assert params["objective"] == "min_time"
    assert params["fabric"] == ("roce",)
    assert params["topology"] == ("fat_tree", "single_switch")
