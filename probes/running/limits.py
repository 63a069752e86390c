"""The bounds every request is checked against before work starts, and public mode.

Public mode is on where `SPACE_ID` is set (Hugging Face Spaces sets it) or with `PROBE_PUBLIC=1`;
`PROBE_PUBLIC=0` turns it off. Anyone can call a public Space's every endpoint directly, so the
bounds are tighter there and server paths are off limits; locally the same bounds exist with
room for a researcher's work (`PROBE_MAX_ITEMS` raises the design bound).

Budgets (requests on the server's keys): `PROBE_SESSION_BUDGET` per browser session,
`PROBE_CLIENT_BUDGET` per client address and `PROBE_GLOBAL_BUDGET` per hour across everyone;
unset on a public Space, `DEFAULT_BUDGETS` apply (a Space's key is never unmetered). A value that
does not parse stops the app at start (`Limits.from_environment` raises).

Who a client is: `PROBE_TRUSTED_PROXIES` proxies in front of the app append the address they saw
to X-Forwarded-For (1 on a Space, else 0); the entry that many places from the right is the
client's. Entries to its left were written by the client and are never believed.

Sessions (what Gradio keeps per browser tab or API client: every component's state, about 0.7 MB
and 40 ms of CPU for each new one): `PROBE_MAX_SESSIONS` at most kept (the least recently used
forgotten first; 500 on a public Space, Gradio's 10,000 locally) and `PROBE_NEW_SESSIONS` new ones
per client address in ten minutes (240 on a public Space, unbounded locally): a script making up
session ids can neither fill the memory nor push the Space's visitors out quickly.

The class's named endpoints (`/gradio_api/run/class_*` and the like, for notebooks and scripts):
`PROBE_CLASS_API_RATE` calls a second from one address (5 on a public Space, unbounded locally),
each through Gradio's whole pipeline (5 ms of CPU; 70 ms for one that opens a session, which
counts as 5); phones use the class's own page, which this does not count (ui/class_api_rate.py).
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from probes.core.errors import LimitExceeded, UsageError

MAX_CONCURRENCY = 64
# A public Space's budgets when its operator set none: a key on a Space is never unmetered. Sized
# for a demo of a few hundred visitors a day: a visitor's probes of a few items, four models and
# a couple of conditions fit in a session (answers a prepared demo or an earlier visitor already
# bought cost nothing); one address (a classroom behind one router) gets two sessions' worth an
# hour; and the whole Space at most 600 requests an hour, about $1-$2 an hour on a small vision
# model's prices (a few US cents per 100 image requests), a bill an operator notices before it
# hurts. Each budget is a variable to set (PROBE_SESSION_BUDGET ...); a visitor past one pastes
# their own key.
DEFAULT_BUDGETS = {"PROBE_SESSION_BUDGET": 40, "PROBE_CLIENT_BUDGET": 80, "PROBE_GLOBAL_BUDGET": 600}
# Proxies in front of the app that append to X-Forwarded-For: a Space has 1; a chain longer than
# this is a typo (and would make every client's address the socket peer's).
MAX_PROXIES = 16
# Sessions on a public Space: 500 kept hold at most ~350 MB of Gradio's per-session state, and
# stay well above the visitors a Space serves at once (a class of sixty, a demo's passers-by); one
# address opens at most 240 in ten minutes: a class of sixty behind one router, each phone loaded
# a few times, fits; a script needs 20 minutes to push a visitor out of the 500, idle meanwhile.
PUBLIC_SESSIONS, PUBLIC_NEW_SESSIONS = 500, 240
GRADIO_SESSIONS = 10_000  # Gradio's own default capacity
# Calls a second one address may make to the class's named endpoints on a public Space: a notebook
# running a class makes one or two; a script of 120 made-up students made dozens, each 5-70 ms of
# the app's CPU, and slowed another visitor to 4-5x idle; held to 10 a second, 2.4-3.5x; to 5,
# 2.1-3.0x (BENCHMARKS "Third attack round"), and a call opening a session counts as 5 since.
PUBLIC_CLASS_API_RATE = 5
NEW_SESSION_WINDOW = 600.0  # seconds in which an address's new sessions are counted


@dataclass(frozen=True)
class Limits:
    public: bool
    max_items: int  # items one request may design (all the stimuli x prompts of a benchmark)
    max_values: int  # values one swept parameter may take
    max_canvas: int  # pixels a side of a generated picture
    max_text: int  # characters in a text field (a question, parameters, a name ...)
    max_upload_images: int  # images one question may carry
    max_upload_pixels: int  # pixels of one uploaded image (checked before decoding)
    max_upload_bytes: int
    max_eval_results: int  # results one evaluation may ask for (items x models x modes x perturbations)
    max_visitor_results: int  # results a visitor's session store may hold (public mode)
    deadline: float  # seconds of work one request may take before it is stopped
    session_budget: int | None = None
    client_budget: int | None = None
    global_budget: int | None = None  # per hour
    default_budgets: bool = False  # public, and the operator set no budget: DEFAULT_BUDGETS apply
    hf_models: tuple[str, ...] = ()  # in public mode, the only local models a visitor may ask
    allowed_models: tuple[str, ...] = ()  # in public mode, model ids on the server's keys beyond the catalogue
    trusted_proxies: int = 0  # proxies in front of the app that append to X-Forwarded-For
    max_sessions: int = GRADIO_SESSIONS  # sessions Gradio keeps (state_session_capacity)
    new_sessions: int | None = None  # new sessions one address may open in NEW_SESSION_WINDOW
    # A class's answers may join the pooled people rows on a public Space (each student then counted
    # as a Human-tab visitor is); off, they stay in the teacher's own results. PROBE_CLASS_PUBLISH.
    class_publish: bool = True
    class_api_rate: int | None = None  # calls a second one address may make to the class's named endpoints

    @classmethod
    def from_environment(cls, environ: dict[str, str] | None = None) -> Limits:
        env = os.environ if environ is None else environ
        public = _public(env)
        local_items = _whole(env, "PROBE_MAX_ITEMS", default=1_000_000, what="items", low=1, example=5_000_000)
        return cls(
            public=public,
            max_items=20_000 if public else local_items,
            max_values=50 if public else 1_000,
            max_canvas=2048 if public else 8192,
            max_text=10_000 if public else 100_000,
            max_upload_images=4 if public else 16,
            max_upload_pixels=16_000_000 if public else 40_000_000,
            max_upload_bytes=(20 if public else 50) * 1024 * 1024,
            max_eval_results=5_000 if public else local_items,
            max_visitor_results=5_000,
            deadline=120.0 if public else 3600.0,
            session_budget=_budget(env, "PROBE_SESSION_BUDGET", public),
            client_budget=_budget(env, "PROBE_CLIENT_BUDGET", public),
            global_budget=_budget(env, "PROBE_GLOBAL_BUDGET", public),
            default_budgets=public and not any(env.get(name, "").strip() for name in DEFAULT_BUDGETS),
            hf_models=_listed(env, "PROBE_HF_MODELS"),
            allowed_models=_listed(env, "PROBE_ALLOWED_MODELS"),
            trusted_proxies=_whole(
                env,
                "PROBE_TRUSTED_PROXIES",
                default=1 if env.get("SPACE_ID") else 0,
                what="proxies",
                high=MAX_PROXIES,
                example=1,
            ),
            max_sessions=_whole(env, "PROBE_MAX_SESSIONS", default=PUBLIC_SESSIONS if public else GRADIO_SESSIONS,
                                what="sessions", low=10, high=1_000_000, example=PUBLIC_SESSIONS),
            new_sessions=_whole(env, "PROBE_NEW_SESSIONS", default=PUBLIC_NEW_SESSIONS if public else None,
                                what="sessions", low=1, example=PUBLIC_NEW_SESSIONS),
            class_publish=_flag(env, "PROBE_CLASS_PUBLISH", default=not public, meaning="classes publish to the people rows"),
            class_api_rate=_whole(env, "PROBE_CLASS_API_RATE", default=PUBLIC_CLASS_API_RATE if public else None,
                                  what="calls a second", low=1, example=PUBLIC_CLASS_API_RATE),
        )  # fmt: skip

    # --- checks: each raises a clear LimitExceeded before any work is done -------------------

    def text(self, what: str, value: str | None) -> str:
        value = value or ""
        if len(value) > self.max_text:
            raise LimitExceeded(f"the {what} has {len(value):,} characters; at most {self.max_text:,} are allowed")
        return value

    def concurrency(self, value: int | None) -> int | None:
        if value is not None and not 1 <= value <= MAX_CONCURRENCY:
            raise LimitExceeded(f"concurrency is 1 to {MAX_CONCURRENCY} requests at once per model; {value} asked")
        return value

    def design(self, what: str, items: int) -> None:
        if items > self.max_items:
            hint = "" if self.public else " (PROBE_MAX_ITEMS raises this bound)"
            raise LimitExceeded(f"{what} would design {items:,} items; at most {self.max_items:,} here{hint}")

    def values(self, name: str, count: int) -> None:
        if count > self.max_values:
            raise LimitExceeded(f"--param {name}: {count:,} values; at most {self.max_values:,} per parameter")

    def data(self, data: str | None) -> str | None:
        """A local data folder (or dataset name): never in public mode, where it would read the
        server's disk or make it download any dataset."""
        data = (data or "").strip() or None
        if data is not None and self.public:
            raise LimitExceeded(
                "this public playground reads no data folders: use the built-in benchmarks or upload images"
            )
        return data

    def benchmark(self, benchmark_id: str) -> str:
        """Benchmark ids naming a server path (`custom:PATH`, or a path alone as the command
        line's `run PATH` takes one: the playground never reads it either) are off limits in
        public mode."""
        self.text("benchmark id", benchmark_id)
        if self.public and (":" in benchmark_id or benchmark_id.startswith(("/", "~", ".")) or "\\" in benchmark_id):
            raise LimitExceeded(
                "this public playground runs no folders of the server (custom:PATH): upload images instead"
            )
        return benchmark_id

    def model(self, model_id: str, catalogue: set[str], own_key: bool) -> str:
        """In public mode: local models only as the operator lists them (PROBE_HF_MODELS), never
        a server folder; models on the server's keys only from the catalogue (or
        PROBE_ALLOWED_MODELS). With a visitor's own key, any model of that provider."""
        self.text("model id", model_id)
        if not self.public:
            return model_id
        provider, _, name = model_id.partition("/")
        if provider == "hf":
            if name not in self.hf_models:
                listed = ", ".join(f"hf/{m}" for m in self.hf_models) or "none"
                raise LimitExceeded(f"local models here are only those the operator set up ({listed})")
            return model_id
        if not own_key and model_id not in catalogue and model_id not in self.allowed_models:
            raise LimitExceeded(
                f"{model_id} is not among this Space's models on its own keys: choose one from the list, "
                "or paste your own key for that provider"
            )
        return model_id

    def files(self, paths: Sequence[str | os.PathLike], roots: Sequence[str | os.PathLike]) -> None:
        """In public mode, a file is read only where the app itself put it (`roots`: Gradio's
        folder of uploads): never any other file of the server. The message is the same whether
        the path exists or not, and does not name it; nothing on disk is touched to decide,
        beyond resolving the path's links."""
        if not self.public:
            return
        allowed = [Path(root).resolve() for root in roots]
        for path in paths:
            where = Path(os.path.abspath(os.fspath(path)))
            try:
                where = where.resolve()
            except (OSError, RuntimeError):  # a link loop: not one of our files either
                pass
            if not any(where.is_relative_to(root) for root in allowed):
                raise LimitExceeded("this public playground reads no files of the server: upload the images instead")

    def admit(
        self,
        *,
        benchmark: str | None = None,
        data: str | None = None,
        model: str | None = None,
        catalogue: Collection[str] = (),
        own_key: bool = False,
        files: Sequence[str | os.PathLike] = (),
        roots: Sequence[str | os.PathLike] = (),
    ) -> None:
        """The one gate for public mode: everything a request would read or run (a benchmark
        id, a data folder, a model id, files) passes here before anything is built, however it
        arrived (a page event, a link, an API call, a session's saved state). The playground
        applies it where a spec becomes a benchmark (`ui.items.benchmark_of`, `resolve`) and
        where a model id becomes a backend (`ui.common.backend_for`, the replay of a link), so
        no entry point can go round it. Refusals are decided on the words alone, never by
        looking at the disk, so they cannot tell whether a server path exists."""
        if benchmark is not None:
            self.benchmark(benchmark)
        self.data(data)
        if model is not None:
            self.model(model, set(catalogue), own_key)
        if files:
            self.files(files, roots)

    def evaluation(self, results: int) -> None:
        if results > self.max_eval_results:
            raise LimitExceeded(
                f"this evaluation asks for {results:,} results; at most {self.max_eval_results:,} at once here: "
                "choose fewer items, models, modes or perturbations"
            )


