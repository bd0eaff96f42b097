"""Errors of the estimator and planner."""

from __future__ import annotations

from optimizer.errors import InvalidInput


class PlanInfeasible(InvalidInput):
    """No parallel plan (or not the given one) fits the workload in the cluster's GPU memory."""


class SearchStopped(Exception):
    """The caller's stop condition (its deadline, a cancellation) ended a plan search before
    it finished: no estimate, and nothing half-searched is cached."""
