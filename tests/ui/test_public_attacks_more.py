"""More attacks on public mode, through the API as an anonymous visitor would send them
(gradio_client or raw HTTP, 127.0.0.1 only, bounded in count and time), beyond issue 10's table
(tests/ui/test_public_mode.py): every endpoint given a huge list, a huge text or a huge number;
exports and previews past their bounds; server paths in the Human tab; far item numbers; paid
models clicked many times against the global budget; the people's answers quota filled from many
sessions through the page's private events; evaluations of every order of every option; path
traversal in uploads and the file route.

Attacks that get through are written as `xfail(strict=True)` tests naming what happens, so
they turn green (and must then lose the mark) when the bound lands.
"""

from __future__ import annotations

import json
import pickle
import re
import threading
import time
import urllib.error
import urllib.request
import uuid
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
from gradio_client import Client, handle_file
from PIL import Image

from probes.core.registry import get_benchmark
from probes.running.budget import Budget
from probes.running.store import Store
from tests.support.fake_servers import FakeAnthropicServer, FakeOpenAIServer
from tests.ui.attacker import (
    AppProcess,
    Bound,
    call,
    choices,
    generate,
    has_image,
    parameters,
    private_event,
    queue_call,
    refusal,
    submit,
    texts,
    timed,
    warning,
)
from tests.ui.conftest import patient_client
from ui.sessions import SESSION_DIR

PUBLIC = {"PROBE_PUBLIC": "1"}
PAID = ["openai/gpt-4o", "openai/gpt-4o-mini", "openai/gpt-4.1", "anthropic/claude-haiku-4-5"]
HUGE_TEXT = "x" * 1_000_000
HUGE_LIST = [f"x{i}" for i in range(100_000)]


@pytest.fixture
def public(serve):
    def start(**env: str) -> tuple[str, Client]:
        url = serve(**PUBLIC, **env)
        return url, patient_client(url, download_files=False)

    return start


def served_meanwhile(url: str, attack) -> object:
    """Run `attack()` in a thread; meanwhile another visitor generates a stimulus, and is served."""
    outcome: dict[str, object] = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("value", attack()))
    thread.start()
    other = patient_client(url, download_files=False)
    outputs = generate(other, 5, "gap=0.1")
    thread.join(timeout=120)
    assert not thread.is_alive(), "the attack was never answered"
    assert has_image(outputs) and not warning(outputs)
    return outcome.get("value")


def ask(client: Client, models: list[str | None], conditions: list[str] | None = None, **keys: str) -> tuple:
    """Ask in the Probe tab: up to 4 models (the other slots emptied), under `conditions` where the
    tab offers them."""
    slots = {f"model_{i + 1}": model for i, model in enumerate([*models, None, None, None, None][:4])}
    named = {p["parameter_name"] for p in parameters(client, "/probe")}
    extra = {"chosen_conditions": conditions or ["as asked"]} if "chosen_conditions" in named else {}
    return call(client, "/probe", **slots, **extra, **keys)


# --- every endpoint, every parameter ---------------------------------------------------------


def hostile_values(parameter: dict) -> list[object]:
    """What an attacker sends instead of a parameter's value: a huge list, a huge text, a huge
    number or a huge mapping, by the parameter's type."""
    kind = parameter.get("python_type", {}).get("type", "")
    component = parameter.get("component", "")
    if component == "File" or "filepath" in kind:
        return []  # files: test_path_traversal_... and the upload tests
    if kind.startswith("list"):
        return [HUGE_LIST]
    if kind in ("int", "float") or component == "Number":
        return [10**18, -(10**18)]
    if component == "Json":
        return [{f"p{i}": "1" for i in range(10_000)}, HUGE_LIST]
    if component in ("Checkbox",):
        return []
    return [HUGE_TEXT]


def hostile_call(url: str, api_name: str, name: str, value: object) -> tuple[float, str]:
    """(seconds to the answer, the answer as JSON) for one hostile value, from a fresh session."""
    attacker = patient_client(url, download_files=False)
    job = submit(attacker, api_name, **{name: value})
    started = time.monotonic()
    try:
        outputs = job.result(timeout=60)
    except Exception as exc:  # noqa: BLE001 - Gradio refusing a value before the handler is a refusal
        outputs = (f"⚠ {exc}",)
    return time.monotonic() - started, json.dumps(outputs, default=str)


