"""Choose which candidates the MIP sees: best-bound-first over time keys (see candidates.py)."""

from __future__ import annotations

import functools
import heapq
import math
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

from optimizer.catalog.model import Catalog, Nic, Server, Switch
from optimizer.cost.tco import TcoPrices, breakdown_of
from optimizer.errors import InvalidInput
from optimizer.optimize.candidates import (
    Candidate,
    Costed,
    EstimateCache,
    SearchSpace,
    TimeKey,
    build_candidates,
    candidate_plans,
    make_design,
    smallest_meeting,
)
from optimizer.optimize.formulation import over_stock
from optimizer.optimize.problem import spec_tco_prices
from optimizer.optimize.request import OptimizeSpec
from optimizer.performance.errors import SearchStopped
from optimizer.performance.estimator import SECONDS_PER_HOUR
from optimizer.registry.objectives import Measure, ObjectiveKind
from optimizer.registry.topologies import TOPOLOGIES, TORUS
from optimizer.topology.bom import BillOfMaterials, build_bom
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.plan import PhysicalPlan, planned

Parts = list[tuple[Nic, Switch | None]]

# Largest cluster the optimizer sizes (the benchmarks issue's upper scale).
MAX_GPUS = 131_072


# Each SKU's deepest break per catalog object (catalogs are immutable), dropped with the
# catalog: the key bounds read it once per key, thousands of keys on a large catalog, and
# Catalog.breaks_for scans every break.
_DEEPEST: dict[int, tuple[weakref.ref[Catalog], dict[str, int]]] = {}


def _deepest_breaks(catalog: Catalog) -> dict[str, int]:
    entry = _DEEPEST.get(id(catalog))
    if entry is None or entry[0]() is not catalog:
        key_id = id(catalog)
        deepest: dict[str, int] = {}
        for pb in catalog.price_breaks:
            deepest[pb.sku] = min(deepest.get(pb.sku, pb.unit_price_cents), pb.unit_price_cents)
        entry = (weakref.ref(catalog, lambda _: _DEEPEST.pop(key_id, None)), deepest)
        _DEEPEST[key_id] = entry
    return entry[1]


def deepest_unit_cents(catalog: Catalog, sku: str, list_cents: int) -> int:
    """The lowest unit price any quantity of ``sku`` can reach."""
    return min(list_cents, _deepest_breaks(catalog).get(sku, list_cents))


def node_cost_bound(
    catalog: Catalog,
    server: Server,
    key: TimeKey,
    parts: list[tuple[Nic, Switch | None]],
    memo: dict[int, int] | None = None,
) -> int:
    """A lower bound on the cost per node of any design of ``key``: server + its NICs.

    ``memo`` caches the cheapest NIC per parts list (keys share their parts lists) for one
    search."""
    nic = None if memo is None else memo.get(id(parts))
    if nic is None:
        nic = min(deepest_unit_cents(catalog, n.sku, n.price_cents) for n, _ in parts)
        if memo is not None:
            memo[id(parts)] = nic
    return deepest_unit_cents(catalog, server.sku, server.price_cents) + key.nics_per_node * nic


def node_tco_bound(
    catalog: Catalog, server: Server, key: TimeKey, parts: Parts, prices: TcoPrices
) -> int:
    """Issue 17 (tco): a lower bound on the lifetime cost per node of any design of ``key``:
    server and NICs at their deepest prices with their support, and the server's energy
    (switches, links, NIC power and racks only add)."""
    nic = min(
        prices.unit_cents(n.sku, deepest_unit_cents(catalog, n.sku, n.price_cents))
        for n, _ in parts
    )
    own = prices.unit_cents(server.sku, deepest_unit_cents(catalog, server.sku, server.price_cents))
    energy = server.power_kw * 1000 * prices.energy_cents_per_w
    return math.floor(own + key.nics_per_node * nic + energy)


def standalone_bom(
    design: Design, catalog: Catalog, stock: dict[str, int]
) -> BillOfMaterials | None:
    """Greedy BOM of one design alone; None when it cannot be built or exceeds the stock."""
    try:
        bom = build_bom(design, catalog)
    except InvalidInput:
        return None
    server = next((s for s in catalog.servers if s.sku == design.server_sku), None)
    return None if over_stock(bom, stock, server) else bom


