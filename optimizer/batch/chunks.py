"""Chunks of scenarios that share a (catalog, workload) key: the unit an engine dispatches.

Scenarios of one key ask the same planner and estimator questions (the training time of a
workload on a cluster does not depend on the budget or the target), and a worker's planner
and estimator caches are per process. Running such scenarios back to back on one warm
worker keeps those caches hot, and one dispatch per chunk instead of per scenario divides
the engine's per-task costs (pickling, scheduler bookkeeping) by the chunk's size.

``chunked`` groups a stream of scenarios with bounded look-ahead, so the driver still never
holds the scenario list: it buffers at most ``lookahead`` scenarios, emits a key's chunk as
soon as it has ``max_chunk`` of them, and when the buffer is full emits the oldest key's
scenarios. Once the stream ends it cuts the remaining scenarios into smaller chunks (about
``spread`` of them), so the last chunks spread over every worker instead of leaving one
worker with a long tail. Every scenario is emitted exactly once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from optimizer.batch.spec import Scenario

# Scenarios per chunk at most: at a few tenths of a second per solve, a chunk is a few
# seconds of work, long against the ~1 ms an engine spends per dispatch and short against
# a batch, so the tail stays balanced.
DEFAULT_MAX_CHUNK = 8
# Scenarios the grouping looks ahead in the stream to find ones sharing a key.
DEFAULT_LOOKAHEAD = 256


def chunk_key(scenario: Scenario) -> tuple[str, str]:
    """What scenarios sharing caches have in common: the catalog and the workload.

    Workload JSON that fails to parse still gets a key (its own text): the scenario then
    runs in a chunk of its own kind and becomes an error row there, as it would alone.
    """
    try:
        workload = json.loads(scenario.request_json).get("workload")
    except (ValueError, AttributeError):
        return scenario.catalog_id, scenario.request_json
    return scenario.catalog_id, json.dumps(workload, sort_keys=True, separators=(",", ":"))


def chunked(
    scenarios: Iterable[Scenario],
    *,
    max_chunk: int = DEFAULT_MAX_CHUNK,
    spread: int = 1,
    lookahead: int = DEFAULT_LOOKAHEAD,
) -> Iterator[tuple[Scenario, ...]]:
    """``scenarios`` as chunks of one key each, at most ``max_chunk`` long (see the module
    docstring); ``spread`` is how many chunks the end of the stream should be cut into
    (twice the workers keeps every worker busy to the end)."""
    if max_chunk < 1 or spread < 1 or lookahead < 1:
        raise ValueError("max_chunk, spread and lookahead must be at least 1")
    buckets: dict[tuple[str, str], list[Scenario]] = {}
    buffered = 0
    todo = iter(scenarios)
    exhausted = False
    while True:
        while not exhausted and buffered < lookahead:
            s = next(todo, None)
            if s is None:
                exhausted = True
                break
            key = chunk_key(s)
            bucket = buckets.setdefault(key, [])
            bucket.append(s)
            buffered += 1
            if len(bucket) >= max_chunk:
                del buckets[key]
                buffered -= len(bucket)
                yield tuple(bucket)
        if not buckets:
            return
        # The buffer is full (emit the oldest key whole) or the stream has ended (cut the
        # rest into about ``spread`` chunks, so that every worker gets a share of the tail).
        size = max_chunk if not exhausted else max(1, min(max_chunk, buffered // spread))
        key = next(iter(buckets))
        bucket = buckets[key]
        chunk, rest = bucket[:size], bucket[size:]
        if rest:
            buckets[key] = rest
        else:
            del buckets[key]
        buffered -= len(chunk)
        yield tuple(chunk)
