"""What every tab shares: the results store, the model list, backends with a visitor's own keys
(one password box per provider that takes a key, from the providers' declarations), the
per-session request budget, how errors reach a visitor, and safe formatting of model output."""

from __future__ import annotations

import difflib
import functools
import html
import inspect
import logging
import math
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from models import registry
from models.base import Backend
from models.models_file import Endpoint, url_problem
from models.types import BackendError, ImagePart
from probes.core.errors import LimitExceeded, ProbeError, UsageError
from probes.core.types import Result, Status
from probes.running import answerers
from probes.running.budget import BUDGET_WORDS, SESSION, Budget, BudgetExceeded, requests_words
from probes.running.limits import current as limits
from probes.running.store import Store
from ui.choices import model_label, working_first
from ui.page_words import page_words
from ui.sessions import shared_store, visitor

log = logging.getLogger("ui")

# What a visitor can fix; anything else is a bug, logged here and shown as a generic message.
USER_ERRORS = (ProbeError, BackendError)
INTERNAL_ERROR = "something went wrong on our side (the details are in the server's log); please try again"


def user_message(exc: BaseException) -> str:
    """The message a visitor sees for `exc`: its own text when it is a mistake they can fix,
    a generic one (with the traceback in the server's log) when it is a bug."""
    if isinstance(exc, USER_ERRORS):
        return page_words(str(exc))  # the page's fields, not the command line's options
    log.error("internal error in a handler", exc_info=exc)
    return INTERNAL_ERROR


def store() -> Store:
    """The operator's store (thread-safe), under $PROBE_HOME."""
    return shared_store()


@functools.cache
def endpoints() -> tuple[registry.Endpoint, ...]:
    return registry.load_endpoints()


def model_choices() -> list[tuple[str, str]]:
    """(label, id) for every model a visitor may ask here, those that answer here first, then the
    unavailable ones with their reason in a few words (in public mode, local models only as the operator lists them)."""
    choices = []
    bounds = limits()
    infos = answerers.catalogue(endpoints()) + [answerers.describe(f"hf/{m}") for m in bounds.hf_models]
    for info in infos:
        if bounds.public and info.id.startswith("hf/") and info.id.partition("/")[2] not in bounds.hf_models:
            continue
        choices.append((model_label(info.id, info.available, info.reason), info.id, info.available))
    return working_first(choices)


@functools.cache
def catalogue_ids() -> frozenset[str]:
    return frozenset(info.id for info in answerers.catalogue(endpoints()))


def key_providers() -> list[registry.Provider]:
    """Declared providers whose requests take a key: each gets a password box."""
    return [provider for provider in registry.PROVIDERS.values() if provider.key_variable]


# A server of the visitor's own, named on the page (private mode only): its models are `own/<name>`.
OWN = "own"
OWN_URL = "own_url"  # where `session_keys` keeps the server's address beside its key


def key_boxes(prefix: str) -> list[gr.Textbox]:
    """One password box per key provider, in declaration order, then a server of one's own (its
    address and key: not shown on a public Space, which calls no server a visitor names).
    `session_keys` reads them in this order."""
    boxes = [
        gr.Textbox(
            type="password",
            label=f"{provider.title} key",
            info=f"instead of the server's {provider.key_variable}",
            elem_id=f"{prefix}-{provider.name}-key",
        )
        for provider in key_providers()
    ]
    local = not limits().public
    boxes.append(gr.Textbox("", label="Your own OpenAI-compatible server (vLLM, Ollama ...): its address",
                            placeholder="http://localhost:11434/v1", info=f"then ask {OWN}/<model name>",
                            visible=local, elem_id=f"{prefix}-own-url"))  # fmt: skip
    boxes.append(gr.Textbox("", type="password", label="Its key (if it wants one)", visible=local,
                            elem_id=f"{prefix}-own-key"))  # fmt: skip
    return boxes


def session_keys(*typed: str | None) -> dict[str, str]:
    """A visitor's own keys, from the boxes of `key_boxes` (same order), and their own server's
    address and key: held only for the request that carries them."""
    names = [provider.name for provider in key_providers()] + [OWN_URL, OWN]
    return {name: key.strip() for name, key in zip(names, typed, strict=False) if key and key.strip()}


