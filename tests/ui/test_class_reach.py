"""The class's link and QR code name an address phones can open: the machine's own network address
when the teacher's page is at 127.0.0.1 or localhost and the app answers there (it listens on
0.0.0.0), and a warning saying why phones cannot open it, and what to do, where it does not."""

from __future__ import annotations

import socket
from types import SimpleNamespace

import pytest

from probes.classroom import Classes, Lesson
from tests.probes.test_classroom import touching
from ui.classroom import lessons, teacher
from ui.classroom.reach import network_addresses, reach
from ui.classroom.views import qr_svg


def listener(host: str) -> socket.socket:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, 0))
    server.listen(8)
    return server


@pytest.fixture
def lan() -> str:
    addresses = network_addresses()
    if not addresses:
        pytest.skip("this machine has no network address but loopback")
    return addresses[0]


def test_a_loopback_page_is_linked_at_the_machines_network_address_when_the_app_answers_there(lan):
    with listener("0.0.0.0") as server:  # as `python app.py` listens
        port = server.getsockname()[1]
        for page in (f"http://127.0.0.1:{port}/", f"http://localhost:{port}/?__theme=dark", f"http://[::1]:{port}/"):
            found = reach(page)
            assert found.origin == f"http://{lan}:{port}" and not found.warning, (page, found)


def test_a_loopback_page_of_an_app_that_answers_nowhere_else_says_why_phones_cannot_open_it(lan):
    with listener("127.0.0.1") as server:  # GRADIO_SERVER_NAME=127.0.0.1
        port = server.getsockname()[1]
        found = reach(f"http://127.0.0.1:{port}/")
    assert found.origin == f"http://127.0.0.1:{port}"
    assert "phones cannot open it" in found.warning and "GRADIO_SERVER_NAME=0.0.0.0" in found.warning


def test_an_address_on_the_network_or_a_space_is_linked_as_it_is():
    for page, origin in (("https://someone-demo.hf.space/?class=X", "https://someone-demo.hf.space"),
                         ("http://192.0.2.77:7860/", "http://192.0.2.77:7860")):  # fmt: skip
        assert reach(page) == reach(page).__class__(origin)


def test_the_presenter_shows_and_encodes_the_link_phones_open(lan, monkeypatch):
    monkeypatch.setattr(lessons, "CLASSES", Classes())
    room = lessons.CLASSES.open(Lesson(tuple(touching())))
    teacher._reached.clear()
    with listener("0.0.0.0") as server:
        port = server.getsockname()[1]
        request = SimpleNamespace(headers={"referer": f"http://127.0.0.1:{port}/"})
        presenter, qr, *_ = teacher.restore(room.teacher_token, request)
    link = f"http://{lan}:{port}/class/{room.code}"
    assert link in presenter and "phones cannot open" not in presenter
    assert qr == qr_svg(link)  # the code a phone's camera reads is this very link
    teacher._reached.clear()
    with listener("127.0.0.1") as server:
        port = server.getsockname()[1]
        request = SimpleNamespace(headers={"referer": f"http://localhost:{port}/"})
        presenter, qr, *_ = teacher.restore(room.teacher_token, request)
    assert f"http://localhost:{port}/class/{room.code}" in presenter and "phones cannot open it" in presenter
