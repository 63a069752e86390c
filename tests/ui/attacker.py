"""The public app as an anonymous visitor meets it, for attack tests and `bench/abuse.py`: calls by
parameter name (the API's parameters move as tabs grow, their names stay), the warning a reply
carries, and the app served by `python app.py` in a process of its own (so an attack that gets
through costs a process we can kill, not the test runner), with its memory read from /proc.

Traffic goes to 127.0.0.1 only; nothing is downloaded (the app runs with the Hub offline).
"""

from __future__ import annotations

import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
PAGE_WAIT = 180.0  # seconds the app may take to start on a busy 2-core machine


# --- calling the API ---------------------------------------------------------------------------


def parameters(client, api_name: str) -> list[dict]:
    cache = client.__dict__.setdefault("_named_parameters", {})
    if api_name not in cache:
        named = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
        cache.update({name: endpoint["parameters"] for name, endpoint in named.items()})
    return cache[api_name]


def arguments(client, api_name: str, named: Mapping[str, Any]) -> list[Any]:
    """Positional arguments for `api_name`: the values named, the endpoint's defaults for the rest
    ("" for a text box, [] for a list, None otherwise)."""
    values = []
    known = parameters(client, api_name)
    unknown = set(named) - {p["parameter_name"] for p in known}
    if unknown:
        raise KeyError(f"{api_name} has no parameter {', '.join(sorted(unknown))}")
    for parameter in known:
        name = parameter["parameter_name"]
        if name in named:
            values.append(named[name])
        elif parameter.get("parameter_has_default"):
            values.append(parameter.get("parameter_default"))
        else:
            kind = parameter.get("python_type", {}).get("type", "")
            values.append("" if kind == "str" else [] if kind.startswith("list") else None)
    return values


def call(client, api_name: str, /, **named: Any) -> tuple:
    """The endpoint's outputs for these named inputs (a tuple even for one output)."""
    outputs = client.predict(*arguments(client, api_name, named), api_name=api_name)
    return outputs if isinstance(outputs, tuple) else (outputs,)


def refusal(client, api_name: str, /, **named: Any) -> str:
    """The warning the endpoint answers these inputs with ("" if none); an error Gradio raises
    before the handler runs (a number past its component's maximum) counts as one."""
    from gradio_client.exceptions import AppError

    try:
        return warning(call(client, api_name, **named))
    except AppError as exc:
        return f"⚠ {exc}"


def choices(client, api_name: str, parameter: str) -> list[str]:
    """The values a list parameter offers (e.g. every condition of the Probe tab); [] if none."""
    for entry in parameters(client, api_name):
        if entry["parameter_name"] == parameter:
            kind = entry.get("type", {})
            return list(kind.get("items", kind).get("enum", []))
    return []


def submit(client, api_name: str, /, **named: Any):
    """As `call`, without waiting: a Job (`.result(timeout=...)`)."""
    return client.submit(*arguments(client, api_name, named), api_name=api_name)


def texts(outputs: Any) -> list[str]:
    """Every text a reply shows: strings and the values of component updates, as a person reads
    them (tags dropped, entities and Markdown backslashes undone)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            plain = html.unescape(re.sub(r"<[^>]+>", "", value))
            found.append(re.sub(r"\\(.)", r"\1", plain))
        elif isinstance(value, Mapping):
            if "value" in value:
                walk(value["value"])
        elif isinstance(value, list | tuple):
            for entry in value:
                walk(entry)

    walk(outputs)
    return found


def warning(outputs: Any) -> str:
    """The first warning ("⚠ ...") a reply carries, or ""."""
    for text in texts(outputs):
        if "⚠" in text:
            return text[text.index("⚠") :].strip()
    return ""


def has_image(outputs: tuple) -> bool:
    """Whether the first output is a picture (a file path, as such or in an update)."""
    first = outputs[0] if outputs else None
    if isinstance(first, Mapping):
        first = first.get("value")
    if isinstance(first, Mapping):
        first = first.get("path") or first.get("url")
    return isinstance(first, str) and bool(first)


def generate(client, seed: int, params: str = "") -> tuple:
    """A normal visitor's request: one touching-circles stimulus."""
    return call(client, "/generate_stimulus", task="blind/touching-circles", params=params, seed=seed)


def timed(action) -> tuple[Any, float]:
    started = time.monotonic()
    value = action()
    return value, time.monotonic() - started


class Bound:
    """How long a refusal may take: a generous ceiling that still tells a refusal before the work
    from the work itself (an export of 10^9 items, a 4096 px drawing: minutes), 30 s or ten times a
    normal small request timed in the same test. A 2 s floor once failed on a loaded machine (a
    10,000-parameter spec's refusal took 5 s to travel there and back)."""

    def __init__(self, client, seed: int = 1):
        _, self.baseline = timed(lambda: generate(client, seed))
        self.seconds = max(30.0, 10 * self.baseline)

    def check(self, seconds: float, what: str) -> None:
        assert seconds <= self.seconds, f"{what} took {seconds:.2f} s (bound {self.seconds:.2f} s)"


