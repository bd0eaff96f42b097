"""Enumerate and time the structural choices the training time depends on.

A *time key* fixes everything the estimator sees except the node count: server (GPU), fabric,
NIC speed and NICs per node, topology family, oversubscription and switch radix. For each key
the node counts worth buying are found by search with the estimator (the smallest count that
meets the target for ``min_cost``; the cheapest size of the fastest affordable time for
``min_time``), and the efficient (NIC SKU, switch SKU) pairs that realise the key become
candidates.

Keys are visited best-bound-first and skipped once a valid bound shows they cannot enter the
top K (branch and bound over keys, optimizer.optimize.search). The bounds come from the same
estimator on an ideal network (``EstimateCache.ideal_hours``) and from compute alone at the
optimistic kernel efficiency (``EstimateCache.lower_bound_hours``); docs/optimizer.md states
them and tests/test_optimizer_bounds.py checks that no real design beats them.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import cast

from optimizer.catalog.model import Catalog, Link, Nic, Server, Switch
from optimizer.errors import InvalidInput
from optimizer.optimize.facility import cooling_allows
from optimizer.optimize.request import Confidence, OptimizeSpec
from optimizer.performance.calibration import generation
from optimizer.performance.cluster import (
    NOMINAL_NIC_GBPS,
    ClusterSpec,
    server_cluster,
    server_gpu_model,
)
from optimizer.performance.errors import PlanInfeasible
from optimizer.performance.estimator import SECONDS_PER_HOUR, Estimate
from optimizer.performance.options import DEFAULT_OPTIONS, ModelOptions
from optimizer.performance.plan import PartialPlan
from optimizer.performance.planner import memory_refusal, plan_and_estimate
from optimizer.registry.fabrics import FABRICS
from optimizer.registry.topologies import SINGLE_SWITCH_NAME, TOPOLOGIES, TopologyFamily
from optimizer.topology.compat import (
    nic_fits_fabric,
    port_lanes,
    ports_at_speed,
    switch_fits_fabric,
)
from optimizer.topology.design import Design
from optimizer.topology.layout import Layout
from optimizer.topology.network import NetworkSizing
from optimizer.topology.plan import PhysicalPlan, planned
from optimizer.topology.profile import TopologyProfile
from optimizer.topology.sizing import max_endpoints, size_network
from optimizer.workload.flops import model_flops_per_step
from optimizer.workload.model import Workload

# Oversubscription ratios offered where a family has an oversubscribed tier (1:1, 2:1, 3:1 are
# the ratios vendors' reference designs and Meta's Llama 3 cluster use; domain.md section 3).
OVERSUBSCRIPTIONS = (1.0, 2.0, 3.0)
NICS_PER_NODE = (1, 2, 4, 8)


def ratios_for(topology: str) -> tuple[float, ...]:
    """The down:up ratios the search offers a family: several where it has an
    oversubscribed tier, else only the non-blocking 1:1."""
    return OVERSUBSCRIPTIONS if TOPOLOGIES.get(topology).oversubscribable else (1.0,)


def is_switchless(topology: str) -> bool:
    return TOPOLOGIES.get(topology).switchless


@dataclass(frozen=True)
class TimeKey:
    server_sku: str
    fabric: str
    nic_speed_gbps: int
    nics_per_node: int
    topology: str
    oversubscription: float
    radix: int  # usable switch ports at the NIC speed; 0 for the switchless torus
    forwarding: bool = False  # the server or its NICs relay traffic (direct networks)
    # issue 14 (sharp): the key's switches, every one, reduce in the network (SHARP); its
    # designs are estimated with in-network reduction and offered only those switches.
    in_network_skus: frozenset[str] = frozenset()
    # issue 16 (fabric800): the NICs' fabric planes (nics.planes), one port of
    # ``nic_speed_gbps`` in each; the radix and the sizing are one plane's.
    planes: int = 1
    # Endpoint ports per switch cage (compat.port_lanes): the sizing splits in whole cages.
    port_lanes: int = 1

    @property
    def nic_gbps(self) -> int:
        """What each NIC moves over all its planes (Nic.line_gbps): what the key is timed at."""
        return self.nic_speed_gbps * self.planes

    @property
    def in_network_reduction(self) -> bool:
        """The key's designs reduce all-reduces in the switches (InfiniBand SHARP)."""
        return bool(self.in_network_skus)

    @property
    def group(self) -> tuple[str, str, str, float]:
        """What makes two designs distinct for top-K: server, fabric, topology, ratio."""
        return (self.server_sku, self.fabric, self.topology, self.oversubscription)

    def max_nodes(self) -> int | None:
        """Most nodes this topology can attach with this radix and this hardware (None: no
        limit): a direct network without forwarding is two nodes back to back at most."""
        family = TOPOLOGIES.get(self.topology)
        cap = family.node_cap(self.forwarding)
        most = max_endpoints(
            self.topology,
            self.radix,
            oversubscription=self.oversubscription,
            rails=self.nics_per_node,
            port_lanes=self.port_lanes,
        )
        by_ports = None if most is None else most // max(1, self.nics_per_node)
        if cap is None or by_ports is None:
            return by_ports if cap is None else cap
        return min(cap, by_ports)


