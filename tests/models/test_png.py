import io

import numpy as np
import pytest
from PIL import Image

from models.png import encode_rgb_png
from models.types import ImagePart


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
