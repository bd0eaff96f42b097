"""Batch specs: which scenarios to solve against which catalogs.

A spec is a JSON or YAML document, or a CSV table with one scenario per row (docs/batch.md).
Parsing turns it into ``SpecRow``s (a catalog reference and an ``OptimizeRequest``);
``plan_batch`` resolves the catalogs once, in the driver, and gives every scenario a stable
id: the SHA-256 of the catalog's content hash and the canonical JSON of the request. Equal
ids mean equal work, which is what makes resume and exactly-once writing possible.

Structural mistakes (an unknown key or field, a grid value of the wrong type, a catalog
that does not resolve) raise ``InvalidInput``/``NotFound`` before any work starts; values a
request may hold but the optimizer rejects (a negative budget) become error rows instead.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, overload

import yaml
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from optimizer._pb.procurement.v1 import optimize_pb2
from optimizer.catalog.canonical import (
    canonical_document,
    canonical_json,
    catalog_from_canonical,
    hash_canonical,
)
from optimizer.catalog.model import Catalog
from optimizer.catalog.resolve import resolve_catalog
from optimizer.catalog.union import request_catalog_refs, union_catalogs
from optimizer.errors import InvalidInput, LimitExceeded, ProcurementError
from optimizer.request_json import parse_json

# Checked before expanding a grid: a typo in a grid must not exhaust memory.
MAX_SCENARIOS = 1_000_000
# Planning reports progress every this many spec rows.
PLAN_PROGRESS_ROWS = 10_000
# Causes of invalid scenarios named in a message; the rest are counted.
MAX_LISTED_CAUSES = 10
# In a CSV cell, a repeated field (allowed_fabrics, ...) lists its values separated by this.
CSV_LIST_SEPARATOR = ";"
# Between the references of a union in a row's catalog reference ("roce-spectrum + acme.xlsx"):
# a scenario's own ``catalogs`` runs once, against their union (optimizer.catalog.union).
UNION_SEPARATOR = " + "

_DOCUMENT_KEYS = ("catalogs", "defaults", "scenarios", "grid")
# Messages whose fields a CSV column may name without the dotted prefix, in lookup order.
_BARE_PREFIXES = ("", "workload.", "constraints.", "solver.", "parallelism.")


@dataclass(frozen=True)
class SpecRow:
    """One scenario as written: a catalog reference and a request (its ``catalog`` unset)."""

    catalog_ref: str
    request: optimize_pb2.OptimizeRequest
    where: str  # location in the spec file, for messages


@dataclass(frozen=True)
class BatchSpec:
    rows: Sequence[SpecRow]  # a tuple, or GridRows made on demand
    source: str = ""


@dataclass(frozen=True)
class CatalogInfo:
    """A resolved catalog as shipped to workers: canonical bytes named by their hash."""

    catalog_id: str
    ref: str
    name: str
    vendor: str
    data: bytes


@dataclass(frozen=True)
class Scenario:
    """The unit of work: pure data, cheap to pickle, the same on every engine."""

    scenario_id: str
    comparison_key: str  # equal for the same request against different catalogs
    catalog_id: str
    catalog_ref: str
    request_json: str  # canonical protobuf JSON of the OptimizeRequest, catalog unset


@dataclass(frozen=True)
class InvalidScenarios:
    """Scenarios the optimizer would reject before solving (an unknown workload preset, a
    negative budget), found in the driver before anything runs."""

    errors: dict[str, ProcurementError]  # by scenario id
    scenarios: dict[str, Scenario] = field(default_factory=dict)  # by scenario id

    @property
    def causes(self) -> list[tuple[str, int]]:
        """Each distinct error message with how many scenarios it rejects, most first."""
        counts: dict[str, int] = {}
        for e in self.errors.values():
            counts[str(e)] = counts.get(str(e), 0) + 1
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    def describe(self) -> str:
        causes = self.causes
        lines = [f"  {n:,} x {cause}" for cause, n in causes[:MAX_LISTED_CAUSES]]
        if len(causes) > MAX_LISTED_CAUSES:
            lines.append(f"  ... and {len(causes) - MAX_LISTED_CAUSES} more causes")
        return (
            f"{len(self.errors):,} scenario(s) fail validation, {len(causes)} cause(s):\n"
            + "\n".join(lines)
        )


class PlannedScenarios(Sequence[Scenario]):
    """A plan's distinct scenarios, made from the spec's rows each time they are iterated
    (in spec order, a repeated id skipped), so the driver never holds them all."""

    def __init__(self, rows: Sequence[SpecRow], by_ref: Mapping[str, CatalogInfo], n: int):
        self._rows, self._by_ref, self._len = rows, by_ref, n

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[Scenario]:
        for scenario, first, _ in _scenarios(self._rows, self._by_ref):
            if first:
                yield scenario

    @overload
    def __getitem__(self, index: int) -> Scenario: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Scenario, ...]: ...
    def __getitem__(self, index: int | slice) -> Scenario | tuple[Scenario, ...]:
        if isinstance(index, slice):
            return tuple(itertools.islice(self, *index.indices(self._len)))
        k = index + self._len if index < 0 else index
        found = next(itertools.islice(self, k, None), None) if k >= 0 else None
        if found is None:
            raise IndexError(index)
        return found


class PlannedRowIds(Sequence[str]):
    """The scenario id of every spec row (duplicates included), made on demand."""

    def __init__(self, rows: Sequence[SpecRow], by_ref: Mapping[str, CatalogInfo]):
        self._rows, self._by_ref = rows, by_ref

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[str]:
        for scenario, _, _ in _scenarios(self._rows, self._by_ref, dedupe=False):
            yield scenario.scenario_id

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(itertools.islice(self, *index.indices(len(self))))
        row = self._rows[index]
        return scenario_id(
            self._by_ref[row.catalog_ref].catalog_id, canonical_request_json(row.request)
        )


@dataclass(frozen=True)
class BatchPlan:
    catalogs: Mapping[str, CatalogInfo]  # by catalog_id
    scenarios: Sequence[Scenario]  # PlannedScenarios (made on demand) or a tuple
    duplicates: int  # rows dropped because an earlier row has the same id
    row_ids: Sequence[str] = ()  # the scenario id of every spec row, duplicates included
    # Each catalog reference as written -> the content id it resolved to (two references
    # to equal content share one entry of ``catalogs``, but both are listed here).
    catalog_ids_by_ref: Mapping[str, str] = field(default_factory=dict)
    # SHA-256 of the distinct scenarios (reference and canonical request, in order): what
    # ``--resume`` compares; empty when the plan was built by hand.
    spec_sha256: str = ""
    invalid: InvalidScenarios | None = None  # None: not checked (plan_batch(validate=False))

    @property
    def catalog_data(self) -> dict[str, bytes]:
        """What an engine ships: each catalog's canonical bytes by catalog id."""
        return {cid: info.data for cid, info in self.catalogs.items()}