def standalone_cost(design: Design, catalog: Catalog, stock: dict[str, int]) -> int | None:
    """Greedy BOM cost of one design alone; None when it needs more than the stock."""
    bom = standalone_bom(design, catalog, stock)
    return None if bom is None else bom.capex_cents


def within_caps(spec: OptimizeSpec, power_kw: float, racks: int) -> bool:
    """Power and racks (BOM or plan figures) are within the request's caps."""
    c = spec.constraints
    return (c.max_power_kw is None or power_kw <= c.max_power_kw) and (
        c.max_racks is None or racks <= c.max_racks
    )


class KBest:
    """The K-th best value over distinct groups: the pruning threshold (None until K groups).

    Values are the objective's ranking value (``ObjectiveKind.ranking_value``: capex then time
    for min_cost, time then capex for min_time); a bound may be a prefix of one (a bound on the
    primary measure alone), which tuple order compares correctly. A group whose best orders
    the same parts as a better group's best is the same design (the ranking skips it), so it
    does not count towards K."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.best: dict[tuple[object, ...], tuple[int, ...]] = {}
        self.orders: dict[tuple[object, ...], tuple[tuple[str, int], ...]] = {}
        self.capex: dict[tuple[object, ...], int] = {}  # issue 17 (tco): for progress

    def offer(
        self,
        group: tuple[object, ...],
        value: tuple[int, ...],
        order: tuple[tuple[str, int], ...] = (),
        capex_cents: int | None = None,
    ) -> None:
        if group not in self.best or value < self.best[group]:
            self.best[group] = value
            self.orders[group] = order
            if capex_cents is not None:
                self.capex[group] = capex_cents

    @property
    def threshold(self) -> tuple[int, ...] | None:
        if len(self.best) < self.k:
            return None
        counted, seen = 0, set()
        for group, value in sorted(self.best.items(), key=lambda gv: gv[1]):
            order = self.orders.get(group, ())
            if order and order in seen:
                continue
            seen.add(order)
            counted += 1
            if counted == self.k:
                return value
        return None

    def beats(self, bound: tuple[int, ...]) -> bool:
        """K groups are already better than anything whose bound is ``bound``."""
        threshold = self.threshold
        return threshold is not None and bound > threshold


@dataclass
class SearchOutcome:
    candidates: list[Costed]
    keys_total: int
    keys_evaluated: int
    # Best bound among keys left unexplored when the clock ran out (None: search complete).
    open_bound: float | None = None
    # min-cost: the K-th best distinct group's (capex, seconds) by greedy BOMs (None: fewer
    # than K found, or another objective). No candidate whose capex floor exceeds it ranks.
    threshold: tuple[int, ...] | None = None

    def rankable(self, catalog: Catalog) -> list[Costed]:
        """The candidates that may enter the top K: those whose capex floor (servers, NICs
        and switches at their quantities' prices; links only add) does not exceed the K-th best
        greedy cost. At least K distinct groups cost no more than that threshold (the MIP's
        exact cost never exceeds the greedy one), so a candidate above it can never rank;
        keeping it only grows the MIP. The same test as the search's key pruning."""
        if self.threshold is None:
            return self.candidates
        threshold = self.threshold
        return [
            c for c in self.candidates if not (capex_floor(catalog, c.candidate.plan),) > threshold
        ]


def capex_floor(catalog: Catalog, plan: PhysicalPlan) -> int:
    """A lower bound on the capex of any purchase of ``plan``: its servers, bought NICs and
    switches, whose quantities the plan fixes, each SKU at the unit price of its total
    quantity (as the BOM and the MIP's price tiers charge it); cables and optics only add."""
    parts: tuple[Server | Nic | Switch, ...] = (*catalog.servers, *catalog.nics, *catalog.switches)
    prices = {p.sku: p.price_cents for p in parts}
    totals: dict[str, int] = {}
    demands = [(plan.servers.sku, plan.servers.quantity), (plan.nics.sku, plan.nics.quantity)]
    demands += [(d.sku, d.quantity) for d in plan.switches]
    for sku, qty in demands:
        if qty and sku in prices:
            totals[sku] = totals.get(sku, 0) + qty
    return sum(q * catalog.unit_price_cents(s, q, prices[s]) for s, q in totals.items())


@dataclass
class Clock:
    """The request's deadline and cancellation, and a throttled progress reporter."""

    deadline: float
    stop: threading.Event | None = None
    progress: Callable[[dict[str, object]], None] | None = None
    start: float = field(default_factory=time.perf_counter)
    _last_report: float = 0.0

    def expired(self) -> bool:
        return time.perf_counter() >= self.deadline or (
            self.stop is not None and self.stop.is_set()
        )

    def remaining(self, floor: float = 0.05) -> float:
        return max(floor, self.deadline - time.perf_counter())

    def report(self, event: dict[str, object], *, force: bool = False) -> None:
        """Send ``event`` (with elapsed_s) at most four times a second unless forced."""
        now = time.perf_counter()
        if self.progress is None or (not force and now - self._last_report < 0.25):
            return
        self._last_report = now
        self.progress({**event, "elapsed_s": round(now - self.start, 3)})


def search(
    space: SearchSpace,
    timer: EstimateCache,
    layout: Layout,
    stock: dict[str, int],
    exact_cost: Callable[[PhysicalPlan], int | None],
    clock: Clock,
) -> SearchOutcome:
    keyed = list(space.keys())
    threshold: tuple[int, ...] | None = None
    with timer.stopping(clock.expired):  # a plan search stops with the clock too
        if space.spec.objective.kind.primary in (Measure.COST, Measure.TCO):
            kbest = KBest(space.spec.top_k)
            found = _search_cost_first(space, keyed, timer, layout, stock, clock, kbest)
            if space.spec.objective.kind.primary is Measure.COST:
                threshold = kbest.threshold
        else:
            found = _search_time_first(space, keyed, timer, layout, stock, exact_cost, clock)
    return SearchOutcome(found[0], len(keyed), found[1], found[2], threshold)


def _report(clock: Clock, timer: EstimateCache, kbest: KBest, kind: ObjectiveKind) -> None:
    group = min(kbest.best, key=kbest.best.__getitem__, default=None)
    best = None if group is None else kbest.best[group]
    measured = dict(zip(kind.stages, best or (), strict=False))
    cents, seconds = measured.get(Measure.COST, 0), measured.get(Measure.TIME, 0)
    if Measure.COST not in measured and group is not None:  # issue 17 (tco): ranked by TCO
        cents = kbest.capex.get(group, 0)
    event: dict[str, object] = {
        "phase": "search",
        "candidates_evaluated": timer.evaluations,
        "best_capex_usd": cents / 100,
    }
    if Measure.TCO in kind.stages:
        event["best_tco_usd"] = measured.get(Measure.TCO, 0) / 100
    clock.report(
        {
            **event,
            "best_training_time_hours": seconds / SECONDS_PER_HOUR,
            "bound_usd": 0.0,
            "designs_found": 0,
        }
    )


def _node_caps(spec: OptimizeSpec, server: Server, key: TimeKey | None) -> tuple[int, int]:
    """Node-count range the request and (when given) the key's topology allow."""
    c = spec.constraints
    lo = max(1, math.ceil((c.min_gpus or 1) / server.gpus_per_node))
    hi = (c.max_gpus or MAX_GPUS) // server.gpus_per_node
    topo = None if key is None else key.max_nodes()
    return lo, hi if topo is None else min(hi, topo)


def _offer_all(
    cands: list[Candidate],
    catalog: Catalog,
    stock: dict[str, int],
    spec: OptimizeSpec,
    out: list[Costed],
    kbest: KBest,
    prices: TcoPrices,
) -> None:
    c = spec.constraints
    for cand in cands:
        if not within_caps(spec, cand.plan.power_kw, cand.plan.racks):
            continue
        bom = standalone_bom(cand.design, catalog, stock)
        cost = None if bom is None else bom.capex_cents
        tco = None if bom is None else breakdown_of(bom, prices).tco_cents
        out.append(Costed(cand, cost, tco))
        # Only a design the greedy BOM shows within every cap (link power included) may
        # tighten the pruning threshold: the MIP's power cap counts the links too.
        if bom is None or tco is None or not within_caps(spec, bom.power_kw, bom.racks):
            continue
        if c.budget_cents is not None and bom.capex_cents > c.budget_cents:
            continue
        if c.max_tco_cents is not None and tco > c.max_tco_cents:
            continue
        seconds = math.ceil(cand.time_hours * SECONDS_PER_HOUR)
        value = spec.objective.kind.ranking_value(bom.capex_cents, seconds, tco)
        kbest.offer(cand.key.group, value, _order_of(bom), bom.capex_cents)


def _order_of(bom: BillOfMaterials) -> tuple[tuple[str, int], ...]:
    """Each SKU the BOM orders with its total quantity (the canonical form of a design)."""
    totals: dict[str, int] = {}
    for line in bom.lines:
        totals[line.sku] = totals.get(line.sku, 0) + line.quantity
    return tuple(sorted(totals.items()))


def _search_cost_first(
    space: SearchSpace,
    keyed: list[tuple[TimeKey, Parts]],
    timer: EstimateCache,
    layout: Layout,
    stock: dict[str, int],
    clock: Clock,
    kbest: KBest,
) -> tuple[list[Costed], int, float | None]:
    spec, catalog = space.spec, space.catalog
    servers = {s.sku: s for s in space.servers}
    target = spec.constraints.target_training_hours or math.inf
    budget = spec.constraints.budget_cents
    nic_memo: dict[int, int] = {}
    prices = spec_tco_prices(catalog, spec)
    by_tco = spec.objective.kind.primary is Measure.TCO  # issue 17 (tco): bound the TCO
    node_bounds = [
        _per_node(catalog, servers[key.server_sku], key, parts, prices, by_tco, nic_memo)
        for key, parts in keyed
    ]
    floors: dict[tuple[str, str], int | None] = {}
    if math.isfinite(target):
        per_pair: dict[tuple[str, str], int] = {}  # the least per-node bound of each pair
        for (key, _), node in zip(keyed, node_bounds, strict=True):
            pair = (key.server_sku, key.fabric)
            per_pair[pair] = min(per_pair.get(pair, node), node)
        floors = _ideal_floors(space, keyed, timer, target, per_pair)
    # Keys by their bound, lazily tightened: a key is first bounded by its (server, fabric)
    # floor; when it comes up, by the floor of its own bandwidth (tightened=True) and put
    # back, so a slow key waits behind faster ones and, once K designs are found, is pruned
    # without timing the large clusters it would need.
    heap: list[tuple[tuple[int, ...], tuple[object, ...], bool, int, TimeKey, Parts, int, int]]
    heap = []
    for (key, parts), node in zip(keyed, node_bounds, strict=True):
        server = servers[key.server_sku]
        lo, hi = _node_caps(spec, server, key)
        if math.isfinite(target):
            floor = floors[(key.server_sku, key.fabric)]
            if floor is None:
                continue  # not even an ideal network of this fabric meets the target
            lo = max(lo, floor)
        # No size above what the budget, power and racks allow is bought: the search for the
        # smallest size meeting the target stops there instead of timing larger clusters.
        hi = min(hi, _most_nodes_under_caps(spec, server, layout))
        if budget is not None:
            hi = min(hi, budget // node_cost_bound(catalog, server, key, parts, nic_memo))
        if lo <= hi:
            bound: tuple[int, ...] = (lo * node,)
            heap.append(
                (bound, _key_order(key), not math.isfinite(target), len(heap), key, parts, lo, hi)
            )
    heapq.heapify(heap)
    out, evaluated = list[Costed](), 0
    warm: dict[tuple[str, str, int, int], int] = {}  # similar keys have similar answers
    bound = ()
    try:
        while heap:
            bound, order, tightened, seq, key, parts, lo, hi = heapq.heappop(heap)
            if kbest.beats(bound):
                break  # every later key's bound is at least as large
            if clock.expired():
                return out, evaluated, bound[0]
            server = servers[key.server_sku]
            family = (key.server_sku, key.fabric, key.nic_gbps, key.nics_per_node)
            per_node = _per_node(catalog, server, key, parts, prices, by_tco, nic_memo)
            # The fewest nodes an ideal network of the key's bandwidth needs (a one-node design
            # has no scale-out network to idealise: its floor is its only size).
            if not tightened and TOPOLOGIES.get(key.topology).scale_out:
                ideal = functools.partial(
                    timer.ideal_hours, *family, torus=key.topology == TORUS.name
                )
                floor = smallest_meeting(ideal, target, lo, hi, lo)
                if floor is not None:
                    heapq.heappush(
                        heap, ((floor * per_node,), order, True, seq, key, parts, floor, hi)
                    )
                continue
            _report(clock, timer, kbest, spec.objective.kind)
            threshold = kbest.threshold
            if threshold is not None:  # a larger size costs more than K designs already found
                hi = min(hi, threshold[0] // per_node)
                if hi < lo:
                    continue
            evaluated += 1
            n = smallest_meeting(
                functools.partial(timer.hours, key), target, lo, hi, warm.get(family, lo)
            )
            if n is None:
                continue
            warm[family] = n
            first = len(out)
            cands = build_candidates(timer, key, n, parts, catalog, layout, space.topologies)
            _offer_all(cands, catalog, stock, spec, out, kbest, prices)
            priced = [
                c.standalone_tco_cents if by_tco else c.standalone_cents
                for c in out[first:]
                if c.standalone_cents is not None and c.standalone_tco_cents is not None
            ]
            if not priced:
                continue
            for size in break_sizes(catalog, key, parts, n, min(hi, min(priced) // per_node)):
                cands = build_candidates(timer, key, size, parts, catalog, layout, space.topologies)
                _offer_all(
                    [c for c in cands if c.time_hours <= target],
                    catalog,
                    stock,
                    spec,
                    out,
                    kbest,
                    prices,
                )
    except SearchStopped:  # the clock ran out inside the plan searches of the key popped last
        # Its designs found may already beat its bound, and so every key left: then none can.
        return out, evaluated, None if kbest.beats(bound) else bound[0]
    return out, evaluated, None


def _per_node(
    catalog: Catalog,
    server: Server,
    key: TimeKey,
    parts: Parts,
    prices: TcoPrices,
    by_tco: bool,
    memo: dict[int, int],
) -> int:
    """A lower bound on what each node of ``key`` adds to the objective: its lifetime cost
    when the objective ranks by TCO, else its capex."""
    if by_tco:
        return node_tco_bound(catalog, server, key, parts, prices)
    return node_cost_bound(catalog, server, key, parts, memo)


# A (server, fabric) whose ideal floor would cost more than this many times the cheapest floor
# found so far is searched only up to that cost (see _ideal_floors).
FLOOR_COST_CAP = 2


def _ideal_floors(
    space: SearchSpace,
    keyed: list[tuple[TimeKey, Parts]],
    timer: EstimateCache,
    target: float,
    per_node: dict[tuple[str, str], int],
) -> dict[tuple[str, str], int | None]:
    """Per (server, fabric): fewest nodes that meet the target on an ideal network with the
    fastest NICs the fabric offers there (None: no size does). A lower bound for every key.

    Pairs go cheapest first (their compute bound at ``per_node``, each pair's least bound
    per node). A pair is searched only up to FLOOR_COST_CAP times the cheapest floor found
    so far; past it, the cap plus one is its floor (no size up to it meets the target, even
    ideally), still a lower bound, and its keys wait in the heap behind cheaper ones: a DeepSeek-V3
    min-cost search on gen-2026 spent 19 s of its 40 s finding that TCP Ethernet needs 768 to
    1,320 nodes, where 2x the cheapest floor already prices its keys out of the top three."""
    servers = {s.sku: s for s in space.servers}
    best: dict[tuple[str, str], tuple[int, int]] = {}
    tori: set[tuple[str, str]] = set()  # pairs with torus keys: their bound covers the torus
    for key, _ in keyed:
        pair = (key.server_sku, key.fabric)
        # what the NICs move in this server (issue 14, host link), not their line rate
        rate = int(servers[key.server_sku].nic_rate_gbps(key.nic_gbps))
        bandwidth = (rate * key.nics_per_node, key.nics_per_node)
        best[pair] = max(best.get(pair, bandwidth), bandwidth)
        if key.topology == TORUS.name:
            tori.add(pair)
    floors: dict[tuple[str, str], int | None] = {}
    ranges: dict[tuple[str, str], tuple[int, int, int]] = {}  # (least, lo, hi) of each pair
    for pair in best:
        server = servers[pair[0]]
        least, hi = _node_caps(space.spec, server, None)
        ranges[pair] = (least, max(least, timer.nodes_lower_bound(server, target)), hi)
    cheapest = math.inf  # the least cost bound of a floor found so far
    for pair in sorted(best, key=lambda pair: (ranges[pair][1] * per_node[pair], pair)):
        (sku, fabric), (gbps, npn) = pair, best[pair]
        least, lo, hi = ranges[pair]
        if npn == 0:  # only the one-node design without a fabric: compute alone bounds it
            floors[pair] = lo if lo <= hi else None
            continue
        ideal = functools.partial(
            timer.ideal_hours, sku, fabric, gbps // npn, npn, torus=pair in tori
        )
        reach = FLOOR_COST_CAP * cheapest / per_node[pair] if per_node[pair] > 0 else math.inf
        cap = hi if reach >= hi else max(lo, math.ceil(reach))
        try:
            floor = smallest_meeting(ideal, target, lo, cap, lo)
        except SearchStopped:  # unbounded floor: the key stays in, the clock stops it later
            floors[pair] = least
            continue
        if floor is None and cap < hi:
            floors[pair] = cap + 1
            continue
        floors[pair] = floor
        if floor is not None:
            cheapest = min(cheapest, floor * per_node[pair])
    return floors


def break_sizes(
    catalog: Catalog, key: TimeKey, parts: list[tuple[Nic, Switch | None]], nodes: int, most: int
) -> list[int]:
    """Node counts above ``nodes`` (up to ``most``) where a server or NIC volume break starts.

    Between breaks a larger cluster costs more, so only these sizes can undercut the smallest
    one meeting the target; ``most`` is where the per-node cost bound alone exceeds it.
    """
    sizes = set()
    for pb in catalog.breaks_for(key.server_sku):
        if nodes < pb.min_quantity <= most:
            sizes.add(pb.min_quantity)
    for nic in {n.sku for n, _ in parts}:
        for pb in catalog.breaks_for(nic):
            n = math.ceil(pb.min_quantity / key.nics_per_node)
            if nodes < n <= most:
                sizes.add(n)
    return sorted(sizes)


def _search_time_first(
    space: SearchSpace,
    keyed: list[tuple[TimeKey, Parts]],
    timer: EstimateCache,
    layout: Layout,
    stock: dict[str, int],
    exact_cost: Callable[[PhysicalPlan], int | None],
    clock: Clock,
) -> tuple[list[Costed], int, float | None]:
    spec, catalog = space.spec, space.catalog
    servers = {s.sku: s for s in space.servers}
    budget = spec.constraints.budget_cents
    if budget is None:  # convert.spec_from_proto refuses this; a spec built in code may not
        msg = f"{spec.objective.kind.name} needs a budget; expected a positive budget_usd"
        raise InvalidInput(msg, field="constraints.budget_usd")
    nic_memo: dict[int, int] = {}
    prices = spec_tco_prices(catalog, spec)
    # Keys by their bound (seconds, cents), tightened lazily in stages as they come up:
    # 0, compute alone on the largest size; 1, an ideal network of the key's bandwidth at the
    # largest size (no design of the key is faster); 2, plus the fewest nodes that ideal
    # network needs for that time (none reaches it with fewer). A key slower than K designs
    # already found is pruned before its bandwidth's time-versus-size curve is searched.
    heap: list[tuple[tuple[int, ...], tuple[object, ...], int, int, TimeKey, Parts, int, int]]
    heap = []
    for key, parts in keyed:
        server = servers[key.server_sku]
        lo, hi = _node_caps(spec, server, key)
        per_node = node_cost_bound(catalog, server, key, parts, nic_memo)
        hi = min(hi, budget // per_node, _most_nodes_under_caps(spec, server, layout))
        if lo > hi:
            continue
        compute_s = math.floor(timer.lower_bound_hours(server, hi) * SECONDS_PER_HOUR)
        heap.append(((compute_s, lo * per_node), _key_order(key), 0, len(heap), key, parts, lo, hi))
    heapq.heapify(heap)
    kbest, out, evaluated = KBest(spec.top_k), list[Costed](), 0
    bound: tuple[int, ...] = ()
    try:
        while heap:
            bound, order, stage, seq, key, parts, lo, hi = heapq.heappop(heap)
            if kbest.beats(bound):
                break
            if clock.expired():
                return out, evaluated, bound[0] / SECONDS_PER_HOUR
            if stage < 2:
                server = servers[key.server_sku]

                def ideal(n: int, k: TimeKey = key) -> float:
                    if not TOPOLOGIES.get(k.topology).scale_out:
                        return timer.hours(k, n)  # one node: no network to idealise
                    return timer.ideal_hours(
                        k.server_sku,
                        k.fabric,
                        k.nic_gbps,
                        k.nics_per_node,
                        n,
                        torus=k.topology == TORUS.name,
                    )

                fastest = ideal(hi)
                if not math.isfinite(fastest):
                    continue  # no plan fits even the largest size: none fits a smaller one
                fewest = lo if stage == 0 else smallest_meeting(ideal, fastest, lo, hi, lo) or hi
                per_node = node_cost_bound(catalog, server, key, parts, nic_memo)
                time_bound = (math.ceil(fastest * SECONDS_PER_HOUR), fewest * per_node)
                heapq.heappush(heap, (time_bound, order, stage + 1, seq, key, parts, lo, hi))
                continue
            _report(clock, timer, kbest, spec.objective.kind)
            evaluated += 1
            afford = _Affordability(key, parts, catalog, layout, spec, budget, stock, exact_cost)
            hours = functools.partial(timer.hours, key)
            # Time is non-increasing in size and plateaus (a plan leaves GPUs idle): the cheapest
            # way to the key's best time is the start of its last plateau. Only when that breaks a
            # cap do the caps decide, at the largest size within budget, power, racks and stock
            # together (each grows with the node count, so that size is found exactly).
            start = smallest_meeting(hours, hours(hi), lo, hi, lo)
            top: int | None
            if start is not None and afford(start):
                top = start
            else:
                top = afford.largest(lo, hi)
                if top is None:
                    continue
                start = smallest_meeting(hours, hours(top), lo, top, top)
            # Volume breaks above the start can make a larger size of the same time cheaper; half
            # the size feeds the frontier.
            extra = break_sizes(catalog, key, parts, start or top, top)
            for size in sorted({top, start or top, max(lo, top // 2), *extra}):
                cands = build_candidates(timer, key, size, parts, catalog, layout, space.topologies)
                _offer_all(cands, catalog, stock, spec, out, kbest, prices)
    except SearchStopped:  # the clock ran out inside the plan searches of the key popped last
        return out, evaluated, None if kbest.beats(bound) else bound[0] / SECONDS_PER_HOUR
    return out, evaluated, None


def _most_nodes_under_caps(spec: OptimizeSpec, server: Server, layout: Layout) -> int:
    """Most nodes the power and rack caps could allow: every node draws at least its server's
    power, and a rack holds at most the servers its power and units allow (NICs, switches
    and links only lower both)."""
    c, most = spec.constraints, MAX_GPUS
    if c.max_power_kw is not None and server.power_kw > 0:
        most = min(most, math.floor(c.max_power_kw / server.power_kw + 1e-9))
    if c.max_racks is not None:
        try:
            per_rack = layout.servers_per_rack(server, server.power_kw)  # issue 16 (rackscale)
        except InvalidInput:
            return 0  # not one server fits a rack
        most = min(most, c.max_racks * per_rack)
    return most


class _Affordability:
    """Whether a key's design of n nodes fits every cap, and the largest size that does.

    A size fits when some (NIC, switch SKUs per tier) of the key builds it within the budget,
    the power and rack caps and the stock, all at once. The greedy BOM answers most checks;
    where it misses the exact purchase (the MIP on that design alone, with the caps as
    constraints) decides, since a mix of link SKUs or a volume tier can be cheaper or draw
    less.
    """

    def __init__(
        self,
        key: TimeKey,
        parts: Parts,
        catalog: Catalog,
        layout: Layout,
        spec: OptimizeSpec,
        budget: int,
        stock: dict[str, int],
        exact_cost: Callable[[PhysicalPlan], int | None],
    ) -> None:
        self.key, self.parts, self.catalog, self.layout = key, parts, catalog, layout
        self.spec, self.budget, self.stock, self.exact_cost = spec, budget, stock, exact_cost
        self._greedy: dict[int, int | None] = {}
        self.prices = spec_tco_prices(catalog, spec)  # issue 17 (tco)

    def cheapest_greedy(self, n: int) -> int | None:
        """Cheapest greedy BOM of n nodes within the stock and the power and rack caps."""
        if n not in self._greedy:
            costs = []
            for nic, switch in self.parts:
                design = make_design(self.key, n, nic, switch, self.layout)
                bom = standalone_bom(design, self.catalog, self.stock)
                if (
                    bom is not None
                    and within_caps(self.spec, bom.power_kw, bom.racks)
                    and self.within_max_tco(bom)
                ):
                    costs.append(bom.capex_cents)
            self._greedy[n] = min(costs, default=None)
        return self._greedy[n]

    def within_max_tco(self, bom: BillOfMaterials) -> bool:
        """Issue 17 (tco): the BOM's lifetime cost is within constraints.max_tco."""
        cap = self.spec.constraints.max_tco_cents
        return cap is None or breakdown_of(bom, self.prices).tco_cents <= cap

    def __call__(self, n: int) -> bool:
        return self.greedy_fits(n) or self.exact_fits(n)

    def greedy_fits(self, n: int) -> bool:
        cheapest = self.cheapest_greedy(n)
        return cheapest is not None and cheapest <= self.budget

    def exact_fits(self, n: int) -> bool:
        # The plans the MIP is offered at this size, per-tier switch mixes included: a size
        # only a mix affords (one tier of a stock-limited SKU) is still affordable.
        # A size's twin (a redundant design) still counts, as before: its twin key ranks it.
        plans = candidate_plans(
            self.key, n, self.parts, self.catalog, self.layout, (), keep_redundant=True
        )
        for plan in plans:
            if not within_caps(self.spec, plan.power_kw, plan.racks):
                continue  # links only add power: no purchase of this plan fits
            cost = self.exact_cost(plan)
            if cost is not None and cost <= self.budget:
                return True
        return False

    def largest(self, lo: int, hi: int) -> int | None:
        """Largest affordable size in [lo, hi]. Cost grows with size, so: the largest size the
        greedy price affords (cheap to find), then exact prices above it (an exact price is
        never above the greedy one, so the answer is at or above it; usually the next size
        already misses and one MIP settles it)."""
        at_hi = self.cheapest_greedy(hi)
        guess = hi if not at_hi else max(lo, min(hi, hi * self.budget // at_hi))
        if at_hi is None:  # over a cap at hi: scale down from the caps the plan shows there
            guess = self._guess_under_caps(lo, hi)
        greedy = self._largest(self.greedy_fits, lo, hi, guess)
        floor = lo if greedy is None else greedy + 1
        if floor > hi or not self.exact_fits(floor):
            return greedy
        return self._largest(self, floor, hi, floor)

    def _guess_under_caps(self, lo: int, hi: int) -> int:
        """A starting size for the search: hi scaled by the tightest power or rack cap."""
        c = self.spec.constraints
        scale = 1.0
        for nic, switch in self.parts[:1]:
            try:
                plan = planned(make_design(self.key, hi, nic, switch, self.layout), self.catalog)
            except InvalidInput:
                return hi
            if c.max_power_kw is not None and plan.power_kw > 0:
                scale = min(scale, c.max_power_kw / plan.power_kw)
            if c.max_racks is not None and plan.racks > 0:
                scale = min(scale, c.max_racks / plan.racks)
        return max(lo, min(hi, math.floor(hi * scale)))

    @staticmethod
    def _largest(fits: Callable[[int], bool], lo: int, hi: int, guess: int) -> int | None:
        """smallest_meeting on the mirrored axis: the largest n in [lo, hi] that fits."""
        mirrored = smallest_meeting(
            lambda m: 0.0 if fits(lo + hi - m) else 1.0, 0.5, lo, hi, lo + hi - guess
        )
        return None if mirrored is None else lo + hi - mirrored


def _key_order(key: TimeKey) -> tuple[object, ...]:
    """Deterministic tie-break between keys with equal bounds: by SKU and names."""
    return (
        key.server_sku,
        key.fabric,
        key.topology,
        key.oversubscription,
        key.nics_per_node,
        key.nic_speed_gbps,
        key.planes,
        key.radix,
        key.port_lanes,
    )


def fastest_reachable(
    space: SearchSpace, timer: EstimateCache
) -> tuple[TimeKey, int, float] | None:
    """The fastest (key, nodes, hours) at each key's largest allowed size, for diagnosis."""
    servers = {s.sku: s for s in space.servers}
    for key, _ in space.keys():  # noqa: SIM118 - SearchSpace is not a mapping
        _, hi = _node_caps(space.spec, servers[key.server_sku], key)
        if hi >= 1:
            timer.estimate(key, hi)
    return timer.fastest()
