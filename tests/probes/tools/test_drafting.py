"""Drafting the text of mined quadruples with a model: the prompt carries the paper's instructions,
replies are read robustly, drafts are marked for a person, and an unreadable reply is recorded as
a failed draft, never invented. The model is a fake `ask` (a deterministic test double)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from models.types import ImagePart, TextPart
from probes.benchmarks.discribench import DiscriBenchError
from probes.core.registry import get_benchmark
from probes.tools.drafting import DraftError, draft_folder, draft_messages, draft_quadruple, parse_draft
from probes.tools.easing import ease
from probes.tools.embeddings import MiningError
from probes.tools.mining import mine
from tests.support.tiny_encoders import PlantedEncoder, gram_vectors, planted_image, similarity_matrix

GOOD = {
    "situation": "Two friends plan a picnic in a park.",
    "conversation": [
        {"speaker": "Emma", "line": "Let's sit by the pond with the ducks."},
        {"speaker": "Jack", "line": "The ducks were noisy last time. How about under the big oak?"},
        {"speaker": "Emma", "line": "Fine, but I want the bench, not the grass."},
    ],
    "question": "Where will they have the picnic?",
    "answer": 3,
    "misleading_toward": 1,
}
CONTEXT = (
    "Situation: Two friends plan a picnic in a park.\nConversation:\n"
    "Emma: Let's sit by the pond with the ducks.\n"
    "Jack: The ducks were noisy last time. How about under the big oak?\n"
    "Emma: Fine, but I want the bench, not the grass."
)


# --- reading replies ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(GOOD),
        "Here is the draft:\n```json\n" + json.dumps(GOOD, indent=2) + "\n```\nI hope it helps.",
        "Sure! " + json.dumps({**GOOD, "answer": "Image 3"}) + " Let me know.",
        json.dumps({**GOOD, "conversation": [f"{t['speaker']}: {t['line']}" for t in GOOD["conversation"]]}),
        json.dumps({**GOOD, "answer": "3"}),
        "Situation: Two friends plan a picnic in a park.\nConversation:\n"
        + "\n".join(f"{t['speaker']}: {t['line']}" for t in GOOD["conversation"])
        + "\nQuestion: Where will they have the picnic?\nAnswer: 3\nbecause of the bench.",
    ],
    ids=["bare", "fenced", "amid-prose", "string-turns", "string-answer", "labelled-sections"],
)
def test_a_well_formed_draft_is_read_in_the_release_format(reply):
    draft = parse_draft(reply)
    assert draft.context == CONTEXT
    assert draft.question == "Where will they have the picnic?" and draft.answer == 3


def test_a_japanese_draft_uses_the_japanese_labels():
    draft = parse_draft(
        json.dumps({**GOOD, "situation": "公園で。", "conversation": ["エマ：池のそば。", "ジャック：木の下。"]}), "ja"
    )
    assert draft.context == "状況：公園で。\n会話：\nエマ：池のそば。\nジャック：木の下。"


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("", "empty"),
        ("I cannot help with that.", "no JSON object"),
        (json.dumps({**GOOD, "answer": 5}), "from 1 to 4"),
        (json.dumps({**GOOD, "answer": "the third one, probably"}), "from 1 to 4"),
        (json.dumps({**GOOD, "answer": True}), "from 1 to 4"),
        (json.dumps({**GOOD, "conversation": [GOOD["conversation"][0]]}), "at least 2"),
        (json.dumps({**GOOD, "question": " "}), "`question` is missing"),
        (json.dumps({k: v for k, v in GOOD.items() if k != "answer"}), "`answer`"),
        ('{"situation": "x", "conversation": [', "no JSON object"),
    ],
)
def test_an_unreadable_reply_is_refused_with_the_reason(reply, why):
    with pytest.raises(DraftError, match=why):
        parse_draft(reply)


def test_the_prompt_shows_the_four_images_labelled_and_asks_for_the_papers_traits():
    images = [planted_image(i) for i in range(4)]
    (message,) = draft_messages(images)
    assert message.role == "user"
    labels = [p.text for p in message.parts if isinstance(p, TextPart)][:4]
    assert labels == ["Image 1: ", "\nImage 2: ", "\nImage 3: ", "\nImage 4: "]
    assert [p.image for p in message.parts if isinstance(p, ImagePart)] == images
    instructions = message.parts[-1].text
    assert "You are an English teacher" in instructions  # the paper's prompt opens so
    assert "mislead" in instructions and "spread over several turns" in instructions  # C2 and C3
    assert "exactly one right picture" in instructions  # check (a): one answer only


def test_one_quadruple_can_be_drafted_on_its_own():
    model = FakeModel([json.dumps(GOOD)])
    draft, reply = draft_quadruple([planted_image(i) for i in range(4)], model)
    assert draft.context == CONTEXT and draft.answer == 3 and draft.misleads == 1 and reply == json.dumps(GOOD)
    with pytest.raises(DraftError):
        draft_quadruple([planted_image(i) for i in range(4)], FakeModel(["no idea"]))


# --- drafting a mined folder --------------------------------------------------------------------------


def _mined(tmp_path: Path) -> Path:
    """Eight planted pictures: two quadruples that qualify."""
    clip = np.vstack([gram_vectors(similarity_matrix(4, 0.97), 8, 0), gram_vectors(similarity_matrix(4, 0.98), 8, 4)])
    dino = np.vstack([gram_vectors(similarity_matrix(4, 0.7, {(0, 1): 0.3}), 8, 0),
                      gram_vectors(similarity_matrix(4, 0.7, {(2, 3): 0.2}), 8, 4)])  # fmt: skip
    (tmp_path / "photos").mkdir()
    for index in range(8):
        planted_image(index).save(tmp_path / "photos" / f"{index}.png")
    mine(tmp_path / "photos", tmp_path / "mined", clip=PlantedEncoder(clip, "clip"),
         dino=PlantedEncoder(dino, "dino"), cache_dir=tmp_path / "cache")  # fmt: skip
    return tmp_path / "mined"


def _records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "discribench_en_200.jsonl").read_text().splitlines()]


class FakeModel:
    """A TEST DOUBLE, not a model: answers each call from a fixed list, and checks what it was sent."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.calls = 0

    def __call__(self, messages):
        (message,) = messages
        assert len([p for p in message.parts if isinstance(p, ImagePart)]) == 4
        reply = self.replies[self.calls]
        self.calls += 1
        if isinstance(reply, Exception):
            raise reply
        return reply