def canonical_request_json(request: optimize_pb2.OptimizeRequest) -> str:
    """Deterministic JSON of ``request`` without its catalog (which the content hash replaces)."""
    req = optimize_pb2.OptimizeRequest()
    req.CopyFrom(request)
    req.ClearField("catalog")
    doc = json_format.MessageToDict(req, preserving_proto_field_name=True)
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)


def scenario_id(catalog_id: str, request_json: str) -> str:
    return hashlib.sha256(f"{catalog_id}\n{request_json}".encode()).hexdigest()[:32]


def short_hash(text: str) -> str:
    """A 64-bit name for grouping equal texts (requests, workloads) in result tables."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_spec(path: str | Path) -> BatchSpec:
    """Parse a ``.json``, ``.yaml``/``.yml`` or ``.csv`` batch spec."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    suffix = p.suffix.lower()
    if suffix == ".csv":
        return spec_from_csv(text, source=p.name)
    if suffix == ".json":
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidInput(f"not valid JSON ({e})", field=p.name) from None
    elif suffix in (".yaml", ".yml"):
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise InvalidInput(f"not valid YAML ({e})", field=p.name) from None
    else:
        msg = f"got {p.suffix or 'no suffix'!r}, expected .json, .yaml, .yml or .csv"
        raise InvalidInput(msg, field=p.name)
    return spec_from_document(doc, source=p.name)