def hostile_calls(url: str, client: Client) -> list[tuple[str, tuple, float, str]]:
    """Every named endpoint, each parameter in turn replaced by a hostile value, the others left
    at their defaults: (what was sent, how to send it again, seconds to the answer, the answer)."""
    named = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    answers = []
    for api_name, endpoint in named.items():
        if api_name in ("/cancel_eval",):
            continue
        for parameter in endpoint["parameters"]:
            for value in hostile_values(parameter):
                what = f"{api_name} {parameter['parameter_name']}={type(value).__name__}({len(str(value)):,} chars)"
                again = (url, api_name, parameter["parameter_name"], value)
                answers.append((what, again, *hostile_call(*again)))
    return answers


def echoed(shown: str) -> bool:
    return "x" * 10_000 in shown or "x99999" in shown


@pytest.mark.slow
def test_every_endpoint_answers_huge_lists_texts_and_numbers_quickly_without_echoing_them(public):
    url, client = public()
    bound = Bound(client)
    answers = hostile_calls(url, client)
    assert len(answers) > 30  # the premise: the API still has this many parameters to attack
    for what, again, seconds, _ in answers:
        if seconds > bound.seconds:  # the shared machine may have been busy: time both again, side by side
            bound = Bound(client)
            bound.check(hostile_call(*again)[0], what)
    echoes = [what for what, _, _, shown in answers if echoed(shown)]
    assert not echoes, echoes
    outputs = generate(patient_client(url, download_files=False), 9)
    assert has_image(outputs) and not warning(outputs)  # and the app still serves


def test_a_huge_value_for_a_list_field_is_not_echoed(public):
    _, client = public()
    for api_name, field in (("/generate_stimulus", "task"), ("/human_start", "benchmark_id")):
        message = refusal(client, api_name, **{field: HUGE_TEXT})
        assert message.startswith("⚠") and len(message) < 1_000, f"{api_name} {field}: {len(message):,} chars"


# --- the Stimulus lab ------------------------------------------------------------------------


def test_exports_and_previews_past_their_bounds_are_refused_quickly(public):
    url, client = public()
    bound = Bound(client)
    many = {"task": "blind/touching-circles", "params": {f"p{i}": "1" for i in range(10_000)}}
    wide = {"task": "blind/touching-circles", "params": {"canvas": "4096"}}
    attacks = {
        "an export of 10^9 items": lambda: refusal(client, "/export_stimuli", n=10**9),
        "an export of 1,001 items": lambda: refusal(client, "/export_stimuli", n=1001),
        "100,000 names kept fixed": lambda: refusal(client, "/export_stimuli", fixed=HUGE_LIST),
        "the names kept fixed as a mapping": lambda: refusal(client, "/export_stimuli", fixed={"canvas": "1"}),
        "an export of a 10,000-parameter spec": lambda: refusal(client, "/export_stimuli", spec=many),
        "a preview of a 10,000-parameter spec": lambda: refusal(client, "/stimulus_preview", spec=many),
        "a preview of a spec that is a list": lambda: refusal(client, "/stimulus_preview", spec=HUGE_LIST),
        "a preview at 4096 px": lambda: refusal(client, "/stimulus_preview", spec=wide),
        "an export at 4096 px": lambda: refusal(client, "/export_stimuli", spec=wide, fixed=["canvas"], n=1),
        "variant 10^18": lambda: refusal(client, "/stimulus_preview", variant=10**18),
        "a task that is not one": lambda: refusal(client, "/stimulus_preview", spec={"task": "custom:/etc"}),
    }
    for what, attack in attacks.items():
        message, took = timed(attack)
        assert message.startswith("⚠"), f"{what}: {message!r}"
        assert len(message) < 1_000, what
        bound.check(took, what)
    assert served_meanwhile(url, attacks["100,000 names kept fixed"]).startswith("⚠")


def test_a_generated_pictures_loader_travels_to_the_drawing_processes_alone():
    items = get_benchmark("blind/touching-circles").items()
    for item in items[:24]:
        item.images[0].load()  # the render cache holds pictures, as on a busy Space
    data = pickle.dumps(items[0].images[0].load)
    assert len(data) < 100_000
    assert pickle.loads(data)().tobytes() == items[0].images[0].load().tobytes()  # and draws the same


# --- numbers, paths and names in the Probe and Human tabs ----------------------------------------


