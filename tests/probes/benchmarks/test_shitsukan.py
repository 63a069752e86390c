"""shitsukan/classification and shitsukan/generation: items built as the paper builds them, the
paper's prompts, its scoring (digit answers; Eq. 2 with malformed outputs left out), the bundled
sample, published rows, and clear messages for malformed folders."""

import json
import os

import numpy as np
import pytest
from PIL import Image

from models.types import ImagePart
from probes.asking.prompting import build_prompt
from probes.benchmarks.custom import FolderError
from probes.benchmarks.shitsukan.folder import SAMPLE_FOLDER
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import AnswerKind, LabelStyle, Mode, Status
from probes.tools.texture_sample import sample_images, write_sample
from tests.conftest import make_folder, run_cli, shapes_image
from tests.support.fake_servers import FakeOpenAIServer

CLASSIFY, GENERATE = "shitsukan/classification", "shitsukan/generation"

# Figure 2 and Figure 3 of the paper, written out here (not imported) so that a change to the
# module's wording fails a test.
FIGURE_2 = """画像内にあるモノの「質感」を選択していただくタスクです。
質感とは、下記のようなものを指します。
・物性（光沢感・透明感など）
・状態（乾燥・凍結など）
・印象（美しい・醜いなど）
与えられた表現の中で、指定された物体に対して最も適切と感じる表現を選択してください。

写真内にある猫に対して最も適切な質感を選択してください。

解答の際には、選択肢に対応する半角数字を使って解答してください。"""
FIGURE_3 = """画像内にあるモノの「質感」を述べていただくタスクです。
質感とは、下記のようなものを指します。
・物性（光沢感・透明感など）
・状態（乾燥・凍結など）
・印象（美しい・醜いなど）
画像に対して感じる質感を表す表現を３個「、」で分けて書いてください。

その際、3個とも出来るだけ違う観点の表現にしてください。
また、似た表現（きらきら・きらんきらんなど）にならないようにしてください。

写真内にある「猫」は、どのような質感を持っているように感じますか？"""

# Six objects (two of them cats), each with its own words; English glosses position by position.
RECORDS = [
    {"id": "cat1", "image": "a.png", "object": "猫", "object_en": "cat", "words": ["ふわふわ", "毛並みがきれい"],
     "words_en": ["fluffy", "sleek-coated"], "negatives": ["ヌメっとした"], "negatives_en": ["slimy"]},
    {"id": "cat2", "image": "b.png", "object": "猫", "object_en": "cat", "words": ["生き生き", "やわらかい"],
     "words_en": ["lively", "soft"]},
    {"id": "apple", "image": "a.png", "object": "りんご", "object_en": "apple", "words": ["つやつや", "みずみずしい"],
     "words_en": ["glossy", "juicy"], "negatives": ["ざらざら", "もこもこ"], "negatives_en": ["gritty", "fleecy"]},
    {"id": "stone", "image": "b.png", "object": "石", "object_en": "stone", "words": ["ごつごつ", "硬い", "乾いた"],
     "words_en": ["rugged", "hard", "dry"]},
    {"id": "glass", "image": "a.png", "object": "グラス", "object_en": "glass", "words": ["透明", "冷たい"],
     "words_en": ["transparent", "cold"]},
    {"id": "bread", "image": "b.png", "object": "パン", "object_en": "bread", "words": ["香ばしい", "ふわふわ"],
     "words_en": ["fragrant", "fluffy"]},
]  # fmt: skip


@pytest.fixture
def folder(tmp_path):
    return make_folder(
        tmp_path / "texture", RECORDS, {"a.png": shapes_image("circle"), "b.png": shapes_image("square")}
    )


def by_record(folder_path, **params):
    benchmark = get_benchmark(CLASSIFY, data=str(folder_path), params={k: v.split(",") for k, v in params.items()})
    return benchmark, {item.id: item for item in benchmark.items()}


def record_of(item_id):
    return next(r for r in RECORDS if r["id"] == item_id.split("|")[0])


# --- classification: the N-choice items -------------------------------------------------


