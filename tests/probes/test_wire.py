"""Close to the wire (issue 16): each distinct image is drawn or decoded, hashed and encoded once
per store; a second model's run draws and encodes nothing; files providers take as they are
go as their own bytes; an edited file is read again; stores written before keep answering."""

from __future__ import annotations

import asyncio
import base64
import gc
import io
import os
import weakref
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageCms, ImageDraw

import models.types
from models.types import GenerateConfig, ImagePart, content_digest, file_digest, pixel_hash
from probes.asking.prompting import assemble_prompt
from probes.benchmarks import generated
from probes.benchmarks.custom import UploadSet
from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.core.types import Mode, Status
from probes.files import images as image_files
from probes.running.answerers import create
from probes.running.image_cache import ImageCache
from probes.running.runner import RunPlan, cache_key, run
from probes.stimuli.touching_circles import TwoCircles
from tests.conftest import make_folder, run_cli, run_python_json
from tests.support.fake_servers import FakeAnthropicServer, anthropic_images, openai_images


@pytest.fixture
def circles():
    # Both prompts of each image: an image is asked twice per model.
    return get_benchmark("blind/touching-circles", params={"canvas": ["384"], "orientation": ["vertical"]})


@pytest.fixture
def counted(monkeypatch):
    """How often anything is drawn, decoded or PNG-encoded."""
    counts = {"drawn": 0, "decoded": 0, "encoded": 0}
    draw, decode, encode = TwoCircles.draw, image_files.load_image, models.types.encode_rgb_pixels

    def drawn(self):
        counts["drawn"] += 1
        return draw(self)

    def decoded(path):
        counts["decoded"] += 1
        return decode(path)

    def encoded(*args, **kwargs):
        counts["encoded"] += 1
        return encode(*args, **kwargs)

    monkeypatch.setattr(TwoCircles, "draw", drawn)  # a picture (`render`) is drawn through it too
    monkeypatch.setattr(image_files, "load_image", decoded)
    monkeypatch.setattr(models.types, "encode_rgb_pixels", encoded)
    # No memo of drawn pictures behind the runner's back: every drawing it asks for is counted.
    monkeypatch.setattr(generated, "render_cached", lambda stimulus: stimulus.render())
    return counts


def ask(benchmark, items, model: str, store, mode: Mode | None = None, concurrency: int = 8):
    config = GenerateConfig(max_tokens=16)
    plan = RunPlan(benchmark, items, [create(model)], mode or Mode(), config=config, concurrency=concurrency)
    return asyncio.run(run(plan, store))


def sent_images(server, first: int = 0) -> list[bytes]:
    return [
        base64.b64decode(url.split(",", 1)[1])
        for request in server.requests[first:]
        for url in openai_images(request["body"])
    ]


def test_a_second_model_draws_and_encodes_nothing_and_sends_the_same_bytes(circles, store, server, counted):
    items = circles.items()
    distinct = {item.images[0].ref for item in items}
    assert len(items) == 2 * len(distinct)  # each image asked with two prompts
    first = ask(circles, items, "openai/first", store)
    assert all(r.status is Status.ANSWERED for r in first)
    # The first run draws, hashes and encodes each image once, though its two items go at once.
    assert counted == {"drawn": len(distinct), "decoded": 0, "encoded": len(distinct)}
    sent_first = sent_images(server)

    counted.update(drawn=0, encoded=0)
    second = ask(circles, items, "openai/second", store)
    assert all(r.status is Status.ANSWERED and not r.cached for r in second)
    assert counted == {"drawn": 0, "decoded": 0, "encoded": 0}
    assert sorted(sent_images(server, len(items))) == sorted(sent_first)  # the same pixels, byte for byte
    assert [r.item_ref.images for r in second] == [r.item_ref.images for r in first]


