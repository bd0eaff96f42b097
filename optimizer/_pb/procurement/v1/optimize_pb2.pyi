from optimizer._pb.procurement.v1 import estimate_pb2 as _estimate_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Objective(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OBJECTIVE_UNSPECIFIED: _ClassVar[Objective]
    OBJECTIVE_MIN_COST: _ClassVar[Objective]
    OBJECTIVE_MIN_TIME: _ClassVar[Objective]
OBJECTIVE_UNSPECIFIED: Objective
OBJECTIVE_MIN_COST: Objective
OBJECTIVE_MIN_TIME: Objective

class Constraints(_message.Message):
    __slots__ = ("budget_usd", "target_training_hours", "max_power_kw", "max_racks", "min_gpus", "max_gpus", "rack_power_kw", "max_lead_time_days", "min_nic_gbps_per_gpu")
    BUDGET_USD_FIELD_NUMBER: _ClassVar[int]
    TARGET_TRAINING_HOURS_FIELD_NUMBER: _ClassVar[int]
    MAX_POWER_KW_FIELD_NUMBER: _ClassVar[int]
    MAX_RACKS_FIELD_NUMBER: _ClassVar[int]
    MIN_GPUS_FIELD_NUMBER: _ClassVar[int]
    MAX_GPUS_FIELD_NUMBER: _ClassVar[int]
    RACK_POWER_KW_FIELD_NUMBER: _ClassVar[int]
    MAX_LEAD_TIME_DAYS_FIELD_NUMBER: _ClassVar[int]
    MIN_NIC_GBPS_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    budget_usd: float
    target_training_hours: float
    max_power_kw: float
    max_racks: int
    min_gpus: int
    max_gpus: int
    rack_power_kw: float
    max_lead_time_days: float
    min_nic_gbps_per_gpu: float
    def __init__(self, budget_usd: _Optional[float] = ..., target_training_hours: _Optional[float] = ..., max_power_kw: _Optional[float] = ..., max_racks: _Optional[int] = ..., min_gpus: _Optional[int] = ..., max_gpus: _Optional[int] = ..., rack_power_kw: _Optional[float] = ..., max_lead_time_days: _Optional[float] = ..., min_nic_gbps_per_gpu: _Optional[float] = ...) -> None: ...

class SolverOptions(_message.Message):
    __slots__ = ("backend", "time_limit_s", "seed")
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    TIME_LIMIT_S_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    backend: str
    time_limit_s: float
    seed: int
    def __init__(self, backend: _Optional[str] = ..., time_limit_s: _Optional[float] = ..., seed: _Optional[int] = ...) -> None: ...

class OptimizeRequest(_message.Message):
    __slots__ = ("catalog", "workload", "constraints", "objective", "top_k", "allowed_fabrics", "allowed_topologies", "allowed_vendors", "excluded_vendors", "solver", "confidence", "parallelism", "request_id", "objective_kind", "allowed_fabric_kinds", "allowed_topology_families", "catalogs", "require_fabric")
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVE_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FABRICS_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOPOLOGIES_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_VENDORS_FIELD_NUMBER: _ClassVar[int]
    EXCLUDED_VENDORS_FIELD_NUMBER: _ClassVar[int]
    SOLVER_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OBJECTIVE_KIND_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FABRIC_KINDS_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_TOPOLOGY_FAMILIES_FIELD_NUMBER: _ClassVar[int]
    CATALOGS_FIELD_NUMBER: _ClassVar[int]
    REQUIRE_FABRIC_FIELD_NUMBER: _ClassVar[int]
    catalog: str
    workload: _estimate_pb2.Workload
    constraints: Constraints
    objective: str
    top_k: int
    allowed_fabrics: _containers.RepeatedScalarFieldContainer[str]
    allowed_topologies: _containers.RepeatedScalarFieldContainer[str]
    allowed_vendors: _containers.RepeatedScalarFieldContainer[str]
    excluded_vendors: _containers.RepeatedScalarFieldContainer[str]
    solver: SolverOptions
    confidence: str
    parallelism: _estimate_pb2.Parallelism
    request_id: str
    objective_kind: Objective
    allowed_fabric_kinds: _containers.RepeatedScalarFieldContainer[_estimate_pb2.Fabric]
    allowed_topology_families: _containers.RepeatedScalarFieldContainer[_estimate_pb2.TopologyFamily]
    catalogs: _containers.RepeatedScalarFieldContainer[str]
    require_fabric: bool
    def __init__(self, catalog: _Optional[str] = ..., workload: _Optional[_Union[_estimate_pb2.Workload, _Mapping]] = ..., constraints: _Optional[_Union[Constraints, _Mapping]] = ..., objective: _Optional[str] = ..., top_k: _Optional[int] = ..., allowed_fabrics: _Optional[_Iterable[str]] = ..., allowed_topologies: _Optional[_Iterable[str]] = ..., allowed_vendors: _Optional[_Iterable[str]] = ..., excluded_vendors: _Optional[_Iterable[str]] = ..., solver: _Optional[_Union[SolverOptions, _Mapping]] = ..., confidence: _Optional[str] = ..., parallelism: _Optional[_Union[_estimate_pb2.Parallelism, _Mapping]] = ..., request_id: _Optional[str] = ..., objective_kind: _Optional[_Union[Objective, str]] = ..., allowed_fabric_kinds: _Optional[_Iterable[_Union[_estimate_pb2.Fabric, str]]] = ..., allowed_topology_families: _Optional[_Iterable[_Union[_estimate_pb2.TopologyFamily, str]]] = ..., catalogs: _Optional[_Iterable[str]] = ..., require_fabric: _Optional[bool] = ...) -> None: ...

class BomLine(_message.Message):
    __slots__ = ("category", "sku", "vendor", "quantity", "unit_price_usd", "extended_price_usd", "tier", "power_kw", "rack_units", "source", "length_m", "catalog")
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    SKU_FIELD_NUMBER: _ClassVar[int]
    VENDOR_FIELD_NUMBER: _ClassVar[int]
    QUANTITY_FIELD_NUMBER: _ClassVar[int]
    UNIT_PRICE_USD_FIELD_NUMBER: _ClassVar[int]
    EXTENDED_PRICE_USD_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    POWER_KW_FIELD_NUMBER: _ClassVar[int]
    RACK_UNITS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    LENGTH_M_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    category: str
    sku: str
    vendor: str
    quantity: int
    unit_price_usd: float
    extended_price_usd: float
    tier: str
    power_kw: float
    rack_units: int
    source: str
    length_m: float
    catalog: str
    def __init__(self, category: _Optional[str] = ..., sku: _Optional[str] = ..., vendor: _Optional[str] = ..., quantity: _Optional[int] = ..., unit_price_usd: _Optional[float] = ..., extended_price_usd: _Optional[float] = ..., tier: _Optional[str] = ..., power_kw: _Optional[float] = ..., rack_units: _Optional[int] = ..., source: _Optional[str] = ..., length_m: _Optional[float] = ..., catalog: _Optional[str] = ...) -> None: ...

class CostBreakdown(_message.Message):
    __slots__ = ("servers_usd", "nics_usd", "switches_usd", "cables_usd", "optics_usd", "network_share")
    SERVERS_USD_FIELD_NUMBER: _ClassVar[int]
    NICS_USD_FIELD_NUMBER: _ClassVar[int]
    SWITCHES_USD_FIELD_NUMBER: _ClassVar[int]
    CABLES_USD_FIELD_NUMBER: _ClassVar[int]
    OPTICS_USD_FIELD_NUMBER: _ClassVar[int]
    NETWORK_SHARE_FIELD_NUMBER: _ClassVar[int]
    servers_usd: float
    nics_usd: float
    switches_usd: float
    cables_usd: float
    optics_usd: float
    network_share: float
    def __init__(self, servers_usd: _Optional[float] = ..., nics_usd: _Optional[float] = ..., switches_usd: _Optional[float] = ..., cables_usd: _Optional[float] = ..., optics_usd: _Optional[float] = ..., network_share: _Optional[float] = ...) -> None: ...

class Design(_message.Message):
    __slots__ = ("rank", "gpus", "nodes", "server_sku", "fabric", "topology", "oversubscription", "capex_usd", "power_kw", "training_time_hours", "training_time_hours_high", "estimate", "bom", "binding", "explanation", "cost", "racks", "nic_sku", "budget_slack_usd", "time_slack_hours", "training_time_hours_low", "fabric_kind", "topology_family", "scale_out_gbps_per_gpu", "network_time_share")
    RANK_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    SERVER_SKU_FIELD_NUMBER: _ClassVar[int]
    FABRIC_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    OVERSUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    CAPEX_USD_FIELD_NUMBER: _ClassVar[int]
    POWER_KW_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_HIGH_FIELD_NUMBER: _ClassVar[int]
    ESTIMATE_FIELD_NUMBER: _ClassVar[int]
    BOM_FIELD_NUMBER: _ClassVar[int]
    BINDING_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    RACKS_FIELD_NUMBER: _ClassVar[int]
    NIC_SKU_FIELD_NUMBER: _ClassVar[int]
    BUDGET_SLACK_USD_FIELD_NUMBER: _ClassVar[int]
    TIME_SLACK_HOURS_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_LOW_FIELD_NUMBER: _ClassVar[int]
    FABRIC_KIND_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FAMILY_FIELD_NUMBER: _ClassVar[int]
    SCALE_OUT_GBPS_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    NETWORK_TIME_SHARE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    gpus: int
    nodes: int
    server_sku: str
    fabric: str
    topology: str
    oversubscription: float
    capex_usd: float
    power_kw: float
    training_time_hours: float
    training_time_hours_high: float
    estimate: _estimate_pb2.EstimateResponse
    bom: _containers.RepeatedCompositeFieldContainer[BomLine]
    binding: _containers.RepeatedScalarFieldContainer[str]
    explanation: str
    cost: CostBreakdown
    racks: int
    nic_sku: str
    budget_slack_usd: float
    time_slack_hours: float
    training_time_hours_low: float
    fabric_kind: _estimate_pb2.Fabric
    topology_family: _estimate_pb2.TopologyFamily
    scale_out_gbps_per_gpu: float
    network_time_share: float
    def __init__(self, rank: _Optional[int] = ..., gpus: _Optional[int] = ..., nodes: _Optional[int] = ..., server_sku: _Optional[str] = ..., fabric: _Optional[str] = ..., topology: _Optional[str] = ..., oversubscription: _Optional[float] = ..., capex_usd: _Optional[float] = ..., power_kw: _Optional[float] = ..., training_time_hours: _Optional[float] = ..., training_time_hours_high: _Optional[float] = ..., estimate: _Optional[_Union[_estimate_pb2.EstimateResponse, _Mapping]] = ..., bom: _Optional[_Iterable[_Union[BomLine, _Mapping]]] = ..., binding: _Optional[_Iterable[str]] = ..., explanation: _Optional[str] = ..., cost: _Optional[_Union[CostBreakdown, _Mapping]] = ..., racks: _Optional[int] = ..., nic_sku: _Optional[str] = ..., budget_slack_usd: _Optional[float] = ..., time_slack_hours: _Optional[float] = ..., training_time_hours_low: _Optional[float] = ..., fabric_kind: _Optional[_Union[_estimate_pb2.Fabric, str]] = ..., topology_family: _Optional[_Union[_estimate_pb2.TopologyFamily, str]] = ..., scale_out_gbps_per_gpu: _Optional[float] = ..., network_time_share: _Optional[float] = ...) -> None: ...

class ParetoPoint(_message.Message):
    __slots__ = ("capex_usd", "training_time_hours", "gpus", "server_sku", "fabric", "topology", "oversubscription", "fabric_kind", "topology_family")
    CAPEX_USD_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    SERVER_SKU_FIELD_NUMBER: _ClassVar[int]
    FABRIC_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    OVERSUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FABRIC_KIND_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FAMILY_FIELD_NUMBER: _ClassVar[int]
    capex_usd: float
    training_time_hours: float
    gpus: int
    server_sku: str
    fabric: str
    topology: str
    oversubscription: float
    fabric_kind: _estimate_pb2.Fabric
    topology_family: _estimate_pb2.TopologyFamily
    def __init__(self, capex_usd: _Optional[float] = ..., training_time_hours: _Optional[float] = ..., gpus: _Optional[int] = ..., server_sku: _Optional[str] = ..., fabric: _Optional[str] = ..., topology: _Optional[str] = ..., oversubscription: _Optional[float] = ..., fabric_kind: _Optional[_Union[_estimate_pb2.Fabric, str]] = ..., topology_family: _Optional[_Union[_estimate_pb2.TopologyFamily, str]] = ...) -> None: ...

class OptimizeResponse(_message.Message):
    __slots__ = ("status", "designs", "pareto", "diagnosis", "solve_time_s", "gap", "backend", "catalog_id", "candidates_evaluated", "warnings", "bound_usd", "sensitivity", "baseline")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    DESIGNS_FIELD_NUMBER: _ClassVar[int]
    PARETO_FIELD_NUMBER: _ClassVar[int]
    DIAGNOSIS_FIELD_NUMBER: _ClassVar[int]
    SOLVE_TIME_S_FIELD_NUMBER: _ClassVar[int]
    GAP_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    CATALOG_ID_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_EVALUATED_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    BOUND_USD_FIELD_NUMBER: _ClassVar[int]
    SENSITIVITY_FIELD_NUMBER: _ClassVar[int]
    BASELINE_FIELD_NUMBER: _ClassVar[int]
    status: str
    designs: _containers.RepeatedCompositeFieldContainer[Design]
    pareto: _containers.RepeatedCompositeFieldContainer[ParetoPoint]
    diagnosis: str
    solve_time_s: float
    gap: float
    backend: str
    catalog_id: str
    candidates_evaluated: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    bound_usd: float
    sensitivity: str
    baseline: str
    def __init__(self, status: _Optional[str] = ..., designs: _Optional[_Iterable[_Union[Design, _Mapping]]] = ..., pareto: _Optional[_Iterable[_Union[ParetoPoint, _Mapping]]] = ..., diagnosis: _Optional[str] = ..., solve_time_s: _Optional[float] = ..., gap: _Optional[float] = ..., backend: _Optional[str] = ..., catalog_id: _Optional[str] = ..., candidates_evaluated: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ..., bound_usd: _Optional[float] = ..., sensitivity: _Optional[str] = ..., baseline: _Optional[str] = ...) -> None: ...