def test_far_item_numbers_and_counts_are_refused_quickly(public):
    _, client = public()
    bound = Bound(client)
    attacks = {
        "item 10^18": lambda: refusal(client, "/load_item", benchmark_id="blind/touching-circles", index=10**18),
        "item -1": lambda: refusal(client, "/load_item", benchmark_id="blind/touching-circles", index=-1),
        "10^9 items to take": lambda: refusal(client, "/human_start", name="Ada", count=10**9),
        "201 items to take": lambda: refusal(client, "/human_start", name="Ada", count=201),
        "seed 10^18 to take": lambda: refusal(client, "/human_start", name="Ada", seed=10**18),
        "seed 10^18 to generate": lambda: refusal(client, "/generate_stimulus", params="", seed=10**18),
    }
    for what, attack in attacks.items():
        message, took = timed(attack)
        assert message.startswith("⚠"), f"{what}: {message!r}"
        bound.check(took, what)


def test_the_human_tab_reads_no_server_path_and_says_nothing_of_one(public, tmp_path):
    _, client = public()
    home = str(Path.home())
    for data in (home, str(tmp_path), "../../../etc", "csebuetnlp/illusionVQA-Comprehension"):
        message = refusal(client, "/human_start", name="Ada", benchmark_id="illusionvqa/comprehension", data=data)
        assert "reads no data folders" in message, message
        assert home not in message and str(tmp_path) not in message
        # Judging: the model must be one the list offers (Gradio refuses any other before the
        # handler runs); either way, nothing is read from the folder and nothing names it.
        chosen = '["openai/gpt-4o", "0-shot", "none"]'
        message = refusal(client, "/human_judge_start", judge="Ada", chosen=chosen, data=data)
        assert message.startswith("⚠") and home not in message and str(tmp_path) not in message, message
    for benchmark in (f"custom:{home}", f"custom:{tmp_path}"):
        message = refusal(client, "/human_start", name="Ada", benchmark_id=benchmark)
        # Refused by the list of choices (Gradio) or by the bound (the handler): no folder is read.
        assert message.startswith("⚠") and "does not exist" not in message and "No such file" not in message
    for chosen in ("not json", json.dumps({"a": 1})):
        message = refusal(client, "/human_judge_start", judge="Ada", chosen=chosen)
        assert message.startswith("⚠") and len(message) < 1_000


# --- budgets -------------------------------------------------------------------------------------


@pytest.fixture
def paid_servers():
    with (
        FakeOpenAIServer(responder=lambda body: "No") as openai,
        FakeAnthropicServer(responder=lambda b: "No") as other,
    ):
        env = {"OPENAI_BASE_URL": openai.base_url, "OPENAI_API_KEY": "sk-server-openai",
               "ANTHROPIC_BASE_URL": other.base_url, "ANTHROPIC_API_KEY": "sk-ant-server"}  # fmt: skip
        yield env, lambda: openai.request_count + other.request_count


def test_four_paid_models_clicked_many_times_from_many_sessions_stay_within_the_global_budget(public, paid_servers):
    env, sent = paid_servers
    url, _ = public(PROBE_GLOBAL_BUDGET="6", **env)
    cells = []
    for session in range(3):
        visitor = patient_client(url, download_files=False)
        generate(visitor, 40 + session)
        for models in [PAID] * 10 + [PAID[:1]] * 10:  # 4 paid models a click, then 1
            grid = str(ask(visitor, models)[1])
            cells += re.findall(r'<td class="cell [^"]*">.*?</td>', grid, flags=re.S)
    assert 0 < sent() <= 6  # a click again of what was answered costs nothing; the rest is refused
    refused = [cell for cell in cells if "cell failed" in cell]
    answered = [cell for cell in cells if "cell right" in cell or "cell wrong" in cell]
    assert len(refused) + len(answered) == len(cells) == 3 * (10 * 4 + 10)
    assert len(refused) >= len(cells) - 20 * 6 and all(
        re.search(r"Paste your own (OpenAI|Anthropic) key under API keys", cell) for cell in refused
    )


def test_an_address_named_by_the_client_gets_no_fresh_budget(public, paid_servers):
    env, sent = paid_servers
    url, _ = public(PROBE_CLIENT_BUDGET="2", PROBE_TRUSTED_PROXIES="1", **env)
    for number in range(3):
        # As a proxy that appends the address it saw forwards a request whose client wrote its own.
        forwarded = {"X-Forwarded-For": f"10.0.0.{number + 1}, 203.0.113.7"}
        visitor = patient_client(url, download_files=False, headers=forwarded)
        generate(visitor, 60 + number)
        ask(visitor, ["openai/gpt-4o"])
        ask(visitor, ["openai/gpt-4o-mini"])
    assert sent() <= 2  # one machine (203.0.113.7), one budget