def test_a_second_models_run_does_not_even_load_numpy(circles, store, server):
    # A run that only sends cached bytes never draws: numpy (and its thread pool) stays out of
    # the process, a tenth of a second before the first request (probes/stimuli/lazy_numpy.py).
    items = circles.items()
    ask(circles, items, "openai/first", store)
    seen = run_python_json(
        "import asyncio, json, sys\n"
        "from models.types import GenerateConfig\n"
        "from probes.core.registry import get_benchmark\n"
        "from probes.running.answerers import create\n"
        "from probes.running.runner import RunPlan, run\n"
        "from probes.running.store import Store\n"
        "benchmark = get_benchmark('blind/touching-circles', params={'canvas': ['384'], 'orientation': ['vertical']})\n"
        f"with Store({str(store.path)!r}) as store:\n"
        "    plan = RunPlan(benchmark, benchmark.items(), [create('openai/second')], config=GenerateConfig(max_tokens=16))\n"
        "    results = asyncio.run(run(plan, store))\n"
        "print(json.dumps({'answered': sum(r.status.value == 'answered' for r in results), "
        "'numpy': 'numpy' in sys.modules}))"
    )
    assert seen == {"answered": len(items), "numpy": False}
    assert len(server.requests) == 2 * len(items)


def test_a_few_shot_run_for_a_second_model_draws_no_example_either(circles, store, server, counted):
    items = circles.items()[:6]
    ask(circles, items, "openai/first", store, Mode(shots=2))
    assert counted["drawn"] > 0
    counted.update(drawn=0, encoded=0)
    ask(circles, items, "openai/second", store, Mode(shots=2))
    assert counted == {"drawn": 0, "decoded": 0, "encoded": 0}
    assert all(len(openai_images(r["body"])) == 3 for r in server.requests)  # two examples and the item


def test_anthropic_as_second_model_draws_and_encodes_nothing(circles, store, server, counted, monkeypatch):
    items = circles.items()[:8]
    ask(circles, items, "openai/first", store)
    counted.update(drawn=0, encoded=0)
    with FakeAnthropicServer(responder=lambda body: "No.") as claude:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", claude.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-000000")
        results = ask(circles, items, "anthropic/claude-test", store)
        sent = [base64.b64decode(source["data"]) for r in claude.requests for source in anthropic_images(r["body"])]
    assert all(r.status is Status.ANSWERED for r in results)
    assert counted == {"drawn": 0, "decoded": 0, "encoded": 0}
    assert sorted(sent) == sorted(sent_images(server))


def test_an_image_lets_go_of_its_pixels_once_encoded():
    loaded = []

    def load():
        image = Image.new("RGB", (300, 200), "white")
        loaded.append(weakref.ref(image))
        return image

    part = ImagePart(load)
    assert part.sha256 == pixel_hash(Image.new("RGB", (300, 200), "white"))
    png = part.png()
    gc.collect()
    assert loaded[0]() is None  # held as bytes now, not as a decoded image
    assert Image.open(io.BytesIO(png.data)).tobytes() == Image.new("RGB", (300, 200), "white").tobytes()
    assert part.png_bytes == png.data and len(loaded) == 1


DRAWN = ["blind/touching-circles", "blind/nested-squares", "blind/circled-letter", "blind/line-intersections",
         "blind/subway-paths", "blind/olympic-circles", "blind/olympic-pentagons"]  # fmt: skip


@pytest.mark.parametrize("benchmark_id", DRAWN)
def test_drawn_pixels_are_hashed_and_encoded_exactly_as_their_picture(benchmark_id):
    """Stimuli drawn on a canvas are hashed and encoded from its pixels, never made a picture
    first: the same hash (what the store knows them by) and the same bytes as from the picture."""
    for item in select_items(get_benchmark(benchmark_id).items(), 6, 0):
        [source] = item.images
        assert source.pixels is not None
        drawn, pictured = ImagePart(source.load, pixels=source.pixels), ImagePart(source.load())
        assert drawn.sha256 == pictured.sha256 == pixel_hash(source.load())
        assert drawn.size == pictured.size == source.load().size
        assert "image" not in drawn._memo and "rgb" not in drawn._memo  # no picture was made
        assert drawn.png_bytes == pictured.png_bytes
        assert drawn.sha256 == content_digest(drawn.png_bytes)  # the hash of the bytes sent, as DESIGN.md asks


def test_a_stimulus_drawn_with_words_is_pictured_not_drawn():
    [source] = next(iter(get_benchmark("blind/grid-count").items())).images
    assert source.pixels is None  # its words are drawn on a picture; the runner uses the picture


def test_drawn_pixels_of_another_shape_are_refused():
    part = ImagePart(lambda: Image.new("RGB", (4, 4)), pixels=lambda: np.zeros((4, 4), dtype=np.uint8))
    with pytest.raises(ValueError, match="height x width x 3"):
        _ = part.sha256


