from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Fabric(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FABRIC_UNSPECIFIED: _ClassVar[Fabric]
    FABRIC_INFINIBAND: _ClassVar[Fabric]
    FABRIC_ROCE: _ClassVar[Fabric]
    FABRIC_ETHERNET: _ClassVar[Fabric]

class TopologyFamily(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOPOLOGY_FAMILY_UNSPECIFIED: _ClassVar[TopologyFamily]
    TOPOLOGY_FAMILY_SINGLE_SWITCH: _ClassVar[TopologyFamily]
    TOPOLOGY_FAMILY_FAT_TREE: _ClassVar[TopologyFamily]
    TOPOLOGY_FAMILY_RAIL_OPTIMIZED: _ClassVar[TopologyFamily]
    TOPOLOGY_FAMILY_DRAGONFLY: _ClassVar[TopologyFamily]
    TOPOLOGY_FAMILY_TORUS: _ClassVar[TopologyFamily]
    TOPOLOGY_FAMILY_SINGLE_NODE: _ClassVar[TopologyFamily]
FABRIC_UNSPECIFIED: Fabric
FABRIC_INFINIBAND: Fabric
FABRIC_ROCE: Fabric
FABRIC_ETHERNET: Fabric
TOPOLOGY_FAMILY_UNSPECIFIED: TopologyFamily
TOPOLOGY_FAMILY_SINGLE_SWITCH: TopologyFamily
TOPOLOGY_FAMILY_FAT_TREE: TopologyFamily
TOPOLOGY_FAMILY_RAIL_OPTIMIZED: TopologyFamily
TOPOLOGY_FAMILY_DRAGONFLY: TopologyFamily
TOPOLOGY_FAMILY_TORUS: TopologyFamily
TOPOLOGY_FAMILY_SINGLE_NODE: TopologyFamily

class Workload(_message.Message):
    __slots__ = ("model", "parameters", "layers", "hidden_size", "ffn_hidden_size", "attention_heads", "kv_heads", "sequence_length", "vocab_size", "training_tokens", "global_batch_size", "micro_batch_size", "activation_recompute", "precision", "experts", "experts_per_token", "gated_ffn", "tied_embeddings", "flash_attention", "dropout", "causal", "framework", "head_dim", "attention_kernel", "tp_comm_overlap", "sliding_window_tokens", "sliding_window_layers", "kv_lora_rank", "q_lora_rank", "qk_rope_head_dim", "v_head_dim", "mtp_layers", "optimizer_moments", "pipeline_schedule", "expert_load_imbalance", "expert_dispatch", "expert_node_limit", "expert_capacity_factor", "pad_expert_input_to_capacity", "shared_expert_ffn_hidden_size", "dense_layers", "dense_ffn_hidden_size")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    LAYERS_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_SIZE_FIELD_NUMBER: _ClassVar[int]
    FFN_HIDDEN_SIZE_FIELD_NUMBER: _ClassVar[int]
    ATTENTION_HEADS_FIELD_NUMBER: _ClassVar[int]
    KV_HEADS_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    VOCAB_SIZE_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    MICRO_BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    ACTIVATION_RECOMPUTE_FIELD_NUMBER: _ClassVar[int]
    PRECISION_FIELD_NUMBER: _ClassVar[int]
    EXPERTS_FIELD_NUMBER: _ClassVar[int]
    EXPERTS_PER_TOKEN_FIELD_NUMBER: _ClassVar[int]
    GATED_FFN_FIELD_NUMBER: _ClassVar[int]
    TIED_EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    FLASH_ATTENTION_FIELD_NUMBER: _ClassVar[int]
    DROPOUT_FIELD_NUMBER: _ClassVar[int]
    CAUSAL_FIELD_NUMBER: _ClassVar[int]
    FRAMEWORK_FIELD_NUMBER: _ClassVar[int]
    HEAD_DIM_FIELD_NUMBER: _ClassVar[int]
    ATTENTION_KERNEL_FIELD_NUMBER: _ClassVar[int]
    TP_COMM_OVERLAP_FIELD_NUMBER: _ClassVar[int]
    SLIDING_WINDOW_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SLIDING_WINDOW_LAYERS_FIELD_NUMBER: _ClassVar[int]
    KV_LORA_RANK_FIELD_NUMBER: _ClassVar[int]
    Q_LORA_RANK_FIELD_NUMBER: _ClassVar[int]
    QK_ROPE_HEAD_DIM_FIELD_NUMBER: _ClassVar[int]
    V_HEAD_DIM_FIELD_NUMBER: _ClassVar[int]
    MTP_LAYERS_FIELD_NUMBER: _ClassVar[int]
    OPTIMIZER_MOMENTS_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    EXPERT_LOAD_IMBALANCE_FIELD_NUMBER: _ClassVar[int]
    EXPERT_DISPATCH_FIELD_NUMBER: _ClassVar[int]
    EXPERT_NODE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    EXPERT_CAPACITY_FACTOR_FIELD_NUMBER: _ClassVar[int]
    PAD_EXPERT_INPUT_TO_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    SHARED_EXPERT_FFN_HIDDEN_SIZE_FIELD_NUMBER: _ClassVar[int]
    DENSE_LAYERS_FIELD_NUMBER: _ClassVar[int]
    DENSE_FFN_HIDDEN_SIZE_FIELD_NUMBER: _ClassVar[int]
    model: str
    parameters: float
    layers: int
    hidden_size: int
    ffn_hidden_size: int
    attention_heads: int
    kv_heads: int
    sequence_length: int
    vocab_size: int
    training_tokens: float
    global_batch_size: int
    micro_batch_size: int
    activation_recompute: str
    precision: str
    experts: int
    experts_per_token: int
    gated_ffn: bool
    tied_embeddings: bool
    flash_attention: bool
    dropout: bool
    causal: bool
    framework: str
    head_dim: int
    attention_kernel: str
    tp_comm_overlap: bool
    sliding_window_tokens: int
    sliding_window_layers: int
    kv_lora_rank: int
    q_lora_rank: int
    qk_rope_head_dim: int
    v_head_dim: int
    mtp_layers: int
    optimizer_moments: str
    pipeline_schedule: str
    expert_load_imbalance: float
    expert_dispatch: str
    expert_node_limit: int
    expert_capacity_factor: float
    pad_expert_input_to_capacity: bool
    shared_expert_ffn_hidden_size: int
    dense_layers: int
    dense_ffn_hidden_size: int
    def __init__(self, model: _Optional[str] = ..., parameters: _Optional[float] = ..., layers: _Optional[int] = ..., hidden_size: _Optional[int] = ..., ffn_hidden_size: _Optional[int] = ..., attention_heads: _Optional[int] = ..., kv_heads: _Optional[int] = ..., sequence_length: _Optional[int] = ..., vocab_size: _Optional[int] = ..., training_tokens: _Optional[float] = ..., global_batch_size: _Optional[int] = ..., micro_batch_size: _Optional[int] = ..., activation_recompute: _Optional[str] = ..., precision: _Optional[str] = ..., experts: _Optional[int] = ..., experts_per_token: _Optional[int] = ..., gated_ffn: _Optional[bool] = ..., tied_embeddings: _Optional[bool] = ..., flash_attention: _Optional[bool] = ..., dropout: _Optional[bool] = ..., causal: _Optional[bool] = ..., framework: _Optional[str] = ..., head_dim: _Optional[int] = ..., attention_kernel: _Optional[str] = ..., tp_comm_overlap: _Optional[bool] = ..., sliding_window_tokens: _Optional[int] = ..., sliding_window_layers: _Optional[int] = ..., kv_lora_rank: _Optional[int] = ..., q_lora_rank: _Optional[int] = ..., qk_rope_head_dim: _Optional[int] = ..., v_head_dim: _Optional[int] = ..., mtp_layers: _Optional[int] = ..., optimizer_moments: _Optional[str] = ..., pipeline_schedule: _Optional[str] = ..., expert_load_imbalance: _Optional[float] = ..., expert_dispatch: _Optional[str] = ..., expert_node_limit: _Optional[int] = ..., expert_capacity_factor: _Optional[float] = ..., pad_expert_input_to_capacity: _Optional[bool] = ..., shared_expert_ffn_hidden_size: _Optional[int] = ..., dense_layers: _Optional[int] = ..., dense_ffn_hidden_size: _Optional[int] = ...) -> None: ...

class Parallelism(_message.Message):
    __slots__ = ("tensor", "pipeline", "data", "expert", "virtual_pipeline", "zero_stage", "micro_batch_size", "context", "reshard_after_forward", "expert_tensor", "stage_layers")
    TENSOR_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    EXPERT_FIELD_NUMBER: _ClassVar[int]
    VIRTUAL_PIPELINE_FIELD_NUMBER: _ClassVar[int]
    ZERO_STAGE_FIELD_NUMBER: _ClassVar[int]
    MICRO_BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    RESHARD_AFTER_FORWARD_FIELD_NUMBER: _ClassVar[int]
    EXPERT_TENSOR_FIELD_NUMBER: _ClassVar[int]
    STAGE_LAYERS_FIELD_NUMBER: _ClassVar[int]
    tensor: int
    pipeline: int
    data: int
    expert: int
    virtual_pipeline: int
    zero_stage: int
    micro_batch_size: int
    context: int
    reshard_after_forward: bool
    expert_tensor: int
    stage_layers: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, tensor: _Optional[int] = ..., pipeline: _Optional[int] = ..., data: _Optional[int] = ..., expert: _Optional[int] = ..., virtual_pipeline: _Optional[int] = ..., zero_stage: _Optional[int] = ..., micro_batch_size: _Optional[int] = ..., context: _Optional[int] = ..., reshard_after_forward: _Optional[bool] = ..., expert_tensor: _Optional[int] = ..., stage_layers: _Optional[_Iterable[int]] = ...) -> None: ...

class Cluster(_message.Message):
    __slots__ = ("gpus", "gpus_per_node", "gpu_peak_tflops", "gpu_memory_gb", "intra_node_gbytes_per_s", "fabric", "nic_gbps_per_node", "topology", "oversubscription", "server_sku", "gpu_model", "gpu_peak_fp8_tflops", "nics_per_node", "switch_radix", "oversubscribed_tier", "fabric_kind", "topology_family", "scale_up_gpus", "in_network_reduction", "nvls", "switch_port_lanes")
    GPUS_FIELD_NUMBER: _ClassVar[int]
    GPUS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    GPU_PEAK_TFLOPS_FIELD_NUMBER: _ClassVar[int]
    GPU_MEMORY_GB_FIELD_NUMBER: _ClassVar[int]
    INTRA_NODE_GBYTES_PER_S_FIELD_NUMBER: _ClassVar[int]
    FABRIC_FIELD_NUMBER: _ClassVar[int]
    NIC_GBPS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FIELD_NUMBER: _ClassVar[int]
    OVERSUBSCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SERVER_SKU_FIELD_NUMBER: _ClassVar[int]
    GPU_MODEL_FIELD_NUMBER: _ClassVar[int]
    GPU_PEAK_FP8_TFLOPS_FIELD_NUMBER: _ClassVar[int]
    NICS_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    SWITCH_RADIX_FIELD_NUMBER: _ClassVar[int]
    OVERSUBSCRIBED_TIER_FIELD_NUMBER: _ClassVar[int]
    FABRIC_KIND_FIELD_NUMBER: _ClassVar[int]
    TOPOLOGY_FAMILY_FIELD_NUMBER: _ClassVar[int]
    SCALE_UP_GPUS_FIELD_NUMBER: _ClassVar[int]
    IN_NETWORK_REDUCTION_FIELD_NUMBER: _ClassVar[int]
    NVLS_FIELD_NUMBER: _ClassVar[int]
    SWITCH_PORT_LANES_FIELD_NUMBER: _ClassVar[int]
    gpus: int
    gpus_per_node: int
    gpu_peak_tflops: float
    gpu_memory_gb: float
    intra_node_gbytes_per_s: float
    fabric: str
    nic_gbps_per_node: float
    topology: str
    oversubscription: float
    server_sku: str
    gpu_model: str
    gpu_peak_fp8_tflops: float
    nics_per_node: int
    switch_radix: int
    oversubscribed_tier: str
    fabric_kind: Fabric
    topology_family: TopologyFamily
    scale_up_gpus: int
    in_network_reduction: bool
    nvls: bool
    switch_port_lanes: int
    def __init__(self, gpus: _Optional[int] = ..., gpus_per_node: _Optional[int] = ..., gpu_peak_tflops: _Optional[float] = ..., gpu_memory_gb: _Optional[float] = ..., intra_node_gbytes_per_s: _Optional[float] = ..., fabric: _Optional[str] = ..., nic_gbps_per_node: _Optional[float] = ..., topology: _Optional[str] = ..., oversubscription: _Optional[float] = ..., server_sku: _Optional[str] = ..., gpu_model: _Optional[str] = ..., gpu_peak_fp8_tflops: _Optional[float] = ..., nics_per_node: _Optional[int] = ..., switch_radix: _Optional[int] = ..., oversubscribed_tier: _Optional[str] = ..., fabric_kind: _Optional[_Union[Fabric, str]] = ..., topology_family: _Optional[_Union[TopologyFamily, str]] = ..., scale_up_gpus: _Optional[int] = ..., in_network_reduction: _Optional[bool] = ..., nvls: _Optional[bool] = ..., switch_port_lanes: _Optional[int] = ...) -> None: ...

class FabricProfile(_message.Message):
    __slots__ = ("fabric", "efficiency_low", "efficiency_expected", "efficiency_high", "base_latency_us_low", "base_latency_us_expected", "base_latency_us_high", "per_hop_latency_ns", "host_cpu_cycles_per_byte_low", "host_cpu_cycles_per_byte_expected", "host_cpu_cycles_per_byte_high", "host_network_cpu_ghz_per_node", "fabric_kind")
    FABRIC_FIELD_NUMBER: _ClassVar[int]
    EFFICIENCY_LOW_FIELD_NUMBER: _ClassVar[int]
    EFFICIENCY_EXPECTED_FIELD_NUMBER: _ClassVar[int]
    EFFICIENCY_HIGH_FIELD_NUMBER: _ClassVar[int]
    BASE_LATENCY_US_LOW_FIELD_NUMBER: _ClassVar[int]
    BASE_LATENCY_US_EXPECTED_FIELD_NUMBER: _ClassVar[int]
    BASE_LATENCY_US_HIGH_FIELD_NUMBER: _ClassVar[int]
    PER_HOP_LATENCY_NS_FIELD_NUMBER: _ClassVar[int]
    HOST_CPU_CYCLES_PER_BYTE_LOW_FIELD_NUMBER: _ClassVar[int]
    HOST_CPU_CYCLES_PER_BYTE_EXPECTED_FIELD_NUMBER: _ClassVar[int]
    HOST_CPU_CYCLES_PER_BYTE_HIGH_FIELD_NUMBER: _ClassVar[int]
    HOST_NETWORK_CPU_GHZ_PER_NODE_FIELD_NUMBER: _ClassVar[int]
    FABRIC_KIND_FIELD_NUMBER: _ClassVar[int]
    fabric: str
    efficiency_low: float
    efficiency_expected: float
    efficiency_high: float
    base_latency_us_low: float
    base_latency_us_expected: float
    base_latency_us_high: float
    per_hop_latency_ns: float
    host_cpu_cycles_per_byte_low: float
    host_cpu_cycles_per_byte_expected: float
    host_cpu_cycles_per_byte_high: float
    host_network_cpu_ghz_per_node: float
    fabric_kind: Fabric
    def __init__(self, fabric: _Optional[str] = ..., efficiency_low: _Optional[float] = ..., efficiency_expected: _Optional[float] = ..., efficiency_high: _Optional[float] = ..., base_latency_us_low: _Optional[float] = ..., base_latency_us_expected: _Optional[float] = ..., base_latency_us_high: _Optional[float] = ..., per_hop_latency_ns: _Optional[float] = ..., host_cpu_cycles_per_byte_low: _Optional[float] = ..., host_cpu_cycles_per_byte_expected: _Optional[float] = ..., host_cpu_cycles_per_byte_high: _Optional[float] = ..., host_network_cpu_ghz_per_node: _Optional[float] = ..., fabric_kind: _Optional[_Union[Fabric, str]] = ...) -> None: ...

class Reliability(_message.Message):
    __slots__ = ("failures_per_gpu_hour", "storage_write_gbytes_per_s_per_gpu", "storage_read_gbytes_per_s_per_gpu", "restart_minutes", "checkpoint_interval_minutes")
    FAILURES_PER_GPU_HOUR_FIELD_NUMBER: _ClassVar[int]
    STORAGE_WRITE_GBYTES_PER_S_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    STORAGE_READ_GBYTES_PER_S_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    RESTART_MINUTES_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_INTERVAL_MINUTES_FIELD_NUMBER: _ClassVar[int]
    failures_per_gpu_hour: float
    storage_write_gbytes_per_s_per_gpu: float
    storage_read_gbytes_per_s_per_gpu: float
    restart_minutes: float
    checkpoint_interval_minutes: float
    def __init__(self, failures_per_gpu_hour: _Optional[float] = ..., storage_write_gbytes_per_s_per_gpu: _Optional[float] = ..., storage_read_gbytes_per_s_per_gpu: _Optional[float] = ..., restart_minutes: _Optional[float] = ..., checkpoint_interval_minutes: _Optional[float] = ...) -> None: ...

class CalibratedFabric(_message.Message):
    __slots__ = ("fabric", "efficiency")
    FABRIC_FIELD_NUMBER: _ClassVar[int]
    EFFICIENCY_FIELD_NUMBER: _ClassVar[int]
    fabric: str
    efficiency: float
    def __init__(self, fabric: _Optional[str] = ..., efficiency: _Optional[float] = ...) -> None: ...

class CalibrationPoint(_message.Message):
    __slots__ = ("label", "metric", "measured", "predicted", "residual", "gpus", "step_time_s")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    METRIC_FIELD_NUMBER: _ClassVar[int]
    MEASURED_FIELD_NUMBER: _ClassVar[int]
    PREDICTED_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_FIELD_NUMBER: _ClassVar[int]
    GPUS_FIELD_NUMBER: _ClassVar[int]
    STEP_TIME_S_FIELD_NUMBER: _ClassVar[int]
    label: str
    metric: str
    measured: float
    predicted: float
    residual: float
    gpus: int
    step_time_s: float
    def __init__(self, label: _Optional[str] = ..., metric: _Optional[str] = ..., measured: _Optional[float] = ..., predicted: _Optional[float] = ..., residual: _Optional[float] = ..., gpus: _Optional[int] = ..., step_time_s: _Optional[float] = ...) -> None: ...

class CalibrationProfile(_message.Message):
    __slots__ = ("gpu_generation", "kernel_efficiency_scale", "kernel_efficiency", "fabrics", "collective_efficiency", "step_overhead_s", "fitted", "points", "residual_spread", "tool_version", "notes", "elementwise_scale", "fp8_kernel_efficiency_scale")
    GPU_GENERATION_FIELD_NUMBER: _ClassVar[int]
    KERNEL_EFFICIENCY_SCALE_FIELD_NUMBER: _ClassVar[int]
    KERNEL_EFFICIENCY_FIELD_NUMBER: _ClassVar[int]
    FABRICS_FIELD_NUMBER: _ClassVar[int]
    COLLECTIVE_EFFICIENCY_FIELD_NUMBER: _ClassVar[int]
    STEP_OVERHEAD_S_FIELD_NUMBER: _ClassVar[int]
    FITTED_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_SPREAD_FIELD_NUMBER: _ClassVar[int]
    TOOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    ELEMENTWISE_SCALE_FIELD_NUMBER: _ClassVar[int]
    FP8_KERNEL_EFFICIENCY_SCALE_FIELD_NUMBER: _ClassVar[int]
    gpu_generation: str
    kernel_efficiency_scale: float
    kernel_efficiency: float
    fabrics: _containers.RepeatedCompositeFieldContainer[CalibratedFabric]
    collective_efficiency: float
    step_overhead_s: float
    fitted: _containers.RepeatedScalarFieldContainer[str]
    points: _containers.RepeatedCompositeFieldContainer[CalibrationPoint]
    residual_spread: float
    tool_version: str
    notes: _containers.RepeatedScalarFieldContainer[str]
    elementwise_scale: float
    fp8_kernel_efficiency_scale: float
    def __init__(self, gpu_generation: _Optional[str] = ..., kernel_efficiency_scale: _Optional[float] = ..., kernel_efficiency: _Optional[float] = ..., fabrics: _Optional[_Iterable[_Union[CalibratedFabric, _Mapping]]] = ..., collective_efficiency: _Optional[float] = ..., step_overhead_s: _Optional[float] = ..., fitted: _Optional[_Iterable[str]] = ..., points: _Optional[_Iterable[_Union[CalibrationPoint, _Mapping]]] = ..., residual_spread: _Optional[float] = ..., tool_version: _Optional[str] = ..., notes: _Optional[_Iterable[str]] = ..., elementwise_scale: _Optional[float] = ..., fp8_kernel_efficiency_scale: _Optional[float] = ...) -> None: ...

class EstimateRequest(_message.Message):
    __slots__ = ("workload", "parallelism", "cluster", "catalog", "fabric_profiles", "reliability", "calibration")
    WORKLOAD_FIELD_NUMBER: _ClassVar[int]
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    FABRIC_PROFILES_FIELD_NUMBER: _ClassVar[int]
    RELIABILITY_FIELD_NUMBER: _ClassVar[int]
    CALIBRATION_FIELD_NUMBER: _ClassVar[int]
    workload: Workload
    parallelism: Parallelism
    cluster: Cluster
    catalog: str
    fabric_profiles: _containers.RepeatedCompositeFieldContainer[FabricProfile]
    reliability: Reliability
    calibration: CalibrationProfile
    def __init__(self, workload: _Optional[_Union[Workload, _Mapping]] = ..., parallelism: _Optional[_Union[Parallelism, _Mapping]] = ..., cluster: _Optional[_Union[Cluster, _Mapping]] = ..., catalog: _Optional[str] = ..., fabric_profiles: _Optional[_Iterable[_Union[FabricProfile, _Mapping]]] = ..., reliability: _Optional[_Union[Reliability, _Mapping]] = ..., calibration: _Optional[_Union[CalibrationProfile, _Mapping]] = ...) -> None: ...

class StepBreakdown(_message.Message):
    __slots__ = ("compute_s", "pipeline_bubble_s", "tensor_parallel_s", "data_parallel_s", "pipeline_p2p_s", "all_to_all_s", "exposed_communication_s", "host_cpu_overhead_s", "optimizer_step_s", "step_overhead_s", "micro_batch_overhead_s", "context_parallel_s")
    COMPUTE_S_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_BUBBLE_S_FIELD_NUMBER: _ClassVar[int]
    TENSOR_PARALLEL_S_FIELD_NUMBER: _ClassVar[int]
    DATA_PARALLEL_S_FIELD_NUMBER: _ClassVar[int]
    PIPELINE_P2P_S_FIELD_NUMBER: _ClassVar[int]
    ALL_TO_ALL_S_FIELD_NUMBER: _ClassVar[int]
    EXPOSED_COMMUNICATION_S_FIELD_NUMBER: _ClassVar[int]
    HOST_CPU_OVERHEAD_S_FIELD_NUMBER: _ClassVar[int]
    OPTIMIZER_STEP_S_FIELD_NUMBER: _ClassVar[int]
    STEP_OVERHEAD_S_FIELD_NUMBER: _ClassVar[int]
    MICRO_BATCH_OVERHEAD_S_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_PARALLEL_S_FIELD_NUMBER: _ClassVar[int]
    compute_s: float
    pipeline_bubble_s: float
    tensor_parallel_s: float
    data_parallel_s: float
    pipeline_p2p_s: float
    all_to_all_s: float
    exposed_communication_s: float
    host_cpu_overhead_s: float
    optimizer_step_s: float
    step_overhead_s: float
    micro_batch_overhead_s: float
    context_parallel_s: float
    def __init__(self, compute_s: _Optional[float] = ..., pipeline_bubble_s: _Optional[float] = ..., tensor_parallel_s: _Optional[float] = ..., data_parallel_s: _Optional[float] = ..., pipeline_p2p_s: _Optional[float] = ..., all_to_all_s: _Optional[float] = ..., exposed_communication_s: _Optional[float] = ..., host_cpu_overhead_s: _Optional[float] = ..., optimizer_step_s: _Optional[float] = ..., step_overhead_s: _Optional[float] = ..., micro_batch_overhead_s: _Optional[float] = ..., context_parallel_s: _Optional[float] = ...) -> None: ...

class EstimateResponse(_message.Message):
    __slots__ = ("step_time_s", "training_time_hours", "training_time_hours_low", "training_time_hours_high", "model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "memory_per_gpu_gb", "parallelism", "breakdown", "steps", "parameters", "tokens_per_s", "notes", "gpus_used", "goodput", "productive_training_time_hours", "checkpoint_interval_minutes", "expected_interruptions", "expert_skew_s", "domain_tiled_step_time_s")
    STEP_TIME_S_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_LOW_FIELD_NUMBER: _ClassVar[int]
    TRAINING_TIME_HOURS_HIGH_FIELD_NUMBER: _ClassVar[int]
    MODEL_TFLOPS_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    HARDWARE_TFLOPS_PER_GPU_FIELD_NUMBER: _ClassVar[int]
    MFU_FIELD_NUMBER: _ClassVar[int]
    MEMORY_PER_GPU_GB_FIELD_NUMBER: _ClassVar[int]
    PARALLELISM_FIELD_NUMBER: _ClassVar[int]
    BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_PER_S_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    GPUS_USED_FIELD_NUMBER: _ClassVar[int]
    GOODPUT_FIELD_NUMBER: _ClassVar[int]
    PRODUCTIVE_TRAINING_TIME_HOURS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_INTERVAL_MINUTES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_INTERRUPTIONS_FIELD_NUMBER: _ClassVar[int]
    EXPERT_SKEW_S_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_TILED_STEP_TIME_S_FIELD_NUMBER: _ClassVar[int]
    step_time_s: float
    training_time_hours: float
    training_time_hours_low: float
    training_time_hours_high: float
    model_tflops_per_gpu: float
    hardware_tflops_per_gpu: float
    mfu: float
    memory_per_gpu_gb: float
    parallelism: Parallelism
    breakdown: StepBreakdown
    steps: float
    parameters: float
    tokens_per_s: float
    notes: _containers.RepeatedScalarFieldContainer[str]
    gpus_used: int
    goodput: float
    productive_training_time_hours: float
    checkpoint_interval_minutes: float
    expected_interruptions: float
    expert_skew_s: float
    domain_tiled_step_time_s: float
    def __init__(self, step_time_s: _Optional[float] = ..., training_time_hours: _Optional[float] = ..., training_time_hours_low: _Optional[float] = ..., training_time_hours_high: _Optional[float] = ..., model_tflops_per_gpu: _Optional[float] = ..., hardware_tflops_per_gpu: _Optional[float] = ..., mfu: _Optional[float] = ..., memory_per_gpu_gb: _Optional[float] = ..., parallelism: _Optional[_Union[Parallelism, _Mapping]] = ..., breakdown: _Optional[_Union[StepBreakdown, _Mapping]] = ..., steps: _Optional[float] = ..., parameters: _Optional[float] = ..., tokens_per_s: _Optional[float] = ..., notes: _Optional[_Iterable[str]] = ..., gpus_used: _Optional[int] = ..., goodput: _Optional[float] = ..., productive_training_time_hours: _Optional[float] = ..., checkpoint_interval_minutes: _Optional[float] = ..., expected_interruptions: _Optional[float] = ..., expert_skew_s: _Optional[float] = ..., domain_tiled_step_time_s: _Optional[float] = ...) -> None: ...