@dataclass(frozen=True)
class Candidate:
    design: Design
    plan: PhysicalPlan
    estimate: Estimate
    time_hours: float  # under the request's confidence level
    key: TimeKey
    gpus: int


@dataclass(frozen=True)
class Costed:
    candidate: Candidate
    standalone_cents: int | None  # greedy BOM cost when it respects stock, else None
    standalone_tco_cents: int | None = None  # issue 17 (tco): that BOM's lifetime cost


def scale_out_gbps_per_gpu(server: Server, nic_gbps: int, nics_per_node: int) -> float:
    """Scale-out bandwidth each GPU of a node gets: NIC rate in this server (its line rate
    over all planes, Nic.line_gbps, or less when the slot's host link carries less) x NICs
    per node / GPUs per node."""
    return server.nic_rate_gbps(nic_gbps) * nics_per_node / server.gpus_per_node


def meets_nic_policy(spec: OptimizeSpec, server: Server, nic_gbps: int, nics_per_node: int) -> bool:
    """The buyer's ``constraints.min_nic_gbps_per_gpu`` policy (a choice, not physics: the
    search applies it to time keys, check_bom does not)."""
    floor = spec.constraints.min_nic_gbps_per_gpu
    return floor is None or scale_out_gbps_per_gpu(server, nic_gbps, nics_per_node) >= floor


def part_refusals(spec: OptimizeSpec, part: Server | Nic | Switch | Link) -> tuple[str, ...]:
    """Every request field whose filter leaves ``part`` out (vendor filters, lead-time cap,
    for servers the facility's cooling): empty when the request may buy it. All of them, not
    the first: a fix that lifts one filter leaves the part out while another still does."""
    lead, days = spec.constraints.max_lead_time_days, part.availability.lead_time_days
    refusals = (
        ("allowed_vendors", bool(spec.allowed_vendors) and part.vendor not in spec.allowed_vendors),
        ("excluded_vendors", part.vendor in spec.excluded_vendors),
        # issue 17 (facility)
        ("constraints.cooling", isinstance(part, Server) and not cooling_allows(part, spec)),
        ("constraints.max_lead_time_days", lead is not None and days is not None and days > lead),
    )
    return tuple(name for name, refused in refusals if refused)


def part_allowed(spec: OptimizeSpec, part: Server | Nic | Switch | Link) -> bool:
    """The request's vendor filters, lead-time cap and (servers) facility cooling allow it."""
    return not part_refusals(spec, part)