def spec_from_document(doc: Any, *, source: str = "spec") -> BatchSpec:
    """Expand ``{catalogs, defaults, scenarios, grid}``: every scenario (default: one empty
    scenario) under every grid combination, against its own ``catalog`` or every catalog.
    Precedence: defaults < scenario < grid values."""
    if not isinstance(doc, Mapping):
        raise InvalidInput(
            f"got {type(doc).__name__}, expected a mapping with keys {', '.join(_DOCUMENT_KEYS)}",
            field=source,
        )
    unknown = sorted(set(doc) - set(_DOCUMENT_KEYS))
    if unknown:
        raise InvalidInput(
            f"unknown key(s) {', '.join(map(str, unknown))}; expected {', '.join(_DOCUMENT_KEYS)}",
            field=source,
        )
    catalogs = _string_list(doc.get("catalogs", []), "catalogs")
    defaults = _mapping(doc.get("defaults", {}), "defaults")
    scenarios = doc.get("scenarios", [{}])
    if not isinstance(scenarios, list) or not scenarios:
        raise InvalidInput(
            "expected a non-empty list of OptimizeRequest objects", field="scenarios"
        )
    grid = _mapping(doc.get("grid", {}), "grid")
    for path, values in grid.items():
        _field_path(str(path), f"grid.{path}")
        if not isinstance(values, list) or not values:
            raise InvalidInput("expected a non-empty list of values", field=f"grid.{path}")
    combos = math.prod(len(v) for v in grid.values())
    unions = "catalogs" in grid or "catalogs" in defaults
    per_scenario = [
        1
        if unions or {"catalog", "catalogs"} & set(_mapping(s, f"scenarios[{i}]"))
        else len(catalogs)
        for i, s in enumerate(scenarios)
    ]
    total = combos * sum(per_scenario)
    if total > MAX_SCENARIOS:
        raise LimitExceeded(
            f"{source}: expands to {total:,} scenarios; the limit is {MAX_SCENARIOS:,}"
        )
    bodies: list[tuple[dict[str, Any], list[str]]] = []
    for i, scenario in enumerate(scenarios):
        refs = (
            _string_list([scenario["catalog"]], f"scenarios[{i}].catalog")
            if "catalog" in scenario
            else catalogs
        )
        if unions or "catalogs" in scenario:
            # The request names its catalogs: one row per combination, against their union
            # (after the scenario's own ``catalog``, as a request's ``catalog`` comes first).
            refs = refs if "catalog" in scenario else []
        elif not refs:
            raise InvalidInput(
                "no catalog: give the scenario a catalog or the spec a catalogs list",
                field=f"scenarios[{i}]",
            )
        body = _deep_merge(defaults, {k: v for k, v in scenario.items() if k != "catalog"})
        bodies.append((body, refs))
    rows = GridRows(bodies, [(str(p), list(v)) for p, v in grid.items()])
    rows.check()
    return BatchSpec(rows=rows, source=source)