def test_draft_folder_marks_drafts_and_records_a_failed_one_without_inventing_text(tmp_path):
    folder = _mined(tmp_path)
    model = FakeModel([json.dumps(GOOD), "Sorry, I can't see any pictures."])
    report = draft_folder(folder, model, "fake/model")
    assert report.drafted == ["001"] and list(report.failed) == ["002"]

    drafted, failed = _records(folder)
    assert drafted["context"] == CONTEXT and drafted["question"] == GOOD["question"] and drafted["answer"] == 3
    assert drafted["draft"] is True and drafted["draft_model"] == "fake/model" and drafted["draft_status"] == "drafted"
    assert failed["context"] == "" and failed["question"] == "" and failed["answer"] is None
    assert failed["draft_status"] == "failed" and "no JSON object" in failed["draft_error"]
    assert failed["draft_reply"] == "Sorry, I can't see any pictures."

    # The benchmark still refuses the folder, naming only the record that failed.
    with pytest.raises(DiscriBenchError, match="1 problem") as refused:
        get_benchmark("discribench", data=str(folder)).items()
    assert "line 2: `context`" in str(refused.value)

    # A second pass drafts only the failed record; the good draft is left as it was.
    second = FakeModel([json.dumps({**GOOD, "answer": 2})])
    again = draft_folder(folder, second, "fake/model")
    assert second.calls == 1 and again.drafted == ["002"] and again.skipped == 1
    assert _records(folder)[0] == drafted
    items = get_benchmark("discribench", data=str(folder)).items()
    assert [item.target for item in items] == [2, 1]

    # And the eased subsets can be written from the drafted folder.
    report = ease(folder, clip=PlantedEncoder(np.eye(8), "clip"), cache_dir=tmp_path / "cache")
    assert report.written["ablation/vis_medium_en_100.jsonl"] == 2 and report.drafts == 2
    assert len(get_benchmark("discribench", data=str(folder), params={"subset": ["vis_medium"]}).items()) == 2


def test_a_person_s_text_is_never_redrafted(tmp_path):
    folder = _mined(tmp_path)
    records = _records(folder)
    records[0].update(context="Situation: mine.\nConversation:\nA: x\nB: y", question="Which?", answer=1)
    (folder / "discribench_en_200.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    model = FakeModel([json.dumps(GOOD)])
    report = draft_folder(folder, model, "fake/model")
    assert model.calls == 1 and report.skipped == 1 and _records(folder)[0] == records[0]


def test_repeated_model_failures_stop_drafting_and_keep_what_was_recorded(tmp_path):
    folder = _mined(tmp_path)
    model = FakeModel([ConnectionError("refused")] * 2)
    report = draft_folder(folder, model, "fake/model")  # two records, two failures: under the limit
    assert set(report.failed) == {"001", "002"} and all("the model call failed" in v for v in report.failed.values())
    assert all(r["draft_status"] == "failed" and r["context"] == "" for r in _records(folder))

    from probes.tools import drafting

    stopping = FakeModel([TimeoutError("slow")] * 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(drafting, "MAX_CALL_FAILURES", 2)
        with pytest.raises(MiningError, match="2 calls failed in a row"):
            draft_folder(folder, stopping, "fake/model")
    assert all(r["draft_error"] == "the model call failed: slow" for r in _records(folder))


def test_drafting_needs_a_mined_folder(tmp_path):
    with pytest.raises(MiningError, match="no discribench_en_200.jsonl"):
        draft_folder(tmp_path, FakeModel([]), "fake/model")
