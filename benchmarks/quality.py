"""Decision quality against the designs we must beat (shared/domain.md section 2): the seed
article's rule of thumb and the vendor reference design (a non-blocking rail-optimized
InfiniBand fat-tree, DGX SuperPOD style), both from optimizer.optimize.baseline.

The rule (issue 13): InfiniBand above 256 GPUs, RoCE from 32 to 256, Ethernet below 32, on a
non-blocking rail-optimized fat-tree (one switch while every port fits one) with one 400G-class
NIC per GPU, the cheapest server that meets the target, the next part where stock runs out.

For every scenario (the bundled catalogs x 8 to 16,384 GPUs' worth of work) and baseline:
* cost saved at equal time: the optimizer's min-cost design for the baseline's achieved time,
  split into what it saves on servers and on the network, and which choices differ (fabric,
  topology, oversubscription, NICs per node, server, nodes, NIC, switch): the "why";
* time saved at equal budget: its min-time design within the baseline's capex.
A saving below zero (or no design where the baseline has one) is flagged WORSE: the baseline's
design lies in the optimizer's search space and is priced and timed by the same code, so it
is always a bug. A baseline BOM that check_bom rejects, or that buys more of a SKU than the
catalog has in stock, is shown as such and left out of the medians.
With --switched-only the optimizer may use switched topologies only (every family but the
switchless ones), the saving that survives where switchless tori cannot be built.
Run: python -m benchmarks.quality [--level full] [--switched-only]
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path

from benchmarks.measure import isolated
from benchmarks.report import Table, parser, publish
from benchmarks.scenarios import (
    Choices,
    Outcome,
    Scenario,
    bundled,
    choices,
    describe,
    differences,
    run_optimize,
    scenario,
)
from optimizer.catalog.model import Catalog
from optimizer.optimize.baseline import BaselineDesign, reference_design, rule_of_thumb
from optimizer.optimize.formulation import ordered_quantities, stock_limits
from optimizer.optimize.request import Objective
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.check import check_bom

CATALOGS = ("infiniband-ndr", "roce-spectrum", "ethernet-budget")
WORK_GPUS = {
    "smallest": (8,),
    "quick": (64, 4096),
    "full": (
        8,
        16,
        24,
        32,
        48,
        64,
        96,
        128,
        192,
        256,
        384,
        512,
        768,
        1024,
        2048,
        4096,
        8192,
        16384,
    ),
}
BASELINES = {"rule of thumb": rule_of_thumb, "reference": reference_design}
SOLVER_LIMIT_S = 60.0
SCENARIO_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class Comparison:
    baseline: str
    base_gpus: int
    base_design: str
    base_choices: Choices
    base_capex_cents: int
    base_network_cents: int
    base_hours: float
    note: str  # the baseline's own note: fallbacks it took
    at_equal_time: Outcome  # min cost, target = the baseline's hours
    at_equal_budget: Outcome  # min time, budget = the baseline's capex
    over_stock: str  # "SKU needs N, stock M" for each SKU the baseline cannot get; "" if none
    unsound: str  # check_bom's findings on the baseline's BOM; "" if none

    @property
    def cost_saved(self) -> float | None:
        got = self.at_equal_time.capex_cents
        return None if got is None else 1 - got / self.base_capex_cents

    @property
    def time_saved(self) -> float | None:
        got = self.at_equal_budget.time_hours
        return None if got is None else 1 - got / self.base_hours

    @property
    def network_saved_cents(self) -> int | None:
        got = self.at_equal_time.network_cents
        return None if got is None else self.base_network_cents - got

    @property
    def servers_saved_cents(self) -> int | None:
        got, net = self.at_equal_time.capex_cents, self.at_equal_time.network_cents
        if got is None or net is None:
            return None
        return (self.base_capex_cents - self.base_network_cents) - (got - net)

    @property
    def differences(self) -> list[str]:
        got = self.at_equal_time.choices
        return [] if got is None else differences(self.base_choices, got)

    @property
    def counted(self) -> bool:
        """A buyable, sound baseline: its savings enter the medians."""
        return not self.over_stock and not self.unsound

    @property
    def worse(self) -> bool:
        return self.counted and any(
            s is None or s < -1e-9 for s in (self.cost_saved, self.time_saved)
        )


def over_stock(base: BaselineDesign, catalog: Catalog, stock: dict[str, int]) -> str:
    """The SKUs ``base`` orders beyond the catalog's stock, as "SKU needs N, stock M" (a
    server's built-in NICs come with it: ``formulation.ordered_quantities``)."""
    server = next(s for s in catalog.servers if s.sku == base.design.server_sku)
    need = ordered_quantities(base.bom, server)
    return "; ".join(
        f"{sku} needs {n:,}, stock {stock[sku]:,}"
        for sku, n in sorted(need.items())
        if sku in stock and n > stock[sku]
    )


