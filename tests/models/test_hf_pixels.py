"""The PIL image processors' rescale and normalize in fewer passes (models/hf_pixels.py): the same
float32 pixels, bit for bit, for the catalogue's processors and SmolVLM's own settings."""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy")
transformers = pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from models import hf_backend, hf_pixels  # noqa: E402
from tests.support.tiny_vlm import BUILDERS  # noqa: E402


def pictures() -> list[Image.Image]:
    rng = np.random.default_rng(7)
    sizes = [(384, 384), (97, 203), (640, 360), (33, 31)]
    return [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8), "RGB") for w, h in sizes]


def processed(image_processor, images) -> dict:
    return {name: np.asarray(value) for name, value in image_processor(images=images, return_tensors="np").items()}


def smolvlm_image_processor():
    """SmolVLM-256M-Instruct's preprocessor_config.json: 2048 px, 512 px tiles, LANCZOS, mean/std 0.5."""
    return transformers.Idefics3ImageProcessorPil(
        size={"longest_edge": 2048}, max_image_size={"longest_edge": 512}, do_image_splitting=True, resample=1,
        image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5],
    )  # fmt: skip


@pytest.mark.parametrize("name", [*sorted(BUILDERS), "smolvlm"])
def test_the_faster_passes_give_the_processors_own_pixels(name, tmp_path):
    if name == "smolvlm":
        make = smolvlm_image_processor
    else:
        folder = BUILDERS[name](tmp_path / name)
        make = lambda: hf_backend.load_processor(folder).image_processor  # noqa: E731
    plain, fast = make(), make()
    assert hf_pixels.install(fast)
    assert "rescale" in vars(fast) and "rescale" not in vars(plain)
    images = pictures()[:2] if name == "smolvlm" else pictures()
    for image in images:
        expected, found = processed(plain, [image]), processed(fast, [image])
        assert expected.keys() == found.keys()
        for key in expected:
            assert found[key].dtype == expected[key].dtype and np.array_equal(found[key], expected[key]), key


def test_a_processor_with_its_own_normalize_keeps_it():
    class OwnNormalize(transformers.CLIPImageProcessorPil):
        def normalize(self, image, mean, std, **kwargs):
            return super().normalize(image, mean, std, **kwargs) * 2

    image_processor = OwnNormalize()
    assert not hf_pixels.install(image_processor)
    assert "normalize" not in vars(image_processor)


def test_a_rescale_factor_without_an_exact_float32_pass_keeps_the_original():
    image_processor = transformers.CLIPImageProcessorPil(rescale_factor=1 / 3.7)
    installed = hf_pixels.install(image_processor)
    image = pictures()[0]
    assert installed == ("rescale" in vars(image_processor))
    expected = processed(transformers.CLIPImageProcessorPil(rescale_factor=1 / 3.7), [image])
    assert np.array_equal(processed(image_processor, [image])["pixel_values"], expected["pixel_values"])
