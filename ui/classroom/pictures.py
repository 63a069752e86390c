"""A class's pictures, encoded once: a hall of phones asking for the item on screen must not make
the server encode it again for each of them. Kept by (class code, item index), the last
KEPT_PICTURES of them; a class's item never changes, so neither does its picture."""

from __future__ import annotations

import base64
import io
import threading
from collections import OrderedDict

from probes.classroom import ClassRoom

KEPT_PICTURES = 64

_kept: OrderedDict[tuple[str, int], bytes | None] = OrderedDict()
_lock = threading.Lock()


def png(room: ClassRoom, token: str, index: int) -> bytes | None:
    """The PNG of item `index` of `room` as `token`'s holder may see it (None: it has no picture)."""
    key = (room.code, index)
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    images = room.image(token, index)
    data = None
    if images:
        buffer = io.BytesIO()
        images[0].convert("RGB").save(buffer, format="PNG")
        data = buffer.getvalue()
    with _lock:
        _kept[key] = data
        while len(_kept) > KEPT_PICTURES:
            _kept.popitem(last=False)
    return data


def data_uri(room: ClassRoom, token: str, index: int) -> str | None:
    data = png(room, token, index)
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")