def test_the_people_answers_quota_holds_against_many_sessions_calling_the_private_submit(public, tmp_path, monkeypatch):
    from ui import sessions

    monkeypatch.setattr(sessions, "PEOPLE", Budget(session_limit=3, client_limit=None, global_limit=5))
    url, _ = public()
    submit_event = private_event(url, "human-submit")
    answered, refusals, people = 0, [], []
    for number in range(4):
        person = patient_client(url, download_files=False)
        people.append(person.session_hash)
        started = call(person, "/human_start", name=f"Pat{number}", benchmark_id="blind/touching-circles", count=10)
        assert not warning(started)
        for _ in range(4):
            # What the page sends for Submit: the session's own state (null: the server holds it),
            # the chosen answer and an empty text box.
            outputs = queue_call(url, person.session_hash, *submit_event, [None, "Yes", ""])
            message = warning(outputs)
            if "saved" in " ".join(texts(outputs)) and not message:
                answered += 1
            elif message:
                refusals.append(message)
    # On a public Space a person's answers wait in their session's store until the test is
    # finished (then they join the shared people rows): every store counts what was written.
    with Store(tmp_path / "home" / "results.sqlite") as shared:
        stored = [r for r in shared.results() if r.model.startswith("human/")]
    for session in people:
        with sessions.SESSIONS.lease(sessions.VISITORS.known(session), create=False) or nullcontext() as lease:
            stored += [r for r in lease.store.results() if r.model.startswith("human/")] if lease else []
    assert answered == len(stored) == 5  # 3 + 2 + 0 + 0: each session at most 3, everyone 5
    assert len(refusals) == 11 and all("as many people's answers as it can" in m for m in refusals)


# --- evaluations ---------------------------------------------------------------------------------


def test_every_order_of_every_option_over_every_family_is_refused_before_work(public):
    url, client = public()
    bound = Bound(client)
    families = [b for b in parameters(client, "/run_eval")[0]["type"]["items"]["enum"] if b.startswith("illusion/")]
    form = {"benchmarks": families, "models": ["baseline/chance"], "modes": choices(client, "/run_eval", "modes"),
            "perturbations": choices(client, "/run_eval", "perturbations"), "limit": 0}  # fmt: skip
    assert "rotate-options-all" in form["perturbations"]  # the premise
    # Designing a family's items takes seconds the first time (every figure is measured): any
    # visitor's first look does it; what is timed here is the bound on results.
    call(client, "/load_item", benchmark_id=families[0])
    (status, *_), took = timed(lambda: call(client, "/run_eval", **form))
    assert "at most 5,000 at once" in texts(status)[0], status
    bound.check(took, "every order of every option of every illusion family, in every mode")
    message = served_meanwhile(url, lambda: warning(call(patient_client(url), "/run_eval", **form)))
    assert "at most 5,000" in message


# --- files -------------------------------------------------------------------------------------


def upload_raw(url: str, name: str, data: bytes) -> str:
    """POST a file to Gradio's upload route with a file name of our choosing; its server path."""
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
            f"Content-Type: image/png\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(
        url + "/gradio_api/upload", body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())[0]


