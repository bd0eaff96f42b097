from optimizer._pb.procurement.v1 import estimate_pb2 as _estimate_pb2
from optimizer._pb.procurement.v1 import optimize_pb2 as _optimize_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OptimizeProgress(_message.Message):
    __slots__ = ("phase", "candidates_evaluated", "best_capex_usd", "bound_usd", "elapsed_s", "designs_found")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_EVALUATED_FIELD_NUMBER: _ClassVar[int]
    BEST_CAPEX_USD_FIELD_NUMBER: _ClassVar[int]
    BOUND_USD_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_S_FIELD_NUMBER: _ClassVar[int]
    DESIGNS_FOUND_FIELD_NUMBER: _ClassVar[int]
    phase: str
    candidates_evaluated: int
    best_capex_usd: float
    bound_usd: float
    elapsed_s: float
    designs_found: int
    def __init__(self, phase: _Optional[str] = ..., candidates_evaluated: _Optional[int] = ..., best_capex_usd: _Optional[float] = ..., bound_usd: _Optional[float] = ..., elapsed_s: _Optional[float] = ..., designs_found: _Optional[int] = ...) -> None: ...

class OptimizeEvent(_message.Message):
    __slots__ = ("progress", "result")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    progress: OptimizeProgress
    result: _optimize_pb2.OptimizeResponse
    def __init__(self, progress: _Optional[_Union[OptimizeProgress, _Mapping]] = ..., result: _Optional[_Union[_optimize_pb2.OptimizeResponse, _Mapping]] = ...) -> None: ...

class BatchOptimizeRequest(_message.Message):
    __slots__ = ("scenarios", "catalogs")
    SCENARIOS_FIELD_NUMBER: _ClassVar[int]
    CATALOGS_FIELD_NUMBER: _ClassVar[int]
    scenarios: _containers.RepeatedCompositeFieldContainer[_optimize_pb2.OptimizeRequest]
    catalogs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scenarios: _Optional[_Iterable[_Union[_optimize_pb2.OptimizeRequest, _Mapping]]] = ..., catalogs: _Optional[_Iterable[str]] = ...) -> None: ...

class BatchResult(_message.Message):
    __slots__ = ("scenario_index", "catalog", "request_id", "response", "error_code", "error_message", "scenario_id")
    SCENARIO_INDEX_FIELD_NUMBER: _ClassVar[int]
    CATALOG_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SCENARIO_ID_FIELD_NUMBER: _ClassVar[int]
    scenario_index: int
    catalog: str
    request_id: str
    response: _optimize_pb2.OptimizeResponse
    error_code: str
    error_message: str
    scenario_id: str
    def __init__(self, scenario_index: _Optional[int] = ..., catalog: _Optional[str] = ..., request_id: _Optional[str] = ..., response: _Optional[_Union[_optimize_pb2.OptimizeResponse, _Mapping]] = ..., error_code: _Optional[str] = ..., error_message: _Optional[str] = ..., scenario_id: _Optional[str] = ...) -> None: ...

class GetMetricsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MethodMetrics(_message.Message):
    __slots__ = ("method", "requests", "errors", "codes", "duration_s_total", "duration_s_max")
    class CodesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    METHOD_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    CODES_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_TOTAL_FIELD_NUMBER: _ClassVar[int]
    DURATION_S_MAX_FIELD_NUMBER: _ClassVar[int]
    method: str
    requests: int
    errors: int
    codes: _containers.ScalarMap[str, int]
    duration_s_total: float
    duration_s_max: float
    def __init__(self, method: _Optional[str] = ..., requests: _Optional[int] = ..., errors: _Optional[int] = ..., codes: _Optional[_Mapping[str, int]] = ..., duration_s_total: _Optional[float] = ..., duration_s_max: _Optional[float] = ...) -> None: ...

class GetMetricsResponse(_message.Message):
    __slots__ = ("methods", "workers", "workers_busy", "queue_depth", "queue_capacity", "solves", "solve_s_total", "solve_s_max", "worker_restarts", "uptime_s")
    METHODS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    WORKERS_BUSY_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    QUEUE_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    SOLVES_FIELD_NUMBER: _ClassVar[int]
    SOLVE_S_TOTAL_FIELD_NUMBER: _ClassVar[int]
    SOLVE_S_MAX_FIELD_NUMBER: _ClassVar[int]
    WORKER_RESTARTS_FIELD_NUMBER: _ClassVar[int]
    UPTIME_S_FIELD_NUMBER: _ClassVar[int]
    methods: _containers.RepeatedCompositeFieldContainer[MethodMetrics]
    workers: int
    workers_busy: int
    queue_depth: int
    queue_capacity: int
    solves: int
    solve_s_total: float
    solve_s_max: float
    worker_restarts: int
    uptime_s: float
    def __init__(self, methods: _Optional[_Iterable[_Union[MethodMetrics, _Mapping]]] = ..., workers: _Optional[int] = ..., workers_busy: _Optional[int] = ..., queue_depth: _Optional[int] = ..., queue_capacity: _Optional[int] = ..., solves: _Optional[int] = ..., solve_s_total: _Optional[float] = ..., solve_s_max: _Optional[float] = ..., worker_restarts: _Optional[int] = ..., uptime_s: _Optional[float] = ...) -> None: ...
