"""Every claim an explanation makes is checked here by re-solving it (issue 13, defect 8).

- Binding: leaving out a constraint the text calls binding changes rank 1; leaving out any
  other stated constraint does not.
- Sensitivity: a fabric said to have no design has none when the request is restricted to it;
  the stated switch price cut, applied, changes rank 1 and one percent less does not; under
  min-time, the stated budget buys a faster rank 1 and a cent less does not.
- Diagnosis: every design named can be built from the catalog and supplied from its stock.

The scenarios are the issue's repros on the bundled catalogs; they check whatever the
optimizer answers, not today's answers.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import replace

import pytest

from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import resolve_catalog
from optimizer.optimize import explain
from optimizer.optimize.explain import MAX_CUT_PCT, with_switch_cut, without_stock
from optimizer.optimize.formulation import stock_limits
from optimizer.optimize.request import Constraints, Objective, OptimizeSpec
from optimizer.optimize.result import OptimizeResult
from optimizer.optimize.solve import optimize
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import TOPOLOGIES
from optimizer.topology.compat import switch_fits_fabric
from optimizer.workload.presets import preset

pytestmark = pytest.mark.slow  # each case re-solves the request several times (~5-20 s)


def _spec(workload: str, objective: Objective = Objective.MIN_COST, **kw: object) -> OptimizeSpec:
    tokens = kw.pop("tokens", None)
    vendors = kw.pop("vendors", ())
    top_k = kw.pop("top_k", 1)
    load = preset(workload) if tokens is None else preset(workload, training_tokens=tokens)
    return OptimizeSpec(
        workload=load,
        constraints=Constraints(**kw),  # type: ignore[arg-type]
        objective=objective,
        top_k=top_k,  # type: ignore[arg-type]
        allowed_vendors=vendors,  # type: ignore[arg-type]
    )


def _rank_one(result: OptimizeResult) -> Counter[str]:
    """What rank 1 buys, SKU by SKU (two designs buying the same are one design)."""
    assert result.designs, result.diagnosis
    bought: Counter[str] = Counter()
    for line in result.designs[0].bom.lines:
        bought[line.sku] += line.quantity
    return bought


def _solve(catalog: Catalog, spec: OptimizeSpec) -> OptimizeResult:
    return optimize(catalog, replace(spec, top_k=1), explain=False)


def _without(name: str, catalog: Catalog, spec: OptimizeSpec) -> tuple[Catalog, OptimizeSpec]:
    """The request with the constraint ``name`` (a binding name) left out."""
    c = spec.constraints
    if name == "stock":
        return without_stock(catalog), spec
    if name == "vendors":
        return catalog, replace(spec, allowed_vendors=(), excluded_vendors=())
    if name == "budget" and spec.objective is Objective.MIN_TIME:
        return catalog, replace(spec, constraints=replace(c, budget_cents=10**14))
    field = {
        "budget": "budget_cents",
        "time": "target_training_hours",
        "power": "max_power_kw",
        "racks": "max_racks",
        "lead_time": "max_lead_time_days",
        "min_gpus": "min_gpus",
        "max_gpus": "max_gpus",
        "min_nic_gbps_per_gpu": "min_nic_gbps_per_gpu",
    }[name]
    return catalog, replace(spec, constraints=replace(c, **{field: None}))


def _stated(catalog: Catalog, spec: OptimizeSpec) -> list[str]:
    c = spec.constraints
    names = [
        name
        for name, value in (
            ("budget", c.budget_cents),
            ("time", c.target_training_hours),
            ("power", c.max_power_kw),
            ("racks", c.max_racks),
            ("lead_time", c.max_lead_time_days),
            ("min_gpus", c.min_gpus),
            ("max_gpus", c.max_gpus),
            ("min_nic_gbps_per_gpu", c.min_nic_gbps_per_gpu),
        )
        if value is not None
    ]
    if stock_limits(catalog):
        names.append("stock")
    if spec.allowed_vendors or spec.excluded_vendors:
        names.append("vendors")
    return names


BINDING_CASES = {
    # The repro: the power cap decides (55 h capped, 27 h without it) while the design
    # uses well under 98 % of it; the text said "No constraint is at its limit".
    "power-cap-min-time": (
        "infiniband-ndr",
        _spec("mpt-7b", Objective.MIN_TIME, budget_cents=800_000_000, max_power_kw=150.0, top_k=2),
    ),
    "target-min-cost": ("ethernet-budget", _spec("mpt-7b", target_training_hours=100.0)),
    # Five racks once bound (the 4-rack answer was a switchless torus NICs cannot forward);
    # today's answer fits them with room: the case checks that racks is then not binding.
    "racks-and-budget-min-cost": (
        "roce-spectrum",
        _spec("mpt-7b", target_training_hours=80.0, max_racks=5, budget_cents=2_000_000_000),
    ),
    # 13 racks: the cheapest design meeting 640 h (DGX-B200 on a fat-tree) needs 14; under
    # the cap a denser topology of the same servers (a dragonfly) wins. (1T tokens since the
    # issue-14 model: at 2T every design is rail-optimized and one rack fewer admits none.)
    "racks-min-cost": (
        "infiniband-ndr",
        _spec("llama3-70b", tokens=1e12, target_training_hours=640.0, max_racks=13),
    ),
}


@pytest.mark.parametrize("case", sorted(BINDING_CASES))
def test_binding_is_exactly_the_constraints_whose_removal_changes_rank_one(case: str) -> None:
    name, spec = BINDING_CASES[case]
    catalog = resolve_catalog(name)
    result = optimize(catalog, spec)
    best = _rank_one(result)
    binding = set(result.designs[0].binding)
    for constraint in _stated(catalog, spec):
        again = _solve(*_without(constraint, catalog, spec))
        changed = not again.designs or _rank_one(again) != best
        assert changed == (constraint in binding), (constraint, binding)


def test_a_power_cap_that_decides_the_answer_is_named_binding() -> None:
    name, spec = BINDING_CASES["power-cap-min-time"]
    result = optimize(resolve_catalog(name), spec)
    assert "power" in result.designs[0].binding
    assert "No constraint is at its limit" not in result.designs[0].explanation
    assert "power" in result.designs[0].explanation


def test_a_rack_cap_that_decides_the_answer_is_named_binding() -> None:
    name, spec = BINDING_CASES["racks-min-cost"]
    catalog = resolve_catalog(name)
    result = optimize(catalog, spec)
    assert "racks" in result.designs[0].binding
    assert re.search(
        r"Binding \(leaving it out changes rank 1\): [\w, ]*racks", (result.designs[0].explanation)
    )
    uncapped = _solve(*_without("racks", catalog, spec))
    assert _rank_one(uncapped) != _rank_one(result)
    # Rank 1 without the cap is cheaper and needs more racks than the cap allows.
    assert uncapped.designs[0].bom.racks > 13
    assert uncapped.designs[0].bom.capex_cents < result.designs[0].bom.capex_cents


def _fabric_named(label: str) -> str:
    return next(f for f in FABRICS.names() if FABRICS.get(f).label == label)


def _cut(catalog: Catalog, fabric: str, pct: int) -> Catalog:
    """Every switch serving ``fabric`` ``pct`` % cheaper, at list and at every volume break."""
    skus = {w.sku for w in catalog.switches if switch_fits_fabric(w, fabric)}
    return replace(
        catalog,
        switches=tuple(
            replace(w, price_cents=w.price_cents * (100 - pct) // 100) if w.sku in skus else w
            for w in catalog.switches
        ),
        price_breaks=tuple(
            replace(b, unit_price_cents=b.unit_price_cents * (100 - pct) // 100)
            if b.sku in skus
            else b
            for b in catalog.price_breaks
        ),
    )


SENSITIVITY_CASES = {
    # The repro: "RoCE is the only choice" while --fabric ethernet finds a design.
    "ethernet-budget-llama3-8b": (
        "ethernet-budget",
        _spec("llama3-8b", tokens=1e12, target_training_hours=336.0),
    ),
    "ethernet-budget-mpt-7b": ("ethernet-budget", _spec("mpt-7b", target_training_hours=100.0)),
    "roce-spectrum-mpt-7b": ("roce-spectrum", _spec("mpt-7b", target_training_hours=100.0)),
}


@pytest.mark.parametrize("case", sorted(SENSITIVITY_CASES))
def test_every_sensitivity_claim_holds_when_re_solved(case: str) -> None:
    name, spec = SENSITIVITY_CASES[case]
    catalog = resolve_catalog(name)
    result = optimize(catalog, spec)
    best, text = _rank_one(result), result.sensitivity
    rank_one_fabric = result.designs[0].design.fabric
    others = [f for f in FABRICS.names() if f != rank_one_fabric]
    said_impossible = {_fabric_named(m) for m in re.findall(r"No ([\w ]+?) design meets", text)}
    if "is the only choice" in text:
        said_impossible |= set(others)
    for fabric in said_impossible:  # no design that buys the fabric (one node buys none)
        only = replace(spec, allowed_fabrics=(fabric,), require_fabric=True)
        assert not _solve(catalog, only).designs, fabric
    cuts = re.findall(r"Switches serving ([\w ]+?) (\d+)% cheaper", text)
    for label, pct in cuts:
        fabric = _fabric_named(label)
        assert _rank_one(_solve(_cut(catalog, fabric, int(pct)), spec)) != best, (label, pct)
        assert _rank_one(_solve(_cut(catalog, fabric, int(pct) - 1), spec)) == best, (label, pct)
    for pct, label in re.findall(
        r"no cut of up to (\d+)% in the price of switches serving ([\w ]+?) changes", text
    ):
        assert _rank_one(_solve(_cut(catalog, _fabric_named(label), int(pct)), spec)) == best
    # Every other fabric gets a statement: impossible, a tie, a cut, or no cut.
    assert len(said_impossible) + text.count("'s best design") == len(others), text


def test_sensitivity_looks_past_the_fabrics_the_pruned_search_visited() -> None:
    name, spec = SENSITIVITY_CASES["ethernet-budget-llama3-8b"]
    catalog = resolve_catalog(name)
    result = optimize(catalog, spec)
    for fabric in FABRICS.names():
        if _solve(catalog, replace(spec, allowed_fabrics=(fabric,))).designs:
            assert f"No {FABRICS.get(fabric).label} design" not in result.sensitivity
    assert "only choice" not in result.sensitivity or len(FABRICS.names()) == 1


TIME_SENSITIVITY_CASES = {
    # The power cap decides; no budget buys a faster design, no other fabric builds.
    "power-cap-min-time": BINDING_CASES["power-cap-min-time"],
    # The README's tour: a bigger budget buys a faster design; no Ethernet switch cut helps.
    "roce-spectrum-llama3-70b": (
        "roce-spectrum",
        _spec("llama3-70b", Objective.MIN_TIME, tokens=2e12, budget_cents=2_000_000_000, top_k=1),
    ),
    # Cheaper Ethernet switches (which RoCE uses too) buy the same time for less.
    "ethernet-budget-mpt-7b": (
        "ethernet-budget",
        _spec("mpt-7b", Objective.MIN_TIME, budget_cents=100_000_000, top_k=1),
    ),
    # A cut of the Ethernet switches the cheapest faster design buys affords it (54 %); a
    # smaller one (48 %) already changes rank 1.
    "ethernet-budget-llama3-8b": (
        "ethernet-budget",
        _spec("llama3-8b", Objective.MIN_TIME, budget_cents=301_000_000, top_k=1),
    ),
}


def _with_budget(spec: OptimizeSpec, budget_cents: int) -> OptimizeSpec:
    return replace(spec, constraints=replace(spec.constraints, budget_cents=budget_cents))


@pytest.mark.parametrize("case", sorted(TIME_SENSITIVITY_CASES))
def test_every_min_time_sensitivity_claim_holds_when_re_solved(case: str) -> None:
    name, spec = TIME_SENSITIVITY_CASES[case]
    catalog = resolve_catalog(name)
    # The claims are the subject, not the speed: the README's case takes 21 s of the default
    # 30 s on an idle machine, and ran out of it once on a loaded one ("not computed").
    result = optimize(catalog, replace(spec, time_limit_s=120.0))
    best, text = _rank_one(result), result.sensitivity
    hours = result.designs[0].time_hours
    # The budget: the stated one buys a faster design and a cent less does not, or none does.
    (budget,) = re.findall(r"A budget of \$([\d,]+\.\d\d)", text) or [None]
    if budget is None:
        assert "No budget buys a faster design" in text, text
        unlimited = _solve(catalog, _with_budget(spec, 10**14))
        assert unlimited.designs[0].time_hours >= hours - 1e-9
    else:
        cents = round(float(budget.replace(",", "")) * 100)
        again = _solve(catalog, _with_budget(spec, cents))
        assert _rank_one(again) != best and again.designs[0].time_hours < hours
        assert _rank_one(_solve(catalog, _with_budget(spec, cents - 1))) == best
    # Each other fabric: no design, no cut, or a cut that changes rank 1 and 1 % less does not.
    others = [f for f in FABRICS.names() if f != result.designs[0].design.fabric]
    for label in re.findall(r"No ([\w ]+?) design meets", text):
        only = replace(spec, allowed_fabrics=(_fabric_named(label),), require_fabric=True)
        assert not _solve(catalog, only).designs
    for label, pct in re.findall(r"Switches serving ([\w ]+?) (\d+)% cheaper", text):
        fabric = _fabric_named(label)
        assert _rank_one(_solve(_cut(catalog, fabric, int(pct)), spec)) != best, (label, pct)
        assert _rank_one(_solve(_cut(catalog, fabric, int(pct) - 1), spec)) == best, (label, pct)
    for pct, label in re.findall(
        r"no cut of up to (\d+)% in the price of switches serving ([\w ]+?) changes", text
    ):
        assert _rank_one(_solve(_cut(catalog, _fabric_named(label), int(pct)), spec)) == best
    stated = len(re.findall(r"No ([\w ]+?) design meets", text)) + text.count("'s fastest design")
    assert stated == len(others), text


def test_a_fabric_no_switch_serves_is_not_given_a_lone_node_as_its_design() -> None:
    """infiniband-ndr has no Ethernet switch. A min-time answer said "RoCE's fastest design
    within the budget (1 x DGX-B200 (8 GPUs), single node without a scale-out fabric)" and
    searched cuts in the price of switches the catalog does not have; a rival now buys its
    fabric, so the line says no RoCE design meets the constraints (checked by re-solving)."""
    catalog = resolve_catalog("infiniband-ndr")
    spec = _spec("llama3-8b", Objective.MIN_TIME, tokens=2e11, budget_cents=300_000_000)
    text = optimize(catalog, spec).sensitivity
    assert "single node" not in text, text
    for fabric in ("roce", "ethernet"):
        assert not any(switch_fits_fabric(w, fabric) for w in catalog.switches)
        assert f"No {FABRICS.get(fabric).label} design meets" in text, text
        only = replace(spec, allowed_fabrics=(fabric,), require_fabric=True)
        assert not _solve(catalog, only).designs


def test_min_time_sensitivity_names_the_budget_that_buys_a_faster_design() -> None:
    name, spec = TIME_SENSITIVITY_CASES["roce-spectrum-llama3-70b"]
    result = optimize(resolve_catalog(name), spec)
    assert "buys a faster design" in result.sensitivity
    assert "(the request's: $20,000,000)" in result.sensitivity


DIAGNOSIS_CASES = {
    # Named an "InfiniBand torus" on a catalog without InfiniBand parts.
    "target-out-of-reach": ("ethernet-budget", _spec("llama3-70b", target_training_hours=10.0)),
    # Named "2,560 x DGX-B200" where 96 are in stock.
    "stock-short": (
        "infiniband-ndr",
        _spec("llama3-70b", target_training_hours=300.0, vendors=("NVIDIA",)),
    ),
    "power-cap": (
        "infiniband-ndr",
        _spec("llama3-70b", target_training_hours=400.0, max_power_kw=2000.0),
    ),
}

# "(80 x DGX-B200 (640 GPUs), InfiniBand torus, 8 x MCX75310AAS-NEAT per node)"
DESIGN = re.compile(
    r"\(([\d,]+) x (\S+) \(([\d,]+) GPUs\), ([\w ]+?) ([\w: -]+?), ([\d,]+) x (\S+) per node\)"
)


def _topology_named(text: str) -> str:
    """The topology family whose label starts the displayed topology ("fat-tree 3:1")."""
    return max(
        (t for t in TOPOLOGIES.names() if text.startswith(TOPOLOGIES.get(t).label)),
        key=lambda t: len(TOPOLOGIES.get(t).label),
    )


@pytest.mark.parametrize("case", sorted(DIAGNOSIS_CASES))
def test_every_design_a_diagnosis_names_can_be_built_and_supplied(case: str) -> None:
    name, spec = DIAGNOSIS_CASES[case]
    catalog = resolve_catalog(name)
    result = optimize(catalog, spec)
    assert not result.designs and result.diagnosis
    stock = stock_limits(catalog)
    skus = {
        r.sku
        for rows in (catalog.servers, catalog.nics, catalog.switches, catalog.links)
        for r in rows
    }
    for qty, sku in re.findall(r"([\d,]+) x ([\w.-]+)", result.diagnosis):
        assert sku in skus, sku
        assert int(qty.replace(",", "")) <= stock.get(sku, 10**9), (qty, sku, stock.get(sku))
    for nodes, server, gpus, fabric, topology, npn, nic in DESIGN.findall(result.diagnosis):
        assert int(nodes.replace(",", "")) <= stock.get(server, 10**9)
        assert int(nodes.replace(",", "")) * int(npn) <= stock.get(nic, 10**9)
        # A design of this fabric, topology and size builds (optimize verifies every BOM it
        # returns with build_bom and check_bom) within stock.
        size = int(gpus.replace(",", ""))
        built = _solve(
            catalog,
            replace(
                spec,
                constraints=Constraints(min_gpus=size, max_gpus=size),
                allowed_fabrics=(_fabric_named(fabric),),
                allowed_topologies=(_topology_named(topology),),
            ),
        )
        assert built.designs, (fabric, topology, size)
    # Any fabric and topology named together ("InfiniBand torus") can be built at some size
    # (64 GPUs or more: a multi-node size every family offers).
    for f in FABRICS.names():
        for t in TOPOLOGIES.names():
            if f"{FABRICS.get(f).label} {TOPOLOGIES.get(t).label}" in result.diagnosis:
                some = replace(
                    spec,
                    constraints=Constraints(min_gpus=64),
                    allowed_fabrics=(f,),
                    allowed_topologies=(t,),
                )
                assert _solve(catalog, some).designs, (f, t)


def test_explanations_out_of_time_say_not_computed() -> None:
    """When the clock is out after ranking, the re-solved claims are not guessed."""
    name, spec = SENSITIVITY_CASES["ethernet-budget-mpt-7b"]
    stop = threading.Event()

    def progress(event: dict[str, object]) -> None:
        if event.get("designs_found") == spec.top_k:
            stop.set()

    result = optimize(resolve_catalog(name), spec, stop=stop, progress=progress)
    assert result.designs
    assert "not computed: time limit" in result.designs[0].explanation
    assert result.designs[0].binding == ()
    assert result.sensitivity == "not computed: time limit"


def test_a_min_time_switch_cut_is_sought_below_the_cut_that_affords_a_faster_design(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each cut tried is a whole re-solve. Past the cut at which the cheapest design faster
    than rank 1 (the budget line's) fits the budget, rank 1 changes, so the search starts
    there: bisecting down from 99 % took the medium request (Llama 3 70B for $300M on
    roce-spectrum) nine re-solves to state 5 %, two now."""
    tried: list[int] = []

    def recorded(catalog: Catalog, fabric: str, cut_pct: int) -> Catalog:
        tried.append(cut_pct)
        return with_switch_cut(catalog, fabric, cut_pct)

    monkeypatch.setattr(explain, "with_switch_cut", recorded)
    name, spec = TIME_SENSITIVITY_CASES["ethernet-budget-llama3-8b"]
    result = optimize(resolve_catalog(name), spec)
    assert re.search(r"Switches serving TCP Ethernet \d+% cheaper", result.sensitivity), (
        result.sensitivity
    )
    assert tried and max(tried) < MAX_CUT_PCT, tried


