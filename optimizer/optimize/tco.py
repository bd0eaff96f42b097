"""Issue 17 (tco): the lifetime cost in the answer: each design's TCO sentence, the pareto
points' TCO, and why min-tco's rank 1 is not the cheapest design to buy."""

from __future__ import annotations

from dataclasses import replace

from optimizer.catalog.model import Catalog
from optimizer.cost.tco import tco_versus_capex
from optimizer.optimize.candidates import Costed
from optimizer.optimize.explain import Resolver, describe, usd
from optimizer.optimize.request import Objective, OptimizeSpec
from optimizer.optimize.result import ParetoEntry, RankedDesign
from optimizer.topology.bom import bom_signature


def tco_comparison(
    best: RankedDesign, catalog: Catalog, spec: OptimizeSpec, resolve: Resolver
) -> str:
    """Min-tco's rank 1 against min-cost's rank 1 for the same request: the same design, or
    the capex it adds and the operating cost (energy, support, space) it saves."""
    cheapest = resolve(catalog, replace(spec, objective=Objective.MIN_COST))
    if cheapest is None:
        return "The cheapest design to buy was not computed: time limit."
    other = cheapest.designs[0] if cheapest.designs else None
    if other is None or best.tco is None or other.tco is None:
        return ""
    if bom_signature(other.bom) == bom_signature(best.bom):
        return (
            "Min-tco and min-cost pick the same design: no design that costs more to buy "
            "saves enough energy, support and space to pay for itself over "
            f"{spec.cost_model.years:g} years."
        )
    return tco_versus_capex(describe(best), best.tco, describe(other), other.tco, spec.cost_model)


def _tco_sentence(d: RankedDesign, best: RankedDesign, spec: OptimizeSpec) -> str:
    t = d.tco
    if t is None:
        return ""
    text = (
        f"TCO over {spec.cost_model.years:g} years {usd(t.tco_cents)}: capex "
        f"{usd(t.capex_cents)}, energy {usd(t.energy_cents)}, support {usd(t.support_cents)}, "
        f"space {usd(t.space_cents)}."
    )
    if d.rank > 1 and best.tco is not None and spec.objective is Objective.MIN_TCO:
        extra = t.tco_cents - best.tco.tco_cents
        text += f" {usd(extra)} more over its life than rank 1."
    return text


def with_tco_sentences(
    ranked: list[RankedDesign], spec: OptimizeSpec, comparison: str
) -> list[RankedDesign]:
    """Each design's explanation with its lifetime cost (when the request asks about it:
    min-tco or a TCO cap); rank 1's with the comparison too."""
    if not ranked or (
        spec.objective is not Objective.MIN_TCO and spec.constraints.max_tco_cents is None
    ):
        return ranked
    out = []
    for d in ranked:
        extra = [_tco_sentence(d, ranked[0], spec)]
        if d.rank == 1 and comparison:
            extra.append(comparison)
        out.append(replace(d, explanation=" ".join([d.explanation, *extra]).strip()))
    return out


def pareto_with_tco(
    pareto: tuple[ParetoEntry, ...], costed: list[Costed]
) -> tuple[ParetoEntry, ...]:
    """The pareto points with their greedy BOM's lifetime cost (the same BOM as their capex)."""
    tco = {id(c.candidate.design): c.standalone_tco_cents for c in costed}
    return tuple(replace(p, tco_cents=tco.get(id(p.design))) for p in pareto)