def test_the_same_image_at_another_detail_is_hashed_and_encoded_once(counted, tmp_path):
    part = ImagePart(TwoCircles(384, 0.25, 0.1, "vertical").render, encodings=ImageCache(tmp_path / "images"))
    high = part.with_detail("high")
    assert high.detail == "high" and high.sha256 == part.sha256
    assert high.png() is part.png() and counted == {"drawn": 1, "decoded": 0, "encoded": 1}


# --- files ---------------------------------------------------------------------------------


def picture(colour: str, size: tuple[int, int] = (90, 60), mode: str = "RGB") -> Image.Image:
    image = Image.new(mode, size, "white")
    ImageDraw.Draw(image).ellipse((10, 10, 50, 50), fill=colour)
    return image


def folder_of(tmp_path: Path, images: dict[str, Image.Image]) -> Path:
    records = [{"id": name.split(".")[0], "image": name, "question": "Is there a circle?", "answer": "yes"}
               for name in images]  # fmt: skip
    return make_folder(tmp_path / "folder", records, images)


def test_a_file_providers_take_as_it_is_goes_as_its_own_bytes(tmp_path, store, server, counted):
    folder = folder_of(tmp_path, {"plain.png": picture("red"), "photo.jpg": picture("blue"),
                                  "alpha.png": picture("green", mode="RGBA")})  # fmt: skip
    benchmark = get_benchmark(f"custom:{folder}")
    first = ask(benchmark, benchmark.items(), "openai/first", store)
    assert all(r.status is Status.ANSWERED for r in first)
    sent = {url.split(";", 1)[0] for request in server.requests for url in openai_images(request["body"])}
    assert sent == {"data:image/png", "data:image/jpeg"}
    sent_bytes = sent_images(server)
    assert (folder / "plain.png").read_bytes() in sent_bytes and (folder / "photo.jpg").read_bytes() in sent_bytes
    # The two that go as they are are hashed from their bytes, never decoded; only the one with
    # transparency is decoded (and sent as our PNG).
    assert counted == {"drawn": 0, "decoded": 1, "encoded": 1}
    hashes = {r.item_ref.image_refs[0].split(":", 1)[0]: r.item_ref.images[0] for r in first}
    assert file_digest((folder / "plain.png").read_bytes()) in hashes.values()
    assert file_digest((folder / "photo.jpg").read_bytes()) in hashes.values()
    assert pixel_hash(picture("green", mode="RGBA")) in hashes.values()

    counted.update(decoded=0, encoded=0)
    benchmark = get_benchmark(f"custom:{folder}")  # a new run reads the folder again
    ask(benchmark, benchmark.items(), "openai/second", store)
    assert counted == {"drawn": 0, "decoded": 0, "encoded": 0}
    assert sorted(sent_images(server, 3)) == sorted(sent_bytes)


def test_only_files_whose_pixels_any_reader_sees_alike_go_as_they_are(tmp_path):
    kinds = {
        "plain.png": ({}, True),
        "photo.jpg": ({}, True),
        "profiled.png": ({"icc_profile": ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()}, False),
        "profiled.jpg": ({"icc_profile": ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()}, False),
        "turned.jpg": ({"exif": _orientation(6)}, False),
        "grey.png": ({}, False),
    }
    for name, (options, as_is) in kinds.items():
        image = picture("red").convert("L") if name.startswith("grey") else picture("red")
        image.save(tmp_path / name, **options)
        source = image_files.file_source(tmp_path / name)
        sent = image_files.file_as_sent(tmp_path / name, source.ref)
        assert (sent is not None) == as_is, name
        if as_is:
            assert sent.data == (tmp_path / name).read_bytes() and (sent.width, sent.height) == image.size


def _orientation(value: int) -> bytes:
    exif = Image.Exif()
    exif[0x0112] = value
    return exif.tobytes()


