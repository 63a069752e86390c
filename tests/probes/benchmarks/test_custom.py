"""custom:PATH folders: reading them, and clear messages for every malformed input."""

import pytest
from PIL import Image

from probes.benchmarks.custom import FolderError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind
from tests.conftest import make_folder, shapes_image


def test_a_mixed_folder_reads_into_items(tmp_path):
    folder = make_folder(
        tmp_path / "set",
        [
            {
                "id": "q1",
                "image": "c.png",
                "question": "Which shape?",
                "options": ["circle", "square"],
                "answer": "circle",
                "category": "shapes",
            },
            {"id": "q2", "image": "s.png", "question": "Which shape?", "options": ["circle", "square"], "answer": "b"},
            {"id": "q3", "images": ["c.png", "s.png"], "question": "Same shape?", "answer": "no"},
            {"id": 4, "image": "c.png", "question": "How many circles?", "answer": 1},
            {"id": "q5", "image": "c.png", "question": "Colour?", "answer": "red"},
            {"id": "q6", "image": "c.png", "question": "Grid?", "answer": [3, 4]},
        ],
        {"c.png": shapes_image("circle"), "s.png": shapes_image("square")},
    )
    items = {item.id: item for item in get_benchmark(f"custom:{folder}").items()}
    assert (
        items["q1"].kind is AnswerKind.CHOICE
        and items["q1"].target == 0
        and items["q1"].groups == {"category": "shapes"}
    )
    assert items["q2"].target == 1
    assert items["q3"].kind is AnswerKind.YES_NO and items["q3"].target == "no" and len(items["q3"].images) == 2
    assert items["4"].kind is AnswerKind.NUMBER and items["4"].target == 1
    assert items["q5"].kind is AnswerKind.TEXT and items["q5"].target == "red"
    assert items["q6"].kind is AnswerKind.PAIR and items["q6"].target == (3, 4)
    assert items["q1"].possible_answers() == ("a", "b")
    assert items["q5"].possible_answers() == ("red",)  # chance guesses among answers of its own kind
    assert items["q1"].images[0].load().size == (64, 64)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"id": "x", "image": "c.png", "question": "Q?" "answer": "a"}', "items.jsonl line 2: not valid JSON"),
        ('["not", "an", "object"]', "items.jsonl line 2: expected a JSON object"),
        (
            '{"id": "x", "image": "missing.png", "question": "Q?", "answer": "yes"}',
            "items.jsonl line 2: image 'missing.png' not found",
        ),
        (
            '{"id": "x", "image": "fake.png", "question": "Q?", "answer": "yes"}',
            "items.jsonl line 2: image fake.png: not a PNG",
        ),
        ('{"id": "x", "image": "doc.png", "question": "Q?", "answer": "yes"}', "looks like PDF"),
        ('{"id": "x", "image": "../../etc/passwd", "question": "Q?", "answer": "yes"}', "outside the folder"),
        (
            '{"id": "x", "image": "c.png", "question": "Q?", "options": ["a1", "b1"], "answer": "c1"}',
            "not one of the options",
        ),
        ('{"id": "x", "image": "c.png", "answer": "yes"}', "`question` must be"),
        ('{"id": "x", "image": "c.png", "question": "Q?"}', "`answer` is missing"),
        ('{"id": "q1", "image": "c.png", "question": "Q?", "answer": "yes"}', "appears twice"),
        ('{"id": "x", "image": "empty.png", "question": "Q?", "answer": "yes"}', "the file is empty"),
    ],
)
def test_malformed_lines_are_named_with_file_and_line(tmp_path, line, message):
    folder = make_folder(
        tmp_path / "bad",
        [{"id": "q1", "image": "c.png", "question": "Q?", "answer": "yes"}],
        {"c.png": shapes_image("circle")},
    )
    (folder / "fake.png").write_text("this is text, not an image")
    (folder / "doc.png").write_bytes(b"%PDF-1.7\n...")
    (folder / "empty.png").write_bytes(b"")
    with (folder / "items.jsonl").open("a") as handle:
        handle.write(line + "\n")
    with pytest.raises(FolderError, match=message.replace("(", r"\(").replace(".", r"\.")):
        get_benchmark(f"custom:{folder}").items()


def test_invalid_utf8_is_named(tmp_path):
    folder = make_folder(tmp_path / "bad", [], {})
    (folder / "items.jsonl").write_bytes(b'{"id": "\xff"}\n')
    with pytest.raises(FolderError, match="line 1: not valid UTF-8"):
        get_benchmark(f"custom:{folder}").items()


def test_a_decompression_bomb_is_rejected_before_decoding(tmp_path):
    folder = make_folder(tmp_path / "bomb", [{"id": "b", "image": "big.png", "question": "Q?", "answer": "yes"}])
    Image.new("1", (9000, 9000)).save(folder / "big.png")  # 81 MP, tiny file
    with pytest.raises(FolderError, match="pixel"):
        get_benchmark(f"custom:{folder}").items()


def test_a_folder_without_items_says_so(tmp_path):
    with pytest.raises(FolderError, match="no items.jsonl"):
        get_benchmark(f"custom:{tmp_path}")


def test_few_shot_needs_examples_file(tmp_path):
    folder = make_folder(
        tmp_path / "f",
        [{"id": "1", "image": "c.png", "question": "Q?", "answer": "yes"}],
        {"c.png": shapes_image("circle")},
    )
    benchmark = get_benchmark(f"custom:{folder}")
    with pytest.raises(FolderError, match="examples.jsonl"):
        benchmark.select_examples(benchmark.items()[0], 4)
