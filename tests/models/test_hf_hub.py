"""A Hub model's size before it is asked, its download and loading progress, the cache offline,
and failing at once when the Hub cannot be reached: against a fake Hub on 127.0.0.1 that serves
the tiny LLaVA's files the way huggingface.co does (model info with file sizes, the tree
listing, HEAD and GET of /resolve/), through the real huggingface_hub and transformers code."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from models import hf_backend, hf_hub, hf_progress
from models.registry import create, describe
from models.types import GenerateConfig, ImagePart, Unavailable, user
from tests.conftest import shapes_image

REPO = "tiny/llava"
SHA = "0123456789abcdef0123456789abcdef01234567"
# Files a load must not fetch: another format's weights, a duplicate .bin beside safetensors, docs.
EXTRA = {"onnx/model.onnx": b"o" * 60_000, "pytorch_model.bin": b"b" * 40_000, "README.md": b"# tiny\n"}


class FakeHub:
    """huggingface.co's few endpoints a snapshot download uses, for the repos given."""

    def __init__(self, repos: dict[str, dict[str, bytes]]):
        self.repos = repos
        self.requests: list[tuple[str, str]] = []  # (method, path)
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_HEAD(self):
                hub.answer(self, head=True)

            def do_GET(self):
                hub.answer(self, head=False)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def paths(self, kind: str) -> list[str]:
        return [path for _, path in self.requests if kind in path]

    def answer(self, handler: BaseHTTPRequestHandler, head: bool) -> None:
        path = unquote(urlparse(handler.path).path)
        self.requests.append((handler.command, path))
        if path == "/":
            return self.send(handler, 200, b"hub", head=head)
        if path.startswith("/api/models/"):
            rest = path.removeprefix("/api/models/")
            repo = "/".join(rest.split("/")[:2])
            files = self.repos.get(repo)
            if files is None:
                return self.send(handler, 404, b'{"error":"Repository not found"}', {"X-Error-Code": "RepoNotFound"})
            if "/tree/" in rest:
                body = [_tree_entry(name, data) for name, data in sorted(files.items())]
            else:
                body = {
                    "id": repo,
                    "modelId": repo,
                    "sha": SHA,
                    "private": False,
                    "siblings": [{"rfilename": name, "size": len(data)} for name, data in sorted(files.items())],
                }
            return self.send(handler, 200, json.dumps(body).encode(), {"Content-Type": "application/json"})
        if "/resolve/" in path:
            repo, _, rest = path.lstrip("/").partition("/resolve/")
            name = rest.partition("/")[2]
            data = self.repos.get(repo, {}).get(name)
            if data is None:
                return self.send(handler, 404, b"not found", {"X-Error-Code": "EntryNotFound"})
            headers = {"X-Repo-Commit": SHA, "ETag": f'"{hashlib.sha256(data).hexdigest()}"'}
            return self.send(handler, 200, data, headers, head=head)
        return self.send(handler, 404, b"not found")

    @staticmethod
    def send(handler, status: int, body: bytes, headers: dict | None = None, head: bool = False) -> None:
        handler.send_response(status)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if not head:
            handler.wfile.write(body)


def _tree_entry(name: str, data: bytes) -> dict:
    entry = {"type": "file", "path": name, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
    if name.endswith((".safetensors", ".bin", ".onnx")):
        entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 130}
    return entry


@pytest.fixture
def hub_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hf_hub.forget()
    hf_backend._failures.clear()
    yield tmp_path / "hf-home"
    hf_backend.evict_idle()
    hf_hub.forget()
    hf_backend._failures.clear()


@pytest.fixture
def hub(hub_home, tiny_vlm, monkeypatch):
    files = {file.name: file.read_bytes() for file in Path(tiny_vlm).iterdir() if file.is_file()}
    server = FakeHub({REPO: {**files, **EXTRA}})
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    server.wanted = files  # what a load needs: every file save_pretrained wrote
    yield server
    server.stop()


