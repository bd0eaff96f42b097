"""Solver backends behind one small interface; look them up by name with ``get_backend``."""

from __future__ import annotations

from optimizer.errors import InvalidInput, SolverUnavailable
from optimizer.optimize.backends.base import Backend, Limits, SolveResult, SolveStatus

__all__ = [
    "BACKENDS",
    "Backend",
    "Limits",
    "SolveResult",
    "SolveStatus",
    "available_backends",
    "get_backend",
]

BACKENDS = ("cpsat", "cbc", "highs")


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (default cpsat); SolverUnavailable when not installed."""
    name = (name or "cpsat").lower()
    if name == "cpsat":
        from optimizer.optimize.backends.cpsat import CpSatBackend

        backend: Backend = CpSatBackend()
    elif name in ("cbc", "highs"):
        from optimizer.optimize.backends.pulp_backend import PulpBackend

        backend = PulpBackend(name)
    else:
        raise InvalidInput(
            f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}",
            field="solver.backend",
        )
    if not backend.is_available():
        msg = f"solver backend {name!r} is not installed on this machine"
        raise SolverUnavailable(msg)
    return backend


def available_backends() -> list[str]:
    out = []
    for name in BACKENDS:
        try:
            get_backend(name)
        except SolverUnavailable:
            continue
        out.append(name)
    return out