def _public(env) -> bool:
    flag = env.get("PROBE_PUBLIC", "").strip()
    if flag in ("0", "false", "no"):
        return False
    if flag in ("1", "true", "yes"):
        return True
    if flag:
        raise UsageError(f"PROBE_PUBLIC={flag!r}: write 1 (public mode) or 0 (local)")
    return bool(env.get("SPACE_ID"))


def _flag(env, name: str, default: bool, meaning: str) -> bool:
    flag = env.get(name, "").strip().lower()
    if not flag:
        return default
    if flag in ("0", "false", "no"):
        return False
    if flag in ("1", "true", "yes"):
        return True
    raise UsageError(f"{name}={flag[:40]!r}: write 1 ({meaning}) or 0")


def _listed(env, name: str) -> tuple[str, ...]:
    """Model ids, comma-separated: PROBE_HF_MODELS's without `hf/` (they are what follows it),
    PROBE_ALLOWED_MODELS's whole (provider/model). An entry that could never match is refused."""
    entries = tuple(entry.strip() for entry in env.get(name, "").split(",") if entry.strip())
    for entry in entries:
        shown = entry if len(entry) <= 40 else entry[:37] + "..."
        if len(entry) > 300 or not entry.isprintable():
            raise UsageError(f"{name}: {shown!r} is not a model id; separate ids with commas")
        if name == "PROBE_HF_MODELS" and entry.startswith("hf/"):
            raise UsageError(f"{name}: write {entry[3:]!r} without hf/ (the list names local models only)")
        if name == "PROBE_ALLOWED_MODELS" and "/" not in entry.strip("/"):
            raise UsageError(f"{name}: {shown!r} is not a model id: write provider/model, e.g. openai/gpt-4o")
    return entries