class GridRows(Sequence[SpecRow]):
    """The rows of a document spec, made on demand: every scenario x every grid combination
    x its catalogs, in that order. Nothing is expanded up front, so a million-row grid costs
    memory only for what a caller keeps (docs/batch.md, "Memory")."""

    def __init__(
        self, bodies: list[tuple[dict[str, Any], list[str]]], grid: list[tuple[str, list[Any]]]
    ) -> None:
        self._bodies = bodies
        self._grid = grid
        self._combos = math.prod(len(values) for _, values in grid)
        self._unions = "catalogs" in dict(grid) or any("catalogs" in b for b, _ in bodies)
        self._len = sum(self._refs_per_combo(i) for i in range(len(bodies))) * self._combos

    def _refs_per_combo(self, i: int) -> int:
        """Rows per grid combination of scenario ``i``: one per catalog, or one when the
        request names its own catalogs (their union)."""
        body, refs = self._bodies[i]
        return 1 if self._unions or "catalogs" in body else len(refs)

    def check(self) -> None:
        """Parse what every row is made of (each scenario, and each grid value over it), so
        that a structural mistake is reported now, naming its place, not mid-plan."""
        for i, (body, _) in enumerate(self._bodies):
            _parse_request(body, f"scenarios[{i}]")
            for path, values in self._grid:
                for value in values:
                    _parse_request(
                        _deep_merge(body, _nest(path, value)), f"scenarios[{i}] {path}={value}"
                    )

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[SpecRow]:
        for i in range(len(self._bodies)):
            for combo in itertools.product(*(values for _, values in self._grid)):
                request, where = self._request(i, combo)
                for ref in self._row_refs(i, request, where):
                    yield SpecRow(ref, request, where)

    def _row_refs(self, i: int, request: optimize_pb2.OptimizeRequest, where: str) -> list[str]:
        """The catalog reference of each row of scenario ``i`` under one combination: its
        catalogs one by one, or the union its request names (``catalogs`` moved out of the
        request into the reference, as a request's ``catalog`` is)."""
        refs = self._bodies[i][1]
        if self._refs_per_combo(i) == len(refs) and not request.catalogs:
            return refs
        return [union_ref([*refs, *take_catalogs(request, where)])]

    @overload
    def __getitem__(self, index: int) -> SpecRow: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[SpecRow, ...]: ...
    def __getitem__(self, index: int | slice) -> SpecRow | tuple[SpecRow, ...]:
        if isinstance(index, slice):
            return tuple(self[k] for k in range(*index.indices(self._len)))
        k = index + self._len if index < 0 else index
        if not 0 <= k < self._len:
            raise IndexError(index)
        for i in range(len(self._bodies)):
            per_combo = self._refs_per_combo(i)
            block = per_combo * self._combos
            if k < block:
                combo_index, ref_index = divmod(k, per_combo)
                combo: list[Any] = []
                for _, values in reversed(self._grid):  # the last grid key varies fastest
                    combo_index, v = divmod(combo_index, len(values))
                    combo.append(values[v])
                request, where = self._request(i, tuple(reversed(combo)))
                return SpecRow(self._row_refs(i, request, where)[ref_index], request, where)
            k -= block
        raise IndexError(index)

    def _request(self, i: int, combo: tuple[Any, ...]) -> tuple[optimize_pb2.OptimizeRequest, str]:
        merged = self._bodies[i][0]
        for (path, _), value in zip(self._grid, combo, strict=True):
            merged = _deep_merge(merged, _nest(path, value))
        where = f"scenarios[{i}]" + "".join(
            f" {p}={v}" for (p, _), v in zip(self._grid, combo, strict=True)
        )
        return _parse_request(merged, where), where


def union_ref(refs: Sequence[str]) -> str:
    """The catalog reference of a row run against the union of ``refs`` (one ref: itself)."""
    return UNION_SEPARATOR.join(refs)


def union_parts(ref: str) -> list[str]:
    """The references a row's catalog reference unites, in order (one for a plain one)."""
    return ref.split(UNION_SEPARATOR)


def resolve_ref(ref: str, resolve_one: Callable[[str], Catalog]) -> Catalog:
    """A row's catalog: ``resolve_one(ref)``, or the union of its parts as ``procure optimize
    --catalog A --catalog B`` builds it (a part named twice, or another currency, refused)."""
    parts = union_parts(ref)
    if len(parts) == 1:
        return resolve_one(ref)
    named = request_catalog_refs(parts[0], parts[1:])
    return union_catalogs([(f, part, resolve_one(part)) for f, part in named])


# The key of shipped bytes that hold a union's parts (each canonical) instead of one catalog.
_UNION_KEY = "canonical_union"


def _resolved_with_data(ref: str, resolve_one: Callable[[str], Catalog]) -> tuple[Catalog, bytes]:
    """A row's catalog and the bytes workers get for it. A union ships its parts (each in
    canonical form, with the field and reference that name it), so a worker rebuilds the same
    union, every BOM line still naming the catalog it is ordered from (``decode_catalog``)."""
    parts = union_parts(ref)
    if len(parts) == 1:
        catalog = resolve_one(ref)
        return catalog, canonical_json(catalog)
    named = [(f, part, resolve_one(part)) for f, part in request_catalog_refs(parts[0], parts[1:])]
    doc = {
        _UNION_KEY: [
            {"field": f, "ref": part, "catalog": canonical_document(cat)} for f, part, cat in named
        ]
    }
    data = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return union_catalogs(named), data.encode("utf-8")


