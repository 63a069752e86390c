"""Easing subsets (DiscriBench Table 2, the release's ablation file names) written from a folder in
the release's layout, built here, and read back by the discribench benchmark; the paper's Table 2
as published rows."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from probes.analysis.scoring import published_rows
from probes.core.registry import get_benchmark
from probes.tools.easing import ease
from probes.tools.embeddings import HFEncoder, MiningError
from tests.support.tiny_encoders import PlantedEncoder, build_tiny_clip, planted_image, planted_index

CAPTION = "The birds fly from right to left."


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _release_like(root: Path) -> Path:
    """Three complete four-image items (034, 036, 037), an unwritten one, and a one-image exam
    item, in English; the first again in Japanese. Picture k of item NNN is planted image i."""
    groups = {"034": range(0, 4), "036": range(4, 8), "037": range(8, 12), "050": range(12, 16)}
    for qid, indices in groups.items():
        for place, index in enumerate(indices, start=1):
            path = root / "images" / qid / f"{place}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            planted_image(index).save(path)
    (root / "images" / "001").mkdir()
    planted_image(16).save(root / "images" / "001" / "0.png")

    def files(qid):
        return [f"images/{qid}/{k}.png" for k in range(1, 5)]

    birds = "Situation: A couple watch birds on TV.\nConversation:\nJohn: Look at them!\nSarah: Geese, I think."
    english = [
        {"qid": "034", "image_files": files("034"), "context": birds, "question": "Which scene does Sarah mean?",
         "answer": 4, "caption": CAPTION, "caption_answer": 1},
        {"qid": "036", "image_files": files("036"), "context": "Situation: Owls.\nConversation:\nA: Hoo.\nB: Who?",
         "question": "Which owl?", "answer": 3, "caption": "A white owl on a branch.", "draft": True,
         "draft_model": "fake/model"},
        {"qid": "037", "image_files": files("037"), "context": "Situation: Lunch.\nConversation:\nA: Rice?\nB: No.",
         "question": "Which plate?", "answer": 2},
        {"qid": "050", "image_files": files("050"), "context": "", "question": "", "answer": None},
        {"qid": "001", "image_files": ["images/001/0.png"], "context": "Situation: Shoes.\nConversation:\nA: B.",
         "question": "Which pair?", "answer": 1},
    ]  # fmt: skip
    japanese = [
        {"qid": "034_ja", "image_files": files("034"), "context": "状況：鳥の番組。\n会話：\nジョン：見て！\nサラ：ガンね。",
         "question": "サラが言及している画像はどれですか？", "answer": 4, "caption": "鳥たちが右から左へ飛んでいます。",
         "caption_answer": 1},
        {"qid": "036_ja", "image_files": files("036"), "context": "状況：フクロウ。\n会話：\nA：ホー。\nB：だれ？",
         "question": "どのフクロウですか？", "answer": 3},
    ]  # fmt: skip
    _write_jsonl(root / "discribench_en_200.jsonl", english)
    _write_jsonl(root / "discribench_ja_200.jsonl", japanese)
    return root


def _which(image: Image.Image) -> int | str:
    """The planted index a picture shows, or "black" for the placeholder."""
    if np.asarray(image.convert("RGB")).max() < 16:
        return "black"
    return planted_index(image)


def _least_similar_to(vectors: np.ndarray, answer: int, among) -> int:
    return min(among, key=lambda i: (float(vectors[answer] @ vectors[i]), i))


@pytest.fixture
def planted_clip() -> PlantedEncoder:
    vectors = np.random.default_rng(5).normal(size=(17, 8))
    return PlantedEncoder(vectors / np.linalg.norm(vectors, axis=1, keepdims=True), "clip")


def test_ease_writes_the_release_files_that_the_benchmark_reads(tmp_path, planted_clip):
    root = _release_like(tmp_path / "data")
    report = ease(root, clip=planted_clip, cache_dir=tmp_path / "cache")
    v = planted_clip.vectors

    for lang in ("en", "ja"):
        for subset in ("main", "vis_medium", "vis_easy", "lan_easy", "answer_embed", "both"):
            assert (root / "ablation" / f"{subset}_{lang}_100.jsonl").is_file()
    assert (
        report.written["ablation/vis_easy_en_100.jsonl"] == 3 and report.written["ablation/lan_easy_en_100.jsonl"] == 2
    )
    assert report.drafts == 1  # 036 is still a model's draft: said so
    skipped = "\n".join(report.skipped)
    assert "050: not written yet" in skipped and "001: `image_files` must name four images" in skipped
    assert "lan_easy_en_100.jsonl 037: no `caption`" in skipped

    def items(subset, lang="en"):
        bench = get_benchmark("discribench", data=str(root), params={"subset": [subset], "lang": [lang]})
        return {item.id: item for item in bench.items()}

    # vis_medium: the answer and the item's own distractor least similar to it by CLIP; two black
    vis = items("vis_medium")
    assert set(vis) == {"vis_medium/034_en_vis-medium", "vis_medium/036_en_vis-medium", "vis_medium/037_en_vis-medium"}
    birds = vis["vis_medium/034_en_vis-medium"]
    shown = [_which(source.load()) for source in birds.images]
    kept = _least_similar_to(v, 3, [0, 1, 2])
    assert birds.target == 3 and shown[3] == 3 and shown[kept] == kept and shown.count("black") == 2

    # vis_easy: the same places, but the kept one shows another item's image, least similar to the answer
    easy = items("vis_easy")["vis_easy/034_en_vis-easy"]
    shown_easy = [_which(source.load()) for source in easy.images]
    foreign = _least_similar_to(v, 3, range(4, 12))  # images of 036 and 037, the other complete items
    assert shown_easy[3] == 3 and shown_easy[kept] == foreign and shown_easy.count("black") == 2

    # lan_easy: the caption alone, the caption's own answer, the four images as they were
    lan = items("lan_easy")["lan_easy/034_en_lan-easy"]
    assert lan.question.startswith(CAPTION + "\nQuestion: Which image number matches the caption?")
    assert lan.target == 0 and [_which(s.load()) for s in lan.images] == [0, 1, 2, 3]
    assert items("lan_easy")["lan_easy/036_en_lan-easy"].target == 2  # no caption_answer: the answer

    answer_embed = items("answer_embed")["answer_embed/034_en_answer-embed"]
    assert "Which scene does Sarah mean? The answer is fourth image." in answer_embed.question
    assert set(items("main")) == {"main/034", "main/036", "main/037"}

    # Japanese: the release's qids and question, no doubled _ja
    ja = items("lan_easy", "ja")
    assert set(ja) == {"lan_easy/034_ja_lan-easy"}
    assert "どの画像選択肢が上記のテキストに合致しますか？" in ja["lan_easy/034_ja_lan-easy"].question
    assert "正解は4番目の画像です。" in items("answer_embed", "ja")["answer_embed/034_ja_answer-embed"].question

    # both (Table 2's third column; not a release file): caption, and vis_medium's images for its answer
    both = {r["qid"]: r for r in _read_jsonl(root / "ablation" / "both_en_100.jsonl")}
    caption_kept = _least_similar_to(v, 0, [1, 2, 3])
    assert both["034_en_both"]["context"] == CAPTION and both["034_en_both"]["answer"] == 1
    assert [f == "images/black.jpg" for f in both["034_en_both"]["image_files"]] == [
        i not in (0, caption_kept) for i in range(4)
    ]
    with Image.open(root / "images" / "black.jpg") as black:
        assert black.size == (460, 460) and np.asarray(black).max() < 16


def test_ease_again_embeds_nothing_and_the_black_placeholder_is_kept(tmp_path, planted_clip):
    root = _release_like(tmp_path / "data")
    ease(root, clip=planted_clip, cache_dir=tmp_path / "cache")
    before = (root / "ablation" / "vis_easy_en_100.jsonl").read_bytes()
    again = PlantedEncoder(planted_clip.vectors, "clip")
    report = ease(root, clip=again, cache_dir=tmp_path / "cache")
    assert again.embedded == 0 and report.computed == 0 and report.cached == 12
    assert (root / "ablation" / "vis_easy_en_100.jsonl").read_bytes() == before


def test_ease_with_the_tiny_real_clip_keeps_the_least_similar_distractor(tmp_path):
    clip = build_tiny_clip(tmp_path / "clip")
    root = _release_like(tmp_path / "data")
    ease(root, clip=clip, cache_dir=tmp_path / "cache")
    pictures = [Image.open(root / "images" / "037" / f"{k}.png").convert("RGB") for k in range(1, 5)]
    vectors = HFEncoder(clip, "clip").embed(pictures).astype(np.float64)
    kept = _least_similar_to(vectors, 1, [0, 2, 3])  # 037's answer is picture 2
    record = {r["qid"]: r for r in _read_jsonl(root / "ablation" / "vis_medium_en_100.jsonl")}["037_en_vis-medium"]
    assert (
        record["image_files"][1] == "images/037/2.png" and record["image_files"][kept] == f"images/037/{kept + 1}.png"
    )
    assert sum(f == "images/black.jpg" for f in record["image_files"]) == 2


def test_ease_refuses_a_folder_without_records(tmp_path, planted_clip):
    (tmp_path / "empty").mkdir()
    with pytest.raises(MiningError, match="no discribench_en_200.jsonl or discribench_ja_200.jsonl"):
        ease(tmp_path / "empty", clip=planted_clip, cache_dir=tmp_path / "cache")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "discribench_en_200.jsonl").write_text('{"qid": "1"}\nnot json\n')
    with pytest.raises(MiningError, match="line 2: not valid JSON"):
        ease(bad, clip=planted_clip, cache_dir=tmp_path / "cache")


def test_table_2_is_published_beside_the_subset_groups():
    rows = published_rows(["discribench"], by=["subset"])
    table = {(r.model, r.group): r.accuracy for r in rows if r.group.startswith("subset=")}
    assert table == {
        ("InternVL-2.5-38B", "subset=lan_easy"): 25.0,
        ("InternVL-2.5-38B", "subset=vis_medium"): 41.7,
        ("InternVL-2.5-38B", "subset=both"): 58.3,
        ("Claude 3.5 Sonnet", "subset=lan_easy"): 16.7,
        ("Claude 3.5 Sonnet", "subset=vis_medium"): 25.0,
        ("Claude 3.5 Sonnet", "subset=both"): 50.0,
        ("GPT-4o", "subset=lan_easy"): 50.0,
        ("GPT-4o", "subset=vis_medium"): 50.0,
        ("GPT-4o", "subset=both"): 83.3,
    }
    # 12 items: every number is a whole count out of 12
    assert all(abs(accuracy * 12 / 100 - round(accuracy * 12 / 100)) < 0.01 for accuracy in table.values())
    assert not any(r.group.startswith("subset=") for r in published_rows(["discribench"], by=["image_type"]))