@dataclass
class SearchSpace:
    """Catalog parts a request may use, and the time keys they make."""

    catalog: Catalog
    spec: OptimizeSpec
    servers: list[Server] = field(init=False)
    nics: list[Nic] = field(init=False)
    switches: list[Switch] = field(init=False)

    def __post_init__(self) -> None:
        self.servers = [s for s in self.catalog.servers if self._allowed(s)]
        self.nics = [n for n in self.catalog.nics if self._allowed(n)]
        self.switches = [w for w in self.catalog.switches if self._allowed(w)]

    def _allowed(self, part: Server | Nic | Switch) -> bool:
        return part_allowed(self.spec, part)

    @staticmethod
    def allowed_by(spec: OptimizeSpec) -> Callable[[Server | Nic | Switch | Link], bool]:
        """The request's part filter as a predicate (optimizer.optimize.dominance: only the
        parts a request may buy dominate others)."""
        return functools.partial(part_allowed, spec)

    @property
    def fabrics(self) -> tuple[str, ...]:
        return self.spec.allowed_fabrics or FABRICS.names()

    @property
    def topologies(self) -> tuple[str, ...]:
        return self.spec.allowed_topologies or TOPOLOGIES.names()

    def keys(self) -> Iterator[tuple[TimeKey, list[tuple[Nic, Switch | None]]]]:
        """Every time key with the (NIC, switch) SKU pairs that realise it (one shared list
        per fabric, speed, planes and radix: keys of different servers reference the same
        pairs).

        Buildability (docs/optimizer.md, "Buildability rules"): a server with built-in NICs
        is offered only with all of them, at $0 each; a direct family's key says whether its
        hardware forwards (else two nodes back to back at most); a one-node design without a
        fabric is one key per server unless the request requires a fabric."""
        pairs = self._pairs()
        shared: dict[tuple[object, ...], list[tuple[bool, frozenset[str], Parts]]] = {}
        for server in self.servers:
            yield from self._one_node_keys(server)
            for (fabric, speed, planes, radix, lanes), parts in pairs.items():
                for npn in nics_per_node_options(server):
                    if not meets_nic_policy(self.spec, server, speed * planes, npn):
                        continue
                    for topology in self.topologies:
                        family = TOPOLOGIES.get(topology)
                        if not family.scale_out or family.switchless != (radix == 0):
                            continue
                        memo: tuple[object, ...] = (fabric, speed, planes, radix, lanes)
                        memo += (server.builtin_nic_sku, server.forwarding)
                        memo += (family.needs_forwarding,)
                        if memo not in shared:
                            shared[memo] = [
                                (forwards, sharp, split)
                                for forwards, own in _server_parts(server, parts, family)
                                for sharp, split in in_network_split(own)  # issue 14 (sharp)
                            ]
                        for ratio in ratios_for(topology):
                            key = TimeKey(
                                server.sku,
                                fabric,
                                speed,
                                npn,
                                topology,
                                ratio,
                                radix,
                                planes=planes,
                                port_lanes=lanes,
                            )
                            for forwards, sharp, own in shared[memo]:
                                yield replace(key, forwarding=forwards, in_network_skus=sharp), own

    def _one_node_keys(
        self, server: Server
    ) -> Iterator[tuple[TimeKey, list[tuple[Nic, Switch | None]]]]:
        """The one-node design without a fabric: its built-in NICs (spare, $0) or none.

        It has no scale-out bandwidth (0 Gb/s per GPU), so a ``min_nic_gbps_per_gpu`` policy
        excludes it like any design below the floor (docs/cli.md)."""
        if self.spec.require_fabric or not self.fabrics:
            return
        if not meets_nic_policy(self.spec, server, 0, 0):
            return
        for topology in self.topologies:
            if TOPOLOGIES.get(topology).scale_out:
                continue
            nic = _builtin(server, self.catalog)
            npn = server.builtin_nics if nic is not None else 0
            # Nothing is cabled; named for a fabric its built-in NICs speak where one is allowed
            spoken = [f for f in self.fabrics if nic is None or nic_fits_fabric(nic, f)]
            key = TimeKey(server.sku, (spoken or self.fabrics)[0], 0, npn, topology, 1.0, 0)
            yield key, [(nic or NO_NIC, None)]

    def _pairs(self) -> dict[tuple[str, int, int, int, int], list[tuple[Nic, Switch | None]]]:
        """(fabric, NIC port speed, planes, radix, ports a cage) -> the (NIC, switch) pairs;
        radix 0: switchless families. NICs of more planes move more (Nic.line_gbps): a key of their
        own, as a faster NIC is."""
        out: dict[tuple[str, int, int, int, int], list[tuple[Nic, Switch | None]]] = {}
        for fabric in self.fabrics:
            nics = [n for n in self.nics if nic_fits_fabric(n, fabric)]
            for speed, planes in sorted({(n.speed_gbps, n.plane_count) for n in nics}):
                alike = [n for n in nics if (n.speed_gbps, n.plane_count) == (speed, planes)]
                radixes: dict[tuple[int, int], list[Switch]] = {}
                for w in self.switches:
                    k = ports_at_speed(w, speed)
                    if k and switch_fits_fabric(w, fabric):
                        radixes.setdefault((k, port_lanes((w,), speed)), []).append(w)
                if any(is_switchless(t) for t in self.topologies):
                    out[(fabric, speed, planes, 0, 1)] = [(n, None) for n in alike]
                for (k, lanes), sws in sorted(radixes.items()):
                    out[(fabric, speed, planes, k, lanes)] = [(n, w) for n in alike for w in sws]
        return out


Parts = list[tuple[Nic, Switch | None]]
"""The (NIC, switch) SKU pairs that realise a time key (switch None: switchless)."""


def in_network_split(pairs: Parts) -> Iterator[tuple[frozenset[str], Parts]]:
    """issue 14 (sharp): in-network reduction is a structural choice, made with the key and
    before the time is estimated, so the time and the BOM agree: the SHARP-capable switches
    make a key of their own (estimated with in-network reduction, offered only those
    switches), and the rest keep the plain key with every switch (candidate_plans drops its
    all-SHARP assignments, which the SHARP key builds faster at the same price).

    Yields (the key's ``in_network_skus``, empty for the plain key; its pairs)."""
    sharp: Parts = [(n, w) for n, w in pairs if w is not None and w.in_network_reduction]
    if sharp:
        yield frozenset(w.sku for _, w in sharp if w is not None), sharp
    if len(sharp) < len(pairs):
        yield frozenset(), pairs


NO_NIC = Nic(
    sku="",
    vendor="",
    speed_gbps=0,
    ports=0,
    protocols=frozenset(),
    power_w=0.0,
    price_cents=0,
)
"""The NIC part of a one-node design that buys none (its ``nics_per_node`` is 0)."""


def _builtin(server: Server, catalog: Catalog) -> Nic | None:
    """The server's built-in NIC as a part of the search, at $0 (its price is the server's)."""
    if not server.builtin_nics:
        return None
    nic = next(n for n in catalog.nics if n.sku == server.builtin_nic_sku)
    return replace(nic, price_cents=0)


def _server_parts(
    server: Server, parts: list[tuple[Nic, Switch | None]], family: TopologyFamily
) -> Iterator[tuple[bool, list[tuple[Nic, Switch | None]]]]:
    """The pairs ``server`` can use, split by whether the hardware forwards where ``family``
    needs it: a server with built-in NICs uses only those ($0), a direct family's keys say
    whether NIC or server relay traffic."""
    if server.builtin_nics:
        parts = [
            (replace(n, price_cents=0), w) for n, w in parts if n.sku == server.builtin_nic_sku
        ]
    if not family.needs_forwarding or server.forwarding:
        if parts:
            yield server.forwarding, parts
        return
    for forwards in (True, False):
        own = [(n, w) for n, w in parts if n.forwarding == forwards]
        if own:
            yield forwards, own