def _whole(
    env,
    name: str,
    default: int | None = None,
    what: str = "requests",
    low: int = 0,
    high: int | None = None,
    example: int = 200,
) -> int | None:
    """A whole number of `what` from `low` to `high` (None: no bound above: a budget or a bound the
    operator raises on purpose), read like a flag: anything else stops the app with what to write."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    wrong = f"{name}={shown!r} is not a whole number of {what}"
    try:
        value = float(raw) if any(c in raw for c in ".eE") else int(raw)
    except ValueError:
        raise UsageError(f"{wrong} (e.g. {name}={example})") from None
    if not math.isfinite(value) or value != int(value):
        raise UsageError(f"{wrong} (e.g. {name}={example})")
    if value < low or (high is not None and value > high):
        above = f"from {low:,} to {high:,}" if high is not None else f"of {low:,} or more"
        raise UsageError(f"{name}={shown!r}: write a number of {what} {above}")
    return int(value)


def _budget(env, name: str, public: bool) -> int | None:
    """A budget as set; unset, none locally and the default on a public Space."""
    return _whole(env, name, default=DEFAULT_BUDGETS[name] if public else None)


_current: Limits | None = None


def client_address(forwarded: str, peer: str, trusted_proxies: int) -> str:
    """The address of the client: the one the outermost trusted proxy saw and appended to
    X-Forwarded-For. Entries further left are the client's own words (anyone can send the
    header), so they are never taken: a client cannot name a new address for a fresh budget."""
    if trusted_proxies <= 0:
        return peer
    entries = [entry.strip() for entry in forwarded.split(",") if entry.strip()]
    return entries[-trusted_proxies] if len(entries) >= trusted_proxies else peer


def current() -> Limits:
    """The limits of this process, read from the environment once (tests reset with `reload`)."""
    global _current
    if _current is None:
        _current = Limits.from_environment()
    return _current


def reload() -> Limits:
    global _current
    _current = None
    return current()


def whole_number(what: str, value: float | int | str | None, low: int, high: int, default: int | None = None) -> int:
    """A whole number from a form or an API call, within [low, high]; None or "" gives `default`."""
    if value is None or value == "":
        if default is None:
            raise UsageError(f"give the {what}")
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"the {what} must be a whole number") from None
    if not math.isfinite(number) or number != int(number):
        raise UsageError(f"the {what} must be a whole number")
    if not low <= number <= high:
        raise LimitExceeded(f"the {what} is {low:,} to {high:,}; {number:,.0f} given")
    return int(number)
