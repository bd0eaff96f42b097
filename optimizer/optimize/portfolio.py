"""A cluster bought for a portfolio of workloads (issue 17; docs/optimizer.md, "Portfolio of
workloads").

Each workload has its own target hours, a number of runs a year that share the cluster's
usable hours, or both. The search sees one number per (time key, node count), the *portfolio
time*: the reference hours R times the worst ratio, where the ratios are each workload's
time / target and the year's share (sum of runs x hours over the year's usable hours). A design
meets the portfolio exactly when its portfolio time is at most R, which is the target the
search is given, so min-cost's "smallest size meeting the target", its bounds and its ranking
(capex, then the worst ratio) hold unchanged; min-time minimises the worst ratio. Every
workload's time is non-increasing in the node count, and the portfolio time is non-decreasing
in each of them, so it is non-increasing too, and a lower bound on each workload's time gives
one on the portfolio's.

R is the first workload's target (so a design where the first workload binds shows its own
time), or the year's usable hours when the first workload gives runs a year only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import replace

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.catalog.model import Server
from optimizer.cost.tco import HOURS_PER_YEAR, CostModel
from optimizer.errors import InvalidInput
from optimizer.optimize.candidates import EstimateCache, TimeKey, confident_hours
from optimizer.optimize.request import Confidence, OptimizeSpec, WorkloadTarget
from optimizer.optimize.result import OptimizeResult, RankedDesign, WorkloadTime
from optimizer.performance.convert import workload_from_proto
from optimizer.performance.estimator import Estimate
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.performance.plan import PartialPlan
from optimizer.topology.design import Design
from optimizer.topology.plan import PhysicalPlan
from optimizer.workload.model import Workload


def usable_hours_per_year(model: CostModel) -> float:
    """Hours a year the workloads' runs share: 8,760 h x the cost model's utilisation, the
    same share of the year the lifetime cost bills energy for (one source of truth)."""
    return HOURS_PER_YEAR * model.utilization


YEAR_UTILIZATION = CostModel().utilization
"""The default cost model's utilisation (a request's ``cost_model.utilization`` overrides)."""
YEAR_HOURS = usable_hours_per_year(CostModel())
"""Usable hours a year under the default cost model (8,760 h x YEAR_UTILIZATION)."""


def reference_hours(portfolio: Sequence[WorkloadTarget], year_hours: float = YEAR_HOURS) -> float:
    """R: the first workload's target, else the year's usable hours."""
    first = portfolio[0].target_training_hours
    return first if first is not None else year_hours


def portfolio_hours(
    hours: Sequence[float],
    portfolio: Sequence[WorkloadTarget],
    reference: float,
    year_hours: float = YEAR_HOURS,
) -> float:
    """R x the worst of each time / its target and the year's share; monotone in each time.

    ``t * (R / target)`` keeps the first workload's own time exact when it binds (R / R = 1)."""
    worst = 0.0
    year = 0.0
    for t, w in zip(hours, portfolio, strict=True):
        if w.target_training_hours is not None:
            worst = max(worst, t * (reference / w.target_training_hours))
        if w.runs_per_year is not None:
            year += w.runs_per_year * t
    if any(w.runs_per_year is not None for w in portfolio):
        worst = max(worst, year * (reference / year_hours))
    return worst