def with_key_parameters(handler: Callable[..., Any]) -> Callable[..., Any]:
    """Name a handler's `*typed_keys` after the key providers (`openai_key`, `anthropic_key` ...)
    in the signature Gradio reads, so API clients see one named parameter per key box."""
    # The signature as written (with *typed_keys), kept: the app may be built more than once.
    signature = handler.__dict__.setdefault("_written_signature", inspect.signature(handler))
    kept = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    names = [f"{provider.name}_key" for provider in key_providers()] + [OWN_URL, f"{OWN}_key"]
    keys = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default="", annotation=str) for name in names
    ]
    handler.__signature__ = signature.replace(parameters=[*kept, *keys])  # type: ignore[attr-defined]
    return handler


def backend_for(model_id: str, keys: dict[str, str]) -> Backend:
    """The backend for a model: with the visitor's own key if they gave one for its provider
    (a new backend, never shared), else the process-wide one on the server's keys; `own/<model>`
    on the server the visitor named (private mode only)."""
    provider = model_id.partition("/")[0]
    if provider == OWN:
        return own_backend(model_id, keys)
    limits().admit(model=model_id, catalogue=catalogue_ids(), own_key=provider in keys)  # the public-mode gate
    if provider in keys:
        return answerers.create(model_id, endpoints(), api_key=keys[provider])
    return answerers.resolve(model_id, endpoints())


def own_backend(model_id: str, keys: dict[str, str]) -> Backend:
    """A model on the visitor's own server, for their requests only (a new backend, never
    shared): refused on a public Space, whose server must not be sent anywhere a visitor names."""
    if limits().public:
        raise LimitExceeded(
            f"this public playground calls no server a visitor names ({model_id}): ask a listed model, or run "
            "the playground yourself (README) to ask your own server"
        )
    address = keys.get(OWN_URL, "")
    problem = url_problem(address)
    if not address or problem:
        raise UsageError(f"{model_id}: write your server's address under API keys first ({problem or 'none given'})")
    name = model_id.partition("/")[2]
    endpoint = Endpoint(OWN, address, None, (name,))
    return answerers.create(model_id, (endpoint,), api_key=keys.get(OWN) or None)


def paid_by_server(model_id: str, keys: dict[str, str]) -> bool:
    if model_id.partition("/")[0] == OWN:
        return False  # the visitor's own server
    return answerers.paid_by_server(model_id, endpoints(), frozenset(keys))


@functools.cache
def budget() -> Budget:
    """Requests on the server's keys: per session, per client address and per hour for everyone
    (PROBE_SESSION_BUDGET, PROBE_CLIENT_BUDGET, PROBE_GLOBAL_BUDGET)."""
    bounds = limits()
    return Budget(bounds.session_budget, bounds.client_budget, bounds.global_budget)


def charge(request: gr.Request | None, requests: int) -> None:
    """Take `requests` on the server's keys from this visitor's budgets, or raise BudgetExceeded."""
    who = visitor(request)
    budget().take(who.session, who.client, requests)


def spender(request: gr.Request | None, keys: dict[str, str]) -> Callable[[Backend], None]:
    """A run's `spend`: each request sent on the server's keys taken from this visitor's budgets
    as it goes out (an answer already cached costs nothing); BudgetExceeded refuses it, its
    message saying in full which budget, when it refills and what this visitor can do."""

    def spend(backend: Backend) -> None:
        if paid_by_server(backend.model_id, keys):
            try:
                charge(request, 1)
            except BudgetExceeded as exc:
                raise BudgetExceeded(refused_words(exc, backend.model_id), exc.which, exc.limit,
                                     exc.refills_in) from None  # fmt: skip

    return spend


def refused_words(exc: BudgetExceeded, model_id: str) -> str:
    """A request a budget refused, in full: which budget, when it has room again, and what this
    visitor can do (paste a key only where a key box takes one for this model's provider)."""
    which = BUDGET_WORDS.get(exc.which, "a budget")
    said = f"Not sent: {which} of {requests_words(exc.limit)} on this Space's keys is used up"
    if exc.which == SESSION or exc.refills_in is None:
        said += ", and it does not refill."
        later = ""
    else:
        said += f"; it has room again in {_minutes(exc.refills_in)}."
        later = " now, or come back then"
    provider = model_id.partition("/")[0]
    titles = {p.name: p.title for p in key_providers()}
    if provider in titles:
        said += f" Paste your own {titles[provider]} key under API keys to ask {model_id}{later}."
    else:
        said += f" {model_id} is asked on this Space's own server, where no key of yours can be used"
        said += ": come back then." if later else "."
    if not later:
        said += " Answers this Space already has, and the offline baselines, still cost nothing."
    return said