@dataclass(frozen=True)
class ScenarioResult:
    comparisons: list[Comparison]
    no_design: list[str]  # baselines that find no design meeting the scenario's target
    at_target: Outcome | None  # the optimizer at that target, when a baseline found none


def switched_topologies() -> tuple[str, ...]:
    """Every registered family that has switches."""
    return tuple(f.name for f in TOPOLOGIES if not f.switchless)


def compare(sc: Scenario, topologies: tuple[str, ...] = ()) -> ScenarioResult:
    """Both baselines for ``sc`` and the optimizer's answers at their time and their capex
    (with ``topologies`` only, when given)."""
    catalog = bundled()[sc.catalog]
    stock = stock_limits(catalog)
    out, no_design = [], []
    for label, make in BASELINES.items():
        base: BaselineDesign | None = make(catalog, sc.spec(target_hours=sc.target_hours))
        if base is None:
            no_design.append(label)
            continue
        cheap = run_optimize(
            catalog,
            sc.spec(
                target_hours=base.time_hours, time_limit_s=SOLVER_LIMIT_S, topologies=topologies
            ),
        )
        fast = run_optimize(
            catalog,
            sc.spec(
                objective=Objective.MIN_TIME,
                budget_cents=base.bom.capex_cents,
                time_limit_s=SOLVER_LIMIT_S,
                topologies=topologies,
            ),
        )
        findings = check_bom(base.design, base.bom, catalog)
        out.append(
            Comparison(
                label,
                base.gpus,
                describe(base.design),
                choices(base.design),
                base.bom.capex_cents,
                base.bom.network_cents,
                base.time_hours,
                base.note,
                cheap,
                fast,
                over_stock(base, catalog, stock),
                "; ".join(sorted({v.code for v in findings})),
            )
        )
    at_target = None
    if no_design:
        at_target = run_optimize(
            catalog,
            sc.spec(
                target_hours=sc.target_hours, time_limit_s=SOLVER_LIMIT_S, topologies=topologies
            ),
        )
    return ScenarioResult(out, no_design, at_target)


# The choices the "why" table counts (the labels of benchmarks.scenarios.differences).
CHOICES = (
    "fabric",
    "topology",
    "oversubscription",
    "NICs per node",
    "server",
    "nodes",
    "NIC",
    "switch",
)


