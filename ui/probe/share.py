"""A link that replays a probe: the page address carries the item, the models and the conditions
(`?probe=...`, compact JSON in URL-safe base64); opening it draws the same grid from the store's
cache without sending a single request. Uploads cannot be shared (their files are the visitor's
and temporary); generated stimuli and benchmark items can.

A replay looks each request up exactly as the runner would (same prompt, same settings, same cache
key) and grades the cached reply with the same path as a run; it writes nothing. A request that
fails every time it is asked (an offline baseline that cannot answer the picture) replays with the
reason its sharer saw, as a store or the link kept it (probes/running/store_chain.py), rather than
as something to ask again."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from models.types import BackendError
from probes.asking.prompting import assemble_prompt
from probes.core.errors import ProbeError, UsageError
from probes.core.types import ItemRef, Origin
from probes.demo.conditions import CONDITIONS, probe_config
from probes.reading import probabilities as answer_probabilities
from probes.reading.grading import grade_reply
from probes.running import answerers
from probes.running.limits import current as limits
from probes.running.runner import cache_key
from probes.running.store_chain import SERVED_FROM, Asked, CacheReader
from ui.common import catalogue_ids, endpoints
from ui.items import ItemSpec, resolve
from ui.probe.grid import Cell

MAX_LINK = 4_000  # characters of the `probe` value
MAX_MODELS = 4


@dataclass(frozen=True)
class Shared:
    """What a link names: the item, the models and conditions, and (on a public Space) the id
    under which the sharer's own-key answers are kept and the day the link was made."""

    spec: ItemSpec
    models: list[str]
    conditions: list[str]
    link: str | None = None
    day: int | None = None


def encode(
    spec: ItemSpec, models: Sequence[str], conditions: Sequence[str], link: str | None = None, day: int | None = None
) -> str | None:
    """The `probe` query value for this probe, or None when it cannot be shared (an upload).
    Without models and conditions it names the item alone: the address of an item chosen and
    not yet asked (a reload brings it back, with no grid)."""
    if spec.source == "upload":
        return None
    data: dict[str, Any] = {"s": spec.source, "b": spec.benchmark, "i": spec.index, "m": list(models),
                            "c": list(conditions)}  # fmt: skip
    if spec.params:
        data["p"] = spec.params
    if link:
        data["k"], data["d"] = link, day
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode(value: str) -> Shared:
    """The probe a link names; UsageError for anything that is not one (a link is visitor input)."""
    broken = UsageError("this link does not name a probe (it may have been cut short)")
    if not value or len(value) > MAX_LINK:
        raise broken
    try:
        data = json.loads(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise broken from None
    if not isinstance(data, dict) or data.get("s") not in ("generated", "benchmark"):
        raise broken
    models, conditions = data.get("m"), data.get("c")
    params = data.get("p") or {}
    ok = (
        isinstance(data.get("b"), str)
        and isinstance(data.get("i"), int)
        and isinstance(models, list) and len(models) <= MAX_MODELS and all(isinstance(m, str) for m in models)
        and isinstance(conditions, list) and all(c in CONDITIONS for c in conditions)
        and bool(models) == bool(conditions)  # both, or neither: an item on the stage, not yet asked
        and isinstance(params, dict)
        and all(isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in params.items())
        and (data.get("k") is None or (isinstance(data["k"], str) and len(data["k"]) <= 64))
        and (data.get("d") is None or (isinstance(data["d"], int) and not isinstance(data["d"], bool)))
    )  # fmt: skip
    if not ok:
        raise broken
    spec = ItemSpec(data["s"], data["b"], data["i"], params=params)
    return Shared(spec, models, conditions, data.get("k"), data.get("d"))


def replay(
    spec: ItemSpec, models: Sequence[str], conditions: Sequence[str], reader: CacheReader
) -> dict[tuple[str, str], Cell]:
    """Each cell from the cache `reader` reads (as a run would read it), graded as a run would
    grade it; nothing is sent."""
    benchmark, item = resolve(spec)
    cells: dict[tuple[str, str], Cell] = {}
    for name in conditions:
        condition = CONDITIONS[name]
        try:
            asked, prompt = assemble_prompt(benchmark, item, condition.mode, condition.perturbation)
        except ProbeError as exc:
            for model in models:
                cells[(model, name)] = Cell("n/a", message=str(exc))
            continue
        config = probe_config(condition)
        for model in models:
            try:
                # The gate, as for Ask: nothing is sent, so any model of a provider may be looked
                # up (a visitor may have asked it with their own key), but a local model only as
                # the operator lists it, never a folder of the server.
                limits().admit(model=model, catalogue=catalogue_ids(), own_key=True)
                answerer = answerers.create(model, endpoints())
            except (ProbeError, BackendError) as exc:  # a model id no provider knows
                cells[(model, name)] = Cell("failed", message=str(exc))
                continue
            key = cache_key(answerer, config, prompt, asked.possible_answers())
            cached = reader.cached(key)
            if cached is None:
                cells[(model, name)] = _not_cached(reader, key, Asked(asked.benchmark, asked.id, model,
                                                                      condition.mode.label, condition.perturbation))  # fmt: skip
                continue
            ref = ItemRef.of(asked, Origin.PROBE)
            result = grade_reply(benchmark, asked, cached.text, model, condition, ref, latency=cached.latency,
                                 cached=True, cached_from=cached.raw.get(SERVED_FROM))  # fmt: skip
            answer_probabilities.attach(result, asked, cached)  # the bars Ask showed
            cells[(model, name)] = Cell("done", result)
    return cells


def _not_cached(reader: CacheReader, key: str, asked: Asked) -> Cell:
    """A request with no reply in reach: one its answerer fails every time shows why (as the
    sharer saw it); any other is there to be asked."""
    reason = reader.failure(key, asked) if answerers.is_deterministic(asked.model) else None
    if reason:
        return Cell("cannot", message=reason)
    return Cell("missing", message="press Ask to send it")
