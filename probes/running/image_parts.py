"""A run's images as prompt parts: each drawn or decoded, hashed and encoded at most once per
store, however many items, prompts and models show it.

The store remembers each image reference's content hash, and the image cache beside it keeps
the encoded bytes by that hash. An image known by its hash is never loaded: its bytes come from
the image cache (or the file itself). One seen for the first time is drawn or decoded and hashed
once (other items showing it wait for that), shared with those items until the item that drew
it is prepared, and its hash saved with the next result.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from models.types import ImagePart
from probes.asking.prompting import Prompt
from probes.core.types import ImageSource, Item
from probes.files.images import file_as_sent
from probes.running.drawing_process import DrawingProcess
from probes.running.group_commit import GroupCommit
from probes.running.image_cache import ImageCache
from probes.running.store import Store

LARGE_PIXELS = 4_000_000  # a picture this large is encoded as soon as it is first hashed (see _first_sight)


class ImageParts:
    """`send_encoded`: every model of the run is sent our PNG, so an image seen for the first time
    is encoded at once and its pixels let go; baselines and local models read pixels, so theirs
    stay until asked. `threads`, set by the runner for the length of a run, is where images are
    drawn, decoded, hashed and encoded (outside a run: the calling thread)."""

    def __init__(self, store: Store, images: ImageCache | None, commits: GroupCommit, send_encoded: bool):
        self.store = store
        self.images = images
        self.send_encoded = send_encoded
        self.threads: ThreadPoolExecutor | None = None
        self._commits = commits
        # Image reference -> content hash (None: the store does not know it), as this run learns
        # them; the feeder asks the store for a chunk's references at once.
        self._hashes: dict[str, str | None] = {}
        self._first_sightings: dict[str, threading.Lock] = {}
        self._sighted: dict[str, ImagePart] = {}  # drawn or decoded, until the item that did it is prepared
        self._local = threading.local()
        self._lock = threading.Lock()
        self._examples: dict[str, list[ImagePart]] = {}
        self._example_lock = threading.Lock()

    def of(self, which: Item) -> list[ImagePart]:
        return [self.part(source) for source in which.images]

    def of_example(self, example: Item) -> list[ImagePart]:
        """Examples recur across items: their parts (and so their encoded bytes) once per run."""
        with self._example_lock:
            parts = self._examples.get(example.id)
            if parts is None:
                parts = self._examples[example.id] = self.of(example)
            return parts

    @contextmanager
    def preparing(self) -> Iterator[None]:
        """Around building one item's prompt: images it drew are shared with other items until
        it is built (encoded, or answered from the cache); later items then use the hash."""
        self._local.sighted = []
        try:
            yield
        finally:
            with self._lock:
                for ref in self._local.sighted:
                    self._sighted.pop(ref, None)

    def encode_new(self, prompt: Prompt) -> None:
        """A prompt to be sent: images drawn or decoded just now are encoded now, from the pixels
        just hashed, and let their pixels go (the image cache keeps the bytes)."""
        for part in (part for message in prompt.messages for part in message.images):
            if part.content_hash is not None:
                continue
            if part.as_file() is None:
                self.on_image_thread(part.png)
            else:
                part.let_go()  # the file goes as it is: its pixels were needed only for the hash

    def part(self, source: ImageSource) -> ImagePart:
        """An image for a prompt: known by hash (nothing loaded), or seen for the first time
        (drawn or decoded and hashed now, once)."""
        original = functools.partial(file_as_sent, Path(source.path), source.ref) if source.path else None
        # Drawn pixels are hashed and encoded as they are when the image is to be sent encoded;
        # a model that reads pixels gets the picture, drawn once.
        pixels = source.pixels if self.send_encoded else None

        def part(content_hash: str | None) -> ImagePart:
            return ImagePart(
                source.load, content_hash=content_hash, encodings=self.images, original=original, pixels=pixels
            )

        ready = self._ready(source.ref, part)
        if ready is not None:
            return ready
        with self._lock:
            sighting = self._first_sightings.setdefault(source.ref, threading.Lock())
        with sighting:
            ready = self._ready(source.ref, part)  # another item's worker may have just made it
            if ready is not None:
                return ready
            fresh = part(None)
            content_hash = self.on_image_thread(lambda: self._first_sight(fresh))
            with self._lock:
                self._hashes[source.ref] = content_hash
                self._sighted[source.ref] = fresh
            self._local.sighted.append(source.ref)
            self._commits.remember({source.ref: content_hash})
            return fresh

    async def draw_ahead(self, sources: Sequence[ImageSource], drawing: DrawingProcess) -> None:
        """Hand `drawing` the canvas images among `sources` that this run has not met, to draw
        before their items ask for them (`draw_elsewhere`)."""
        for source in self._to_draw(sources):
            await drawing.start()  # on the first image to draw: a run that draws nothing starts no child
            drawing.ahead(source.ref, source.pixels)

    async def draw_elsewhere(self, sources: Sequence[ImageSource], drawing: DrawingProcess) -> None:
        """Have `drawing` draw, hash and cache the canvas images among `sources` that this run
        has not met: each becomes known by its hash, as if the store had known it. Those the
        child cannot take stay unknown, for `part` to draw here. (The runner has a child only
        when every model is sent our PNG, the encoding the child caches.)"""
        for source in self._to_draw(sources):
            await drawing.start()
            content_hash = await drawing.hash_of(source.ref, source.pixels)
            if content_hash is not None:
                with self._lock:
                    self._hashes[source.ref] = content_hash
                self._commits.remember({source.ref: content_hash})

    def _to_draw(self, sources: Sequence[ImageSource]) -> list[ImageSource]:
        """The canvas images among `sources` looked up in the store and not known there."""
        with self._lock:
            return [
                s for s in sources if s.pixels is not None and s.ref in self._hashes and self._hashes[s.ref] is None
            ]

    def unseen(self, refs: Sequence[str]) -> list[str]:
        """The references this run has not looked up in the store yet."""
        with self._lock:
            return [ref for ref in dict.fromkeys(refs) if ref not in self._hashes]

    def resolve(self, refs: Sequence[str]) -> None:
        """Ask the store, at once, for the hashes of the references this run has not met yet."""
        unseen = self.unseen(refs)
        if unseen:
            found = self.store.image_hashes(unseen)
            with self._lock:
                for ref in unseen:
                    self._hashes.setdefault(ref, found.get(ref))

    def known(self, ref: str) -> str | None:
        """The content hash of `ref`, if the store or this run knows it."""
        with self._lock:
            if ref in self._hashes:
                return self._hashes[ref]
        self.resolve([ref])
        with self._lock:
            return self._hashes[ref]

    def on_image_thread(self, work: Callable[[], Any]) -> Any:
        if self.threads is None:  # outside a run
            return work()
        return self.threads.submit(work).result()

    def _ready(self, ref: str, part: Callable[[str | None], ImagePart]) -> ImagePart | None:
        """The part for `ref` without drawing anything, or None: one drawn a moment ago for
        another item and not yet encoded (shared, with its pixels and its one encoding), or one
        whose content hash is known."""
        with self._lock:
            shared = self._sighted.get(ref)
        if shared is not None:
            return shared
        known = self.known(ref)
        return part(known) if known is not None else None

    def _first_sight(self, part: ImagePart) -> str:
        """Draw or decode an image seen for the first time and hash it. A file that goes as it
        is lets its pixels go at once; so does a large picture, encoded now (four 16 MP uploads
        turned upside down held four decoded copies, and their bytes, at a time). A small one
        keeps its pixels until its prompt is known to be sent (`encode_new`)."""
        content_hash = part.sha256
        if self.send_encoded:
            if part.as_file() is not None:
                part.let_go()
            elif part.size[0] * part.size[1] >= LARGE_PIXELS:
                part.png()  # kept by the part and the image cache; the pixels go
        return content_hash
