import io
import zlib

import numpy as np
import pytest
from PIL import Image

from models.png import FAST_ENCODING, encode_rgb_png
from models.types import ImagePart
from tests.conftest import run_python


@pytest.mark.parametrize("size", [(1, 1), (3, 7), (640, 480)])
def test_pillow_decodes_exactly_the_pixels_we_encoded(size):
    pixels = np.random.default_rng(1).integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)
    image = Image.fromarray(pixels)
    decoded = Image.open(io.BytesIO(encode_rgb_png(image)))
    assert decoded.mode == "RGB" and decoded.size == size
    assert np.array_equal(np.asarray(decoded), pixels)


def test_image_parts_send_rgb_png_of_any_input_mode():
    rgba = Image.new("RGBA", (4, 4), (255, 0, 0, 0))  # fully transparent red
    decoded = Image.open(io.BytesIO(ImagePart(rgba).png_bytes))
    assert decoded.getpixel((0, 0)) == (255, 255, 255)  # composited on white
    gray = Image.new("L", (4, 4), 100)
    assert Image.open(io.BytesIO(ImagePart(gray).png_bytes)).getpixel((1, 1)) == (100, 100, 100)


def test_non_rgb_input_is_refused():
    with pytest.raises(ValueError, match="RGB"):
        encode_rgb_png(Image.new("L", (2, 2)))


def test_without_zlib_ng_the_standard_zlib_encodes_under_its_own_name():
    """The fast encoding's name fixes its bytes: where zlib-ng cannot be installed, images are
    deflated by zlib and cached under another name, never mixed with zlib-ng's."""
    code = (
        "import io, sys; sys.modules['zlib_ng'] = None\n"
        "from PIL import Image\n"
        "from models.png import FAST_ENCODING, encode_rgb_png\n"
        "image = Image.new('RGB', (30, 20), (10, 200, 30))\n"
        "decoded = Image.open(io.BytesIO(encode_rgb_png(image)))\n"
        "print(FAST_ENCODING, decoded.getpixel((29, 19)) == (10, 200, 30))"
    )
    assert run_python(code).split() == ["png1", "True"]
    assert FAST_ENCODING == "png-ng2"  # installed here, from requirements.txt


def test_a_chosen_level_is_the_standard_zlib_at_that_level():
    image = Image.fromarray(np.random.default_rng(2).integers(0, 256, size=(9, 11, 3), dtype=np.uint8))
    data = encode_rgb_png(image, level=6)
    rows = b"".join(b"\0" + image.tobytes()[y * 33 : (y + 1) * 33] for y in range(9))
    assert zlib.decompress(data[data.index(b"IDAT") + 4 : data.index(b"IEND") - 8]) == rows
    assert zlib.compress(rows, 6)[2:-4] in data  # the same deflate stream zlib writes at level 6
