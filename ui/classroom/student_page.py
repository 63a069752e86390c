"""The student's page of its own (`/class/CODE`): what a phone opens from the class's link or QR
code, served by the same app beside Gradio's routes but not through them: one small HTML page
(assets/class/student.html, about 8 KB, no script library) and a few light JSON routes that call
the same `probes.classroom` logic as the `class_*` API, so there is one class with two doors.

- `POST /class/api/join` {code, name, page}: a seat (the page's own again if it has one);
- `GET /class/api/state?token=`: what the student sees now;
- `GET /class/api/picture?token=&index=`: the item's picture, only while it is shown to them;
- `POST /class/api/answer` {token, answer};
- `GET /class/api/events?token=`: the student's view pushed (server-sent events) whenever the class
  moves on, is revealed or ends; for the teacher's token, the presenter's count as it changes.

Pushed, not polled: a hall of idle phones holds one parked stream each and costs nothing until
the teacher moves the class on (probes/classroom/changes.py); a comment every PING seconds keeps
proxies from closing a quiet stream. Streams are bounded per token and in all.

A class's members are bounded by the class (its seats, a share per address, wrong codes per
address: probes/classroom/registry.py), not by the app's bound on new Gradio sessions per
address, which these routes never open: a lecture hall of 300 behind one school router joins.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import threading
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from probes.classroom import ClassError, ClassRoom, Pace, Who
from probes.core.errors import ProbeError
from probes.running.limits import client_address
from probes.running.limits import current as limits
from ui.classroom import lessons, pictures
from ui.classroom.views import progress_line

API = "/class/api/"
PAGE = (Path(__file__).resolve().parents[2] / "assets" / "class" / "student.html").read_text(encoding="utf-8")
CODE = re.compile(r"[A-Za-z0-9-]{1,16}")
PAGE_ID = re.compile(r"[0-9a-f]{16,64}")
MAX_BODY = 4096  # bytes of a join or an answer
PING = 15.0  # seconds between keep-alive comments on a quiet stream
STREAMS_PER_TOKEN = 4  # a phone's page, reopened a few times
MAX_STREAMS = 5_000  # in all: a few halls at once

_streams: Counter[str] = Counter()
_streams_lock = threading.Lock()


def routes() -> list[Route]:
    """The student page's routes, for the app's `launch(app_kwargs={"routes": ...})`."""
    return [
        Route("/class/{code}", page, methods=["GET"]),
        Route(API + "join", join, methods=["POST"]),
        Route(API + "state", state, methods=["GET"]),
        Route(API + "picture", picture, methods=["GET"]),
        Route(API + "answer", answer, methods=["POST"]),
        Route(API + "events", events, methods=["GET"]),
    ]


def link(origin: str, code: str) -> str:
    """The student page of class `code` on the app at `origin` (scheme://host[:port][/root])."""
    return f"{origin.rstrip('/')}/class/{code}"


async def page(request: Request) -> Response:
    code = request.path_params["code"]
    if not CODE.fullmatch(code):
        return HTMLResponse("<p>This is not a class code: check it on the teacher's screen.</p>", status_code=404)
    code = code.replace("-", "").upper()
    shown = PAGE.replace("__CODE__", code).replace("__API__", API)
    return HTMLResponse(shown, headers={"Cache-Control": "no-store"})


def _refused(message: str, status: int = 200) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def _body(request: Request) -> dict[str, Any] | None:
    """The request's JSON object (at most MAX_BODY bytes), or None."""
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            return None
    try:
        found = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) else None


def _who(request: Request, page_id: object) -> Who:
    headers = request.headers
    peer = request.client.host if request.client else "unknown"
    address = client_address(headers.get("x-forwarded-for", ""), peer, limits().trusted_proxies)[:64]
    # A page keeps one seat through the random id it stores; a caller that sends none is a page
    # of its own each time (and counted against its address's share).
    session = f"page:{page_id}" if isinstance(page_id, str) and PAGE_ID.fullmatch(page_id) else secrets.token_hex(8)
    return Who(session, address)


def _work(action) -> JSONResponse:
    try:
        return JSONResponse(action())
    except (ClassError, ProbeError) as exc:
        return _refused(str(exc))


async def join(request: Request) -> Response:
    body = await _body(request)
    if body is None:
        return _refused("send a JSON object: code, name, page", 400)

    def seat() -> dict[str, Any]:
        room, token = lessons.CLASSES.join(lessons.plain_text(body.get("code")),
                                           lessons.plain_text(body.get("name")) or None, _who(request, body.get("page")))  # fmt: skip
        return {"student_token": token, "name": room.student(token).name, "code": room.code}

    return _work(seat)


def _token(request: Request) -> str:
    return request.query_params.get("token", "")[:64]


async def state(request: Request) -> Response:
    token = _token(request)
    return _work(lambda: lessons.room_for(token).item_for(token))


async def picture(request: Request) -> Response:
    token = _token(request)
    try:
        room = lessons.room_for(token)
        view = room.item_for(token)
        index = int(request.query_params.get("index", ""))
    except (ClassError, ProbeError, ValueError):
        return Response(status_code=404)
    if view.get("index") != index:  # only the item on this student's screen, never one ahead
        return Response(status_code=404)
    data = await asyncio.to_thread(pictures.png, room, token, index)
    if data is None:
        return Response(status_code=404)
    # An item's picture never changes: the phone keeps it while the item is on screen.
    return Response(data, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"})


async def answer(request: Request) -> Response:
    body = await _body(request)
    if body is None:
        return _refused("send a JSON object: token, answer", 400)
    token = lessons.plain_text(body.get("token"))

    def take() -> dict[str, Any]:
        room = lessons.room_for(token)
        done = room.answer(token, lessons.answer_text(body.get("answer")))
        if room.lesson.pace is Pace.SELF:  # on to the next item at once
            done["next"] = room.item_for(token)
        return done

    return _work(take)


async def events(request: Request) -> Response:
    token = _token(request)
    try:
        room = lessons.room_for(token)
        teacher = room.is_teacher(token)
        if not teacher:
            room.student(token)
    except (ClassError, ProbeError) as exc:
        return _refused(str(exc), 404)
    with _streams_lock:
        if _streams[token] >= STREAMS_PER_TOKEN or sum(_streams.values()) >= MAX_STREAMS:
            return _refused("too many pages follow this class from here: close a tab and reload", 429)
        _streams[token] += 1
    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(_stream(room, token, teacher), media_type="text/event-stream", headers=headers)


async def _stream(room: ClassRoom, token: str, teacher: bool) -> AsyncIterator[str]:
    changes = room.tally if teacher else room.stage
    try:
        seen = -1
        while True:
            version = await changes.wait(seen, PING)
            if version == seen:
                yield ": still here\n\n"
                continue
            seen = version
            view = _view(room, token, teacher)
            yield f"data: {json.dumps(view)}\n\n"
            if "error" in view:
                return
    finally:
        with _streams_lock:
            _streams[token] -= 1
            if _streams[token] <= 0:
                del _streams[token]


def _view(room: ClassRoom, token: str, teacher: bool) -> dict[str, Any]:
    try:
        lessons.room_for(token)  # a closed or expired class: its pages are told, once
        if teacher:
            status = room.status(token)
            return {**status, "line": progress_line(status)}
        return room.item_for(token)
    except (ClassError, ProbeError) as exc:
        return {"error": str(exc)}