def run(level: str, out: Path, switched_only: bool = False) -> list[Table]:
    topologies = switched_topologies() if switched_only else ()
    table = Table(
        "Optimizer vs the rule of thumb and the reference design"
        + (" (optimizer on switched topologies only)" if switched_only else ""),
        (
            "scenario",
            "baseline",
            "baseline design",
            "baseline USD",
            "baseline h",
            "optimizer USD at equal time",
            "optimizer h at equal time",
            "cost saved",
            "saved on servers USD",
            "saved on network USD",
            "optimizer h at equal budget",
            "time saved",
            "optimizer design at equal time",
            "what the optimizer chose differently",
            "verdict",
        ),
    )
    savings: dict[str, dict[str, list[float]]] = {b: {"cost": [], "time": []} for b in BASELINES}
    why: dict[str, dict[str, list[float]]] = {b: {c: [] for c in CHOICES} for b in BASELINES}
    by_topology: dict[tuple[str, str], list[float]] = {}
    catalogs = CATALOGS[:1] if level == "smallest" else CATALOGS
    scenarios = [scenario(c, g) for c in catalogs for g in WORK_GPUS[level]]
    worse: list[str] = []
    only_optimizer: dict[str, list[str]] = {b: [] for b in BASELINES}
    neither: dict[str, list[str]] = {b: [] for b in BASELINES}
    fallbacks = Table(
        "Fallbacks the baselines took",
        ("scenario", "baseline", "baseline design", "note"),
    )
    for sc in scenarios:
        try:
            found: ScenarioResult = isolated(
                compare, sc, topologies, timeout_s=SCENARIO_TIMEOUT_S
            ).value
        except TimeoutError:
            table.add(sc.name, "-", f"stopped at {SCENARIO_TIMEOUT_S:g} s", *([None] * 12))
            continue
        for label in found.no_design:
            o = found.at_target
            met = o is not None and o.capex_cents is not None
            (only_optimizer if met else neither)[label].append(sc.name)
            table.add(
                sc.name,
                label,
                "none (not buildable here, or too slow)",
                None,
                sc.target_hours,
                o.capex_usd if o else None,
                o.time_hours if o else None,
                None,
                None,
                None,
                None,
                None,
                o.design if o else "",
                "",
                "only the optimizer meets the target" if met else "neither meets the target",
            )
        for c in found.comparisons:
            verdict = "WORSE" if c.worse else "never worse"
            if c.worse:
                worse.append(f"{sc.name} vs {c.baseline}")
            if c.unsound:
                verdict = f"baseline fails check_bom: {c.unsound}"
            elif c.over_stock:
                verdict = f"baseline not buyable: {c.over_stock}"
            else:
                for kind, value in (("cost", c.cost_saved), ("time", c.time_saved)):
                    if value is not None:
                        savings[c.baseline][kind].append(value)
                differs = {d.split(":")[0] for d in c.differences}
                got = c.at_equal_time.choices
                if c.cost_saved is not None and got is not None:
                    for choice in differs & set(CHOICES):
                        why[c.baseline][choice].append(c.cost_saved)
                    switchless = "" if got.switch_skus else " (switchless)"
                    by_topology.setdefault((c.baseline, got.topology + switchless), []).append(
                        c.cost_saved
                    )
            if c.note:
                fallbacks.add(sc.name, c.baseline, c.base_design, c.note)
            table.add(
                sc.name,
                c.baseline,
                c.base_design,
                c.base_capex_cents / 100,
                c.base_hours,
                c.at_equal_time.capex_usd,
                c.at_equal_time.time_hours,
                _pct(c.cost_saved),
                _usd(c.servers_saved_cents),
                _usd(c.network_saved_cents),
                c.at_equal_budget.time_hours,
                _pct(c.time_saved),
                c.at_equal_time.design,
                "; ".join(c.differences) or "same design",
                verdict,
            )
    summary = Table(
        "Median savings",
        (
            "baseline",
            "comparisons",
            "median cost saved",
            "median time saved",
            "worst cost saved",
            "worst time saved",
            "only the optimizer meets the target",
            "neither meets the target",
        ),
    )
    for label, s in savings.items():
        summary.add(
            label,
            len(s["cost"]),
            _pct(statistics.median(s["cost"])) if s["cost"] else None,
            _pct(statistics.median(s["time"])) if s["time"] else None,
            _pct(min(s["cost"])) if s["cost"] else None,
            _pct(min(s["time"])) if s["time"] else None,
            len(only_optimizer[label]),
            len(neither[label]),
        )
    summary.notes.append(
        f"{len(scenarios)} scenarios; optimizer worse in {len(worse)} "
        f"comparison(s){': ' + '; '.join(worse) if worse else ''}."
    )
    for label, names in only_optimizer.items():
        if names:
            summary.notes.append(
                f"The {label} has no design meeting the target (its parts are "
                f"not in the catalog, or it is too slow at every size it "
                f"allows) where the optimizer has one, in {len(names)} "
                f"scenario(s): {', '.join(names)}."
            )
    reasons = Table(
        "Why the optimizer saves: choices it makes differently at equal time",
        ("baseline", "choice", "comparisons where it differs", "median cost saved there"),
    )
    for label, by_choice in why.items():
        for choice, saved in by_choice.items():
            reasons.add(
                label,
                choice,
                len(saved),
                _pct(statistics.median(saved)) if saved else None,
            )
    by_family = Table(
        "Savings by the optimizer's topology at equal time",
        ("baseline", "optimizer topology", "comparisons", "median cost saved", "worst cost saved"),
    )
    for (label, topology), saved in sorted(by_topology.items()):
        by_family.add(
            label,
            topology,
            len(saved),
            _pct(statistics.median(saved)),
            _pct(min(saved)),
        )
    fallbacks.notes.append(
        "The next part where stock runs out, the next fabric in the rule's order where the "
        "catalog cannot build the rule's (optimizer.optimize.baseline)."
    )
    tables = [table, summary, reasons, by_family, fallbacks]
    publish(
        "quality-switched" if switched_only else "quality",
        tables,
        out,
        {
            "level": level,
            "scenarios": len(scenarios),
            "solver_limit_s": SOLVER_LIMIT_S,
            "optimizer_topologies": list(topologies) or "all",
        },
    )
    return tables


def _usd(cents: int | None) -> float | None:
    return None if cents is None else cents / 100


def _pct(value: float | None) -> str | None:
    return None if value is None else f"{value:+.1%}"


def main() -> None:
    p = parser(__doc__)
    p.add_argument(
        "--switched-only",
        action="store_true",
        help="the optimizer may use switched topologies only (no switchless torus)",
    )
    args = p.parse_args()
    run(args.level, args.out, args.switched_only)


if __name__ == "__main__":
    main()