def nics_per_node_options(server: Server) -> list[int]:
    """One NIC per GPU (rail-optimised) and the cheaper 1, 2, 4 that fit the server; a
    server with built-in NICs is built with all of them."""
    if server.builtin_nics:
        return [server.builtin_nics]
    wanted = {n for n in NICS_PER_NODE if n <= server.gpus_per_node} | {server.gpus_per_node}
    return sorted(n for n in wanted if n <= server.max_nics)


class EstimateCache:
    """Training times of (time key, node count), each estimated once per request."""

    def __init__(
        self,
        workload: Workload,
        servers: dict[str, Server],
        confidence: Confidence,
        fixed: PartialPlan | None = None,
        options: ModelOptions = DEFAULT_OPTIONS,
    ) -> None:
        self.workload = workload
        self.servers = servers
        self.confidence = confidence
        self.fixed = fixed
        self.options = options  # issue 14: the request's calibration and reliability
        self.evaluations = 0
        # Servers with the same GPU and node figures time the same: cache by those figures.
        self._perf = {
            sku: (
                s.gpu_model,
                s.gpus_per_node,
                s.gpu_peak_bf16_tflops,
                s.gpu_peak_fp8_tflops,
                s.gpu_memory_gb,
                s.intra_node_gbytes_per_s,
                s.scale_up_domain_gpus,  # issue 16: the domain and the host change the time
                s.host_gpus,
                s.nic_slot_gbps,  # issue 14 (host link): what a NIC moves in it
            )
            for sku, s in servers.items()
        }
        self._cache: dict[tuple[object, ...], tuple[TimeKey, Estimate | None]] = {}
        self._ideal: dict[tuple[object, ...], float] = {}
        # issue 14 (sharp): switch SKUs known to reduce in the network (from the keys
        # estimated), so re-estimating a built design credits SHARP from its BOM alone.
        self.in_network_skus: set[str] = set()
        # Why sizes refused the request's fixed parallel plan (a degree no plan of that size
        # takes), by message: when no design is left the diagnosis says so, not "memory".
        self.refusals: Counter[str] = Counter()
        # Why a server refused the workload itself (a field of the workload it cannot run,
        # such as fp8 on a GPU without an FP8 peak), by server SKU: the diagnosis names them
        # rather than blaming memory or the filters alone.
        self.server_refusals: dict[str, str] = {}
        # The clusters no plan fitted in memory on, by GPUs: when nothing fits anywhere, the
        # diagnosis says what the lightest plan needs on the most GPUs tried.
        self._too_heavy: dict[int, ClusterSpec] = {}
        self._flops = model_flops_per_step(workload) * workload.steps
        self._stop: Callable[[], bool] | None = None

    @contextmanager
    def stopping(self, stop: Callable[[], bool] | None) -> Iterator[None]:
        """Plan searches inside end with SearchStopped once ``stop()`` holds: the search
        for designs keeps to its clock, while the checks and explanations after it time
        what they need in full."""
        before, self._stop = self._stop, stop
        try:
            yield
        finally:
            self._stop = before

    def estimate(self, key: TimeKey, nodes: int) -> Estimate | None:
        """The planner's estimate, or None where no plan fits or the size cannot be built."""
        memo = (
            self._perf[key.server_sku],
            key.fabric,
            key.nic_gbps,  # over all planes (issue 16, fabric800)
            key.nics_per_node,
            key.topology,
            key.oversubscription,
            key.radix,
            key.port_lanes,
            key.forwarding,
            key.in_network_reduction,  # issue 14 (sharp)
            nodes,
        )
        self.in_network_skus |= key.in_network_skus
        if memo in self._cache:
            return self._cache[memo][1]
        result: Estimate | None
        cap = TOPOLOGIES.get(key.topology).node_cap(key.forwarding)
        if cap is not None and nodes > cap:  # one node; two back to back without forwarding
            self._cache[memo] = (key, None)
            return None
        try:
            profile = size_network(
                key.topology,
                nodes * key.nics_per_node,
                key.radix,
                oversubscription=key.oversubscription,
                rails=key.nics_per_node,
                port_lanes=key.port_lanes,
            ).profile
            result = self._run(
                key.server_sku,
                key.fabric,
                key.nic_gbps,
                key.nics_per_node,
                nodes,
                profile,
                in_network_reduction=key.in_network_reduction,
            )
        except InvalidInput as e:
            self._refused(e, key.server_sku)
            result = None
        self._cache[memo] = (key, result)
        return result

    def reestimate(self, design: Design, plan: PhysicalPlan) -> Estimate | None:
        """The estimate of a built design, from the topology profile its BOM was sized with
        and (issue 14, sharp) in-network reduction exactly when every switch of the BOM offers
        it: a BOM with one non-SHARP switch is never credited. Each NIC moves its port speed
        in every plane the BOM builds (issue 16, fabric800)."""
        nic_gbps = plan.links[0].speed_gbps * plan.sizing.planes if plan.links else 0
        try:
            return self._run(
                design.server_sku,
                design.fabric,
                nic_gbps,
                design.nics_per_node,
                design.nodes,
                plan.sizing.profile,
                in_network_reduction=all_in_network(plan, self.in_network_skus),
            )
        except InvalidInput as e:
            self._refused(e, design.server_sku)
            return None

    def _run(
        self,
        server_sku: str,
        fabric: str,
        nic_gbps: int,
        nics_per_node: int,
        nodes: int,
        profile: TopologyProfile,
        *,
        in_network_reduction: bool = False,
    ) -> Estimate:
        server = self.servers[server_sku]
        scale_out = TOPOLOGIES.get(profile.family).scale_out
        if not scale_out:
            # One node: no traffic leaves the server, so the scale-out network the estimator
            # requires is nominal and changes no time (tests/test_buildability.py checks it).
            nic_gbps, nics_per_node = NOMINAL_NIC_GBPS, 1
        cluster = server_cluster(
            server,
            nodes=nodes,
            fabric=fabric,
            nic_gbps=nic_gbps,
            nics_per_node=nics_per_node,
            topology=profile,
            in_network_reduction=in_network_reduction,
        )
        self.evaluations += 1
        try:
            est = plan_and_estimate(
                self.workload, cluster, self.fixed, options=self.options, stop=self._stop, why=False
            )
        except PlanInfeasible as e:
            if e.field == "cluster.gpus":
                self._too_heavy[cluster.gpus] = cluster
            raise
        if in_network_reduction:  # issue 14 (sharp): the design says so
            est = replace(est, notes=(*est.notes, IN_NETWORK_NOTE))
        rate = server.nic_rate_gbps(nic_gbps)
        if scale_out and rate < nic_gbps:  # issue 14 (host link)
            est = replace(est, notes=(*est.notes, host_link_note(nic_gbps, rate)))
        return est

    def fastest(self) -> tuple[TimeKey, int, float] | None:
        """The fastest (key, nodes, hours) estimated so far, for diagnosing an unmet target."""
        timed = [
            (confident_hours(e, self.confidence), k, memo[-1])
            for memo, (k, e) in self._cache.items()
            if e is not None
        ]
        if not timed:
            return None
        hours, key, nodes = min(timed, key=lambda t: (t[0], t[2]))
        return key, cast(int, nodes), hours  # the memo ends with the node count

    def ideal_hours(
        self,
        server_sku: str,
        fabric: str,
        nic_gbps: int,
        nics_per_node: int,
        nodes: int,
        torus: bool = True,
    ) -> float:
        """Time on an ideal network of this fabric and bandwidth: one non-blocking switch,
        every node under it. No topology makes any collective faster
        (tests/test_optimizer_bounds.py), so the smallest size meeting the target here bounds
        every key of the same server, fabric and bandwidth from below; but a torus's
        all-reduce runs one ring per dimension, fewer latency steps than the switch's flat
        ring (estimator.torus_ring_steps), so a bound that must also hold for torus keys
        (``torus``) is the faster of the switch and the torus (hypothesis found a 141-node
        torus 0.009% faster than the switch, tests/test_optimizer_bounds.py)."""
        if self.confidence is Confidence.PESSIMISTIC:
            # The planner picks the plan with the best *expected* time, so a better network
            # can pick a plan whose high time is worse (found by tests/test_optimizer_bounds.py):
            # under pessimistic planning only compute alone is a valid bound.
            return self.lower_bound_hours(self.servers[server_sku], nodes)
        memo = (self._perf[server_sku], fabric, nic_gbps, nics_per_node, nodes)
        if memo not in self._ideal:
            self._ideal[memo] = self._switch_hours(
                server_sku, fabric, nic_gbps, nics_per_node, nodes
            )
        if not torus:
            return self._ideal[memo]
        key = TimeKey(server_sku, fabric, nic_gbps, nics_per_node, "torus", 1.0, 0, forwarding=True)
        return min(self._ideal[memo], self.hours(key, nodes))

    def _switch_hours(
        self, server_sku: str, fabric: str, nic_gbps: int, nics_per_node: int, nodes: int
    ) -> float:
        endpoints = nodes * nics_per_node
        profile = TopologyProfile(
            family=SINGLE_SWITCH_NAME,
            endpoints=endpoints,
            tiers=1,
            max_switch_hops=1,
            oversubscription=1.0,
            bisection_ratio=1.0,
            endpoints_per_leaf=endpoints,
            rail_optimized=True,
        )
        # issue 14 (sharp): an InfiniBand key may reduce in the network (only InfiniBand
        # switches may offer it, optimizer.catalog.validation), and SHARP never slows a
        # collective, so the ideal switch of an InfiniBand fabric reduces in the network.
        sharp = FABRICS.get(fabric).switch_family == "infiniband"
        try:
            est = self._run(
                server_sku,
                fabric,
                nic_gbps,
                nics_per_node,
                nodes,
                profile,
                in_network_reduction=sharp,
            )
        except InvalidInput as e:
            self._refused(e, server_sku)
            return math.inf
        return confident_hours(est, self.confidence)

    def share(self, earlier: EstimateCache) -> None:
        """Reuse ``earlier``'s estimates (the explanations' re-solves of one request): they
        depend only on the workload, confidence, fixed plan and the key's figures."""
        same = (earlier.workload, earlier.confidence, earlier.fixed, earlier.options)
        assert same == (self.workload, self.confidence, self.fixed, self.options), (
            "different requests"
        )
        self._cache, self._ideal = earlier._cache, earlier._ideal
        self.in_network_skus = earlier.in_network_skus  # issue 14 (sharp)
        self.refusals = earlier.refusals
        self.server_refusals = earlier.server_refusals
        self._too_heavy = earlier._too_heavy

    def _refused(self, e: InvalidInput, server_sku: str) -> None:
        field = e.field or ""
        if field.startswith("parallelism"):
            self.refusals[str(e)] += 1
        elif field.startswith("workload"):
            self.server_refusals.setdefault(server_sku, str(e))

    def server_refusal(self) -> str | None:
        """The servers that refuse the workload itself and why, if any did."""
        if not self.server_refusals:
            return None
        refused = sorted(self.server_refusals.items())
        return "; ".join(f"{sku} refuses it ({why})" for sku, why in refused)

    def refusal(self) -> str | None:
        """The commonest refusal of the fixed parallel plan, if a size refused it."""
        return self.refusals.most_common(1)[0][0] if self.refusals else None

    def too_heavy(self) -> str | None:
        """Why no plan fitted in memory on the most GPUs timed, if none did there."""
        if not self._too_heavy:
            return None
        cluster = self._too_heavy[max(self._too_heavy)]
        return memory_refusal(self.workload, cluster, self.fixed or PartialPlan()).problem

    def hours(self, key: TimeKey, nodes: int) -> float:
        est = self.estimate(key, nodes)
        if est is None:
            return math.inf
        return confident_hours(est, self.confidence)

    def lower_bound_hours(self, server: Server, nodes: int) -> float:
        """Compute alone at the optimistic kernel efficiency: no estimate is ever faster."""
        peak = max(server.gpu_peak_bf16_tflops, server.gpu_peak_fp8_tflops or 0.0)
        eff = generation(server_gpu_model(server)).kernel_efficiency_high
        rate = nodes * server.gpus_per_node * peak * 1e12 * eff
        return self._flops / rate / SECONDS_PER_HOUR

    def nodes_lower_bound(self, server: Server, target_hours: float) -> int:
        """Fewest nodes whose compute alone could meet ``target_hours``."""
        one = self.lower_bound_hours(server, 1)
        return max(1, math.ceil(one / target_hours - 1e-9))


