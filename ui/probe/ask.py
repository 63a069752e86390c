"""The Probe tab's Ask: every chosen model under every chosen condition, the grid filled as the
answers come (one failing model or condition fails only its own cells), the prompts as sent, and
the address that replays the probe. ui/probe/__init__.py wires it to the page."""

from __future__ import annotations

import asyncio
import html
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import gradio as gr

from models.base import Backend
from models.hf_backend import loading_progress
from models.types import ImagePart, Output
from probes.asking.prompting import assemble_prompt
from probes.core.benchmark import Benchmark
from probes.core.errors import RunError, UsageError
from probes.core.types import Item, Origin, Result, Status
from probes.demo.conditions import CONDITIONS, probe_config
from probes.files.images import check_image_file
from probes.running import answerers
from probes.running.budget import BudgetExceeded
from probes.running.deadline import run_within
from probes.running.limits import current as limits
from probes.running.link_store import today
from probes.running.runner import Progress, RunPlan, preflight
from probes.running.store import Store
from probes.running.store_chain import failure_key
from ui import items as item_choice
from ui.common import backend_for, model_failure, paid_by_server, session_keys, spender, user_message
from ui.probe.export import Probed
from ui.probe.grid import Cell, Sent, grid_html, prompts_html, sent_as, tally_words
from ui.probe.share import encode
from ui.sessions import Lease, lease_off_loop, link_id, link_store, release_after, room_for, run_store, visitor

CONDITION_PIXELS = 16_000_000  # conditions asked at once: as many as fit these pixels (at least one)
GENERATED_PIXELS = 1152 * 1152  # a generated picture, counted as the papers' largest canvas


def status_html(message: str, warning: bool = False) -> str:
    """Plain text as HTML: a message is never read as markup (a path or a quote shows as itself)."""
    mark = "⚠ " if warning else ""
    return f'<p class="probe-status{" warning" if warning else ""}">{mark}{html.escape(message)}</p>' if message else ""


# --- asking -----------------------------------------------------------------------------------