def test_each_item_has_one_validated_word_and_distractors_from_other_objects(folder):
    benchmark, items = by_record(folder)
    assert len(items) == 2 * len(RECORDS)  # n = 2 and 5, as in the paper
    cat_words = {w for r in RECORDS if r["object"] == "猫" for w in r["words"]}
    for item in items.values():
        record = record_of(item.id)
        n = int(item.groups["n"])
        assert item.kind is AnswerKind.CHOICE and item.label_style is LabelStyle.DIGIT0
        assert len(item.options) == n == len(set(item.options)) and item.labels == [str(i) for i in range(n)]
        assert item.options[item.target] in record["words"]
        others = [o for i, o in enumerate(item.options) if i != item.target]
        other_words = {w for r in RECORDS if r["id"] != record["id"] for w in r["words"]}
        assert all(o in other_words or o in record.get("negatives", []) for o in others)
        assert not set(others) & set(record["words"])
        if record["object"] == "猫":  # a word validated for another cat may fit this one too
            assert not set(others) & cat_words
    # The bread's "ふわふわ" is validated for cat1 too: never one of cat1's distractors.
    cat = items["cat1|n=5|ja"]
    assert "ふわふわ" not in [o for i, o in enumerate(cat.options) if i != cat.target]
    assert benchmark.chance is None  # two Ns: no single number is the chance of the overall row


def test_known_negatives_come_first_and_two_choices_nest_in_five(folder):
    _, items = by_record(folder)
    apple2, apple5 = items["apple|n=2|ja"], items["apple|n=5|ja"]
    assert apple2.options[1 - apple2.target] in ("ざらざら", "もこもこ")
    assert {"ざらざら", "もこもこ"} <= set(apple5.options)
    assert apple2.options[apple2.target] == apple5.options[apple5.target]  # the same positive
    assert set(apple2.options) <= set(apple5.options)
    assert items["cat1|n=2|ja"].options[1 - items["cat1|n=2|ja"].target] == "ヌメっとした"


def test_the_draw_is_fixed_by_the_seed_and_positions_vary(folder):
    def snapshot(seed):
        _, items = by_record(folder, seed=seed)
        return {i: (item.options, item.target) for i, item in items.items()}

    assert snapshot("0") == snapshot("0")
    assert snapshot("0") != snapshot("1")
    targets = {target for seed in "0123" for (_, target) in snapshot(seed).values()}
    assert len(targets) >= 4  # the positive is not always in the same place


def test_english_items_ask_the_same_draw_in_english(folder):
    _, items = by_record(folder, lang="ja,en")
    assert len(items) == 4 * len(RECORDS)
    gloss = {w: e for r in RECORDS for key in ("words", "negatives") for w, e in
             zip(r.get(key, []), r.get(f"{key}_en", []), strict=True)}  # fmt: skip
    for item_id, ja in items.items():
        if item_id.endswith("|ja"):
            en = items[item_id.removesuffix("|ja") + "|en"]
            assert en.options == tuple(gloss[o] for o in ja.options) and en.target == ja.target
            assert en.groups == {**ja.groups, "lang": "en"}


def test_parameters_are_checked(folder):
    _, items = by_record(folder, n="3")
    assert {len(item.options) for item in items.values()} == {3}
    assert get_benchmark(CLASSIFY, data=str(folder), params={"n": ["4"]}).chance == 25.0
    for params, message in [({"n": ["1"]}, "2 to 10"), ({"n": ["x"]}, "whole numbers"), ({"lang": ["fr"]}, "ja, en"),
                            ({"seed": ["1", "2"]}, "one value"), ({"shots": ["4"]}, "no parameter shots")]:  # fmt: skip
        with pytest.raises(BenchmarkError, match=message):
            get_benchmark(CLASSIFY, data=str(folder), params=params)


def test_too_few_distractors_names_the_line(tmp_path):
    records = [{"image": "a.png", "object": "猫", "words": ["ふわふわ"]},
               {"image": "a.png", "object": "犬", "words": ["元気"]}]  # fmt: skip
    folder = make_folder(tmp_path / "tiny", records, {"a.png": shapes_image("circle")})
    with pytest.raises(FolderError, match=r"items.jsonl line 1: a 5-choice item needs 4 distractors; only 1"):
        get_benchmark(CLASSIFY, data=str(folder)).items()
    assert len(get_benchmark(CLASSIFY, data=str(folder), params={"n": ["2"]}).items()) == 2


# --- the prompts ------------------------------------------------------------------------


def user_text(benchmark, item, mode=None, examples=()):
    prompt = build_prompt(
        benchmark, item, mode or Mode(), list(examples), lambda i: [ImagePart(s.load) for s in i.images]
    )
    last = prompt.messages[-1]
    assert last.role == "user" and len(last.images) == 1
    return prompt, last.parts[-1].text


def test_classification_prompt_is_figure_2_character_for_character(folder):
    benchmark, items = by_record(folder)
    item = items["cat1|n=5|ja"]
    _, text = user_text(benchmark, item)
    options = "\n".join(f"{i}: {o}" for i, o in enumerate(item.options))
    assert text == FIGURE_2 + "\n" + options
    assert options.startswith("0: ") and "\n4: " in options