IN_NETWORK_NOTE = (
    "in-network reduction: every switch of the fabric offers SHARP, so the data-parallel "
    "all-reduce across nodes is reduced in the switches"
)
"""The estimate note (and explanation) of a design credited with in-network reduction."""


HOST_LINK_NOTE = "host link: "
"""How the estimate note of a design whose NICs are faster than its slots begins."""


def host_link_note(nic_gbps: float, rate_gbps: float) -> str:
    """issue 14 (host link): the estimate note of NICs that move less than their line rate."""
    return (
        f"{HOST_LINK_NOTE}each {nic_gbps:g}G NIC moves {rate_gbps:g} Gb/s, what the "
        f"server's NIC slots carry (servers.nic_slot_gbps: PCIe); it is timed at that rate"
    )


def all_in_network(plan: PhysicalPlan, in_network_skus: set[str] | frozenset[str]) -> bool:
    """issue 14 (sharp): the plan has switches and every one, all tiers, reduces in the
    network."""
    return bool(plan.switches) and all(d.sku in in_network_skus for d in plan.switches)


def confident_hours(est: Estimate, confidence: Confidence) -> float:
    if confidence is Confidence.PESSIMISTIC:
        return est.training_time_hours_high
    return est.training_time_hours


def smallest_meeting(
    hours: Callable[[int], float], target_hours: float, lo: int, hi: int, guess: int
) -> int | None:
    """Smallest node count in [lo, hi] whose time meets the target, or None.

    Time is non-increasing in the node count (the planner may leave GPUs idle;
    tests/test_planner.py), so a bracket and a bisection find it exactly. The bracket starts
    at ``guess`` (e.g. a similar key's answer, often right, then two probes settle it) and
    grows geometrically, so the search costs about log2 of the distance to the answer. A size
    no plan fits (infinite hours) meets no target, not even an infinite one (none given).
    """
    if lo > hi:
        return None

    def meets(n: int) -> bool:
        took = hours(n)
        return took <= target_hours and math.isfinite(took)

    g = min(max(guess, lo), hi)
    if meets(g):
        ok, bad = g, lo - 1  # lo - 1 stands for "below the range": never bought
        step = 1
        while ok - bad > 1:  # grow the bracket downward, then bisect
            probe = max(bad + 1, ok - step)
            if meets(probe):
                ok = probe
                step *= 2
            else:
                bad = probe
                break
    else:
        bad, step = g, max(1, math.ceil(g * 0.05))
        t_bad = hours(g)
        if math.isfinite(t_bad):  # perfect scaling from the miss is a good first step
            step = max(step, math.ceil(g * t_bad / target_hours * 1.02) - g)
        while True:  # grow the bracket upward
            probe = min(hi, bad + step)
            if meets(probe):
                ok = probe
                break
            if probe == hi:
                return None
            bad, step = probe, step * 2
    while ok - bad > 1:
        mid = (ok + bad) // 2
        if meets(mid):
            ok = mid
        else:
            bad = mid
    return ok