def decode_catalog(data: bytes) -> Catalog:
    """The catalog of shipped bytes: canonical JSON, or a union's parts (rebuilt as
    ``procure optimize --catalog A --catalog B`` builds it)."""
    if not data.startswith(b'{"' + _UNION_KEY.encode()):
        return catalog_from_canonical(data)
    parts = json.loads(data.decode("utf-8"))[_UNION_KEY]
    return union_catalogs(
        [
            (p["field"], p["ref"], catalog_from_canonical(json.dumps(p["catalog"]).encode()))
            for p in parts
        ]
    )


def take_catalogs(request: optimize_pb2.OptimizeRequest, where: str) -> list[str]:
    """Move the request's ``catalogs`` out of it (the row's reference names them), checking
    each is a reference that a union ref can carry."""
    refs = list(request.catalogs)
    if not refs:
        raise InvalidInput(
            "no catalog: give the scenario a catalog or a non-empty catalogs list",
            field=f"{where} catalogs",
        )
    for k, ref in enumerate(refs):
        if not ref.strip() or UNION_SEPARATOR in ref:
            raise InvalidInput(
                f"got {ref!r}; expected a catalog name, id or path without {UNION_SEPARATOR!r}",
                field=f"{where} catalogs[{k}]",
            )
    request.ClearField("catalogs")
    return refs


def spec_from_csv(text: str, *, source: str = "spec.csv") -> BatchSpec:
    """One scenario per row; a ``catalog`` column and one column per request field, named by
    dotted path (``constraints.budget_usd``) or by a field name that is unambiguous
    (``budget_usd``, ``model``). Empty cells leave the field unset. A ``catalogs`` cell
    (``a;b``) runs the row once against the union of its catalog and those."""
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    if "catalog" not in header:
        raise InvalidInput("missing column 'catalog'", field=source)
    paths = {col: _column_path(col, source) for col in header if col != "catalog"}
    rows: list[SpecRow] = []
    for line, record in enumerate(reader, start=2):
        where = f"{source}, row {line}"
        if len(rows) >= MAX_SCENARIOS:
            raise LimitExceeded(f"{source}: more than {MAX_SCENARIOS:,} scenarios")
        if None in record:
            raise InvalidInput(f"{len(record[None])} more cell(s) than columns", field=where)
        ref = (record.get("catalog") or "").strip()
        doc: dict[str, Any] = {}
        for col, path in paths.items():
            cell = (record.get(col) or "").strip()
            if cell:
                doc = _deep_merge(
                    doc, _nest(path, _cell_value(cell, path, f"{where}, column {col}"))
                )
        request = _parse_request(doc, where)
        if request.catalogs:  # a union: the catalog cell (if any) first, then these
            ref = union_ref([*([ref] if ref else []), *take_catalogs(request, where)])
        if not ref:
            raise InvalidInput(
                "empty; expected a catalog name, id or path (or a catalogs cell)",
                field=f"{where}, column catalog",
            )
        rows.append(SpecRow(ref, request, where))
    if not rows:
        raise InvalidInput("no scenario rows", field=source)
    return BatchSpec(rows=tuple(rows), source=source)