def test_english_classification_prompt(folder):
    benchmark, items = by_record(folder, lang="en")
    item = items["apple|n=2|en"]
    _, text = user_text(benchmark, item)
    assert text == (
        'This is a task of choosing the "texture" (shitsukan) of a thing in an image.\n'
        "By texture we mean things like the following:\n"
        "・Material properties (glossiness, transparency, etc.)\n"
        "・States (dry, frozen, etc.)\n"
        "・Impressions (beautiful, ugly, etc.)\n"
        "Among the given expressions, choose the one you feel is most appropriate for the specified object.\n\n"
        "Choose the most appropriate texture for the apple in the photo.\n\n"
        "When answering, use the half-width digit (0, 1, 2, ...) that corresponds to the option.\n"
        f"0: {item.options[0]}\n1: {item.options[1]}"
    )


def test_generation_prompt_is_figure_3_character_for_character(folder):
    benchmark = get_benchmark(GENERATE, data=str(folder), params={"lang": ["ja", "en"]})
    items = {item.id: item for item in benchmark.items()}
    assert user_text(benchmark, items["cat1|ja"])[1] == FIGURE_3
    english = user_text(benchmark, items["cat1|en"])[1]
    assert english.endswith('What kind of texture do you feel the "cat" in the photo has?')
    assert 'Write 3 expressions for the texture you perceive in the image, separated by ",".' in english


# --- classification: reading digit answers ----------------------------------------------


def test_digit_answers_parse_and_grade(folder):
    benchmark, items = by_record(folder)
    item = items["stone|n=5|ja"]
    right, wrong = item.target, (item.target + 1) % 5
    cases = {
        str(right): right,
        chr(ord("０") + right): right,  # full-width digit
        f"答え：{wrong}": wrong,
        f"{right}: {item.options[right]}": right,
        item.options[right]: right,  # the option's word itself
        f"回答：{right}": right,
    }
    for reply, expected in cases.items():
        parsed = benchmark.parse_reply(reply, item)
        assert (parsed.status, parsed.value) == (Status.ANSWERED, expected), reply
        assert benchmark.grade(item, parsed) == (expected == right, float(expected == right))
    unreadable = benchmark.parse_reply("どれも当てはまりません", item)
    assert unreadable.status is Status.UNPARSED and benchmark.grade(item, unreadable) == (False, 0.0)


# --- generation: three words and Eq. 2 --------------------------------------------------


def generation_item(folder_path, record_id, lang="ja"):
    benchmark = get_benchmark(GENERATE, data=str(folder_path), params={"lang": [lang]})
    return benchmark, next(item for item in benchmark.items() if item.id == f"{record_id}|{lang}")


@pytest.mark.parametrize(
    ("reply", "words", "score"),
    [
        ("ごつごつ、丸い、灰色", ["ごつごつ", "丸い", "灰色"], 1 / 3),
        ("硬い、乾いた、ごつごつ。", ["硬い", "乾いた", "ごつごつ"], 1.0),
        ("ゴツゴツ、重い、冷たい", ["ゴツゴツ", "重い", "冷たい"], 0.0),  # katakana is another word, as in the paper
        ("答え：硬い、重い、乾いた", ["硬い", "重い", "乾いた"], 2 / 3),
        ("硬い,重い，乾いた", ["硬い", "重い", "乾いた"], 2 / 3),
        ("ﾂﾙﾂﾙ、硬い、「乾いた」", ["ツルツル", "硬い", "乾いた"], 2 / 3),  # NFKC, quotes dropped
    ],
)
def test_three_words_score_their_overlap_with_the_peoples_words(folder, reply, words, score):
    benchmark, item = generation_item(folder, "stone")
    parsed = benchmark.parse_reply(reply, item)
    assert (parsed.status, parsed.value) == (Status.ANSWERED, words)
    correct, value = benchmark.grade(item, parsed)
    assert correct is None and value == pytest.approx(score)


@pytest.mark.parametrize(
    "reply",
    ["硬い、乾いた", "硬い、乾いた、ごつごつ、重い", "硬い、硬い、乾いた", "硬くて乾いていてごつごつしている", ""],
)
def test_malformed_outputs_are_unparsed_and_left_out(folder, reply):
    benchmark, item = generation_item(folder, "stone")
    parsed = benchmark.parse_reply(reply, item)
    assert parsed.status is Status.UNPARSED and parsed.value is None
    assert benchmark.grade(item, parsed) == (None, None)


