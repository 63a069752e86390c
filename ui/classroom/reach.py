"""The address phones open: the class's link and QR code name the app as a phone in the room can
reach it, not as the teacher's own browser does.

After `python app.py` the teacher's page is `http://127.0.0.1:7860` (or localhost): an address of
the teacher's own machine that no phone can open. There the link names the machine's address on
its network instead, where the app answers on it (it listens on 0.0.0.0 by default); where it does
not (started with GRADIO_SERVER_NAME=127.0.0.1, or a machine with no network), the link stays as
it is and the teacher is told why phones cannot open it and what to do. A page opened at a
non-loopback address (a Space, a server, the machine's own address) is linked as it is.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

REACH_TIMEOUT = 0.5  # seconds to wait for the app at the machine's own network address
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", "0.0.0.0", "::"}


@dataclass(frozen=True)
class Reach:
    origin: str  # scheme://host[:port] phones should open
    warning: str = ""  # why phones may not open it, and what to do


def reach(page: str) -> Reach:
    """Where phones reach the app whose page (as the teacher's browser sent it) is `page`."""
    parts = urlsplit(page or "")
    if not parts.scheme or not parts.hostname:
        return Reach("")
    origin = f"{parts.scheme}://{parts.netloc}"
    if not _loopback(parts.hostname):
        return Reach(origin)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    for address in network_addresses():
        if _answers(address, port):
            return Reach(f"{parts.scheme}://{_host(address)}:{port}")
    listening = "this computer's network address" if network_addresses() else "a network"
    return Reach(origin, (
        f"{parts.hostname} is this computer's own address: phones cannot open it, and the app does not answer on "
        f"{listening}. Start it listening on the network (GRADIO_SERVER_NAME=0.0.0.0 python app.py, the default) "
        "with the phones on the same network, or run it as a Space."
    ))  # fmt: skip


def network_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback: the one its default route leaves from
    first (a UDP socket's connect sends nothing), then those its host name resolves to."""
    found: list[str] = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never sent to, only routed
            found.append(probe.getsockname()[0])
    except OSError:
        pass
    try:
        found += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        pass
    return [a for a in dict.fromkeys(found) if not _loopback(a) and not ipaddress.ip_address(a).is_unspecified]


def _loopback(host: str) -> bool:
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _answers(address: str, port: int) -> bool:
    try:
        with socket.create_connection((address, port), timeout=REACH_TIMEOUT):
            return True
    except OSError:
        return False


def _host(address: str) -> str:
    return f"[{address}]" if ":" in address else address
