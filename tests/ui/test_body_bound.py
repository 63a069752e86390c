"""A request's body is bounded before the app reads it: a 6 MB JSON body to an endpoint, to the
queue or to a page event is refused with 413, whether its length is declared or it comes chunked,
and the app answers the next visitor as before; uploads keep their own (larger) bound."""

from __future__ import annotations

import json

import httpx

from ui.body_bound import MAX_BODY_BYTES

ROUTES = ("/gradio_api/run/class_item", "/gradio_api/queue/join", "/gradio_api/call/class_item")


def big_body() -> bytes:
    return json.dumps({"data": ["x" * (3 * MAX_BODY_BYTES), None], "fn_index": 0, "session_hash": "s"}).encode()


def test_a_body_past_the_bound_is_refused_declared_or_chunked(serve):
    url = serve(PROBE_PUBLIC="1")
    body = big_body()
    with httpx.Client(timeout=120) as client:
        for route in ROUTES:
            declared = client.post(url + route, content=body, headers={"Content-Type": "application/json"})
            assert declared.status_code == 413 and "at most" in declared.json()["error"], route

            def chunks():
                for start in range(0, len(body), 64 * 1024):
                    yield body[start : start + 64 * 1024]

            chunked = client.post(url + route, content=chunks(), headers={"Content-Type": "application/json"})
            assert chunked.status_code == 413, (route, chunked.status_code)
        # The app is unharmed, and a body within the bound is read as before.
        small = client.post(url + "/gradio_api/run/class_item", json={"data": ["no-such-student", None]})
        assert small.status_code == 200 and "error" in small.json()["data"][0]
        assert client.get(url + "/config").status_code == 200