def ask(backend, image_kind: str = "circle"):
    messages = [user(ImagePart(shapes_image(image_kind)), "what is it?")]
    return asyncio.run(backend.generate(messages, GenerateConfig(max_tokens=5)))


def test_the_download_size_is_said_before_the_model_is_asked(hub):
    expected = sum(len(data) for data in hub.wanted.values())
    info = describe(f"hf/{REPO}")
    assert info.available
    assert info.reason == f"downloads {hf_progress.size_text(expected)} on first use"
    backend = create(f"hf/{REPO}")
    assert backend.download_size() == expected  # the weights and small files, no ONNX, .bin or README
    assert backend.weights_size() == expected
    assert hub.paths("/resolve/") == []  # nothing downloaded yet
    assert len(hub.paths("/api/models/")) == 1  # the listing is asked once per id, then kept


def test_first_use_downloads_with_progress_then_answers_as_the_folder_does(hub, tiny_vlm):
    seen: list[hf_progress.LoadingProgress] = []
    unsubscribe = hf_progress.subscribe(lambda state: seen.append(state) if state.source == REPO else None)
    try:
        reply = ask(create(f"hf/{REPO}"))
    finally:
        unsubscribe()
    expected = sum(len(data) for data in hub.wanted.values())
    stages = [state.stage for state in seen]
    assert stages[0] == "downloading" and stages[-1] == "ready"
    assert stages.index("loading") > max(i for i, stage in enumerate(stages) if stage == "downloading")
    downloads = [state for state in seen if state.stage == "downloading"]
    assert downloads[-1].done == downloads[-1].total == expected  # every byte counted, none twice
    assert [s.done for s in downloads] == sorted(s.done for s in downloads)
    loads = [state for state in seen if state.stage == "loading" and state.total]
    assert loads and loads[-1].done == loads[-1].total  # every weight tensor placed
    fetched = {path.rpartition(f"/resolve/{SHA}/")[2] for path in hub.paths("/resolve/")}
    assert fetched == set(hub.wanted)  # only what a load needs
    assert create(f"hf/{REPO}").loading_progress().stage == "ready"
    assert reply.text == ask(create(f"hf/{tiny_vlm}")).text  # the same weights as the folder


def test_once_downloaded_the_model_works_without_the_hub(hub, hub_home):
    first = ask(create(f"hf/{REPO}"))
    hf_backend.evict_idle()
    hub.stop()
    hf_hub.forget()  # the process learns again that the Hub is gone
    info = describe(f"hf/{REPO}")
    assert info.available and info.reason.startswith("weights present (Hugging Face cache")
    backend = create(f"hf/{REPO}")
    assert backend.download_size() == 0
    assert ask(backend).text == first.text


def test_an_unknown_id_is_unavailable_with_the_reason(hub):
    info = describe("hf/tiny/no-such-model")
    assert not info.available and "no model tiny/no-such-model" in info.reason


@pytest.fixture
def silent_hub(hub_home, monkeypatch):
    """A Hub address that takes connections and never answers: the slow kind of offline."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    connections = []

    def take():
        while True:
            try:
                connections.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=take, daemon=True).start()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.setattr(hf_hub, "HUB_TIMEOUT", 0.5)
    yield connections
    listener.close()
    for connection in connections:
        connection.close()


def test_offline_a_model_not_downloaded_fails_at_once_and_the_hub_is_asked_once(silent_hub):
    with pytest.raises(Unavailable, match="not downloaded here and the Hugging Face Hub .* cannot be reached"):
        ask(create("hf/org/first-model"))
    info = describe("hf/org/second-model")
    assert not info.available and "cannot be reached" in info.reason
    assert create("hf/org/second-model").download_size() is None
    assert create("hf/org/second-model").notes() == "not downloaded"
    assert len(silent_hub) == 1  # one probe, remembered: no retries, nothing per model
    state = create("hf/org/first-model").loading_progress()
    assert state.stage == "failed" and "cannot be reached" in state.message


def test_a_closed_port_is_offline_too(hub_home, monkeypatch):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(Unavailable, match="cannot be reached"):
        create("hf/org/model").check()