class PortfolioCache(EstimateCache):
    """An estimate cache whose times are portfolio times (one cache per workload inside).

    The estimate it returns is the first workload's, with its three times replaced by the
    portfolio's; None when any workload has no plan on the design."""

    def __init__(
        self,
        portfolio: tuple[WorkloadTarget, ...],
        servers: dict[str, Server],
        confidence: Confidence,
        fixed: PartialPlan | None = None,
        year_hours: float = YEAR_HOURS,
        options: ModelOptions = DEFAULT_OPTIONS,
    ) -> None:
        super().__init__(portfolio[0].workload, servers, confidence, fixed, options)
        self.portfolio = portfolio
        self.year_hours = year_hours
        self.reference_hours = reference_hours(portfolio, year_hours)
        # A fixed parallel plan is the first workload's (the request's `parallelism`).
        self.parts = [
            EstimateCache(w.workload, servers, confidence, fixed if i == 0 else None, options)
            for i, w in enumerate(portfolio)
        ]

    def _combine(self, estimates: list[Estimate | None]) -> Estimate | None:
        if any(e is None for e in estimates):
            return None
        found = [e for e in estimates if e is not None]

        def worst(name: str) -> float:
            return portfolio_hours(
                [getattr(e, name) for e in found],
                self.portfolio,
                self.reference_hours,
                self.year_hours,
            )

        return replace(
            found[0],
            training_time_hours=worst("training_time_hours"),
            training_time_hours_low=worst("training_time_hours_low"),
            training_time_hours_high=worst("training_time_hours_high"),
        )

    def _count(self) -> None:
        self.evaluations = sum(p.evaluations for p in self.parts)

    def estimate(self, key: TimeKey, nodes: int) -> Estimate | None:
        memo = (key, nodes)  # EstimateCache.fastest reads the node count last
        if memo not in self._cache:
            found: list[Estimate | None] = []
            for part in self.parts:  # the first miss settles it: skip the other workloads
                found.append(part.estimate(key, nodes))
                if found[-1] is None:
                    break
            result = self._combine(found) if len(found) == len(self.parts) else None
            self._cache[memo] = (key, result)
            self._count()
        return self._cache[memo][1]

    def reestimate(self, design: Design, plan: PhysicalPlan) -> Estimate | None:
        result = self._combine([p.reestimate(design, plan) for p in self.parts])
        self._count()
        return result

    def ideal_hours(
        self,
        server_sku: str,
        fabric: str,
        nic_gbps: int,
        nics_per_node: int,
        nodes: int,
        torus: bool = True,
    ) -> float:
        return portfolio_hours(
            [
                p.ideal_hours(server_sku, fabric, nic_gbps, nics_per_node, nodes, torus)
                for p in self.parts
            ],
            self.portfolio,
            self.reference_hours,
            self.year_hours,
        )

    def lower_bound_hours(self, server: Server, nodes: int) -> float:
        return portfolio_hours(
            [p.lower_bound_hours(server, nodes) for p in self.parts],
            self.portfolio,
            self.reference_hours,
            self.year_hours,
        )

    @contextmanager
    def stopping(self, stop: Callable[[], bool] | None) -> Iterator[None]:
        with ExitStack() as parts:
            for part in self.parts:
                parts.enter_context(part.stopping(stop))
            yield

    def refusal(self) -> str | None:
        return self.parts[0].refusal()  # the fixed plan is the first workload's

    def too_heavy(self) -> str | None:
        return next((text for part in self.parts if (text := part.too_heavy())), None)

    def server_refusal(self) -> str | None:
        return next((text for part in self.parts if (text := part.server_refusal())), None)

    def share(self, earlier: EstimateCache) -> None:
        assert isinstance(earlier, PortfolioCache), "different requests"
        assert earlier.portfolio == self.portfolio, "different portfolios"
        assert earlier.year_hours == self.year_hours, "different usable years"
        super().share(earlier)
        for mine, theirs in zip(self.parts, earlier.parts, strict=True):
            mine.share(theirs)

    def workload_times(self, design: Design, plan: PhysicalPlan) -> tuple[WorkloadTime, ...]:
        """Each workload's own time on the built design (its BOM's topology profile)."""
        times = []
        for part, w in zip(self.parts, self.portfolio, strict=True):
            est = part.reestimate(design, plan)
            hours = math.inf if est is None else confident_hours(est, self.confidence)
            times.append(
                WorkloadTime(w.workload.name, hours, w.target_training_hours, w.runs_per_year)
            )
        self._count()
        return tuple(times)


def make_timer(
    spec: OptimizeSpec, servers: dict[str, Server], fixed: PartialPlan | None
) -> EstimateCache:
    """The request's estimate cache: per workload for a portfolio, else today's."""
    if spec.portfolio:
        return PortfolioCache(
            spec.portfolio,
            servers,
            spec.confidence,
            fixed,
            usable_hours_per_year(spec.cost_model),
            spec.model_options,
        )
    return EstimateCache(spec.workload, servers, spec.confidence, fixed, spec.model_options)


def with_workload_times(
    ranked: RankedDesign, timer: EstimateCache, plan: PhysicalPlan
) -> RankedDesign:
    """``ranked`` with each workload's time and the two ratios (unchanged for one workload)."""
    if not isinstance(timer, PortfolioCache):
        return ranked
    times = timer.workload_times(ranked.design, plan)
    year = sum(t.hours_per_year for t in times)
    return replace(
        ranked,
        workload_times=times,
        worst_time_over_target=max((t.time_over_target for t in times), default=0.0),
        year_share=year / timer.year_hours if any(t.runs_per_year for t in times) else 0.0,
    )


def measure_text(spec: OptimizeSpec) -> str:
    """What a design's training time means for this request ("" for one workload)."""
    if not spec.portfolio:
        return ""
    first = spec.portfolio[0]
    year_hours = usable_hours_per_year(spec.cost_model)
    ref = reference_hours(spec.portfolio, year_hours)
    terms = []
    if any(w.target_training_hours is not None for w in spec.portfolio):
        terms.append("time/target")
    if any(w.runs_per_year is not None for w in spec.portfolio):
        terms.append(
            f"the year's share (runs x hours / {year_hours:,.0f} h: 8,760 h at "
            f"{spec.cost_model.utilization:.0%} utilisation, cost_model.utilization)"
        )
    base = (
        f"{first.workload.name}'s target {ref:,.4g} h"
        if first.target_training_hours is not None
        else f"the year's {ref:,.0f} usable hours"
    )
    return (
        f"portfolio of {len(spec.portfolio)} workloads: a design's time is {base} x the worst "
        f"of {' and '.join(terms)}; it meets every workload when that is at most {ref:,.4g} h"
    )


