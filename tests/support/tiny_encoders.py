"""Offline builders for tiny, randomly initialised image encoders: a CLIP model and a DINOv2 model.

Both are built from configs (no Hugging Face Hub access), saved with ``save_pretrained`` together
with their image processor, and load back through ``AutoImageProcessor`` and the model classes the
mining tool uses, so tests exercise the real loading and embedding path:

* CLIP: ``CLIPModel`` (1-layer vision and text towers, hidden size 16, 32 x 32 images, 8 x 8
  patches, projection 8) with a ``CLIPImageProcessorPil`` (shortest edge 32, centre crop 32); no
  tokenizer is saved, as the mining tool needs none;
* DINOv2: ``Dinov2Model`` (1 layer, hidden size 16, 32 x 32 images, 8 x 8 patches) with a
  ``BitImageProcessorPil`` (shortest edge 36, centre crop 32), the processor family
  ``facebook/dinov2-*`` ship.

The weights are deterministic (fixed torch seed per builder); each folder is a few tens of KB.

Also here, for tests that need known answers: `PlantedEncoder`, a test double (not a model) that
returns planted vectors for pictures made by `planted_image`, and `gram_vectors`, which builds
vectors with exactly the pairwise cosines a test asks for.

Usage::

    clip = build_tiny_clip(tmp_path / "clip")
    dino = build_tiny_dino(tmp_path / "dino")
"""

from __future__ import annotations

import pathlib

__all__ = [
    "build_tiny_clip",
    "build_tiny_dino",
    "IMAGE_SIZE",
    "CLIP_DIM",
    "DINO_DIM",
    "PlantedEncoder",
    "planted_image",
    "planted_index",
    "gram_vectors",
    "similarity_matrix",
]

SEED = 4321
IMAGE_SIZE = 32
PATCH_SIZE = 8
HIDDEN = 16
CLIP_DIM = 8  # CLIP's projection: the image features are this long
DINO_DIM = HIDDEN  # DINOv2's pooled output is its hidden size


def build_tiny_clip(path: pathlib.Path, seed: int = SEED) -> pathlib.Path:
    """A tiny random ``CLIPModel`` and its image processor, saved to ``path``."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel

    path = pathlib.Path(path)
    path.mkdir(parents=True, exist_ok=True)
    config = CLIPConfig(
        text_config={
            "vocab_size": 64,
            "hidden_size": HIDDEN,
            "intermediate_size": 2 * HIDDEN,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "max_position_embeddings": 16,
            "bos_token_id": 0,  # within the tiny vocabulary (the defaults are CLIP's real ids)
            "eos_token_id": 1,
            "pad_token_id": 1,
        },
        vision_config={
            "hidden_size": HIDDEN,
            "intermediate_size": 2 * HIDDEN,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": IMAGE_SIZE,
            "patch_size": PATCH_SIZE,
        },
        projection_dim=CLIP_DIM,
    )
    torch.manual_seed(seed)
    CLIPModel(config).eval().save_pretrained(path)
    CLIPImageProcessorPil(
        size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}
    ).save_pretrained(path)
    return path


def build_tiny_dino(path: pathlib.Path, seed: int = SEED) -> pathlib.Path:
    """A tiny random ``Dinov2Model`` and its image processor, saved to ``path``."""
    import torch
    from transformers import BitImageProcessorPil, Dinov2Config, Dinov2Model

    path = pathlib.Path(path)
    path.mkdir(parents=True, exist_ok=True)
    config = Dinov2Config(
        hidden_size=HIDDEN,
        intermediate_size=2 * HIDDEN,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=IMAGE_SIZE,
        patch_size=PATCH_SIZE,
    )
    torch.manual_seed(seed)
    Dinov2Model(config).eval().save_pretrained(path)
    BitImageProcessorPil(
        size={"shortest_edge": IMAGE_SIZE + 4}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}
    ).save_pretrained(path)
    return path


# --- a test double for known answers ------------------------------------------------------------


def planted_image(index: int, size: int = 16):
    """A small picture whose top-left pixel spells `index` (red + 256 x green), so that
    `PlantedEncoder` knows which planted vector it stands for."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (size, size), (200, 200, 200))
    image.putpixel((0, 0), (index % 256, index // 256, 77))
    ImageDraw.Draw(image).line((2, 2 + index % (size - 4), size - 2, 2), fill=(index % 7 * 30, 40, 90))
    return image


def planted_index(image) -> int:
    red, green, _ = image.convert("RGB").getpixel((0, 0))
    return red + 256 * green


class PlantedEncoder:
    """NOT a model: a test double that gives each `planted_image(i)` the row `vectors[i]`, so a
    test knows every similarity in advance. The real embedding path is tested with the tiny
    models above. Counts the images it embeds."""

    def __init__(self, vectors, kind: str, name: str = "planted"):
        import hashlib

        import numpy as np

        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.kind = kind
        self.source = f"{name}-{kind}"
        self._identity = hashlib.sha256(kind.encode() + self.vectors.tobytes()).hexdigest()
        self.embedded = 0

    def identity(self) -> str:
        return self._identity

    def embed(self, images):
        import numpy as np

        self.embedded += len(images)
        rows = self.vectors[[planted_index(image) for image in images]]
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def gram_vectors(gram, dim: int | None = None, offset: int = 0):
    """Rows whose pairwise cosines are exactly `gram` (up to float rounding), placed in the
    coordinates offset .. offset + len(gram) of `dim`-long vectors, so groups planted at
    different offsets are orthogonal (cosine 0) to each other."""
    import numpy as np

    gram = np.asarray(gram, dtype=np.float64)
    size = len(gram)
    lower = np.linalg.cholesky(gram)  # raises if the similarities are not realisable
    rows = np.zeros((size, dim or size))
    rows[:, offset : offset + size] = lower
    return rows


def similarity_matrix(size: int, base: float, pairs: dict | None = None):
    """A size x size matrix with 1 on the diagonal, `base` elsewhere, and `pairs` {(i, j): value}."""
    import numpy as np

    matrix = np.full((size, size), base, dtype=np.float64)
    np.fill_diagonal(matrix, 1.0)
    for (i, j), value in (pairs or {}).items():
        matrix[i, j] = matrix[j, i] = value
    return matrix