async def probe(
    request: gr.Request,
    spec: item_choice.ItemSpec | None,
    model_1: str | None,
    model_2: str | None,
    model_3: str | None,
    model_4: str | None,
    chosen_conditions: Sequence[str] | None,
    *typed_keys: str,
) -> AsyncIterator[list[Any]]:
    """Ask every chosen model under every chosen condition; the grid fills as answers come (one
    failing model or condition fails only its own cells). Yields [status, grid, prompts, query,
    the finished grid as data (for the downloads; not part of the API)]."""
    models = list(dict.fromkeys(m.strip() for m in (model_1, model_2, model_3, model_4) if m and m.strip()))
    names = [name for name in CONDITIONS if name in (chosen_conditions or [])]
    keys = session_keys(*typed_keys)
    lease: Lease | None = None  # this session's store, held until every run of this probe has ended
    try:
        if not models:
            raise UsageError("choose at least one model")
        if not names:
            raise UsageError("tick at least one condition ('as asked' is the item as it is)")
        for model in models:
            limits().text("model id", model)
        benchmark, item = item_choice.resolve(spec)
        backends, refused = {}, {}
        for model in models:  # a model that cannot be asked fails only its own row
            try:
                backends[model] = backend_for(model, keys)
            except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
                refused[model] = model_failure(model, exc)
        await asyncio.to_thread(room_for, request, len(backends) * len(names))
        lease = await lease_off_loop(request)
        # Drawn at once: the prompts' images become thumbnails and their pixels go.
        sent = await asyncio.to_thread(sent_by_condition, benchmark, item, names)
        prompts = await asyncio.to_thread(prompts_html, sent)
    except BaseException as exc:
        if lease is not None:
            lease.release()
        if not isinstance(exc, Exception):  # cancelled: the visitor left
            raise
        yield [status_html(user_message(exc), warning=True), gr.update(), gr.update(), gr.update(), gr.update()]
        return
    assert lease is not None
    cells = {(m, n): Cell("failed", message=refused[m]) if m in refused else Cell() for m in models for n in names}
    # On a public Space a probe's link carries an id under which the answers paid with the
    # visitor's own key are kept (30 days), so that the link replays them for anyone; the same
    # probe asked again by the same visitor keeps them under the same link, not a new one.
    # An upload has no link (its files are the visitor's): nothing is kept for it.
    description = probe_query(spec, models, names, None)
    link = link_id(request, description) if limits().public and description else None
    query = probe_query(spec, models, names, link)
    try:
        yield [status_html(f"Asking {len(models)} model(s) under {len(names)} condition(s)…"),
               grid_html(item, models, names, cells, sent), prompts, gr.update(), None]  # fmt: skip
    except BaseException:  # the visitor left before anything was asked
        lease.release()
        raise
    done: asyncio.Queue = asyncio.Queue()
    # Read through the Space's cache and the operator's store (a prepared demo): an answer already
    # there is shown at once and costs nothing; each request sent on the server's keys is charged
    # as it goes (`spend`), and what it buys is shared with the next visitor (not an upload's).
    paid = [backends[m].model_id for m in backends if paid_by_server(m, keys)]
    store = run_store(lease, paid, private=not benchmark.cache_images)
    spend = spender(request, keys)
    kept: list[tuple[str, Output]] = []  # replies to keep under the link (not the Space's to share)
    # Requests a budget refused, by (model, condition): their cells say which budget and what to do.
    refusals: dict[tuple[str, str], BudgetExceeded] = {}

    def spend_for(name: str) -> Callable[[Backend], None]:
        def spend_noting(backend: Backend) -> None:
            try:
                spend(backend)
            except BudgetExceeded as exc:
                refusals[(typed_ids.get(backend.model_id, backend.model_id), name)] = exc
                raise

        return spend_noting

    async def ask_condition(name: str) -> None:
        """Every model under one condition: the API models in one run, so the item's images are
        decoded, hashed and encoded once for all of them (four models of 16 MP uploads took
        2.5 GB asked one by one); each local model in a run of its own, so its loading keeps
        no other pane waiting. Puts exactly one cell per model on `done`, whatever happens."""
        condition = CONDITIONS[name]
        # Every request asks for the answers' probabilities where the model gives them (the cells'
        # bars); an answer already stored without them is shown as it is, never bought again for them.
        plan_for = lambda chosen: RunPlan(benchmark, [item], [backends[m] for m in chosen], condition.mode,  # noqa: E731
                                          condition.perturbation, probe_config(condition), origin=Origin.PROBE,
                                          spend=spend_for(name), probabilities=True, keep_answers=True)  # fmt: skip
        ready = []
        for model in backends:
            try:
                preflight(plan_for([model]))
                ready.append(model)
            except RunError as exc:  # this condition does not apply to this item (no examples, no options)
                await done.put((model, name, Cell("n/a", message=str(exc))))
            except Exception as exc:  # noqa: BLE001 - the model cannot run here: its own cells say why
                await done.put((model, name, Cell("failed", message=model_failure(model, exc))))
        remote = [m for m in ready if m not in local]
        groups = ([remote] if remote else []) + [[m] for m in ready if m in local]
        await asyncio.gather(*(ask_together(group, name, plan_for(group)) for group in groups))

    async def ask_together(chosen: list[str], name: str, plan: RunPlan) -> None:
        typed = {backends[m].model_id: m for m in chosen}
        answered: set[str] = set()

        def on_result(result: Result, _: Progress) -> None:
            model = typed.get(result.model)
            if model is not None and model not in answered:
                answered.add(model)
                done.put_nowait((model, name, _cell_of(result, refusals.get((model, name)))))
                if link and result.cache_key and result.reply is not None and result.model not in paid:
                    # Not in the Space's shared cache (bought with the visitor's own key, or free):
                    # kept for the link, so that it replays for anyone who opens it.
                    kept.append((result.cache_key, Output(result.reply, result.latency or 0.0)))
                elif link and result.cache_key and _always_fails(result):
                    # No reply, and none will ever come: its reason, so that the link shows it.
                    kept.append((failure_key(result.cache_key), Output(result.error or "", 0.0)))

        failure = "no reply"
        try:
            await run_within(plan, store, limits().deadline, on_result)
        except Exception as exc:  # noqa: BLE001 - the models not yet answered fail, only their own cells
            failure = user_message(exc)
        finally:
            for model in chosen:
                if model not in answered:
                    done.put_nowait((model, name, Cell("failed", message=failure)))

    local = [m for m in backends if m.startswith("hf/")]
    typed_ids = {backends[m].model_id: m for m in backends}
    # Conditions run side by side, unless the item's pictures are large: each condition decodes
    # and transforms them on its own (eight conditions of four 16 MP uploads took 2.75 GB).
    side_by_side = asyncio.Semaphore(max(1, min(len(names), CONDITION_PIXELS // max(1, _pixels(item)))))

    async def ask_condition_in_turn(name: str) -> None:
        async with side_by_side:
            await ask_condition(name)

    tasks = [asyncio.create_task(ask_condition_in_turn(n)) for n in names] if backends else []
    total = len(backends) * len(names)
    if not tasks:
        lease.release()
        yield [
            status_html("no model could be asked", warning=True),
            grid_html(item, models, names, cells, sent),
            prompts,
            "",
            await asyncio.to_thread(Probed.kept, spec, item, models, names, cells, sent),
        ]
        return
    try:
        finished = 0
        while finished < total:
            try:  # a local model may take a while to download and load: say how far it is
                model, name, cell = await asyncio.wait_for(done.get(), timeout=1.0 if local else None)
            except TimeoutError:
                loading = [f"{m}: {p.message}" for m in local if (p := loading_progress(m)).busy]
                if loading:
                    yield [status_html("; ".join(loading)), gr.skip(), gr.skip(), gr.skip(), gr.skip()]
                continue
            finished += 1
            cells[(model, name)] = cell
            last = finished == total
            unkept = 0
            if last and kept:
                unkept = await asyncio.to_thread(_keep_for_link, link, kept, lease.store, request)
            status = tally_words(list(cells.values()), refusals.values(), done=last)
            if last and query and any(c.state in ("done", "cannot") for c in cells.values()):
                status += " · the address now replays this probe"
            if unkept:
                status += f" · {unkept} answer(s) could not be kept for the link: this Space keeps as many as it can"
            # The last frame carries everything: an API client reads its answer from it.
            shown_prompts = prompts if last else gr.skip()
            done_grid = (
                await asyncio.to_thread(Probed.kept, spec, item, models, names, cells, sent) if last else gr.skip()
            )
            yield [status_html(status), grid_html(item, models, names, cells, sent), shown_prompts,
                   query if last else gr.skip(), done_grid]  # fmt: skip
    finally:
        for task in tasks:
            task.cancel()
        release_after(lease, tasks)


def _always_fails(result: Result) -> bool:
    """A failure that every try repeats: an offline baseline that cannot answer this request (it
    cannot read the picture, or knows no such question), never a budget, a deadline or a server."""
    return result.status is Status.ERROR and answerers.is_deterministic(result.model)


def _cell_of(result: Result, refusal: BudgetExceeded | None) -> Cell:
    """A result's cell: answered, refused by a budget (with the advice), failing for good (with
    why), or failed this time."""
    if result.status is Status.ERROR and refusal is not None:
        return Cell("refused", result, message=str(refusal))
    if _always_fails(result):
        return Cell("cannot", result, message=result.error or "")
    return Cell("done", result)


def _pixels(item: Item) -> int:
    """The item's pixels, from the files' headers (nothing decoded); a generated picture, which
    has no file, counts as a large canvas."""
    total = 0
    for source in item.images:
        try:
            info = check_image_file(Path(source.path), verify=False) if source.path else None
        except Exception:  # noqa: BLE001 - an unreadable file fails when asked, not here
            info = None
        total += info.width * info.height if info is not None else GENERATED_PIXELS
    return total


def _hashed_parts(which: Item) -> list[ImagePart]:
    """A prompt's images, each hashed and let go before the next is decoded: the prompt's hash
    needs them all, its thumbnails decode them again one at a time."""
    parts = [ImagePart(source.load) for source in which.images]
    for part in parts:
        _ = part.sha256
        part.let_go()
    return parts


def sent_by_condition(benchmark: Benchmark, item: Item, names: Sequence[str]) -> dict[str, Sent]:
    """Each condition as sent (what every model is sent): the item as it asks it, its prompt and
    a thumbnail of its picture, or why it cannot be asked."""
    sent: dict[str, Sent] = {}
    for name in names:
        condition = CONDITIONS[name]
        try:
            asked, prompt = assemble_prompt(
                benchmark, item, condition.mode, condition.perturbation, _hashed_parts, _hashed_parts
            )
            sent[name] = sent_as(asked, prompt.messages)
        except Exception as exc:  # noqa: BLE001 - shown in place of the prompt
            sent[name] = Sent(None, problem=user_message(exc))
    return sent


def probe_query(
    spec: item_choice.ItemSpec | None, models: Sequence[str], names: Sequence[str], link: str | None
) -> str:
    encoded = encode(spec, models, names, link, today() if link else None) if spec is not None else None
    return f"?probe={encoded}" if encoded else ""


def _keep_for_link(link: str, kept: list[tuple[str, Output]], own: Store, request: gr.Request | None) -> int:
    """Each reply as the run stored it in the visitor's own store (with its probabilities, so a
    replay shows the same bars), else as it was answered, kept as this visitor's; how many the
    link store had no room for."""
    stored = own.cached_many([key for key, _ in kept])
    who = visitor(request)
    replies = list(dict((key, stored.get(key, output)) for key, output in kept).items())
    return len(replies) - link_store().keep(link, replies, owner=who.session, address=who.client)