def design_order(design: Design) -> tuple[object, ...]:
    """The deterministic order among otherwise equal designs: by names and sizes."""
    return (
        design.server_sku,
        design.fabric,
        design.topology,
        design.oversubscription,
        design.nodes,
        design.nic_sku,
        design.nics_per_node,
        design.switch_skus,
    )


def make_design(
    key: TimeKey,
    nodes: int,
    nic: Nic,
    switch: Switch | None,
    layout: Layout,
    tier_skus: tuple[str, ...] = (),
) -> Design:
    """The design of ``key`` at ``nodes``: ``switch`` on every tier, or ``tier_skus`` one SKU
    per tier (leaf, spine, core) when given."""
    return Design(
        server_sku=key.server_sku,
        nodes=nodes,
        nic_sku=nic.sku,
        nics_per_node=key.nics_per_node,
        fabric=key.fabric,
        topology=key.topology,
        oversubscription=key.oversubscription,
        switch_skus=tier_skus or ((switch.sku,) if switch is not None else ()),
        layout=layout,
    )


def tier_assignments(
    key: TimeKey, nodes: int, switches: list[Switch], catalog: Catalog
) -> list[tuple[str, ...]]:
    """Switch SKUs per tier worth pricing for ``key`` at ``nodes``: each SKU on every tier,
    and on fabrics of several tiers every per-tier mix (leaf, spine, core may differ) of the
    SKUs no stock-unlimited SKU beats on deepest price, power and height at once.

    All ``switches`` have the key's radix at the NIC speed (same-radix alternatives only: the
    family sizings take one radix), so the tier counts are the same for every mix.
    """
    uniform: list[tuple[str, ...]] = [(w.sku,) for w in switches]
    try:
        tiers = len(
            size_network(
                key.topology,
                nodes * key.nics_per_node,
                key.radix,
                oversubscription=key.oversubscription,
                rails=key.nics_per_node,
                port_lanes=key.port_lanes,
            ).tiers
        )
    except InvalidInput:
        return uniform
    mixable = [w for w in switches if not _beaten_without_limit(w, switches, catalog)]
    if tiers < 2 or len(mixable) < 2:
        return uniform
    mixes = [
        combo
        for combo in itertools.product((w.sku for w in mixable), repeat=tiers)
        if len(set(combo)) > 1
    ]
    return uniform + mixes


