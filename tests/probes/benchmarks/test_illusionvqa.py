"""IllusionVQA on fixtures in the authors' layout and in the Hub's schema: prompts, few-shot, groups."""

import json

import pytest
from datasets import Dataset, Features, Image, Sequence, Value
from PIL import Image as PILImage

from models.types import ImagePart
from probes.asking.prompting import build_prompt
from probes.benchmarks import illusionvqa
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import Mode
from tests.conftest import run_cli
from tests.support.fake_servers import FakeOpenAIServer, openai_images

INSTRUCTION = (
    "You'll be given an image, an instruction, and some options. You have to select the correct one. Do not "
    "explain your reasoning. Answer with only the letter that corresponds to the correct option. Do not repeat "
    "the entire answer."
)
SOFT_OPTIONS = ["The left object", "The right object", "Both objects", "Neither object"]


def picture(width=64, height=48, colour="red"):
    return PILImage.new("RGB", (width, height), colour)


def comprehension_records():
    return [
        {"image": "1.png", "question": "Are the two lines the same length?", "options": ["No.", "Yes.", "Cannot tell."],
         "answer": "Yes.", "category": "size", "id": 0},
        {"image": "2.png", "question": "How many faces are hidden?", "options": ["One", "Two", "Three", "Four"],
         "answer": "Three", "category": "counting", "id": 1},
        {"image": "3.png", "question": "Describe this image.", "options": ["A staircase", "A duck"],
         "answer": "A duck", "category": "impossible object", "id": 2},
    ]  # fmt: skip


def fewshot_records(soft=False):
    records = []
    for index, answer in enumerate(SOFT_OPTIONS if soft else ["No.", "Yes.", "No.", "Yes."]):
        record = {"image": f"f{index}.png", "question": "Which object is geometrically impossible?" if soft else
                  f"Example question {index}?", "options": SOFT_OPTIONS if soft else ["No.", "Yes."],
                  "answer": answer, "category": "soft_localization" if soft else "color", "id": index}  # fmt: skip
        if soft:
            record["reasoning"] = f"The left object is a cube which is possible. Example {index}."
        records.append(record)
    return records


@pytest.fixture
def authors_layout(tmp_path):
    """PATH/eval_labels.json + EVAL/, PATH/fewshot_labels.json + FEW_SHOTS/."""
    folder = tmp_path / "comprehension"
    (folder / "EVAL").mkdir(parents=True)
    (folder / "FEW_SHOTS").mkdir()
    for index, record in enumerate(comprehension_records()):
        picture(1000 if index == 0 else 64, 600 if index == 0 else 48, ["red", "green", "blue"][index]).save(
            folder / "EVAL" / record["image"]
        )
    for index, record in enumerate(fewshot_records()):
        picture(40 + index, 30).save(folder / "FEW_SHOTS" / record["image"])
    (folder / "eval_labels.json").write_text(json.dumps(comprehension_records()))
    (folder / "fewshot_labels.json").write_text(json.dumps(fewshot_records()))
    return folder


def prompt_of(benchmark, item, mode):
    examples = benchmark.select_examples(item, mode.shots) if mode.shots else []
    return build_prompt(benchmark, item, mode, examples, lambda it: [ImagePart(s.load()) for s in it.images])


def test_zero_shot_prompt_is_the_papers_character_for_character(authors_layout):
    benchmark = get_benchmark("illusionvqa/comprehension", data=str(authors_layout))
    item = benchmark.items()[0]
    [message] = prompt_of(benchmark, item, Mode()).messages
    texts = [p.text for p in message.parts if not isinstance(p, ImagePart)]
    assert texts == [INSTRUCTION, "Are the two lines the same length?\na. No.\nb. Yes.\nc. Cannot tell."]
    assert isinstance(message.parts[1], ImagePart)
    assert message.parts[1].image.size == (512, 307)  # longer side at most 512 px, aspect kept


def test_four_shot_holds_the_four_train_examples_as_turns(authors_layout):
    benchmark = get_benchmark("illusionvqa/comprehension", data=str(authors_layout))
    item = benchmark.items()[1]
    messages = prompt_of(benchmark, item, Mode(4)).messages
    assert [m.role for m in messages] == ["user", "assistant"] * 4 + ["user"]
    assert messages[0].parts[0].text == INSTRUCTION + " Here are a few examples:"
    assert [m.text for m in messages[1::2][:4]] == ["Answer: a", "Answer: b", "Answer: a", "Answer: b"]
    assert messages[-1].parts[0].text == "Now you try it."
    assert messages[-1].parts[-1].text == "How many faces are hidden?\na. One\nb. Two\nc. Three\nd. Four"
    assert sum(len(m.images) for m in messages) == 5


