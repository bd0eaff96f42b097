"""Request-level settings of the time model that no cluster or plan changes: the user's
calibration profile and the reliability figures goodput is computed from (issue 14)."""

from __future__ import annotations

from dataclasses import dataclass, field

from optimizer.performance.goodput import Reliability
from optimizer.performance.profile import CalibrationProfile


@dataclass(frozen=True)
class ModelOptions:
    calibration: CalibrationProfile | None = None
    reliability: Reliability = field(default_factory=Reliability)


DEFAULT_OPTIONS = ModelOptions()