def _beaten_without_limit(switch: Switch, switches: list[Switch], catalog: Catalog) -> bool:
    """Another SKU with unlimited stock is no dearer at its deepest break, draws no more power
    and is no taller: it serves any tier at least as well, whatever the quantity."""

    def score(w: Switch) -> tuple[int, float, int]:
        deepest = min([w.price_cents, *(pb.unit_price_cents for pb in catalog.breaks_for(w.sku))])
        return deepest, w.power_w, w.rack_units

    return any(
        other.sku != switch.sku
        and other.availability.stock_units is None
        and all(a <= b for a, b in zip(score(other), score(switch), strict=True))
        and score(other) != score(switch)
        for other in switches
    )


def redundant(design: Design, plan: PhysicalPlan, topologies: tuple[str, ...]) -> bool:
    """The same hardware as a simpler design the request also allows, so not a distinct one.

    An oversubscribed fabric too small to have an oversubscribed tier is its 1:1 twin when
    the 1:1 sizing buys the same switches and links (48 ports on one 64-port leaf at 3:1 are
    not: at 1:1 they need two leaves and a spine); the family's record names its other twins
    (a fat-tree that fits one switch, or any family on one node, is the single switch; one
    rail is a plain fat-tree).
    """
    profile = plan.sizing.profile
    if plan.oversubscription < design.oversubscription and _same_hardware_at_one_to_one(
        design, plan
    ):
        return True
    twins = TOPOLOGIES.get(design.topology).twins(design.nodes, design.nics_per_node, profile)
    return any(t != design.topology and t in topologies for t in twins)


def _same_hardware_at_one_to_one(design: Design, plan: PhysicalPlan) -> bool:
    radix = min((d.ports_per_switch for d in plan.switches), default=0)
    try:
        twin = size_network(
            design.topology,
            design.endpoints,
            radix,
            oversubscription=1.0,
            rails=design.nics_per_node,
            oversubscribed_tier=design.oversubscribed_tier,
            params=design.topology_params,
        )
    except InvalidInput:
        return False

    def hardware(sizing: NetworkSizing) -> tuple[object, ...]:
        return (
            tuple((t.name, t.switches) for t in sizing.tiers),
            tuple((g.name, g.count) for g in sizing.link_groups),
        )

    return hardware(twin) == hardware(plan.sizing)