def test_an_edited_file_is_read_again_and_its_new_pixels_are_sent(tmp_path, store, server):
    folder = folder_of(tmp_path, {"shape.png": picture("red")})
    benchmark = get_benchmark(f"custom:{folder}")
    [before] = ask(benchmark, benchmark.items(), "openai/x", store)
    assert server.request_count == 1

    picture("blue").save(folder / "shape.png")
    stat = (folder / "shape.png").stat()
    os.utime(folder / "shape.png", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # surely a new time
    benchmark = get_benchmark(f"custom:{folder}")
    [after] = ask(benchmark, benchmark.items(), "openai/x", store)
    assert server.request_count == 2  # not answered from the cache: the picture changed
    assert after.item_ref.image_refs != before.item_ref.image_refs
    assert after.item_ref.images == (file_digest((folder / "shape.png").read_bytes()),) != before.item_ref.images
    assert Image.open(io.BytesIO(sent_images(server, 1)[0])).tobytes() == picture("blue").tobytes()


def test_a_file_edited_during_a_run_is_that_items_error_not_old_pixels_under_a_new_name(tmp_path, store, server):
    folder = folder_of(tmp_path, {"one.png": picture("red"), "two.png": picture("green")})
    benchmark = get_benchmark(f"custom:{folder}")
    items = benchmark.items()  # the folder as read: its files' sizes and times
    picture("blue", (91, 60)).save(folder / "two.png")  # edited before the run asks it
    results = {r.item_id: r for r in ask(benchmark, items, "openai/x", store)}
    assert results["one"].status is Status.ANSWERED
    assert results["two"].status is Status.ERROR and "changed on disk" in results["two"].error
    assert server.request_count == 1


def test_a_damaged_file_is_that_items_error_reported_at_the_end(tmp_path):
    folder = folder_of(tmp_path, {"good.png": picture("red"), "bad.png": picture("blue")})
    data = bytearray((folder / "bad.png").read_bytes())
    data[data.index(b"IDAT") + 8] ^= 0xFF  # a flipped byte inside the pixel data: its checksum fails
    (folder / "bad.png").write_bytes(bytes(data))
    done = run_cli("run", f"custom:{folder}", "--model", "baseline/chance", "--store", str(tmp_path / "s.sqlite"))
    assert done.returncode == 1 and "1 request(s) failed" in done.stderr, done.stderr
    assert "bad.png" in done.stderr and "Traceback" not in done.stderr


def test_a_damaged_png_is_never_sent_as_it_is(tmp_path, store, server):
    """A file is sent as its own bytes only when all its chunks check out: a damaged one is
    decoded like any other image, and its error is that item's alone."""
    folder = folder_of(tmp_path, {"good.png": picture("red"), "bad.png": picture("blue")})
    data = bytearray((folder / "bad.png").read_bytes())
    data[data.index(b"IDAT") + 8] ^= 0xFF  # a flipped byte inside the pixel data: its checksum fails
    (folder / "bad.png").write_bytes(bytes(data))
    benchmark = get_benchmark(f"custom:{folder}")
    results = ask(benchmark, benchmark.items(), "openai/x", store)
    statuses = {r.item_ref.image_refs[0]: r.status for r in results}
    assert sorted(statuses.values(), key=str) == sorted([Status.ANSWERED, Status.ERROR], key=str)
    assert bytes(data) not in sent_images(server) and (folder / "good.png").read_bytes() in sent_images(server)


def test_an_upload_leaves_no_encoded_copy_beside_the_store(tmp_path, store, server):
    picture("red").save(tmp_path / "upload.png")
    upload = UploadSet.from_files([tmp_path / "upload.png"], "Is there a circle?", [], "yes")
    [result] = ask(upload, upload.items(), "openai/x", store)
    assert result.status is Status.ANSWERED and server.request_count == 1
    assert not ImageCache.beside(store.path).root.exists()


# --- stores written before -----------------------------------------------------------------


def test_a_reply_saved_under_the_key_a_plain_prompt_gives_is_found_without_sending(circles, store, server):
    """The cache key is what it was: the prompt built with plain image parts (each image decoded
    and hashed, as before the image cache) keys the reply the runner finds."""
    items = circles.items()[:4]
    backend = create("openai/old")
    config = GenerateConfig(max_tokens=16)
    from models.types import Output
    from probes.core.types import ItemRef, Result

    for item in items:
        asked, prompt = assemble_prompt(circles, item, Mode(), "none")
        key = cache_key(backend, config, prompt, asked.possible_answers())
        saved = Result(circles.id, item.id, "openai/old", "0-shot", "none", Status.ANSWERED, reply="No.",
                       cache_key=key, item_ref=ItemRef.of(item))  # fmt: skip
        store.record(saved, Output("No.", 0.1), backend.endpoint)
    results = ask(circles, items, "openai/old", store)
    assert server.request_count == 0 and all(r.cached for r in results)
    assert not ImageCache.beside(store.path).root.exists()  # nothing needed encoding
