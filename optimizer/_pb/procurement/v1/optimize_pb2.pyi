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
    OBJECTIVE_MIN_TCO: _ClassVar[Objective]
OBJECTIVE_UNSPECIFIED: Objective
OBJECTIVE_MIN_COST: Objective
OBJECTIVE_MIN_TIME: Objective
OBJECTIVE_MIN_TCO: Objective

class Constraints(_message.Message):
    __slots__ = ("budget_usd", "target_training_hours", "max_power_kw", "max_racks", "min_gpus", "max_gpus", "rack_power_kw", "max_lead_time_days", "min_nic_gbps_per_gpu", "max_tco_usd", "max_floor_positions", "cooling", "max_rack_kw")
    BUDGET_USD_FIELD_NUMBER: _ClassVar[int]
    TARGET_TRAINING_HOURS_FIELD_NUMBER: _ClassVar[int]
    MAX_POWER_KW_FIELD_NUMBER: _ClassVar[int]
    MAX_RACKS_FIELD_NUMBER: _ClassVar[int]
    MIN_GPUS_FIELD_NUMBER: _ClassVar[int]
    MAX_GPUS_FIELD_NUMBER: _ClassVar[int]
    RACK_POWER_KW_FIELD_NUMBER: _ClassVar[int]
    MAX_LEAD_TIME_DAYS_FIELD_NUMBER: _ClassVar[int]
    MIN_NIC_GBPS_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    MAX_TCO_USD_FIELD_NUMBER: _ClassVar[int]
    MAX_FLOOR_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    COOLING_FIELD_NUMBER: _ClassVar[int]
    MAX_RACK_KW_FIELD_NUMBER: _ClassVar[int]
    budget_usd: float
    target_training_hours: float
    max_power_kw: float
    max_racks: int
    min_gpus: int
    max_gpus: int
    rack_power_kw: float
    max_lead_time_days: float
    min_nic_gbps_per_gpu: float
    max_tco_usd: float
    max_floor_positions: int
    cooling: str
    max_rack_kw: float
    def __init__(self, budget_usd: _Optional[float] = ..., target_training_hours: _Optional[float] = ..., max_power_kw: _Optional[float] = ..., max_racks: _Optional[int] = ..., min_gpus: _Optional[int] = ..., max_gpus: _Optional[int] = ..., rack_power_kw: _Optional[float] = ..., max_lead_time_days: _Optional[float] = ..., min_nic_gbps_per_gpu: _Optional[float] = ..., max_tco_usd: _Optional[float] = ..., max_floor_positions: _Optional[int] = ..., cooling: _Optional[str] = ..., max_rack_kw: _Optional[float] = ...) -> None: ...

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
    __slots__ = ("catalog", "workload", "constraints", "objective", "top_k", "allowed_fabrics", "allowed_topologies", "allowed_vendors", "excluded_vendors", "solver", "confidence", "parallelism", "request_id", "objective_kind", "allowed_fabric_kinds", "allowed_topology_families", "catalogs", "require_fabric", "cost_model", "workloads", "ranking_only", "calibration", "reliability")
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
    COST_MODEL_FIELD_NUMBER: _ClassVar[int]
    WORKLOADS_FIELD_NUMBER: _ClassVar[int]
    RANKING_ONLY_FIELD_NUMBER: _ClassVar[int]
    CALIBRATION_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_FIELD_NUMBER: _ClassVar[int]
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
    cost_model: CostModel
    workloads: _containers.RepeatedCompositeFieldContainer[WorkloadTarget]
    ranking_only: bool
    calibration: _estimate_pb2.CalibrationProfile
    reliability: _estimate_pb2.Reliability
    def __init__(self, catalog: _Optional[str] = ..., workload: _Optional[_Union[_estimate_pb2.Workload, _Mapping]] = ..., constraints: _Optional[_Union[Constraints, _Mapping]] = ..., objective: _Optional[str] = ..., top_k: _Optional[int] = ..., allowed_fabrics: _Optional[_Iterable[str]] = ..., allowed_topologies: _Optional[_Iterable[str]] = ..., allowed_vendors: _Optional[_Iterable[str]] = ..., excluded_vendors: _Optional[_Iterable[str]] = ..., solver: _Optional[_Union[SolverOptions, _Mapping]] = ..., confidence: _Optional[str] = ..., parallelism: _Optional[_Union[_estimate_pb2.Parallelism, _Mapping]] = ..., request_id: _Optional[str] = ..., objective_kind: _Optional[_Union[Objective, str]] = ..., allowed_fabric_kinds: _Optional[_Iterable[_Union[_estimate_pb2.Fabric, str]]] = ..., allowed_topology_families: _Optional[_Iterable[_Union[_estimate_pb2.TopologyFamily, str]]] = ..., catalogs: _Optional[_Iterable[str]] = ..., require_fabric: _Optional[bool] = ..., cost_model: _Optional[_Union[CostModel, _Mapping]] = ..., workloads: _Optional[_Iterable[_Union[WorkloadTarget, _Mapping]]] = ..., ranking_only: _Optional[bool] = ..., calibration: _Optional[_Union[_estimate_pb2.CalibrationProfile, _Mapping]] = ..., reliability: _Optional[_Union[_estimate_pb2.Reliability, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("rank", "gpus", "nodes", "server_sku", "fabric", "topology", "oversubscription", "capex_usd", "power_kw", "training_time_hours", "training_time_hours_high", "estimate", "bom", "binding", "explanation", "cost", "racks", "nic_sku", "budget_slack_usd", "time_slack_hours", "training_time_hours_low", "fabric_kind", "topology_family", "scale_out_gbps_per_gpu", "network_time_share", "tco_usd", "tco", "floor_positions", "cooling", "rack_kw", "workload_times", "worst_time_over_target", "year_share", "break_evens", "scale_up_gpus")
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
    TCO_USD_FIELD_NUMBER: _ClassVar[int]
    TCO_FIELD_NUMBER: _ClassVar[int]
    FLOOR_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    COOLING_FIELD_NUMBER: _ClassVar[int]
    RACK_KW_FIELD_NUMBER: _ClassVar[int]
    WORKLOAD_TIMES_FIELD_NUMBER: _ClassVar[int]
    WORST_TIME_OVER_TARGET_FIELD_NUMBER: _ClassVar[int]
    YEAR_SHARE_FIELD_NUMBER: _ClassVar[int]
    BREAK_EVENS_FIELD_NUMBER: _ClassVar[int]
    SCALE_UP_GPUS_FIELD_NUMBER: _ClassVar[int]
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
    tco_usd: float
    tco: TcoBreakdown
    floor_positions: int
    cooling: str
    rack_kw: float
    workload_times: _containers.RepeatedCompositeFieldContainer[WorkloadTime]
    worst_time_over_target: float
    year_share: float
    break_evens: _containers.RepeatedCompositeFieldContainer[BreakEven]
    scale_up_gpus: int
    def __init__(self, rank: _Optional[int] = ..., gpus: _Optional[int] = ..., nodes: _Optional[int] = ..., server_sku: _Optional[str] = ..., fabric: _Optional[str] = ..., topology: _Optional[str] = ..., oversubscription: _Optional[float] = ..., capex_usd: _Optional[float] = ..., power_kw: _Optional[float] = ..., training_time_hours: _Optional[float] = ..., training_time_hours_high: _Optional[float] = ..., estimate: _Optional[_Union[_estimate_pb2.EstimateResponse, _Mapping]] = ..., bom: _Optional[_Iterable[_Union[BomLine, _Mapping]]] = ..., binding: _Optional[_Iterable[str]] = ..., explanation: _Optional[str] = ..., cost: _Optional[_Union[CostBreakdown, _Mapping]] = ..., racks: _Optional[int] = ..., nic_sku: _Optional[str] = ..., budget_slack_usd: _Optional[float] = ..., time_slack_hours: _Optional[float] = ..., training_time_hours_low: _Optional[float] = ..., fabric_kind: _Optional[_Union[_estimate_pb2.Fabric, str]] = ..., topology_family: _Optional[_Union[_estimate_pb2.TopologyFamily, str]] = ..., scale_out_gbps_per_gpu: _Optional[float] = ..., network_time_share: _Optional[float] = ..., tco_usd: _Optional[float] = ..., tco: _Optional[_Union[TcoBreakdown, _Mapping]] = ..., floor_positions: _Optional[int] = ..., cooling: _Optional[str] = ..., rack_kw: _Optional[float] = ..., workload_times: _Optional[_Iterable[_Union[WorkloadTime, _Mapping]]] = ..., worst_time_over_target: _Optional[float] = ..., year_share: _Optional[float] = ..., break_evens: _Optional[_Iterable[_Union[BreakEven, _Mapping]]] = ..., scale_up_gpus: _Optional[int] = ...) -> None: ...

class BreakEven(_message.Message):
    __slots__ = ("offer", "pricing", "usd_per_gpu_hour", "utilization", "own_fixed_usd", "own_energy_full_use_usd", "rent_full_use_usd")
    OFFER_FIELD_NUMBER: _ClassVar[int]
    PRICING_FIELD_NUMBER: _ClassVar[int]
    USD_PER_GPU_HOUR_FIELD_NUMBER: _ClassVar[int]
    UTILIZATION_FIELD_NUMBER: _ClassVar[int]
    OWN_FIXED_USD_FIELD_NUMBER: _ClassVar[int]
    OWN_ENERGY_FULL_USE_USD_FIELD_NUMBER: _ClassVar[int]
    RENT_FULL_USE_USD_FIELD_NUMBER: _ClassVar[int]
    offer: str
    pricing: str
    usd_per_gpu_hour: float
    utilization: float
    own_fixed_usd: float
    own_energy_full_use_usd: float
    rent_full_use_usd: float
    def __init__(self, offer: _Optional[str] = ..., pricing: _Optional[str] = ..., usd_per_gpu_hour: _Optional[float] = ..., utilization: _Optional[float] = ..., own_fixed_usd: _Optional[float] = ..., own_energy_full_use_usd: _Optional[float] = ..., rent_full_use_usd: _Optional[float] = ...) -> None: ...

class RentQuote(_message.Message):
    __slots__ = ("provider", "instance", "gpu_model", "interconnect", "fabric", "network_gbps_per_gpu", "gpus", "instances", "training_time_hours", "on_demand_usd_per_gpu_hour", "committed_usd_per_gpu_hour", "commitment_days", "on_demand_cost_usd", "committed_cost_usd", "price_date", "source", "note", "gpu_memory_gb")
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    GPU_MODEL_FIELD_NUMBER: _ClassVar[int]
    INTERCONNECT_FIELD_NUMBER: _ClassVar[int]
    FABRIC_FIELD_NUMBER: _ClassVar[int]
    NETWORK_GBPS_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    INSTANCES_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_FIELD_NUMBER: _ClassVar[int]
    ON_DEMAND_USD_PER_GPU_HOUR_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_USD_PER_GPU_HOUR_FIELD_NUMBER: _ClassVar[int]
    COMMITMENT_DAYS_FIELD_NUMBER: _ClassVar[int]
    ON_DEMAND_COST_USD_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_COST_USD_FIELD_NUMBER: _ClassVar[int]
    PRICE_DATE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    GPU_MEMORY_GB_FIELD_NUMBER: _ClassVar[int]
    provider: str
    instance: str
    gpu_model: str
    interconnect: str
    fabric: str
    network_gbps_per_gpu: float
    gpus: int
    instances: int
    training_time_hours: float
    on_demand_usd_per_gpu_hour: float
    committed_usd_per_gpu_hour: float
    commitment_days: int
    on_demand_cost_usd: float
    committed_cost_usd: float
    price_date: str
    source: str
    note: str
    gpu_memory_gb: float
    def __init__(self, provider: _Optional[str] = ..., instance: _Optional[str] = ..., gpu_model: _Optional[str] = ..., interconnect: _Optional[str] = ..., fabric: _Optional[str] = ..., network_gbps_per_gpu: _Optional[float] = ..., gpus: _Optional[int] = ..., instances: _Optional[int] = ..., training_time_hours: _Optional[float] = ..., on_demand_usd_per_gpu_hour: _Optional[float] = ..., committed_usd_per_gpu_hour: _Optional[float] = ..., commitment_days: _Optional[int] = ..., on_demand_cost_usd: _Optional[float] = ..., committed_cost_usd: _Optional[float] = ..., price_date: _Optional[str] = ..., source: _Optional[str] = ..., note: _Optional[str] = ..., gpu_memory_gb: _Optional[float] = ...) -> None: ...

class ParetoPoint(_message.Message):
    __slots__ = ("capex_usd", "training_time_hours", "gpus", "server_sku", "fabric", "topology", "oversubscription", "fabric_kind", "topology_family", "tco_usd")
    CAPEX_USD_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    SERVER_SKU_FIELD_NUMBER: _ClassVar[int]
    FABRIC_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    OVERSUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    FABRIC_KIND_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FAMILY_FIELD_NUMBER: _ClassVar[int]
    TCO_USD_FIELD_NUMBER: _ClassVar[int]
    capex_usd: float
    training_time_hours: float
    gpus: int
    server_sku: str
    fabric: str
    topology: str
    oversubscription: float
    fabric_kind: _estimate_pb2.Fabric
    topology_family: _estimate_pb2.TopologyFamily
    tco_usd: float
    def __init__(self, capex_usd: _Optional[float] = ..., training_time_hours: _Optional[float] = ..., gpus: _Optional[int] = ..., server_sku: _Optional[str] = ..., fabric: _Optional[str] = ..., topology: _Optional[str] = ..., oversubscription: _Optional[float] = ..., fabric_kind: _Optional[_Union[_estimate_pb2.Fabric, str]] = ..., topology_family: _Optional[_Union[_estimate_pb2.TopologyFamily, str]] = ..., tco_usd: _Optional[float] = ...) -> None: ...

class OptimizeResponse(_message.Message):
    __slots__ = ("status", "designs", "pareto", "diagnosis", "solve_time_s", "gap", "backend", "catalog_id", "candidates_evaluated", "warnings", "bound_usd", "sensitivity", "cost_model", "tco_comparison", "portfolio_measure", "rent_quotes", "rent_note", "baseline")
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
    COST_MODEL_FIELD_NUMBER: _ClassVar[int]
    TCO_COMPARISON_FIELD_NUMBER: _ClassVar[int]
    PORTFOLIO_MEASURE_FIELD_NUMBER: _ClassVar[int]
    RENT_QUOTES_FIELD_NUMBER: _ClassVar[int]
    RENT_NOTE_FIELD_NUMBER: _ClassVar[int]
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
    cost_model: CostModel
    tco_comparison: str
    portfolio_measure: str
    rent_quotes: _containers.RepeatedCompositeFieldContainer[RentQuote]
    rent_note: str
    baseline: str
    def __init__(self, status: _Optional[str] = ..., designs: _Optional[_Iterable[_Union[Design, _Mapping]]] = ..., pareto: _Optional[_Iterable[_Union[ParetoPoint, _Mapping]]] = ..., diagnosis: _Optional[str] = ..., solve_time_s: _Optional[float] = ..., gap: _Optional[float] = ..., backend: _Optional[str] = ..., catalog_id: _Optional[str] = ..., candidates_evaluated: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ..., bound_usd: _Optional[float] = ..., sensitivity: _Optional[str] = ..., cost_model: _Optional[_Union[CostModel, _Mapping]] = ..., tco_comparison: _Optional[str] = ..., portfolio_measure: _Optional[str] = ..., rent_quotes: _Optional[_Iterable[_Union[RentQuote, _Mapping]]] = ..., rent_note: _Optional[str] = ..., baseline: _Optional[str] = ...) -> None: ...

class CostModel(_message.Message):
    __slots__ = ("years", "utilization", "pue", "electricity_usd_per_kwh", "support_rate", "rack_usd_per_month", "discount_rate")
    YEARS_FIELD_NUMBER: _ClassVar[int]
    UTILIZATION_FIELD_NUMBER: _ClassVar[int]
    PUE_FIELD_NUMBER: _ClassVar[int]
    ELECTRICITY_USD_PER_KWH_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_RATE_FIELD_NUMBER: _ClassVar[int]
    RACK_USD_PER_MONTH_FIELD_NUMBER: _ClassVar[int]
    DISCOUNT_RATE_FIELD_NUMBER: _ClassVar[int]
    years: float
    utilization: float
    pue: float
    electricity_usd_per_kwh: float
    support_rate: float
    rack_usd_per_month: float
    discount_rate: float
    def __init__(self, years: _Optional[float] = ..., utilization: _Optional[float] = ..., pue: _Optional[float] = ..., electricity_usd_per_kwh: _Optional[float] = ..., support_rate: _Optional[float] = ..., rack_usd_per_month: _Optional[float] = ..., discount_rate: _Optional[float] = ...) -> None: ...

class TcoBreakdown(_message.Message):
    __slots__ = ("capex_usd", "energy_usd", "support_usd", "space_usd", "depreciation_usd_per_year", "opex_usd")
    CAPEX_USD_FIELD_NUMBER: _ClassVar[int]
    ENERGY_USD_FIELD_NUMBER: _ClassVar[int]
    SUPPORT_USD_FIELD_NUMBER: _ClassVar[int]
    SPACE_USD_FIELD_NUMBER: _ClassVar[int]
    DEPRECIATION_USD_PER_YEAR_FIELD_NUMBER: _ClassVar[int]
    OPEX_USD_FIELD_NUMBER: _ClassVar[int]
    capex_usd: float
    energy_usd: float
    support_usd: float
    space_usd: float
    depreciation_usd_per_year: float
    opex_usd: float
    def __init__(self, capex_usd: _Optional[float] = ..., energy_usd: _Optional[float] = ..., support_usd: _Optional[float] = ..., space_usd: _Optional[float] = ..., depreciation_usd_per_year: _Optional[float] = ..., opex_usd: _Optional[float] = ...) -> None: ...

class WorkloadTarget(_message.Message):
    __slots__ = ("workload", "target_training_hours", "runs_per_year")
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    TARGET_TRAINING_HOURS_FIELD_NUMBER: _ClassVar[int]
    RUNS_PER_YEAR_FIELD_NUMBER: _ClassVar[int]
    workload: _estimate_pb2.Workload
    target_training_hours: float
    runs_per_year: float
    def __init__(self, workload: _Optional[_Union[_estimate_pb2.Workload, _Mapping]] = ..., target_training_hours: _Optional[float] = ..., runs_per_year: _Optional[float] = ...) -> None: ...

class WorkloadTime(_message.Message):
    __slots__ = ("workload", "training_time_hours", "target_training_hours", "runs_per_year", "time_over_target", "hours_per_year")
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_FIELD_NUMBER: _ClassVar[int]
    TARGET_TRAINING_HOURS_FIELD_NUMBER: _ClassVar[int]
    RUNS_PER_YEAR_FIELD_NUMBER: _ClassVar[int]
    TIME_OVER_TARGET_FIELD_NUMBER: _ClassVar[int]
    HOURS_PER_YEAR_FIELD_NUMBER: _ClassVar[int]
    workload: str
    training_time_hours: float
    target_training_hours: float
    runs_per_year: float
    time_over_target: float
    hours_per_year: float
    def __init__(self, workload: _Optional[str] = ..., training_time_hours: _Optional[float] = ..., target_training_hours: _Optional[float] = ..., runs_per_year: _Optional[float] = ..., time_over_target: _Optional[float] = ..., hours_per_year: _Optional[float] = ...) -> None: ...
