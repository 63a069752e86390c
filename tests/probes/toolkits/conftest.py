"""Shared by the toolkit import tests: IllusionVQA in the authors' layout."""

from __future__ import annotations

import json

import pytest
from PIL import Image as PILImage

COMPREHENSION = [
    {"image": "1.png", "question": "Are the two lines the same length?", "options": ["No.", "Yes.", "Cannot tell."],
     "answer": "Yes.", "category": "size", "id": 0},
    {"image": "2.png", "question": "How many faces are hidden?", "options": ["One", "Two", "Three", "Four"],
     "answer": "Three", "category": "counting", "id": 1},
    {"image": "3.png", "question": "Describe this image.", "options": ["A staircase", "A duck"],
     "answer": "A duck", "category": "impossible object", "id": 2},
]  # fmt: skip


@pytest.fixture
def illusionvqa_data(tmp_path):
    """IllusionVQA in the authors' layout (eval_labels.json + EVAL/), in the test split's order."""
    folder = tmp_path / "illusionvqa"
    (folder / "EVAL").mkdir(parents=True)
    (folder / "FEW_SHOTS").mkdir()
    for index, record in enumerate(COMPREHENSION):
        PILImage.new("RGB", (40 + index, 30), "red").save(folder / "EVAL" / record["image"])
    (folder / "eval_labels.json").write_text(json.dumps(COMPREHENSION))
    (folder / "fewshot_labels.json").write_text("[]")
    return folder
