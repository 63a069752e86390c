"""IllusionVQA --param fewshot=authors: the prompt laid out as the authors' GPT4V notebooks sent it
(one user message, "Image i: ..." then "Answer i: ...", "Now you try it!"), so their k-shot
numbers can be reproduced; separate turns stay the default. Expected texts are copied from the
notebooks (github.com/csebuetnlp/IllusionVQA, inference_code/closed_source_api/)."""

import json
import sqlite3

import pytest

from models.types import ImagePart
from probes.core.errors import BenchmarkError
from probes.core.registry import get_benchmark
from probes.core.types import Mode
from tests.conftest import run_cli
from tests.probes.benchmarks import test_illusionvqa as base
from tests.probes.benchmarks.test_illusionvqa import SOFT_OPTIONS, fewshot_records, picture, prompt_of
from tests.support.fake_servers import FakeOpenAIServer, openai_images

authors_layout = base.authors_layout  # the fixture: the authors' local layout with 3 items and 4 examples

# GPT_inference.ipynb: the active 0-shot content, and the 4-shot one (commented out there, active
# in claude_inference.ipynb).
NOTEBOOK_ZERO_SHOT = (
    "You'll be given an image, an instruction and some options. You have to select the correct one. Do not explain "
    "your reasoning. Answer with only the letter which corresponds to the correct option. Do not repeat the entire "
    "answer."
)
NOTEBOOK_FOUR_SHOT = (
    "You'll be given an image, an instruction and some choices. You have to select the correct one. Do not explain "
    "your reasoning. Answer with the option's letter from the given choices directly. Here are a few examples:"
)
# GPT_inference_with_reasoning.ipynb
NOTEBOOK_COT = (
    "You'll be given an image, an instruction and some choices. You have to select the correct one. Reason about the "
    'choices in the context of the question and the image. End your answer with "Answer": {letter_of_correct_choice} '
    "without the curly brackets. Here are a few examples:"
)


def shown(message) -> list[str]:
    """The message's parts in order: texts as they are, each image as <image>."""
    return ["<image>" if isinstance(part, ImagePart) else part.text for part in message.parts]


def authors(folder, benchmark_id="illusionvqa/comprehension", **params):
    return get_benchmark(benchmark_id, data=str(folder), params={"fewshot": ["authors"], **params})


def test_four_shot_is_one_user_message_as_the_notebook_builds_it(authors_layout):
    benchmark = authors(authors_layout)
    item = benchmark.items()[1]
    [message] = prompt_of(benchmark, item, Mode(4)).messages
    assert message.role == "user"
    examples = [
        part
        for index, answer in enumerate("abab")
        for part in (f"Image {index + 1}: Example question {index}?\na. No.\nb. Yes.", "<image>",
                     f"Answer {index + 1}: {answer}")
    ]  # fmt: skip
    assert shown(message) == [
        NOTEBOOK_FOUR_SHOT,
        *examples,
        "Now you try it!",
        "Image 5: How many faces are hidden?\na. One\nb. Two\nc. Three\nd. Four",
        "<image>",
        "Answer 5: ",
    ]


def test_zero_shot_in_the_authors_layout(authors_layout):
    benchmark = authors(authors_layout)
    [message] = prompt_of(benchmark, benchmark.items()[0], Mode()).messages
    assert shown(message) == [
        NOTEBOOK_ZERO_SHOT,
        "Image 1: Are the two lines the same length?\na. No.\nb. Yes.\nc. Cannot tell.",
        "<image>",
        "Answer 1: ",
    ]


def test_four_shot_cot_follows_the_reasoning_notebook(tmp_path):
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
    benchmark = authors(folder, "illusionvqa/soft-localization")
    [message] = prompt_of(benchmark, benchmark.items()[0], Mode(4, cot=True)).messages
    parts = shown(message)
    mcq = "Which object is geometrically impossible?\na. The left object\nb. The right object\nc. Both objects\nd. " \
          "Neither object"  # fmt: skip
    assert parts[:5] == [
        NOTEBOOK_COT,
        f"Image 1: {mcq}",
        "<image>",
        "Reasoning: The left object is a cube which is possible. Example 0.",
        "Answer: a",
    ]
    assert parts[-4:] == ["Now you try it!", f"Image 5: {mcq}", "<image>", "Reasoning: "]
    assert parts.count("<image>") == 5


def test_separate_turns_stay_the_default(authors_layout):
    benchmark = get_benchmark("illusionvqa/comprehension", data=str(authors_layout))
    messages = prompt_of(benchmark, benchmark.items()[1], Mode(4)).messages
    assert [m.role for m in messages] == ["user", "assistant"] * 4 + ["user"]
    assert [i.id for i in benchmark.items()] == ["test-0", "test-1", "test-2"]


def test_a_layout_name_that_is_not_one_is_refused():
    with pytest.raises(BenchmarkError, match="fewshot= takes one of turns, authors"):
        get_benchmark("illusionvqa/comprehension", params={"fewshot": ["paper"]})


def test_a_run_in_the_authors_layout_sends_one_message_and_keeps_our_results(authors_layout, tmp_path):
    store = tmp_path / "r.sqlite"
    common = ("run", "illusionvqa/comprehension", "--data", str(authors_layout), "--shots", "4", "--model",
              "openai/X", "--store", str(store))  # fmt: skip
    with FakeOpenAIServer(responder=lambda body: "b") as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        assert run_cli(*common, env=env).returncode == 0
        done = run_cli(*common, "--param", "fewshot=authors", env=env)
        assert done.returncode == 0, done.stderr
        body = server.requests[-1]["body"]
    assert [m["role"] for m in body["messages"]] == ["user"] and len(openai_images(body)) == 5
    texts = [part["text"] for part in body["messages"][0]["content"] if part["type"] == "text"]
    assert texts[0] == NOTEBOOK_FOUR_SHOT and "Now you try it!" in texts and texts[-1] == "Answer 5: "
    ids = {row[0] for row in sqlite3.connect(store).execute("SELECT item_id FROM results")}
    assert ids == {"test-0", "test-1", "test-2", "authors/test-0", "authors/test-1", "authors/test-2"}
    rows = json.loads(run_cli("report", "--store", str(store), "--by", "fewshot", "--format", "json",
                              "--no-references").stdout)  # fmt: skip
    assert {(r["group"], r["n"]) for r in rows} == {("overall", 6), ("fewshot=authors", 3)}
