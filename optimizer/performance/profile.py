"""A calibration profile: the model's few free parameters fitted to a user's measurements
(issue 14, ``procure calibrate``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CalibrationProfile:
    """Fitted parameters; hashable (it keys the estimator's scenario cache)."""