def test_english_generation_reads_an_answer_line_and_a_final_and(folder):
    benchmark, item = generation_item(folder, "stone", "en")
    assert item.target == ("rugged", "hard", "dry")
    parsed = benchmark.parse_reply("The stone looks weathered.\nAnswer: Rugged, heavy, and dry", item)
    assert parsed.value == ["Rugged", "heavy", "dry"]
    assert benchmark.grade(item, parsed) == (None, pytest.approx(2 / 3))


def test_chance_guesses_are_well_formed_replies_from_the_folders_words(folder):
    benchmark, item = generation_item(folder, "glass")
    vocabulary = {w for r in RECORDS for w in r["words"]}
    assert 1 < len(item.answer_space) <= 8
    for guess in item.answer_space:
        parsed = benchmark.parse_reply(guess, item)
        assert parsed.status is Status.ANSWERED and set(parsed.value) <= vocabulary
    assert item.answer_space == generation_item(folder, "glass")[1].answer_space


# --- few-shot ---------------------------------------------------------------------------


def test_few_shot_needs_an_examples_file(folder):
    benchmark, items = by_record(folder)
    with pytest.raises(FolderError, match="0-shot.*examples.jsonl"):
        benchmark.select_examples(items["cat1|n=2|ja"], 1)


def test_examples_file_gives_examples_asked_alike(folder):
    examples = [{"id": "ex1", "image": "ex.png", "object": "雪", "words": ["冷たい", "白い", "ふわふわ"]}]
    Image.new("RGB", (32, 32), "white").save(folder / "ex.png")
    (folder / "examples.jsonl").write_text(json.dumps(examples[0], ensure_ascii=False) + "\n", encoding="utf-8")
    benchmark, items = by_record(folder)
    item = items["apple|n=5|ja"]
    [example] = benchmark.select_examples(item, 1)
    assert example.id == "example-ex1|n=5|ja" and len(example.options) == 5
    os.remove(folder / "examples.jsonl")
    without = by_record(folder)[1]  # an examples file leaves the test items as they were
    assert {i: (x.options, x.target) for i, x in items.items()} == {
        i: (x.options, x.target) for i, x in without.items()
    }
    (folder / "examples.jsonl").write_text(json.dumps(examples[0], ensure_ascii=False) + "\n", encoding="utf-8")
    prompt, _ = user_text(benchmark, item, Mode(1), [example])
    assert [m.role for m in prompt.messages] == ["user", "assistant", "user"]
    assert prompt.messages[1].text == str(example.target)
    generation = get_benchmark(GENERATE, data=str(folder))
    [written] = generation.select_examples(generation.items()[0], 1)
    assert generation.render_answer(written, cot=False) == "冷たい、白い、ふわふわ"