def with_measure(result: OptimizeResult, spec: OptimizeSpec) -> OptimizeResult:
    """``result`` saying what its times mean for a portfolio, in the diagnosis too (its
    hours are portfolio times, not one workload's)."""
    text = measure_text(spec)
    if not text:
        return result
    year_hours = usable_hours_per_year(spec.cost_model)
    diagnosis = f"{result.diagnosis} ({text})" if result.diagnosis else ""
    designs = tuple(
        replace(
            d,
            explanation=f"{d.explanation} {portfolio_sentence(d, year_hours)}".strip(),
        )
        for d in result.designs
    )
    return replace(result, portfolio_measure=text, diagnosis=diagnosis, designs=designs)


def portfolio_sentence(design: RankedDesign, year_hours: float = YEAR_HOURS) -> str:
    """Each workload's own time on ``design``, for its explanation (whose hours are
    portfolio times)."""
    parts = []
    for t in design.workload_times:
        asked = []
        if t.target_training_hours is not None:
            asked.append(f"target {t.target_training_hours:,.4g} h")
        if t.runs_per_year is not None:
            asked.append(f"{t.runs_per_year:g} runs/yr = {t.hours_per_year:,.0f} h/yr")
        parts.append(f"{t.workload} {t.training_time_hours:,.1f} h ({', '.join(asked)})")
    text = f"Portfolio (the hours above are portfolio times): {'; '.join(parts)}"
    if design.worst_time_over_target:
        text += f"; worst time/target {design.worst_time_over_target:.2f}"
    if design.year_share:
        text += f"; {design.year_share:.0%} of the year's {year_hours:,.0f} usable hours"
    return text + "."


def _positive_or_zero(value: float, field: str) -> float | None:
    if value == 0:
        return None
    if not (math.isfinite(value) and value > 0):
        raise InvalidInput(f"got {value}, expected a positive number (0: none)", field=field)
    return value


def portfolio_from_proto(
    req: optimize_pb2.OptimizeRequest, target: float | None, year_hours: float = YEAR_HOURS
) -> tuple[Workload | None, float | None, tuple[WorkloadTarget, ...]]:
    """The request's workload, target and portfolio (``workload`` first, then ``workloads``).

    A workload with neither its own target nor runs a year takes
    ``constraints.target_training_hours``. One workload with a target only is today's
    request, returned with an empty portfolio so that it is answered exactly as before; the
    target of a portfolio is its reference hours (see the module docstring)."""
    entries: list[tuple[WorkloadTarget, str]] = []
    if req.HasField("workload"):
        entries.append(
            (
                WorkloadTarget(workload_from_proto(req.workload), target, None),
                "constraints.target_training_hours",
            )
        )
    for i, msg in enumerate(req.workloads):
        where = f"workloads[{i}]"
        if not msg.HasField("workload"):
            raise InvalidInput(
                "missing; expected a workload (a preset model name or an architecture)",
                field=f"{where}.workload",
            )
        try:
            workload = workload_from_proto(msg.workload)
        except InvalidInput as e:
            raise InvalidInput(e.problem, field=f"{where}.{e.field or 'workload'}") from None
        hours = _positive_or_zero(msg.target_training_hours, f"{where}.target_training_hours")
        runs = _positive_or_zero(msg.runs_per_year, f"{where}.runs_per_year")
        if hours is None and runs is None:
            hours = target
        entries.append((WorkloadTarget(workload, hours, runs), f"{where}.target_training_hours"))
    if not entries:
        return None, target, ()
    first = entries[0][0]
    if len(entries) == 1 and first.runs_per_year is None:
        return first.workload, first.target_training_hours, ()
    for w, field in entries:
        if w.target_training_hours is None and w.runs_per_year is None:
            raise InvalidInput(
                f"{w.workload.name} has no target; expected target_training_hours or "
                "runs_per_year (each workload of a portfolio needs one, or give "
                "constraints.target_training_hours for all)",
                field=field,
            )
    portfolio = tuple(w for w, _ in entries)
    if year_hours <= 0 and any(w.runs_per_year is not None for w in portfolio):
        raise InvalidInput(
            "got 0, expected a utilisation above 0: the runs a year share the cluster's "
            "usable hours, 8,760 h x cost_model.utilization",
            field="cost_model.utilization",
        )
    return first.workload, reference_hours(portfolio, year_hours), portfolio