def plan_batch(
    spec: BatchSpec,
    *,
    data_dir: str | Path | None = None,
    tenant: str = "default",
    resolve: Callable[[str], Catalog] | None = None,
    validate: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> BatchPlan:
    """Resolve each distinct catalog reference once and give every row its stable id;
    rows that repeat an earlier id are dropped (and counted).

    One pass over the rows, keeping only what the plan needs (catalogs, counts, the ids
    seen, the spec's fingerprint): the scenarios themselves are made again on demand
    (``PlannedScenarios``). With ``validate``, each scenario's request is also checked as
    the optimizer will (``plan.invalid``). ``progress(rows_done, rows_total)`` is called
    every ``PLAN_PROGRESS_ROWS`` rows and at the end.

    ``resolve`` replaces ``resolve_catalog`` (a path, a bundled name or a stored catalog of
    ``tenant`` in ``data_dir``), e.g. with the service's rule, which never reads a path.
    """
    one = resolve or partial(resolve_catalog, data_dir=data_dir, tenant=tenant)
    by_ref: dict[str, CatalogInfo] = {}
    catalogs: dict[str, CatalogInfo] = {}

    def info_for(ref: str) -> CatalogInfo:
        info = by_ref.get(ref)
        if info is None:
            catalog, data = _resolved_with_data(ref, one)
            fresh = CatalogInfo(
                catalog_id=hash_canonical(data),
                ref=ref,
                name=catalog.meta.name,
                vendor=catalog.meta.vendor,
                data=data,
            )
            info = by_ref[ref] = catalogs.setdefault(fresh.catalog_id, fresh)
        return info

    total = len(spec.rows)
    distinct = done = 0
    fingerprint = hashlib.sha256()
    errors: dict[str, ProcurementError] = {}
    rejected: dict[str, Scenario] = {}
    for scenario, first, request in _scenarios(spec.rows, info_for):
        done += 1
        if progress is not None and done % PLAN_PROGRESS_ROWS == 0:
            progress(done, total)
        if not first:
            continue
        distinct += 1
        fingerprint.update(f"{scenario.catalog_ref}\n{scenario.request_json}\n".encode())
        if validate and (error := request_error(request)) is not None:
            errors[scenario.scenario_id] = error
            rejected[scenario.scenario_id] = scenario
    if progress is not None:
        progress(done, total)
    return BatchPlan(
        catalogs=catalogs,
        scenarios=PlannedScenarios(spec.rows, by_ref, distinct),
        duplicates=total - distinct,
        row_ids=PlannedRowIds(spec.rows, by_ref),
        catalog_ids_by_ref={ref: info.catalog_id for ref, info in by_ref.items()},
        spec_sha256=fingerprint.hexdigest(),
        invalid=InvalidScenarios(errors, rejected) if validate else None,
    )


def request_error(request: str | optimize_pb2.OptimizeRequest) -> ProcurementError | None:
    """What the optimizer would reject in this request (or its canonical JSON) before
    solving, or None."""
    from optimizer.optimize.convert import fixed_plan_from_proto, spec_from_proto

    try:
        if isinstance(request, str):
            request = json_format.Parse(request, optimize_pb2.OptimizeRequest())
        check_one_catalog(request)
        spec_from_proto(request)
        fixed_plan_from_proto(request)
    except ProcurementError as e:
        return e
    return None


def check_one_catalog(request: optimize_pb2.OptimizeRequest, prefix: str = "") -> None:
    """A planned scenario runs against one catalog (its content is what the scenario id
    hashes): planning moves a request's ``catalogs`` into the row's union reference, so one
    still in the request would be silently ignored, and is refused."""
    if request.catalogs:
        raise InvalidInput(
            "a planned scenario runs against one catalog reference; expected its catalogs "
            "moved into that reference (a spec row's or BatchOptimize scenario's catalogs "
            "become the reference of their union)",
            field=f"{prefix}catalogs",
        )


def _scenarios(
    rows: Iterable[SpecRow],
    by_ref: Mapping[str, CatalogInfo] | Callable[[str], CatalogInfo],
    *,
    dedupe: bool = True,
) -> Iterator[tuple[Scenario, bool, optimize_pb2.OptimizeRequest]]:
    """Each row's scenario, whether it is the first with its id (the seen set holds 16-byte
    digests: the one per-scenario cost of a pass) and its request as parsed."""
    info_for = by_ref if callable(by_ref) else by_ref.__getitem__
    seen: set[bytes] = set()
    for row in rows:
        info = info_for(row.catalog_ref)
        request_json = canonical_request_json(row.request)
        sid = scenario_id(info.catalog_id, request_json)
        first = True
        if dedupe:
            key = bytes.fromhex(sid)
            first = key not in seen
            seen.add(key)
        yield (
            Scenario(sid, short_hash(request_json), info.catalog_id, row.catalog_ref, request_json),
            first,
            row.request,
        )


def _parse_request(doc: Mapping[str, Any], where: str) -> optimize_pb2.OptimizeRequest:
    try:
        return parse_json(dict(doc), optimize_pb2.OptimizeRequest())
    except InvalidInput as e:  # true or false in a field that is not bool
        raise InvalidInput(str(e), field=where) from None
    except json_format.ParseError as e:
        unknown = _unknown_field(doc, optimize_pb2.OptimizeRequest.DESCRIPTOR, "")
        raise InvalidInput(unknown or str(e), field=where) from None


def _unknown_field(doc: Any, message: Any, prefix: str) -> str | None:
    """The first key of ``doc`` that is not a field of ``message``, said in the spelling
    specs use (snake_case field names), with the fields it could have been; None if all
    keys are known (protobuf also accepts camelCase, so those count as known)."""
    if not isinstance(doc, Mapping):
        return None
    by_json = {f.json_name: f for f in message.fields}
    for key, value in doc.items():
        field_ = message.fields_by_name.get(str(key)) or by_json.get(str(key))
        if field_ is None:
            where = prefix.rstrip(".") or message.name
            expected = ", ".join(f.name for f in message.fields)
            return f"{where} has no field named {str(key)!r}; expected one of {expected}"
        if field_.message_type is not None and not field_.message_type.GetOptions().map_entry:
            values = value if field_.is_repeated and isinstance(value, list) else [value]
            for v in values:
                found = _unknown_field(v, field_.message_type, f"{prefix}{field_.name}.")
                if found:
                    return found
    return None


def _string_list(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InvalidInput("expected catalog names, ids or paths", field=field)
    return value


def _mapping(value: Any, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise InvalidInput(f"got {type(value).__name__}, expected a mapping", field=field)
    return value


def _deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _nest(path: str, value: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {path.rsplit(".", 1)[-1]: value}
    for part in reversed(path.split(".")[:-1]):
        doc = {part: doc}
    return doc


def _walk(path: str) -> Iterator[FieldDescriptor | None]:
    # Any: the C implementation's Descriptor type is not the Python stub's.
    message: Any = optimize_pb2.OptimizeRequest.DESCRIPTOR
    for part in path.split("."):
        field = message.fields_by_name.get(part) if message is not None else None
        yield field
        if field is None:
            return
        message = field.message_type


def _field_path(path: str, where: str) -> FieldDescriptor:
    """The scalar or repeated field a dotted path names; ``catalog`` is not a request field
    in a batch (the spec says which catalogs)."""
    fields = list(_walk(path))
    leaf = fields[-1]
    if leaf is None or leaf.message_type is not None or path == "catalog":
        raise InvalidInput(
            f"{path!r} is not a field of OptimizeRequest (e.g. "
            "workload.model, constraints.budget_usd, top_k)",
            field=where,
        )
    return leaf


def _column_path(column: str, source: str) -> str:
    if "." in column:
        _field_path(column, f"{source}, column {column}")
        return column
    matches = [
        prefix + column
        for prefix in _BARE_PREFIXES
        if (leaf := list(_walk(prefix + column))[-1]) is not None
        and leaf.message_type is None
        and prefix + column != "catalog"
    ]
    if len(matches) != 1:
        expected = (
            "a field of OptimizeRequest, workload, constraints, solver or parallelism"
            if not matches
            else f"one of {', '.join(matches)} (spell it out)"
        )
        raise InvalidInput(
            f"unknown or ambiguous column; expected {expected}", field=f"{source}, column {column}"
        )
    return matches[0]


def _cell_value(cell: str, path: str, where: str) -> Any:
    leaf = _field_path(path, where)
    if leaf.is_repeated:
        return [v.strip() for v in cell.split(CSV_LIST_SEPARATOR) if v.strip()]
    if leaf.type == FieldDescriptor.TYPE_BOOL:
        low = cell.lower()
        if low not in ("true", "false"):
            raise InvalidInput(f"got {cell!r}, expected true or false", field=where)
        return low == "true"
    return cell  # json_format parses numbers given as strings, and names the field if not
