"""What the app derives from a browser session, keyed by a server secret so that nobody can make
it up: the mark after a person's name in public mode (`human/Ada #3f9a0c7e12b4`) and the file
name of a session's store.

A Gradio session hash is chosen by the client, so anything computed from it with a public
function can be searched for offline: four hex digits of its sha256 once let a visitor find, in
0.03 s, a session whose tag matched another person's, and overwrite their answers. Here every
derived value is an HMAC-SHA256 with a secret the client never sees, so the only way to learn a
session's tag is to ask this server; a tag has TAG_HEX hex digits (48 bits), so hitting a chosen
person's tag takes ~2.8e14 requests. Independently of the bits, the first session to take a
tagged name owns it for the life of the process (`Owners`): a colliding session is refused, not
merged with the owner's answers.

The secret: `PROBE_SESSION_SECRET` when set (at least 32 characters; on a Space without
persistent storage a Space secret keeps tags and store names stable across restarts), else 32
random bytes made at first start in `$PROBE_HOME/session-secret`, readable by the app's user
only (0600). If that file cannot be written, a secret for this process alone is used (tags then
change at a restart, which loses nothing: a tag only separates people who typed one name).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import logging
import os
import secrets
import threading
from collections import OrderedDict
from pathlib import Path

from probes.core.errors import NameRejected, UsageError

SECRET_VARIABLE = "PROBE_SESSION_SECRET"
SECRET_FILE = "session-secret"
MIN_SECRET = 32  # characters of PROBE_SESSION_SECRET
TAG_HEX = 12  # hex digits of a person's tag: 48 bits, short enough to read beside a name
MAX_OWNERS = 200_000  # tagged names remembered with their session; the least recent go first

log = logging.getLogger(__name__)


def server_secret() -> bytes:
    """The secret every session-derived value is keyed by (see the module's docstring)."""
    return _secret(os.environ.get(SECRET_VARIABLE, "").strip(), os.environ.get("PROBE_HOME", ".probe"))


@functools.cache
def _secret(from_environment: str, home: str) -> bytes:
    if from_environment:
        if len(from_environment) < MIN_SECRET:
            raise UsageError(
                f"{SECRET_VARIABLE} has {len(from_environment)} characters; give at least {MIN_SECRET} "
                "(e.g. the output of: python -c 'import secrets; print(secrets.token_hex(32))')"
            )
        return from_environment.encode()
    path = Path(home) / SECRET_FILE
    try:
        return _read_or_make(path)
    except OSError as exc:
        log.warning("the session secret cannot be kept in %s (%s): using one for this process only", path, exc)
        return secrets.token_bytes(32)


def _read_or_make(path: Path) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: two processes starting at once agree on the first one's secret.
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(handle, "w") as file:
            file.write(secrets.token_hex(32))
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)  # a copy restored with looser permissions: only the app's user reads it
    text = path.read_text().strip()
    if len(text) < MIN_SECRET:  # cut short (a crash between create and write): make it again
        path.unlink(missing_ok=True)
        return _read_or_make(path)
    return text.encode()


def keyed(purpose: str, session: str) -> str:
    """HMAC-SHA256 of `session` for `purpose` (domain-separated: a tag tells nothing of a store
    name), as 64 hex digits."""
    message = f"{purpose}\0{session}".encode("utf-8", errors="surrogatepass")
    return hmac.new(server_secret(), message, hashlib.sha256).hexdigest()


def tag(session: str) -> str:
    """A person's mark in public mode: TAG_HEX hex digits of the session's keyed digest."""
    return keyed("tag", session)[:TAG_HEX]


class Owners:
    """Which session took each tagged name first (by its keyed digest, never the session hash
    itself): a second session with the same tag (a collision, found or forged) is refused instead
    of writing over the first one's answers. Bounded: past MAX_OWNERS the least recently used
    names are forgotten (their tags still carry 48 bits)."""

    def __init__(self, bound: int = MAX_OWNERS):
        self.bound = bound
        self._owners: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, name: str, session: str) -> None:
        """Take `name` for `session`, or raise NameRejected if another session holds it."""
        me = keyed("owner", session)
        with self._lock:
            holder = self._owners.setdefault(name, me)
            self._owners.move_to_end(name)
            if not hmac.compare_digest(holder, me):
                raise NameRejected(
                    f"{name} is another session's: reload the page for a tag of your own, or choose another name"
                )
            while len(self._owners) > self.bound:
                self._owners.popitem(last=False)


OWNERS = Owners()
