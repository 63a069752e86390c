"""discribench: the release layout read from --data, the authors' prompt and image labels, the
paper's answer regex, groups, parameters, and clear errors. Fixtures are our own tiny images in
the release's shapes; the real release is never copied here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from models.types import ImagePart, TextPart
from probes.analysis.scoring import published_rows
from probes.asking import perturb
from probes.asking.prompting import build_prompt
from probes.benchmarks.discribench import DiscriBenchError
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, Item, LabelStyle, Mode, Status
from tests.conftest import run_cli

REFERENCE = Path("/work/shared/reference/discribench")  # the real release, on the developers' machine only

EN_INSTRUCTION = (
    " Please choose the number of the image that matches the answer to the question, given the situation and "
    "conversation. The output format is 'Answer: <image_number>\nReason: <reason>', in which the reason can be "
    "optionally added to explain your answer."
)
JA_INSTRUCTION = (
    " 与えられた状況文と会話文に基づいて、質問の答えとなる画像の番号を選んでください。"
    "出力形式は「答え：<画像番号>\n理由：<理由>」とし、任意で回答理由も出力することができます。"
)
BIRDS = [f"images/034/{k}.jpg" for k in range(1, 5)]
OWLS = [f"images/036/{k}.jpg" for k in range(1, 5)]
COLOURS = {  # every picture its own colour, so a test can tell which one sits where
    **dict(zip(BIRDS, [(200, 30, 30), (30, 200, 30), (30, 30, 200), (200, 200, 30)], strict=True)),
    **dict(zip(OWLS, [(200, 30, 200), (30, 200, 200), (120, 120, 120), (250, 150, 50)], strict=True)),
    "images/001/0.jpg": (240, 240, 240),
    "images/black.jpg": (0, 0, 0),
}
NOODLES_CONTEXT = (
    "Situation: A clerk is taking an order.\nConversation:\nWoman: Rice with that?\nMan: Well... two sides is enough."
)
BIRDS_CONTEXT = "Situation: A couple watch birds on TV.\nConversation:\nJohn: Look, {formation}!\nSarah: Geese!"


def _records(lang: str) -> list[dict]:
    suffix = "" if lang == "en" else "_ja"
    if lang == "en":
        texts = [
            (NOODLES_CONTEXT, "What did the man order?"),
            (BIRDS_CONTEXT, "Which image shows the scene Sarah likes?"),
            ("Situation: Owls.\nConversation:\nEmma: Wolves last week.\nJack: Cool.", "Which scene is from last week?"),
        ]
    else:
        texts = [
            (
                "状況：店員が注文を受けています。\n会話：\n女性：ご飯もつけますか？\n男性：いいえ。",
                "男性は何を注文しましたか？",
            ),
            ("状況：鳥の番組。\n会話：\nジョン：見て！\nサラ：ガンね。\n", "サラが言及している画像はどれですか？"),
            ("状況：フクロウ。\n会話：\nエマ：先週はオオカミ。\nジャック：へえ。", "先週の場面はどれですか？"),
        ]
    files = [["images/001/0.jpg"], BIRDS, OWLS]
    qids, answers = ["001", "034", "036"], [2, 4, 3]
    return [
        {"qid": qid + suffix, "image_files": images, "context": context, "question": question, "answer": answer}
        for qid, images, (context, question), answer in zip(qids, files, texts, answers, strict=True)
    ]


def _vis_easy(lang: str) -> list[dict]:
    birds = _records(lang)[1]
    images = [BIRDS[0], "images/black.jpg", "images/black.jpg", BIRDS[3]]
    return [{**birds, "qid": f"034_{lang}_vis-easy", "image_files": images}]


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def release(tmp_path) -> Path:
    """A miniature release: 3 items per language (one exam illustration, two COCO quadruples),
    the `main` and `vis_easy` ablation files, images and their metadata."""
    root = tmp_path / "discribench"
    for name, colour in COLOURS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (32, 24), colour).save(root / name, format="JPEG", quality=95)
    metadata = [
        {"file_name": n[len("images/") :], "coco_url": "http://images.cocodataset.org/x.jpg"} for n in BIRDS + OWLS
    ]
    metadata.append({"file_name": "001/0.jpg", "exam_url": "https://www.dnc.ac.jp/kyotsu/"})
    _write_jsonl(root / "images" / "metadata.jsonl", metadata)
    for lang in ("en", "ja"):
        _write_jsonl(root / f"discribench_{lang}_200.jsonl", _records(lang))
        _write_jsonl(root / "ablation" / f"main_{lang}_100.jsonl", _records(lang))
        _write_jsonl(root / "ablation" / f"vis_easy_{lang}_100.jsonl", _vis_easy(lang))
    return root


def _items(release: Path, **params: str) -> dict[str, Item]:
    benchmark = get_benchmark("discribench", data=str(release), params={k: [v] for k, v in params.items()})
    return {item.id: item for item in benchmark.items()}


def _user_parts(benchmark, item: Item) -> tuple[TextPart | ImagePart, ...]:
    prompt = build_prompt(benchmark, item, Mode(), [], lambda which: [ImagePart(s.load) for s in which.images])
    assert len(prompt.messages) == 1 and prompt.messages[0].role == "user"
    return prompt.messages[0].parts


def _colour_of(part: ImagePart) -> tuple[int, int, int]:
    return part.image.convert("RGB").getpixel((16, 12))


def _near(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    return all(abs(x - y) <= 8 for x, y in zip(a, b, strict=True))  # JPEG moves solid colours a little


# --- items and prompts ------------------------------------------------------------------------


def test_records_become_four_option_image_choices(release):
    items = _items(release)
    assert list(items) == ["001", "034", "036"]
    birds = items["034"]
    assert birds.kind is AnswerKind.CHOICE and birds.label_style is LabelStyle.DIGIT1
    assert birds.options == ("Image 1", "Image 2", "Image 3", "Image 4")
    assert birds.possible_answers() == ("1", "2", "3", "4")  # what baseline/chance answers
    assert [items[q].target for q in ("001", "034", "036")] == [1, 3, 2]  # answer 2, 4, 3 as 0-based indices
    assert len(birds.images) == 4 and len(items["001"].images) == 1
    assert birds.groups == {"image_type": "natural", "subset": "discribench", "lang": "en"}
    assert items["001"].groups["image_type"] == "illustration"
    # Refs name the file with its size and time, so the store knows when pixels could change.
    assert birds.images[0].ref.startswith(str((release / BIRDS[0]).resolve()) + "@")


def test_four_images_are_labelled_and_the_prompt_is_the_papers_character_for_character(release):
    benchmark = get_benchmark("discribench", data=str(release))
    item = next(i for i in benchmark.items() if i.id == "034")
    parts = _user_parts(benchmark, item)
    expected_text = (
        "\nSituation: A couple watch birds on TV.\nConversation:\nJohn: Look, {formation}!\nSarah: Geese!"
        "\nQuestion: Which image shows the scene Sarah likes?" + EN_INSTRUCTION
    )
    texts = [p.text if isinstance(p, TextPart) else None for p in parts]
    assert texts == ["Image 1: ", None, "\nImage 2: ", None, "\nImage 3: ", None, "\nImage 4: ", None, expected_text]
    pictures = [p for p in parts if isinstance(p, ImagePart)]
    assert all(_near(_colour_of(p), COLOURS[name]) for p, name in zip(pictures, BIRDS, strict=True))
    assert {p.detail for p in pictures} == {"high"}  # as the authors asked OpenAI for


def test_one_image_of_four_pictures_comes_first_then_the_text(release):
    benchmark = get_benchmark("discribench", data=str(release))
    item = next(i for i in benchmark.items() if i.id == "001")
    parts = _user_parts(benchmark, item)
    assert isinstance(parts[0], ImagePart) and _near(_colour_of(parts[0]), COLOURS["images/001/0.jpg"])
    assert len(parts) == 2
    assert parts[1].text == "\n" + NOODLES_CONTEXT + "\nQuestion: What did the man order?" + EN_INSTRUCTION


def test_japanese_files_are_asked_with_the_releases_japanese_instruction(release):
    benchmark = get_benchmark("discribench", data=str(release), params={"lang": ["ja"]})
    items = {i.id: i for i in benchmark.items()}
    assert list(items) == ["001_ja", "034_ja", "036_ja"]
    assert items["034_ja"].groups["lang"] == "ja"
    parts = _user_parts(benchmark, items["034_ja"])
    assert parts[0].text == "Image 1: " and parts[2].text == "\nImage 2: "  # labels stay English, as in the release
    assert parts[-1].text == (
        "\n状況：鳥の番組。\n会話：\nジョン：見て！\nサラ：ガンね。\n\n質問: サラが言及している画像はどれですか？"
        + JA_INSTRUCTION
    )


def test_subset_reads_its_ablation_file(release):
    items = _items(release, subset="vis_easy")
    assert list(items) == ["vis_easy/034_en_vis-easy"]
    item = items["vis_easy/034_en_vis-easy"]
    assert item.groups == {"image_type": "natural", "subset": "vis_easy", "lang": "en"}  # black.jpg is not listed
    assert item.images[1].ref.startswith(str((release / "images/black.jpg").resolve()))
    main = _items(release, subset="main", lang="ja")
    assert list(main) == ["main/001_ja", "main/034_ja", "main/036_ja"]  # never the 200-item file's ids


def test_rotated_options_move_the_pictures_with_their_labels(release):
    benchmark = get_benchmark("discribench", data=str(release))
    item = next(i for i in benchmark.items() if i.id == "034")
    rotated = perturb.apply(benchmark, item, "rotate-options-1")
    pictures = [p for p in _user_parts(benchmark, rotated) if isinstance(p, ImagePart)]
    assert [_near(_colour_of(p), COLOURS[n]) for p, n in zip(pictures, BIRDS[1:] + BIRDS[:1], strict=True)] == [
        True
    ] * 4
    # The answer (picture 4) now sits at place 3, and the target says so.
    assert rotated.target == 2 and _near(_colour_of(pictures[rotated.target]), COLOURS[BIRDS[3]])
    single = next(i for i in benchmark.items() if i.id == "001")
    with pytest.raises(DiscriBenchError, match="cannot be reordered"):
        _user_parts(benchmark, perturb.apply(benchmark, single, "rotate-options-1"))


def test_without_images_only_the_text_is_sent(release):
    benchmark = get_benchmark("discribench", data=str(release))
    item = perturb.apply(benchmark, next(i for i in benchmark.items() if i.id == "034"), "no-image")
    parts = _user_parts(benchmark, item)
    assert len(parts) == 1 and parts[0].text.startswith("Situation: A couple")


# --- grading --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("qid", "reply", "number"),
    [("036", "回答：３", 3), ("001", "Answer: Image 2", 2), ("034", "I think 4.", 4)],
)
def test_the_briefs_replies_grade_as_the_paper_says(release, qid, reply, number):
    benchmark = get_benchmark("discribench", data=str(release))
    item = next(i for i in benchmark.items() if i.id == qid)
    parsed = benchmark.parse_reply(reply, item)
    assert parsed.status is Status.ANSWERED and parsed.value == number - 1 == item.target
    assert benchmark.grade(item, parsed) == (True, 1.0)


@pytest.mark.parametrize(
    ("reply", "number"),
    [
        ("答え：画像１\n理由：鳥が写っている", 1),
        ("Answer: ③\nReason: ...", 3),  # GPT-4o's reply in the paper's Figure 4; NFKC makes it 3
        ("Answer: Image-4", 4),
        ("画像 2 です", 2),
        ("Image 1 shows corn, so the answer is 3.", 1),  # the paper's rule: the first number wins
        ("There are 5 birds; Answer: 2", 2),  # 5 is not an image number
    ],
)
def test_the_papers_regex_reads_the_first_image_number(release, reply, number):
    benchmark = get_benchmark("discribench", data=str(release))
    item = _items(release)["034"]
    assert benchmark.parse_reply(reply, item).value == number - 1


@pytest.mark.parametrize(
    ("reply", "status"),
    [("", Status.UNPARSED), ("Answer: 5", Status.UNPARSED), ("I'm sorry, but I can't help with that.", Status.REFUSED)],
)
def test_replies_without_an_image_number_are_wrong(release, reply, status):
    benchmark = get_benchmark("discribench", data=str(release))
    item = _items(release)["034"]
    parsed = benchmark.parse_reply(reply, item)
    assert parsed.status is status and parsed.value is None
    assert benchmark.grade(item, parsed) == (False, 0.0)


def test_a_refusal_that_names_an_image_is_graded_by_the_regex(release):
    benchmark = get_benchmark("discribench", data=str(release))
    item = _items(release)["034"]
    assert benchmark.parse_reply("I can't help with that, but Image 4 fits.", item).value == 3


# --- parameters and errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"lang": ["fr"]}, "lang=fr is not one of en, ja"),
        ({"subset": ["vis_hard"]}, "subset=vis_hard is not one of discribench, main, lan_easy"),
        ({"lang": ["en", "ja"]}, "lang takes one value"),
        ({"seed": ["1"]}, "unknown parameter"),
    ],
)
def test_bad_parameters_say_what_is_allowed(release, params, message):
    with pytest.raises(BenchmarkError, match=message):
        get_benchmark("discribench", data=str(release), params=params)


def test_a_subset_missing_from_the_folder_is_named(release):
    with pytest.raises(BenchmarkError, match=r"no ablation/lan_easy_en_100\.jsonl here"):
        get_benchmark("discribench", data=str(release), params={"subset": ["lan_easy"]})


def test_a_clone_of_the_authors_repository_is_found_through_its_data_folder(release, tmp_path):
    clone = tmp_path / "clone"
    clone.mkdir()
    release.rename(clone / "data")
    assert len(get_benchmark("discribench", data=str(clone)).items()) == 3


def test_without_data_the_error_says_where_to_get_the_release():
    benchmark = get_benchmark("discribench")  # report builds it for its chance row: no error yet
    assert benchmark.chance == 25.0 and "--data" in benchmark.size_note()
    with pytest.raises(BenchmarkError, match=r"not bundled.*github\.com/muraoka7/discribench.*--data PATH"):
        benchmark.items()


def test_few_shot_is_refused_the_paper_is_zero_shot(release):
    benchmark = get_benchmark("discribench", data=str(release))
    with pytest.raises(BenchmarkError, match="0-shot"):
        benchmark.select_examples(benchmark.items()[0], 4)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"qid": "x", "image_files": ["images/001/0.jpg"], "context": "C", "question": "Q?" "answer": 1}', "not valid JSON"),
        ('["not", "an", "object"]', "expected a JSON object"),
        ('{"qid": "x", "image_files": ["images/001/0.jpg"], "context": "C", "question": "Q?", "answer": 5}', "from 1 to 4"),
        ('{"qid": "x", "image_files": ["images/001/0.jpg"], "context": "C", "question": "Q?", "answer": "2"}', "from 1 to 4"),
        ('{"qid": "x", "image_files": ["images/001/0.jpg"], "context": "C", "answer": 2}', "`question` must be"),
        ('{"qid": "x", "image_files": ["images/009/1.jpg"], "context": "C", "question": "Q?", "answer": 2}', "'images/009/1.jpg' not found"),
        ('{"qid": "x", "image_files": ["images/001/0.jpg", "images/black.jpg"], "context": "C", "question": "Q?", "answer": 2}', "1 or 4 images"),
        ('{"qid": "x", "image_files": ["../../etc/passwd"], "context": "C", "question": "Q?", "answer": 2}', "outside the data folder"),
        ('{"qid": "x", "image_files": ["images/notes.jpg"], "context": "C", "question": "Q?", "answer": 2}', "not a PNG, JPEG"),
        ('{"qid": "034", "image_files": ["images/001/0.jpg"], "context": "C", "question": "Q?", "answer": 2}', "qid '034' appears twice"),
    ],
)  # fmt: skip
def test_malformed_lines_are_named_with_file_and_line(release, line, message):
    (release / "images" / "notes.jpg").write_text("text, not a picture")
    with (release / "discribench_en_200.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    with pytest.raises(BenchmarkError, match=r"discribench_en_200\.jsonl line 4: .*" + message.replace("(", r"\(")):
        get_benchmark("discribench", data=str(release)).items()


def test_without_metadata_one_image_means_an_illustration(release):
    (release / "images" / "metadata.jsonl").unlink()
    types = {item.id: item.groups["image_type"] for item in _items(release).values()}
    assert types == {"001": "illustration", "034": "natural", "036": "natural"}


def test_metadata_decides_over_the_shape(release):
    # A COCO photograph asked alone is still a natural image; four exam pictures are illustrations.
    _write_jsonl(release / "discribench_en_200.jsonl", [{**_records("en")[1], "image_files": [BIRDS[0]]}])
    _write_jsonl(
        release / "images" / "metadata.jsonl",
        [{"file_name": BIRDS[0][len("images/") :], "coco_url": "http://images.cocodataset.org/x.jpg"}]
        + [{"file_name": n[len("images/") :], "exam_url": "https://www.dnc.ac.jp/kyotsu/"} for n in OWLS],
    )
    _write_jsonl(release / "discribench_ja_200.jsonl", [_records("ja")[2]])
    assert _items(release)["034"].groups["image_type"] == "natural"
    assert _items(release, lang="ja")["036_ja"].groups["image_type"] == "illustration"


# --- published numbers and the command line ---------------------------------------------------


def test_published_rows_use_the_benchmarks_group_names():
    rows = published_rows(["discribench"], by=["image_type"])
    groups = {row.group for row in rows}
    assert groups == {"overall", "image_type=natural", "image_type=illustration"}
    overall = {row.model: row.accuracy for row in rows if row.group == "overall"}
    assert overall["GPT-4o"] == 71.0 and overall["Claude 3.5 Sonnet"] == 70.0 and overall["Qwen2-VL-2B"] == 26.0
    human = {row.group: row.accuracy for row in rows if row.model == "Human"}
    assert human == {"overall": 89.2, "image_type=natural": 85.1, "image_type=illustration": 97.6}


def test_a_cli_run_on_the_fixture_reports_measured_and_published_rows(release, tmp_path):
    store = tmp_path / "results.sqlite"
    done = run_cli("run", "discribench", "--data", str(release), "--model", "baseline/chance", "--store", str(store))
    assert done.returncode == 0, done.stderr
    report = run_cli("report", "--store", str(store), "--by", "image_type", "--format", "json")
    assert report.returncode == 0, report.stderr
    rows = json.loads(report.stdout)
    measured = {r["group"]: r for r in rows if r["source"] == "measured"}
    assert measured["overall"]["n"] == 3 and measured["overall"]["unparsed"] == 0
    assert measured["image_type=natural"]["n"] == 2 and measured["image_type=illustration"]["n"] == 1
    published = [r for r in rows if r["source"] == "published" and r["benchmark"] == "discribench"]
    assert {"overall", "image_type=natural", "image_type=illustration"} <= {r["group"] for r in published}
    assert any(r["model"] == "GPT-4o" and r["group"] == "overall" and r["accuracy"] == 71.0 for r in published)
    assert any(r["source"] == "chance" and r["accuracy"] == 25.0 for r in rows)


def test_the_cli_explains_a_missing_dataset(tmp_path):
    done = run_cli("run", "discribench", "--model", "baseline/chance", "--store", str(tmp_path / "r.sqlite"))
    assert done.returncode == 2 and "not bundled" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="the real release is only on the developers' machine")
def test_the_real_release_copy_loads_in_every_language_and_subset():
    for lang in ("en", "ja"):
        items = get_benchmark("discribench", data=str(REFERENCE), params={"lang": [lang]}).items()
        assert len(items) == 133 and {i.groups["image_type"] for i in items} == {"natural"}
        vis = get_benchmark("discribench", data=str(REFERENCE), params={"lang": [lang], "subset": ["vis_easy"]})
        assert len(vis.items()) == 67