# --- events the page calls but the API does not list (api_visibility="private") -----------------


def private_event(url: str, elem_id: str, event: str = "click") -> tuple[int, int]:
    """(fn_index, trigger_id) of the event a component with `elem_id` fires: what a browser
    sends, and so what anyone can send."""
    with urllib.request.urlopen(url + "/config", timeout=60) as response:
        config = json.loads(response.read())
    ids = [c["id"] for c in config["components"] if c.get("props", {}).get("elem_id") == elem_id]
    assert ids, f"no component #{elem_id}"
    for index, dependency in enumerate(config["dependencies"]):
        if [ids[0], event] in [list(target) for target in dependency.get("targets", [])]:
            return dependency.get("id", index), ids[0]
    raise AssertionError(f"#{elem_id} has no {event} event")


def queue_call(url: str, session_hash: str, fn_index: int, trigger_id: int, data: list, headers=None) -> list:
    """Call an event over Gradio's queue as the page does (join, then read the event stream);
    returns its outputs. `session_hash` names the session whose state the event sees."""
    body = {"data": data, "event_data": None, "fn_index": fn_index, "trigger_id": trigger_id,
            "session_hash": session_hash}  # fmt: skip
    request = urllib.request.Request(
        url + "/gradio_api/queue/join",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
    stream = urllib.request.Request(f"{url}/gradio_api/queue/data?session_hash={session_hash}", headers=headers or {})
    with urllib.request.urlopen(stream, timeout=120) as response:
        for raw in response:
            line = raw.decode("utf-8", errors="replace").strip()
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("msg") == "process_completed":
                output = message.get("output") or {}
                if not message.get("success", True):
                    raise RuntimeError(f"the event failed: {output.get('error')}")
                return output.get("data", [])
    raise RuntimeError("the event stream ended without a result")


# --- the app in its own process -----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class AppProcess:
    """`python app.py` on 127.0.0.1 in public mode, its home, temp folder (session stores,
    previews, Gradio's cache) and log under `folder`; the Hub offline."""

    def __init__(self, folder: Path, env: Mapping[str, str] | None = None):
        self.folder = Path(folder)
        self.extra = dict(env or {})
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.log_path = self.folder / "app.log"

    def environment(self, port: int) -> dict[str, str]:
        temp = self.folder / "tmp"
        temp.mkdir(parents=True, exist_ok=True)
        env = {name: value for name, value in os.environ.items() if not name.startswith(("PROBE_", "GRADIO_"))}
        env.pop("SPACE_ID", None)
        env.update({
            "PROBE_PUBLIC": "1", "PROBE_HOME": str(self.folder / "home"), "TMPDIR": str(temp),
            "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "GRADIO_ANALYTICS_ENABLED": "False",
            "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1",
        })  # fmt: skip
        env.update(self.extra)
        return env

    def start(self) -> AppProcess:
        port = free_port()
        self.folder.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [sys.executable, "app.py"], cwd=REPO, env=self.environment(port), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        log.close()
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + PAGE_WAIT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the app exited ({self.process.returncode}): {self.log()[-2000:]}")
            try:
                with urllib.request.urlopen(self.url + "/config", timeout=5):
                    return self
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the app did not answer within {PAGE_WAIT:.0f} s")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # its own session: the app and its workers only
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        self.process = None

    def restart(self) -> AppProcess:
        self.stop()
        return self.start()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    # -- memory, from /proc --

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def tree(self) -> list[int]:
        """The app's process and its descendants (an export's drawing workers)."""
        found, queue = [], [self.pid]
        while queue:
            pid = queue.pop()
            found.append(pid)
            for task in Path(f"/proc/{pid}/task").glob("*"):
                try:
                    queue.extend(int(child) for child in (task / "children").read_text().split())
                except OSError:
                    continue
        return found

    def rss(self) -> int:
        """Bytes resident in the app's process tree now."""
        return sum(_status_kb(pid, "VmRSS") for pid in self.tree()) * 1024

    def reset_peak(self) -> bool:
        """Start the app process's high-water mark afresh (Linux 4.0+); False where not allowed."""
        try:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")
            return True
        except OSError:
            return False

    def peak(self) -> int:
        """Bytes: the app process's high-water mark (VmHWM)."""
        return _status_kb(self.pid, "VmHWM") * 1024

    def disk(self) -> int:
        """Bytes the app has written under its folder (home, session stores, temp files, log)."""
        total = 0
        for path in self.folder.rglob("*"):
            try:
                if path.is_file() and not path.is_symlink():
                    total += path.stat().st_size
            except OSError:
                continue
        return total

    def __enter__(self) -> AppProcess:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0