def fetch_file(url: str, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"{url}/gradio_api/file={path}", timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def test_path_traversal_in_uploads_and_the_file_route_reaches_no_server_file(public, tmp_path):
    url, client = public()
    png = tmp_path / "dot.png"
    Image.new("RGB", (64, 64), "white").save(png)
    escaped = Path("/tmp") / f"escaped-{uuid.uuid4().hex}.png"
    stored = upload_raw(url, f"../../../../../..{escaped}", png.read_bytes())
    assert not escaped.exists() and "/../" not in stored  # the name chose no folder
    message = refusal(client, "/use_upload", files=[handle_file(str(png))], question="How many?")
    assert not message
    # A path the visitor never uploaded, sent as if it were an upload: the server's files.
    fn_index, trigger = private_event(url, "probe-use-upload")
    operator_store = tmp_path / "home" / "results.sqlite"
    for target in ("/etc/passwd", str(operator_store), str(Path(__file__).resolve())):
        try:
            outputs = queue_call(url, uuid.uuid4().hex, fn_index, trigger,
                                 [[{"path": target, "meta": {"_type": "gradio.FileData"}}], "How many?", "", ""])  # fmt: skip
        except RuntimeError:
            continue  # refused by Gradio before the handler
        shown = json.dumps(outputs)
        assert "root:" not in shown and "SQLite format" not in shown and not has_image(tuple(outputs)), target
    # Gradio's file route: no store, no session store, no source file.
    session_stores = list(SESSION_DIR.glob("*.sqlite"))
    for target in [str(operator_store), "/etc/passwd", str(Path(__file__).resolve()), *map(str, session_stores[:3])]:
        status, body = fetch_file(url, target)
        assert status >= 400 and b"SQLite format" not in body and b"root:" not in body, target


# --- attacks that take the app's time or memory: the app in its own process ------------------------


@pytest.fixture
def app_process(tmp_path):
    apps: list[AppProcess] = []

    def start(**env: str) -> AppProcess:
        app = AppProcess(tmp_path / f"app{len(apps)}", env).start()
        apps.append(app)
        return app

    yield start
    for app in apps:
        app.stop()


def test_an_enormous_illusion_figure_is_refused_quickly(app_process):
    app = app_process()
    client = patient_client(app.url, download_files=False)
    bound = Bound(client)
    params = "size_min=1e4 canvas=768 inducers=flipped difference=0.23378 illusion_strength=1.24 seed=0"
    job = submit(client, "/generate_stimulus", task="illusion/delboeuf", params=params, seed=0)
    started = time.monotonic()
    try:
        outputs = job.result(timeout=bound.seconds + 5)
    except Exception as exc:  # noqa: BLE001 - not answered in time: the assertion below says so
        outputs = (f"not answered: {type(exc).__name__}",)
    bound.check(time.monotonic() - started, "illusion/delboeuf size_min=1e4")
    assert warning(outputs)


def test_an_illusion_strength_out_of_range_is_named(public):
    _, client = public()
    message = refusal(client, "/generate_stimulus", task="illusion/ebbinghaus", params="illusion_strength=1e5")
    assert "illusion_strength" in message, message


def ramp(path: Path, shift: int) -> Path:
    """4000 x 4000 (16 MP, the most a public upload may have) in a few MB: smooth colour ramps."""
    y, x = np.mgrid[0:4000, 0:4000]
    pixels = np.stack([(x + shift) % 256, y % 256, (x + y) % 256], axis=-1).astype(np.uint8)
    Image.fromarray(pixels, "RGB").save(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("every_condition", [False, True], ids=["as-asked", "every-condition"])
def test_the_largest_uploads_asked_of_four_models_keep_the_app_under_one_and_a_half_gigabytes(
    app_process, tmp_path, every_condition
):
    with FakeOpenAIServer(responder=lambda b: "No") as openai, FakeAnthropicServer(responder=lambda b: "No") as other:
        app = app_process(OPENAI_BASE_URL=openai.base_url, ANTHROPIC_BASE_URL=other.base_url)
        highest, stop = [app.rss()], threading.Event()

        def sample() -> None:
            while not stop.wait(0.05) and app.alive:
                highest[0] = max(highest[0], app.rss())
                if highest[0] > 3 * 2**30:  # enough to know: spare the shared machine
                    app.stop()

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            client = patient_client(app.url, download_files=False)
            files = [handle_file(str(ramp(tmp_path / f"ramp{i}.png", i))) for i in range(4)]
            assert not refusal(client, "/use_upload", files=files, question="Which is brightest?")
            conditions = choices(client, "/probe", "chosen_conditions") if every_condition else None
            outputs = ask(client, PAID, conditions, openai_key="sk-visitor-own", anthropic_key="sk-ant-visitor-own")
            cells = 4 * len(conditions or [None])
            status = " ".join(texts(outputs[:1]))  # every cell answered, or a condition that does not apply
            assert f"of {cells} answered" in status and not re.search(r"failed|refused|cannot", status), status
        except Exception:  # the app killed past 3 GB: the memory assertion below says so
            if app.alive:
                raise
        finally:
            stop.set()
            sampler.join()
    assert highest[0] < 1.5 * 2**30, f"the app reached {highest[0] / 2**20:,.0f} MB"