def test_free_switches_are_not_a_price_cut() -> None:
    """A rival whose switches would have to be free to change rank 1 gets "no cut" (checked at
    the deepest cut said), never "100% cheaper": ethernet-budget, mpt-7b, fastest for $2M."""
    catalog = resolve_catalog("ethernet-budget")
    spec = _spec("mpt-7b", Objective.MIN_TIME, budget_cents=200_000_000, top_k=1)
    result = optimize(catalog, spec)
    assert "100% cheaper" not in result.sensitivity
    said = re.findall(
        r"no cut of up to (\d+)% in the price of switches serving ([\w ]+?) changes",
        result.sensitivity,
    )
    assert said, result.sensitivity
    best = _rank_one(result)
    for pct, label in said:
        assert _rank_one(_solve(_cut(catalog, _fabric_named(label), int(pct)), spec)) == best


def test_a_one_node_rank_one_is_compared_with_designs_that_buy_a_fabric() -> None:
    """Rank 1 is one server without a fabric (bert-large, 4e10 tokens, 24 h): the sensitivity
    compares it with each fabric's best design that buys one (re-solved with require_fabric),
    never with the same server under another fabric's label."""
    catalog = resolve_catalog("infiniband-ndr")
    spec = _spec("bert-large", tokens=4e10, target_training_hours=24, top_k=1)
    result = optimize(catalog, spec)
    assert result.designs[0].design.topology == "single_node"
    text = result.sensitivity
    assert "single node without a scale-out fabric" not in text, text
    for fabric in FABRICS.names():
        label = FABRICS.get(fabric).label
        rival = _solve(catalog, replace(spec, allowed_fabrics=(fabric,), require_fabric=True))
        if rival.designs:
            assert f"{label}'s best design" in text, (label, text)
        else:
            assert f"No {label} design meets" in text, (label, text)