def test_cot_uses_the_papers_instruction_and_reasoning_template(tmp_path):
    folder = tmp_path / "sofloc"
    (folder / "EVAL").mkdir(parents=True)
    (folder / "FEW_SHOTS").mkdir()
    records = [{"image": "s.png", "question": "Which object is geometrically impossible?", "options": SOFT_OPTIONS,
                "answer": "The right object", "category": "soft_localization", "id": 9}]  # fmt: skip
    picture(100, 50, "orange").save(folder / "EVAL" / "s.png")
    for record in fewshot_records(soft=True):
        picture().save(folder / "FEW_SHOTS" / record["image"])
    (folder / "eval_labels.json").write_text(json.dumps(records))
    (folder / "fewshot_labels.json").write_text(json.dumps(fewshot_records(soft=True)))
    benchmark = get_benchmark("illusionvqa/soft-localization", data=str(folder))
    item = benchmark.items()[0]
    messages = prompt_of(benchmark, item, Mode(4, cot=True)).messages
    assert messages[0].parts[0].text.startswith("You'll be given an image, an instruction, and some choices.")
    assert (
        "End your answer with 'Answer': {letter_of_correct_choice} without the curly brackets. Here are a few examples:"
        in messages[0].parts[0].text
    )
    assert messages[1].text == "The left object is a cube which is possible. Example 0.\nAnswer: a"
    assert messages[-1].images[0].image.mode == "L"  # soft-localization is shown in grayscale
    assert item.target == 1 and benchmark.chance == 25.0


def test_groups_merge_small_categories_into_miscellaneous(authors_layout):
    items = get_benchmark("illusionvqa/comprehension", data=str(authors_layout)).items()
    assert [i.groups["category"] for i in items] == ["Size", "Miscellaneous", "Impossible Object"]
    assert [i.groups["raw_category"] for i in items] == ["size", "counting", "impossible object"]


def test_in_context_probe_asks_the_examples_themselves(authors_layout):
    benchmark = get_benchmark("illusionvqa/comprehension", data=str(authors_layout), params={"subset": ["fewshot"]})
    items = benchmark.items()
    assert len(items) == 4
    examples = benchmark.select_examples(items[2], 4)
    assert items[2] in examples  # on purpose: the answer is in the context (Appendix H)


def test_hub_schema_loads_through_datasets(tmp_path, monkeypatch):
    features = Features({"image": Image(), "question": Value("string"), "options": Sequence(Value("string")),
                         "answer": Value("string"), "category": Value("string"), "id": Value("int64")})  # fmt: skip
    folder = tmp_path / "hub"
    (folder / "data").mkdir(parents=True)
    for split, records in (("test", comprehension_records()), ("train", fewshot_records())):
        rows = {k: [r[k] for r in records] for k in ("question", "options", "answer", "category", "id")}
        rows["image"] = [picture() for _ in records]
        Dataset.from_dict(rows, features=features).to_parquet(str(folder / "data" / f"{split}-00000-of-00001.parquet"))
    monkeypatch.setitem(illusionvqa.HUB, "illusionvqa/comprehension", str(folder))
    benchmark = get_benchmark("illusionvqa/comprehension")
    assert [i.target for i in benchmark.items()] == [1, 2, 1]
    assert len(benchmark.examples()) == 4 and benchmark.items()[0].images[0].load().size == (64, 48)


def test_missing_files_and_bad_params_are_named(authors_layout):
    (authors_layout / "EVAL" / "2.png").unlink()
    with pytest.raises(BenchmarkError, match=r"eval_labels.json record 1: image 2.png: file not found"):
        get_benchmark("illusionvqa/comprehension", data=str(authors_layout)).items()
    with pytest.raises(BenchmarkError, match="subset"):
        get_benchmark("illusionvqa/comprehension", params={"subset": ["train"]})
    picture().save(authors_layout / "EVAL" / "2.png")
    (authors_layout / "fewshot_labels.json").unlink()
    with pytest.raises(BenchmarkError, match="no fewshot_labels.json"):
        get_benchmark("illusionvqa/comprehension", data=str(authors_layout)).examples()


def test_four_shot_run_against_an_openai_protocol_server(authors_layout, tmp_path):
    with FakeOpenAIServer(responder=lambda body: "b") as server:
        done = run_cli("run", "illusionvqa/comprehension", "--data", str(authors_layout), "--shots", "4",
                       "--model", "openai/X", "--store", str(tmp_path / "r.sqlite"),
                       env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"})  # fmt: skip
        assert done.returncode == 0, done.stderr
        body = server.requests[0]["body"]
    assert len(openai_images(body)) == 5
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"] * 4 + ["user"]
    assert body["messages"][1]["content"] == "Answer: a"
    assert body["messages"][-1]["content"][0]["text"] == "Now you try it."