# --- the folder: malformed input --------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"image": "a.png", "object": "猫" "words": ["x"]}', "items.jsonl line 7: not valid JSON"),
        ('["a.png", "猫"]', "items.jsonl line 7: expected a JSON object"),
        ('{"image": "missing.png", "object": "猫", "words": ["x"]}', "items.jsonl line 7: image 'missing.png' not found"),
        ('{"image": "fake.png", "object": "猫", "words": ["x"]}', "items.jsonl line 7: image fake.png: not a PNG"),
        ('{"image": "../a.png", "object": "猫", "words": ["x"]}', "items.jsonl line 7: image '../a.png' is outside"),
        ('{"image": "a.png", "object": "猫", "words": []}', "items.jsonl line 7: `words` is empty"),
        ('{"image": "a.png", "object": "猫"}', "items.jsonl line 7: `words` must be a list"),
        ('{"image": "a.png", "object": "猫", "words": ["x", ""]}', "line 7: `words` must be a list of non-empty"),
        ('{"image": "a.png", "words": ["x"]}', "items.jsonl line 7: `object` must be a non-empty string"),
        ('{"object": "猫", "words": ["x"]}', "items.jsonl line 7: `image` must name an image"),
        ('{"image": "a.png", "object": "猫", "words": ["x", "Ｘ"]}', "line 7: `words` lists 'Ｘ' twice"),
        ('{"image": "a.png", "object": "猫", "words": ["x"], "negatives": ["x"]}', "in both `words` and `negatives`"),
        ('{"id": "stone", "image": "a.png", "object": "猫", "words": ["x"]}', "line 7: id 'stone' already used on line 4"),
        ('{"image": "a.png", "object": "猫", "words": ["x", "y"], "object_en": "cat", "words_en": ["x"]}',
         "`words_en` has 1 entries but `words` has 2"),
        ('{"image": "a.png", "object": "猫", "words": ["x"]}', "line 7: no `object_en`/`words_en`, which other lines"),
    ],
)  # fmt: skip
def test_malformed_lines_are_named_with_file_and_line(folder, line, message):
    (folder / "fake.png").write_text("not an image")
    with (folder / "items.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    for benchmark_id in (CLASSIFY, GENERATE):
        with pytest.raises(FolderError, match=message.replace("(", r"\(").replace(".", r"\.").replace("[", r"\[")):
            get_benchmark(benchmark_id, data=str(folder)).items()


def test_a_folder_without_items_says_what_to_give(tmp_path):
    with pytest.raises(FolderError, match="no items.jsonl.*not public"):
        get_benchmark(CLASSIFY, data=str(tmp_path))


# --- the bundled sample, the command line and published numbers --------------------------


def test_the_committed_sample_is_what_the_generator_draws(tmp_path):
    write_sample(tmp_path)
    assert (tmp_path / "items.jsonl").read_text("utf-8") == (SAMPLE_FOLDER / "items.jsonl").read_text("utf-8")
    for name in sample_images():
        drawn = np.asarray(Image.open(tmp_path / name).convert("RGB"))
        committed = np.asarray(Image.open(SAMPLE_FOLDER / name).convert("RGB"))
        assert committed.shape == (256, 256, 3) and np.array_equal(drawn, committed), name
    assert sum(p.stat().st_size for p in SAMPLE_FOLDER.glob("*.png")) < 300_000
    # Distinct pictures: no two drawers collapsed into the same image.
    assert len({np.asarray(Image.open(SAMPLE_FOLDER / n).convert("RGB")).tobytes() for n in sample_images()}) == 11


def test_the_sample_runs_offline_and_reports_beside_the_paper(tmp_path):
    store = str(tmp_path / "r.sqlite")
    for benchmark_id in (CLASSIFY, GENERATE):
        done = run_cli("run", benchmark_id, "--model", "baseline/chance", "--store", store)
        assert done.returncode == 0, done.stderr
    rows = json.loads(run_cli("report", "--store", store, "--format", "json", "--by", "n").stdout)
    measured = {(r["benchmark"], r["group"]): r for r in rows if r["source"] == "measured"}
    assert measured[(CLASSIFY, "overall")]["n"] == 22 and measured[(CLASSIFY, "n=5")]["n"] == 11
    assert measured[(GENERATE, "overall")]["n"] == 11 and measured[(GENERATE, "overall")]["unparsed"] == 0
    assert 0 <= measured[(GENERATE, "overall")]["accuracy"] < 100
    published = {(r["benchmark"], r["model"], r["group"]): r["accuracy"] for r in rows if r["source"] == "published"}
    assert published[(CLASSIFY, "GPT-4o (2024-11-20)", "n=2")] == 93.43
    assert published[(CLASSIFY, "LLaVA-1.5-7B", "n=5")] == 21.49
    assert published[(CLASSIFY, "Human", "n=5")] == 78.57 and published[(CLASSIFY, "Random", "n=2")] == 50.0
    assert published[(GENERATE, "GPT-4o (2024-11-20)", "overall")] == 21.5
    assert not any(key[0] == "shitsukan/judgement" for key in published)  # shown with judgements only
    assert all("質感知覚" in r["paper"] for r in rows if r["source"] == "published")
    judged = json.loads(
        run_cli("report", "--store", store, "--format", "json", "--benchmark", "shitsukan/judgement").stdout
    )
    assert {(r["model"], r["accuracy"]) for r in judged if r["source"] == "published"} == {
        ("GPT-4o (2024-11-20)", 75.49),
        ("LLaVA-1.5-7B", 57.75),
    }


def test_a_model_run_reports_the_match_rate_and_counts_malformed_replies(tmp_path):
    """End to end through the OpenAI SDK: the ball gets two words (malformed), the rest the same three."""

    def reply(body):
        text = " ".join(p.get("text", "") for p in body["messages"][-1]["content"] if isinstance(p, dict))
        return "つやつや、鮮やか" if "「ボール」" in text else "つやつや、冷たい、硬い"

    store = str(tmp_path / "r.sqlite")
    with FakeOpenAIServer(responder=reply) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        done = run_cli("run", GENERATE, "--model", "openai/gpt-test", "--store", store, env=env)
        assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (SAMPLE_FOLDER / "items.jsonl").read_text("utf-8").splitlines()]
    rates = [len({"つやつや", "冷たい", "硬い"} & set(r["words"])) / 3 for r in records if r["id"] != "ball"]
    rows = json.loads(run_cli("report", "--store", store, "--format", "json", "--no-references").stdout)
    [row] = rows
    assert row["n"] == 10 and row["unparsed"] == 1 and row["correct"] is None  # a match rate, not right or wrong
    assert row["accuracy"] == round(100 * sum(rates) / len(rates), 2)
