"""Session stores in public mode: an idle session's files go, all of them (the database, its
journal files and the folder of encoded images a run keeps beside it), and a busy one's stay."""

import os
import time

from probes.running.image_cache import cache_dir
from ui.session_stores import IDLE_SECONDS
from ui.sessions import SessionStores


def _age(path, seconds):
    then = time.time() - seconds
    for p in [path, *path.rglob("*")] if path.is_dir() else [path]:
        os.utime(p, (then, then))


def test_sweeping_deletes_an_idle_sessions_store_and_its_image_folder(tmp_path):
    stores = SessionStores(tmp_path)
    idle = stores.path("idle-session")
    idle.write_bytes(b"x")
    idle.with_name(idle.name + "-wal").write_bytes(b"x")
    images = cache_dir(idle)
    (images / "ab").mkdir(parents=True)
    (images / "ab" / ("ab" + "0" * 62 + ".png1")).write_bytes(b"x")
    for path in (idle, idle.with_name(idle.name + "-wal"), images):
        _age(path, IDLE_SECONDS + 60)

    with stores.lease("busy-session") as lease:
        busy = lease.store
        cache_dir(busy.path).mkdir()
        _age(cache_dir(busy.path), IDLE_SECONDS + 60)  # an old image folder of a store in use stays with it

        stores.sweep()
        left = {p.name for p in tmp_path.iterdir()}
        assert not any(name.startswith(idle.name) for name in left)
        assert {busy.path.name, cache_dir(busy.path).name} <= left


def test_a_sessions_runs_keep_few_encoded_images(tmp_path):
    from probes.running.image_cache import ImageCache
    from ui.session_stores import SESSION_IMAGE_CACHE_BYTES

    with SessionStores(tmp_path).lease("someone") as lease:
        store = lease.store
        assert store.image_cache_bytes == SESSION_IMAGE_CACHE_BYTES <= 64 * 2**20
        assert ImageCache.beside(store.path, store.image_cache_bytes).max_bytes == SESSION_IMAGE_CACHE_BYTES


def test_the_client_address_is_the_one_the_trusted_proxy_saw():
    from probes.running.limits import client_address

    assert client_address("10.0.0.1, 203.0.113.7", "172.16.0.2", trusted_proxies=1) == "203.0.113.7"
    assert client_address("10.0.0.1, 203.0.113.7, 198.51.100.9", "172.16.0.2", trusted_proxies=2) == "203.0.113.7"
    assert client_address("203.0.113.7", "172.16.0.2", trusted_proxies=1) == "203.0.113.7"
    # No proxy trusted: the header is the client's own words, the connection's address is taken.
    assert client_address("10.0.0.1", "172.16.0.2", trusted_proxies=0) == "172.16.0.2"
    # Fewer entries than trusted proxies: the request did not come through them all.
    assert client_address("", "172.16.0.2", trusted_proxies=1) == "172.16.0.2"
    assert client_address("203.0.113.7", "172.16.0.2", trusted_proxies=2) == "172.16.0.2"
