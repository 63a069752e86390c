"""Hostile and broken input (issue 6): every kind of the corpus (built here, in tmp_path) through
a custom folder and an import on the command line, and through an upload as the UI makes it.
Each is rejected with a message naming the file (and line), or accepted with the pixels the
models get checked; nothing crashes. The corpus and its expectations: tests/support/hostile_corpus.py.
"""

from __future__ import annotations

import builtins
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageFile

from models.types import to_rgb
from probes.files.image_reading import Refused, read_image
from probes.files.images import MAX_FILE_BYTES, MAX_PIXELS, ImageRejected, check_image_file
from tests.support.hostile_corpus import KINDS, PATHS
from tests.support.hostile_files import write_bomb, write_sparse
from tests.support.hostile_trials import try_kind


@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
def test_each_kind_gets_a_clear_message_or_is_normalised(kind, tmp_path):
    report = try_kind(kind, tmp_path)
    summary = "\n".join(f"{o.path}: {o.status}: {o.detail}" for o in report.outcomes)
    assert {o.path for o in report.outcomes} >= {"custom", "import"}, summary
    assert report.crashes == 0, summary
    assert report.handled, summary


def test_the_corpus_holds_what_issue_6_lists_and_more():
    required = [kind for kind in KINDS if kind.required]
    assert len(required) >= 17 and len(KINDS) >= 30
    assert len({kind.name for kind in KINDS}) == len(KINDS) and PATHS == ("custom", "import", "upload")


@pytest.fixture
def no_decoding(monkeypatch):
    """Decoding pixels fails the test: what is checked must be decided from headers. (The check
    runs in a worker process; `checked` runs the worker's own function here, where the patch
    holds, and the real check through the worker, which must say the same.)"""

    def refuse(self, *args, **kwargs):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", refuse)


def checked(path: Path) -> tuple[int, int, int]:
    """What the check finds, decided in this process (where decoding fails the test) and through
    the worker; both must agree."""
    try:
        read = read_image(path, verify=True, decode=False, max_pixels=MAX_PIXELS, max_bytes=MAX_FILE_BYTES)
    except Refused as exc:
        with pytest.raises(ImageRejected) as caught:
            check_image_file(path)
        assert str(caught.value) == f"{path.name}: {exc}"
        raise ImageRejected(str(caught.value)) from None
    assert tuple(check_image_file(path)) == (read.width, read.height, read.frames)
    return read.width, read.height, read.frames


@pytest.mark.parametrize(("side", "message"), [(30_000, "900000000 pixels"), (9_000, "9000 x 9000 pixels")])
def test_a_bomb_is_rejected_from_its_header_without_decoding(tmp_path, no_decoding, side, message):
    # 30000 a side is past Pillow's own limit (it refuses to open it); 9000 a side (81 MP) only
    # past ours, which the header's size decides.
    write_bomb(tmp_path / "bomb.png", side)
    with pytest.raises(ImageRejected, match=message) as caught:
        checked(tmp_path / "bomb.png")
    assert "40,000,000 pixel limit" in str(caught.value)


def test_500_mb_is_rejected_by_its_size_before_a_byte_is_read(tmp_path, monkeypatch):
    huge = tmp_path / "huge.png"
    write_sparse(huge, 500 * 2**20, b"\x89PNG\r\n\x1a\n")
    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):
        assert Path(file) != huge, "the 500 MB file was opened"
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: guarded_open(self, *a, **k))
    with pytest.raises(ImageRejected, match=r"huge\.png: 500\.0 MB is over the 50 MB limit"):
        check_image_file(huge)


def test_an_intact_image_is_checked_without_decoding(tmp_path, no_decoding):
    Image.new("RGB", (64, 48), "red").save(tmp_path / "fine.png")
    assert checked(tmp_path / "fine.png") == (64, 48, 1)


@pytest.mark.parametrize("mode", ["I;16", "I;16B", "I"])
def test_16_bit_greyscale_is_scaled_not_clipped(mode):
    values = np.array([[0, 255, 256, 32768, 65535]], dtype=np.uint16)
    image = Image.fromarray(values).convert("I") if mode == "I" else Image.fromarray(values)
    if mode == "I;16B":
        image = Image.frombytes("I;16B", image.size, values.astype(">u2").tobytes())
    assert image.mode == mode
    rgb = to_rgb(image)
    assert rgb.mode == "RGB"
    assert [rgb.getpixel((x, 0))[0] for x in range(5)] == [0, 0, 1, 128, 255]
