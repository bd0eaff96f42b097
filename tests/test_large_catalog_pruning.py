"""Pre-search reductions for large catalogs (issue 19) never remove what an optimum uses.

The laws: after pruning, the K cheapest servers of one set of figures at every quantity cost
what they cost before; the fiber a transceiver pairs with is the same; a part the request may
not buy never removes another; a server's built-in NICs stay; and the capex floor that keeps
candidates out of the MIP never exceeds what a design really costs.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synthetic import synthetic_records
from optimizer.catalog.model import Availability, Catalog, Link, PriceBreak, Server
from optimizer.optimize.candidates import SearchSpace
from optimizer.optimize.dominance import prune_dominated
from optimizer.optimize.request import Constraints, OptimizeSpec
from optimizer.optimize.search import capex_floor, standalone_bom
from optimizer.optimize.solve import optimize
from optimizer.topology.layout import matching_fiber
from optimizer.topology.plan import physical_plan
from optimizer.workload.presets import preset

BASE = synthetic_records(40, seed=3)
H100 = next(s for s in BASE.servers if s.gpu_model == "H100")


def _catalog(
    servers: tuple[Server, ...] = (), links: tuple[Link, ...] = (), **kw: object
) -> Catalog:
    breaks = kw.pop("breaks", ())
    return replace(
        BASE,
        servers=servers or BASE.servers,
        links=links or BASE.links,
        price_breaks=breaks,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def _unit(catalog: Catalog, sku: str, qty: int, list_cents: int) -> int:
    return catalog.unit_price_cents(sku, qty, list_cents)


def _stock_allows(server: Server, qty: int) -> bool:
    stock = server.availability.stock_units
    return stock is None or qty <= stock


server_rows = st.lists(
    st.tuples(
        st.integers(90, 110),  # list price, $k
        st.none() | st.integers(1, 200),  # stock
        st.none() | st.tuples(st.sampled_from((16, 64, 128)), st.integers(80, 100)),  # break
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=60, deadline=None)
@given(rows=server_rows, k=st.integers(1, 4), qty=st.sampled_from((1, 16, 50, 64, 128, 150)))
def test_the_k_cheapest_servers_of_one_class_at_any_quantity_survive(
    rows: list[tuple[int, int | None, tuple[int, int] | None]], k: int, qty: int
) -> None:
    servers, breaks = [], []
    for i, (price_k, stock, brk) in enumerate(rows):
        sku = f"S{i}"
        servers.append(
            replace(
                H100,
                sku=sku,
                price_cents=price_k * 100_000,
                availability=Availability(stock_units=stock),
            )
        )
        if brk is not None:
            breaks.append(PriceBreak(sku, brk[0], brk[1] * 100_000 * price_k // 100))
    catalog = _catalog(tuple(servers), breaks=tuple(breaks))
    pruned = prune_dominated(catalog, top_k=k)

    def cheapest(cat: Catalog) -> list[int]:
        fits = [s for s in cat.servers if _stock_allows(s, qty)]
        return sorted(_unit(cat, s.sku, qty, s.price_cents) for s in fits)[:k]

    assert cheapest(pruned) == cheapest(catalog)


@settings(max_examples=60, deadline=None)
@given(prices=st.lists(st.integers(1, 400), min_size=2, max_size=10))
def test_every_transceiver_pairs_with_the_same_fiber_after_pruning(prices: list[int]) -> None:
    fiber = next(lk for lk in BASE.links if lk.kind == "fiber" and lk.speed_gbps == 400)
    fibers = tuple(
        replace(fiber, sku=f"F{i}", price_cents=p, reach_m=(100.0, 2000.0)[i % 2])
        for i, p in enumerate(prices)
    )
    optics = tuple(lk for lk in BASE.links if lk.kind == "transceiver")
    catalog = _catalog(links=(*optics, *fibers))
    kept = [lk for lk in prune_dominated(catalog).links if lk.kind == "fiber"]
    for tx in optics:
        assert matching_fiber(tx, kept) == matching_fiber(tx, list(fibers))


def test_a_cheaper_longer_reach_optic_does_not_remove_one_that_pairs_with_another_fiber() -> None:
    """A 500 m DR optic pairs with single-mode fiber, a 50 m SR optic with multimode: the DR's
    lower price says nothing about the SR link's cost (fiber differs), so both stay."""
    sr = next(lk for lk in BASE.links if lk.kind == "transceiver" and lk.reach_m == 50)
    dr = replace(sr, sku="TX-DR", reach_m=500.0, price_cents=sr.price_cents // 2)
    fibers = tuple(lk for lk in BASE.links if lk.kind == "fiber")
    kept = {lk.sku for lk in prune_dominated(_catalog(links=(sr, dr, *fibers))).links}
    assert {sr.sku, "TX-DR"} <= kept


def test_a_part_of_an_excluded_vendor_does_not_remove_the_part_the_request_may_buy() -> None:
    nic = BASE.nics[0]
    cheap = replace(nic, sku="NIC-CHEAP", vendor="Acme", price_cents=nic.price_cents // 2)
    dear = replace(nic, sku="NIC-DEAR", vendor="Borealis")
    catalog = _catalog(nics=(cheap, dear))
    spec = OptimizeSpec(workload=preset("bert-large"), excluded_vendors=("Acme",))
    pruned = prune_dominated(
        catalog, usable=SearchSpace.allowed_by(spec), usable_key=("exclude Acme",)
    )
    assert [n.sku for n in pruned.nics] == ["NIC-CHEAP", "NIC-DEAR"]
    assert [n.sku for n in prune_dominated(catalog).nics] == ["NIC-CHEAP"]


def test_a_kept_servers_built_in_nic_is_never_pruned() -> None:
    nic = BASE.nics[0]
    cheap = replace(nic, sku="NIC-CHEAP", price_cents=nic.price_cents // 2)
    builtin = replace(nic, sku="NIC-BUILTIN")
    server = replace(H100, builtin_nic_sku="NIC-BUILTIN", builtin_nics=8)
    pruned = prune_dominated(_catalog((server,), nics=(cheap, builtin)), top_k=1)
    assert {n.sku for n in pruned.nics} == {"NIC-CHEAP", "NIC-BUILTIN"}


def test_the_capex_floor_never_exceeds_a_designs_greedy_bom() -> None:
    catalog = prune_dominated(synthetic_records(300, seed=5), top_k=3)
    spec = OptimizeSpec(
        workload=preset("llama3-8b"), constraints=Constraints(target_training_hours=200.0)
    )
    result = optimize(catalog, replace(spec, top_k=3))
    assert result.designs
    for ranked in result.designs:
        plan = physical_plan(ranked.design, catalog)
        bom = standalone_bom(ranked.design, catalog, {})
        assert bom is not None
        assert capex_floor(catalog, plan) <= min(bom.capex_cents, ranked.bom.capex_cents)