def build_candidates(
    timer: EstimateCache,
    key: TimeKey,
    nodes: int,
    parts: list[tuple[Nic, Switch | None]],
    catalog: Catalog,
    layout: Layout,
    topologies: tuple[str, ...],
) -> list[Candidate]:
    """The buildable, non-redundant (NIC, switch SKUs per tier) realisations of ``key`` at
    ``nodes`` that are not beaten by another on NIC-and-switch cost, power and rack units at
    this size."""
    est = timer.estimate(key, nodes)
    if est is None:
        return []
    hours = confident_hours(est, timer.confidence)
    gpus = nodes * timer.servers[key.server_sku].gpus_per_node
    return [
        Candidate(plan.design, plan, est, hours, key, gpus)
        for plan in candidate_plans(key, nodes, parts, catalog, layout, topologies)
    ]


def candidate_plans(
    key: TimeKey,
    nodes: int,
    parts: list[tuple[Nic, Switch | None]],
    catalog: Catalog,
    layout: Layout,
    topologies: tuple[str, ...],
    *,
    keep_redundant: bool = False,
) -> list[PhysicalPlan]:
    """The plans of ``key`` at ``nodes`` the MIP is offered (every NIC x switch SKUs per
    tier, buildable, not redundant unless ``keep_redundant``, not beaten on parts): the
    min-time size search prices the same ones, so it never misses a size only a per-tier
    mix affords."""
    plans = []
    switches = list({w.sku: w for _, w in parts if w is not None}.values())
    assignments = tier_assignments(key, nodes, switches, catalog) if switches else [()]
    if not key.in_network_reduction:  # issue 14 (sharp): the SHARP key builds these
        sharp = {w.sku for w in switches if w.in_network_reduction}
        assignments = [a for a in assignments if not a or not set(a) <= sharp]
    for nic in {n.sku: n for n, _ in parts}.values():
        for skus in assignments:
            design = make_design(key, nodes, nic, None, layout, skus)
            try:
                plan = planned(design, catalog)
            except InvalidInput:
                continue
            if keep_redundant or not redundant(design, plan, topologies):
                plans.append(plan)
    return efficient_parts(plans, catalog)


def efficient_parts(plans: list[PhysicalPlan], catalog: Catalog) -> list[PhysicalPlan]:
    """Plans of one key and size whose NIC and switch SKUs no other plan beats.

    Within a key and size every plan needs the same servers, NIC count, switch count and links,
    so a plan differs only in what its NICs and switches cost (at their volume tier), draw and
    occupy; a plan no cheaper, no leaner and no smaller than another, or one whose parts exceed
    their stock, cannot be part of an optimum.
    """
    parts: tuple[Nic | Switch, ...] = (*catalog.nics, *catalog.switches)
    stock = {
        p.sku: p.availability.stock_units for p in parts if p.availability.stock_units is not None
    }
    prices = {p.sku: p.price_cents for p in parts}
    scored = []
    for plan in plans:
        qty = {plan.nics.sku: plan.nics.quantity} if plan.nics.quantity else {}
        for sw in plan.switches:
            qty[sw.sku] = qty.get(sw.sku, 0) + sw.quantity
        if any(q > stock[s] for s, q in qty.items() if s in stock):
            continue
        cost = sum(q * catalog.unit_price_cents(s, q, prices[s]) for s, q in qty.items())
        scored.append(
            (
                (cost, plan.nic_power_kw + plan.switch_power_kw, plan.rack_units),
                design_order(plan.design),
                plan,
            )
        )
    scored.sort(key=lambda t: (t[0], t[1]))
    kept: list[tuple[tuple[int, float, int], PhysicalPlan]] = []
    for score, _, plan in scored:
        if not any(all(k <= s for k, s in zip(best, score, strict=True)) for best, _ in kept):
            kept.append((score, plan))
    return [plan for _, plan in kept]


def with_catalog_vendors(catalog: Catalog, spec: OptimizeSpec) -> OptimizeSpec:
    """``spec`` with its vendor filters spelled as the catalog spells them (matched without
    regard to case). A name no part of the catalog carries is refused with the catalog's
    vendors, instead of silently leaving no design (--vendor) or changing nothing (exclude)."""
    vendors = {s.vendor for s in catalog.servers} | {n.vendor for n in catalog.nics}
    vendors |= {w.vendor for w in catalog.switches} | {lk.vendor for lk in catalog.links}
    known = sorted(vendors, key=str.lower)
    spellings: dict[str, list[str]] = {}
    for vendor in known:
        spellings.setdefault(vendor.strip().lower(), []).append(vendor)

    def spelled(names: tuple[str, ...], field: str) -> tuple[str, ...]:
        out: list[str] = []
        for i, name in enumerate(names):
            found = spellings.get(name.strip().lower())
            if found is None:
                msg = f"got {name!r}, expected a vendor of this catalog: {', '.join(known)}"
                raise InvalidInput(msg, field=f"{field}[{i}]")
            out.extend(found)
        return tuple(out)

    return replace(
        spec,
        allowed_vendors=spelled(spec.allowed_vendors, "allowed_vendors"),
        excluded_vendors=spelled(spec.excluded_vendors, "excluded_vendors"),
    )