def _minutes(seconds: float) -> str:
    if seconds < 60:
        return "under a minute"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


def name_hint(model_id: str) -> str:
    """For a model of a provider whose names this playground lists (OpenAI, Anthropic, a models
    file's servers), named with a name it does not list: that the name may be wrong, and the
    nearest listed names. Empty where the name is listed or the provider takes any name."""
    provider, _, name = model_id.partition("/")
    if not name or provider in (OWN, "hf", "baseline"):
        return ""
    listed = sorted({m for m in (*catalogue_ids(), *limits().allowed_models) if m.partition("/")[0] == provider})
    if not listed or model_id in listed:
        return ""
    near = difflib.get_close_matches(model_id, listed, n=3, cutoff=0.6) or listed[:3]
    known = registry.providers(endpoints()).get(provider)
    title = known.title if known is not None else provider
    return f"{model_id} is not a name listed here for {title}: the name may be wrong (listed: {', '.join(near)})"


def model_failure(model_id: str, exc: BaseException) -> str:
    """Why a model cannot be asked (`user_message`), with `name_hint` beside it."""
    message = user_message(exc)
    hint = name_hint(model_id)
    return f"{message.rstrip('. ')}. {hint}" if hint and hint not in message else message


def escape(text: str) -> str:
    """Model text for a Markdown component: every character shown as itself, nothing rendered
    (no HTML, no images, no links, no emphasis)."""
    escaped = text or ""
    # ":" too: Gradio's Markdown turns "https://..." into a link before it reads backslashes, and
    # the link then showed them and the entities ("huggingface\.co&#x27;"); "https\://" is no link.
    for character in "\\`*_{}[]()#+-.!|~:":
        escaped = escaped.replace(character, "\\" + character)
    # Entities last, so their own `&`, `#` and `;` are never backslashed (a quote would show as
    # "&#x27;"); `>` needs no backslash since it becomes `&gt;`, which starts no quote block.
    escaped = html.escape(escaped, quote=True)
    return escaped.replace("\n", "  \n")


MARKS = {True: "✓ correct", False: "✗ wrong", None: "– not graded"}


def result_summary(result: Result, shown_target: str | None) -> str:
    """One model's verdict as Markdown: status, parsed answer, correctness, latency, tokens.
    Everything the model wrote is escaped."""
    if result.status is Status.ERROR:
        return f"**{escape(result.model)}** · ⚠ error\n\n{escape(result.error or '')}"
    parsed = "—" if result.parsed is None else escape(str(result.parsed))
    lines = [
        f"**{escape(result.model)}** · {MARKS[result.correct]}",
        f"parsed: {parsed} ({result.status.value})",
    ]
    if shown_target is not None:
        lines.append(f"expected: {escape(shown_target)}")
    timing = f"{result.latency:.2f} s" if result.latency is not None else "—"
    tokens = "—" if result.input_tokens is None else f"{result.input_tokens} in / {result.output_tokens} out"
    lines.append(f"latency: {timing} · tokens: {tokens}" + (" · from cache" if result.cached else ""))
    return "  \n".join(lines)


def join_errors(messages: Sequence[str]) -> str:
    return "\n".join(f"⚠ {escape(m)}" for m in messages)


IMAGE_FILES = Path(tempfile.gettempdir()) / "probe-images"


def image_file(part: ImagePart) -> str:
    """A PNG file of an image part, named by its content hash and written once."""
    IMAGE_FILES.mkdir(parents=True, exist_ok=True)
    path = IMAGE_FILES / f"{part.sha256}.png"
    if not path.exists():
        temporary = path.with_suffix(f".{threading.get_ident()}.tmp")
        temporary.write_bytes(part.png_bytes)
        temporary.replace(path)  # atomic: a concurrent reader never sees half a file
    return str(path)
