"""Stores in a chain, for a public Space: where a run reads cached replies and writes what it gets.

A visitor's run reads through, in order: their own session's store, the Space's shared cache
(replies bought with the Space's own keys, for any visitor), any further stores given (a link's
kept replies), and the operator's store (a demo prepared in advance). A deterministic request
already answered anywhere along the chain is not sent again: the visitor sees the answer at once,
and the Space's keys do not pay twice. Writes: every result goes to the visitor's own store; a
reply bought with the Space's keys also goes to the shared cache (the reply only, never a result
row, and never a reply about an upload: an upload is the visitor's), so the next visitor does not
pay for it again. A reply the visitor paid for with their own key stays in their session.

A cached reply says where it was found (`SERVED_FROM` in its raw fields): "demo" (the operator's
store), "shared" (the Space's cache), "link" (kept for a shared link), or nothing (the visitor's
own store). A visitor reads all of them as one thing, an answer given before with nothing sent;
the name only explains where, for whoever asks.

A failure that will always fail again (an offline baseline that cannot answer the picture: the
same request fails the same way every time) is no reply, so it is never kept as one; a replay
still shows its reason (`CacheReader.failure`): from the error result a store holds for that
request (the visitor's own, the operator's prepared demo), or from what a link kept of it under
`failure_key` (a key no request ever has, so no run reads it as a reply).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from models.types import Output
from probes.core.types import Result, Status
from probes.running.cells import Where
from probes.running.store import Store

SERVED_FROM = "served_from"  # the key, in a cached Output's raw fields, naming where it was found
FAILED = "failed:"  # before a cache key: what a link kept of a request that always fails (its reason)


def failure_key(cache_key: str) -> str:
    """Where a link keeps the reason of a request that always fails: never a request's own key
    (those are hex digests), so no run ever reads it as a reply."""
    return FAILED + cache_key


@dataclass(frozen=True)
class Asked:
    """Which result row a request fills: (benchmark, item id, model, mode label, perturbation)."""

    benchmark: str
    item_id: str
    model: str
    mode: str
    perturbation: str


def stored_failure(store: Store, cache_key: str, asked: Asked) -> str | None:
    """The error a store holds for this very request (the same cell and cache key), if any."""
    where = Where(asked.benchmark, [asked.model], [asked.mode], [asked.perturbation])
    for item_id, status, key, error in store.rows(["item_id", "status", "cache_key", "error"], where):
        if item_id == asked.item_id and key == cache_key and status == Status.ERROR.value and error:
            return error
    return None


@dataclass(frozen=True)
class CacheReader:
    """Stores read in order for a cached reply, each named (None: the reader's own)."""

    stores: Sequence[tuple[str | None, Store]]

    def cached(self, cache_key: str) -> Output | None:
        for name, store in self.stores:
            found = store.cached(cache_key)
            if found is not None:
                return _marked(found, name)
        return None

    def failure(self, cache_key: str, asked: Asked) -> str | None:
        """Why this request failed where it always fails again, as a store or a link kept it:
        call it only for an answerer that fails the same way every time (an offline baseline)."""
        for _, store in self.stores:
            if isinstance(store, Store):
                found = stored_failure(store, cache_key, asked)
            else:
                kept = store.cached(failure_key(cache_key))
                found = kept.text if kept is not None else None
            if found:
                return found
        return None


@dataclass
class StoreChain:
    own: Store  # the visitor's session store: every result is written here
    shared: Store | None = None  # the Space's shared cache: replies bought with its keys
    demo: Store | None = None  # the operator's store, read only
    also: Sequence[tuple[str, Store]] = ()  # further stores read before the operator's: (name, store)
    # Models asked on the Space's keys in this run: their fresh replies are shared (unless `private`).
    paid: frozenset[str] = field(default_factory=frozenset)
    private: bool = False  # an upload's run: nothing of it is shared

    @property
    def path(self) -> Path:
        return self.own.path

    @property
    def image_cache_bytes(self) -> int | None:
        return self.own.image_cache_bytes

    def _readers(self) -> list[tuple[str | None, Store]]:
        chain: list[tuple[str | None, Store]] = [(None, self.own)]
        if self.shared is not None:
            chain.append(("shared", self.shared))
        chain += list(self.also)
        if self.demo is not None:
            chain.append(("demo", self.demo))
        return chain

    def cached(self, cache_key: str) -> Output | None:
        return CacheReader(self._readers()).cached(cache_key)

    def cached_many(self, cache_keys: Sequence[str]) -> dict[str, Output]:
        found: dict[str, Output] = {}
        missing = list(dict.fromkeys(cache_keys))
        for name, store in self._readers():
            if not missing:
                break
            hits = store.cached_many(missing)
            found.update({key: _marked(output, name) for key, output in hits.items()})
            missing = [key for key in missing if key not in hits]
        return found

    def image_hashes(self, refs: Sequence[str]) -> dict[str, str]:
        """What any store of the chain knows: the operator's store has hashed every image of a
        prepared demo, so a visitor's first run of it draws nothing either."""
        found: dict[str, str] = {}
        missing = list(dict.fromkeys(refs))
        for _, store in self._readers():
            if not missing:
                break
            hits = store.image_hashes(missing)
            found.update(hits)
            missing = [ref for ref in missing if ref not in hits]
        return found

    def image_hash(self, ref: str) -> str | None:
        return self.image_hashes([ref]).get(ref)

    def record_many(
        self, entries: list[tuple[Result, Output | None, str]], image_hashes: Mapping[str, str] | None = None
    ) -> None:
        self.own.record_many(entries, image_hashes)
        if self.shared is None or self.private:
            return
        bought = [
            (result.cache_key, result.model, endpoint, response)
            for result, response, endpoint in entries
            if response is not None and result.cache_key and result.model in self.paid
            and result.status is not Status.ERROR
        ]  # fmt: skip
        self.shared.record_responses(bought)

    def record(self, result: Result, response: Output | None = None, endpoint: str = "") -> None:
        self.record_many([(result, response, endpoint)])


def _marked(output: Output, name: str | None) -> Output:
    if name is None:
        return output
    return replace(output, raw={**(output.raw or {}), SERVED_FROM: name})
