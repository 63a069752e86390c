"""Mining look-alike quadruples (DiscriBench's erroneous-agreement method): the real embedding path
on tiny random CLIP and DINOv2 models, the cache, the search on planted similarities with known
answers, and the DiscriBench-layout folder written. Fixtures are built here; nothing is
downloaded and the DiscriBench release is never copied."""

from __future__ import annotations

import io
import itertools
import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from probes.benchmarks.discribench import DiscriBenchError
from probes.core.registry import get_benchmark
from probes.tools import mining
from probes.tools.embeddings import HFEncoder, MiningError, embed_files
from probes.tools.image_scan import scan_folder
from probes.tools.mining import mine
from probes.tools.quadruples import PAIRS, find_quadruples
from tests.support.tiny_encoders import (
    CLIP_DIM,
    DINO_DIM,
    PlantedEncoder,
    build_tiny_clip,
    build_tiny_dino,
    gram_vectors,
    planted_image,
    similarity_matrix,
)

CLIP_MIN, DINO_MAX = 0.95, 0.6
NEAR = 2e-5  # well inside float32's reach at these sizes, well under any real difference


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory) -> Path:
    return build_tiny_clip(tmp_path_factory.mktemp("tiny-clip"))


@pytest.fixture(scope="module")
def tiny_dino(tmp_path_factory) -> Path:
    return build_tiny_dino(tmp_path_factory.mktemp("tiny-dino"))


class Counting(HFEncoder):
    """The real encoder, counting the images it is asked to embed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.embedded = 0

    def embed(self, images):
        self.embedded += len(images)
        return super().embed(images)


def _photos(folder: Path, count: int, start: int = 0) -> list[Path]:
    """Distinct small pictures (noise around a shared base, more noise for later ones)."""
    folder.mkdir(parents=True, exist_ok=True)
    base = np.random.default_rng(7).integers(0, 255, (40, 48, 3))
    paths = []
    for i in range(start, start + count):
        noise = np.random.default_rng(i).normal(0, 8 + 6 * i, base.shape)
        path = folder / f"photo_{i:03d}.png"
        Image.fromarray(np.clip(base + noise, 0, 255).astype(np.uint8)).save(path)
        paths.append(path)
    return paths


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


# --- the real loading and embedding path ----------------------------------------------------------


def test_tiny_clip_and_dino_load_from_folders_and_give_unit_vectors_of_the_models_features(tiny_clip, tiny_dino):
    import torch
    from transformers import AutoImageProcessor, CLIPModel, Dinov2Model

    images = [Image.open(p).convert("RGB") for p in _photos(Path(tiny_clip).parent / "photos", 5)]
    clip = HFEncoder(tiny_clip, "clip").embed(images)
    dino = HFEncoder(tiny_dino, "dino").embed(images)
    assert clip.shape == (5, CLIP_DIM) and dino.shape == (5, DINO_DIM)
    assert np.allclose(np.linalg.norm(clip, axis=1), 1, atol=1e-6)
    assert np.allclose(np.linalg.norm(dino, axis=1), 1, atol=1e-6)
    assert len({row.tobytes() for row in clip}) == 5  # different pictures, different vectors

    # The same vectors as the full models' own image features: CLIP's projected embedding
    # (get_image_features) and DINOv2's CLS token after the final layer norm.
    with torch.inference_mode():
        pixels = AutoImageProcessor.from_pretrained(tiny_clip)(images=images, return_tensors="pt")["pixel_values"]
        expected_clip = CLIPModel.from_pretrained(tiny_clip).eval().get_image_features(pixel_values=pixels)
        pixels = AutoImageProcessor.from_pretrained(tiny_dino)(images=images, return_tensors="pt")["pixel_values"]
        expected_dino = Dinov2Model.from_pretrained(tiny_dino).eval()(pixel_values=pixels).last_hidden_state[:, 0]
    assert np.allclose(clip, _unit(expected_clip.pooler_output.numpy()), atol=1e-5)
    assert np.allclose(dino, _unit(expected_dino.numpy()), atol=1e-5)


def test_a_folder_without_weights_or_of_the_wrong_kind_is_refused_with_a_message(tiny_clip, tiny_dino, tmp_path):
    empty = tmp_path / "no-weights"
    empty.mkdir()
    (empty / "config.json").write_text((Path(tiny_clip) / "config.json").read_text())
    with pytest.raises(MiningError, match="no-weights"):
        HFEncoder(empty, "clip").identity()
    with pytest.raises(MiningError, match="expected a DINOv2 model"):
        HFEncoder(tiny_clip, "dino").embed([Image.new("RGB", (32, 32))])
    with pytest.raises(MiningError, match="no image features"):
        HFEncoder(tiny_dino, "clip").embed([Image.new("RGB", (32, 32))])


def test_a_hub_model_that_is_not_downloaded_is_refused_offline_with_what_to_do(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never reach the network from a test
    with pytest.raises(MiningError, match="--clip openai/clip-vit-large-patch14: cannot load.*local folder"):
        HFEncoder("openai/clip-vit-large-patch14", "clip").identity()


def test_hostile_files_are_refused_one_by_one_and_the_rest_embedded(tiny_clip, tiny_dino, tmp_path):
    folder = tmp_path / "mixed"
    _photos(folder, 4)
    (folder / "report.jpg").write_bytes(b"%PDF-1.7 not a picture")
    (folder / "empty.png").write_bytes(b"")
    (folder / "strip.png").write_bytes(_png(Image.new("RGB", (400, 10))))
    whole = io.BytesIO()
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (64, 64, 3), dtype=np.uint8)).save(whole, "JPEG")
    (folder / "cut.jpg").write_bytes(whole.getvalue()[: len(whole.getvalue()) // 2])
    (folder / "notes.txt").write_text("not an image name: ignored")
    (folder / "copy.png").write_bytes((folder / "photo_000.png").read_bytes())

    scan = scan_folder(folder)
    refused = {r.name: r.reason for r in scan.rejected}
    assert set(refused) == {"report.jpg", "empty.png", "strip.png"}
    assert "PDF" in refused["report.jpg"] and "empty" in refused["empty.png"] and "8 times" in refused["strip.png"]
    assert scan.duplicates == [("photo_000.png", "copy.png")]  # name order: copy.png came first

    encoders = [HFEncoder(tiny_clip, "clip"), HFEncoder(tiny_dino, "dino")]
    done = embed_files(scan.files, encoders, cache_dir=tmp_path / "cache")
    assert [r.name for r in done.rejected] == ["cut.jpg"] and "damaged" in done.rejected[0].reason
    assert sorted(f.name for f in done.files) == ["copy.png"] + [f"photo_{i:03d}.png" for i in range(1, 4)]
    assert done.vectors["clip"].shape == (4, CLIP_DIM) and done.vectors["dino"].shape == (4, DINO_DIM)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


# --- the cache ----------------------------------------------------------------------------------------


def test_a_second_run_embeds_nothing_and_one_added_image_embeds_one(tiny_clip, tiny_dino, tmp_path):
    folder, cache = tmp_path / "photos", tmp_path / "cache"
    _photos(folder, 6)
    first = [Counting(tiny_clip, "clip"), Counting(tiny_dino, "dino")]
    seen = []
    done = embed_files(scan_folder(folder).files, first, cache, batch_size=4, progress=lambda d, t: seen.append((d, t)))
    assert [e.embedded for e in first] == [6, 6] and seen[0] == (0, 6) and seen[-1] == (6, 6)

    second = [Counting(tiny_clip, "clip"), Counting(tiny_dino, "dino")]
    again = embed_files(scan_folder(folder).files, second, cache)
    assert [e.embedded for e in second] == [0, 0] and again.computed == {"clip": 0, "dino": 0}
    assert all(e._model is None for e in second)  # everything cached: the models were not even loaded
    assert np.array_equal(again.vectors["clip"], done.vectors["clip"])
    assert np.array_equal(again.vectors["dino"], done.vectors["dino"])

    _photos(folder, 1, start=6)
    third = [Counting(tiny_clip, "clip"), Counting(tiny_dino, "dino")]
    grown = embed_files(scan_folder(folder).files, third, cache)
    assert [e.embedded for e in third] == [1, 1] and grown.cached == {"clip": 6, "dino": 6}
    assert len(grown.files) == 7

    # Keyed by the bytes, not the name: a renamed picture is still cached.
    (folder / "photo_000.png").rename(folder / "renamed.png")
    fourth = [Counting(tiny_clip, "clip"), Counting(tiny_dino, "dino")]
    embed_files(scan_folder(folder).files, fourth, cache)
    assert [e.embedded for e in fourth] == [0, 0]


def test_another_model_does_not_reuse_the_cache(tiny_clip, tmp_path):
    folder, cache = tmp_path / "photos", tmp_path / "cache"
    _photos(folder, 4)
    embed_files(scan_folder(folder).files, [Counting(tiny_clip, "clip")], cache)
    other = Counting(build_tiny_clip(tmp_path / "other-clip", seed=99), "clip")
    embed_files(scan_folder(folder).files, [other], cache)
    assert other.embedded == 4


def test_an_interrupted_run_keeps_what_it_embedded(tiny_clip, tmp_path):
    folder, cache = tmp_path / "photos", tmp_path / "cache"
    _photos(folder, 9)

    class Interrupted(Counting):
        def embed(self, images):
            if self.embedded >= 6:
                raise KeyboardInterrupt
            return super().embed(images)

    with pytest.raises(KeyboardInterrupt):
        embed_files(scan_folder(folder).files, [Interrupted(tiny_clip, "clip")], cache, batch_size=3)
    assert not [p for p in cache.rglob("*") if p.name.endswith(".tmp")]
    resumed = Counting(tiny_clip, "clip")
    embed_files(scan_folder(folder).files, [resumed], cache, batch_size=3)
    assert resumed.embedded == 3


# --- the search, on planted similarities ---------------------------------------------------------------


def _oracle(clip: np.ndarray, dino: np.ndarray, clip_min: float, dino_max: float) -> set[tuple[int, ...]]:
    """Every qualifying four-set, by checking all of them with float64 cosines."""
    c, d = _unit(np.asarray(clip, np.float64)), _unit(np.asarray(dino, np.float64))
    found = set()
    for members in itertools.combinations(range(len(c)), 4):
        pairs = [(members[a], members[b]) for a, b in PAIRS]
        if min(c[i] @ c[j] for i, j in pairs) >= clip_min and min(d[i] @ d[j] for i, j in pairs) < dino_max:
            found.add(members)
    return found


def _planted_groups():
    """Groups of images in orthogonal subspaces (cosine 0 across groups), by what they test."""
    groups = {
        # every CLIP pair 0.97, one DINOv2 pair 0.55: qualifies
        "clear": (similarity_matrix(4, 0.97), similarity_matrix(4, 0.75, {(0, 1): 0.55})),
        # both conditions met by a hair: one CLIP pair just above 0.95, one DINOv2 pair just under 0.6
        "just_in": (
            similarity_matrix(4, 0.97, {(2, 3): CLIP_MIN + NEAR}),
            similarity_matrix(4, 0.75, {(0, 3): DINO_MAX - NEAR}),
        ),
        # one CLIP pair just under 0.95: fails (i)
        "clip_just_out": (
            similarity_matrix(4, 0.97, {(1, 2): CLIP_MIN - NEAR}),
            similarity_matrix(4, 0.75, {(0, 1): 0.3}),
        ),
        # the lowest DINOv2 pair just above 0.6: fails (ii)
        "dino_just_out": (similarity_matrix(4, 0.97), similarity_matrix(4, 0.75, {(1, 3): DINO_MAX + NEAR})),
        # five alike images, one DINOv2 pair apart: three four-sets hold that pair
        "five": (similarity_matrix(5, 0.98), similarity_matrix(5, 0.75, {(0, 1): 0.4})),
    }
    sizes = {name: len(g[0]) for name, g in groups.items()}
    dim = sum(sizes.values()) + 4
    clip, dino, members, offset = [], [], {}, 0
    for name, (c, d) in groups.items():
        clip.append(gram_vectors(c, dim, offset))
        dino.append(gram_vectors(d, dim, offset))
        members[name] = tuple(range(offset, offset + sizes[name]))
        offset += sizes[name]
    return np.vstack(clip).astype(np.float32), np.vstack(dino).astype(np.float32), members


def test_the_search_finds_exactly_the_planted_quadruples_including_near_threshold_pairs():
    clip, dino, groups = _planted_groups()
    everything = find_quadruples(clip, dino, CLIP_MIN, DINO_MAX, reuse=True)
    found = {q.members for q in everything.quadruples}
    five = groups["five"]
    expected = {groups["clear"], groups["just_in"]} | {
        tuple(sorted(s)) for s in itertools.combinations(five, 4) if {five[0], five[1]} <= set(s)
    }
    assert found == expected == _oracle(clip, dino, CLIP_MIN, DINO_MAX)
    assert not any(set(q) & set(groups["clip_just_out"]) for q in found)
    assert not any(set(q) & set(groups["dino_just_out"]) for q in found)
    for quadruple in everything.quadruples:
        assert quadruple.min_clip >= CLIP_MIN and quadruple.min_dino < DINO_MAX
    just_in = next(q for q in everything.quadruples if q.members == groups["just_in"])
    assert just_in.min_clip == pytest.approx(CLIP_MIN + NEAR, abs=2e-6)
    assert just_in.min_dino == pytest.approx(DINO_MAX - NEAR, abs=2e-6)


def test_without_reuse_no_image_is_in_two_quadruples_and_the_best_ranked_come_first():
    clip, dino, groups = _planted_groups()
    result = find_quadruples(clip, dino, CLIP_MIN, DINO_MAX)
    members = [m for q in result.quadruples for m in q.members]
    assert len(members) == len(set(members))
    assert len(result.quadruples) == 3  # clear, just_in, and one of the three from "five"
    scores = [q.min_clip - q.min_dino for q in result.quadruples]
    assert scores == sorted(scores, reverse=True)
    assert set(result.quadruples[0].members) <= set(groups["five"])  # 0.98 - 0.4 is the widest margin
    assert result.quadruples[-1].members == groups["just_in"]
    assert [q.members for q in find_quadruples(clip, dino, CLIP_MIN, DINO_MAX, limit=2).quadruples] == [
        q.members for q in result.quadruples[:2]
    ]


def test_sets_with_no_valid_quadruple_give_none():
    rng = np.random.default_rng(3)
    unrelated = rng.normal(size=(60, 32))  # cosines near 0: no CLIP look-alikes at all
    assert find_quadruples(unrelated, unrelated, CLIP_MIN, DINO_MAX).quadruples == []
    alike = gram_vectors(similarity_matrix(6, 0.97))  # CLIP alike, but DINOv2 agrees: no erroneous agreement
    result = find_quadruples(alike, alike, CLIP_MIN, DINO_MAX)
    assert result.quadruples == [] and result.candidates == 15
    assert find_quadruples(alike[:3], alike[:3]).quadruples == []  # fewer than four images


def test_blocks_and_work_caps_change_the_cost_not_the_answers():
    clip, dino, _ = _planted_groups()
    whole = find_quadruples(clip, dino, CLIP_MIN, DINO_MAX, reuse=True, block=10_000)
    for block in (1, 3, 7):
        blocked = find_quadruples(clip, dino, CLIP_MIN, DINO_MAX, reuse=True, block=block)
        assert [q.members for q in blocked.quadruples] == [q.members for q in whole.quadruples]
    capped = find_quadruples(clip, dino, CLIP_MIN, DINO_MAX, reuse=True, max_candidates=2)
    assert capped.truncated and capped.candidates == 2 and not whole.truncated
    assert all(q.min_clip >= CLIP_MIN and q.min_dino < DINO_MAX for q in capped.quadruples)


def test_a_large_set_never_needs_a_full_similarity_matrix():
    rng = np.random.default_rng(11)
    count, dim = 4000, 16
    clip, dino = rng.normal(size=(count, dim)).astype(np.float32), rng.normal(size=(count, dim)).astype(np.float32)
    tracemalloc.start()
    try:
        result = find_quadruples(clip, dino, CLIP_MIN, DINO_MAX, block=256)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    full_matrix = count * count * 4
    assert peak < full_matrix / 4, f"peak {peak / 2**20:.1f} MiB"
    assert result.images == count


# --- mining a folder into the DiscriBench layout --------------------------------------------------------


def _planted_folder(folder: Path) -> tuple[np.ndarray, np.ndarray, dict]:
    clip, dino, groups = _planted_groups()
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(len(clip)):
        planted_image(index).save(folder / f"img_{index:02d}.png")
    return clip, dino, groups


def test_mine_writes_the_discribench_layout_and_every_quadruple_meets_its_printed_similarities(tmp_path):
    clip, dino, groups = _planted_folder(tmp_path / "photos")
    out = tmp_path / "mined"
    report = mine(
        tmp_path / "photos",
        out,
        clip=PlantedEncoder(clip, "clip"),
        dino=PlantedEncoder(dino, "dino"),
        cache_dir=tmp_path / "cache",
    )
    assert report.found == 3 and report.images == len(clip)

    records = [json.loads(line) for line in (out / "discribench_en_200.jsonl").read_text().splitlines()]
    details = {d["qid"]: d for d in map(json.loads, (out / "quadruples.jsonl").read_text().splitlines())}
    assert [r["qid"] for r in records] == ["001", "002", "003"] and set(details) == {"001", "002", "003"}
    sources = set()
    for record in records:
        assert record["context"] == "" and record["question"] == "" and record["answer"] is None and record["todo"]
        detail = details[record["qid"]]
        assert detail["image_files"] == record["image_files"] and len(record["image_files"]) == 4
        for name, source in zip(record["image_files"], detail["sources"], strict=True):
            assert (out / name).read_bytes() == (tmp_path / "photos" / source).read_bytes()
        sources.add(tuple(sorted(int(s[4:6]) for s in detail["sources"])))
        # both conditions, on the values written and on the values printed on the sheet
        pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
        assert all(detail["clip"][a][b] >= detail["clip_min"] == CLIP_MIN for a, b in pairs)
        assert any(detail["dino"][a][b] < detail["dino_max"] == DINO_MAX for a, b in pairs)
        assert all(float(detail["printed"]["clip"][a][b]) >= CLIP_MIN for a, b in pairs)
        assert any(float(detail["printed"]["dino"][a][b]) < DINO_MAX for a, b in pairs)
        with Image.open(out / detail["contact_sheet"]) as sheet:
            assert sheet.format == "PNG" and sheet.width > 256 and sheet.height > 512
    assert groups["clear"] in sources and groups["just_in"] in sources
    metadata = [json.loads(line) for line in (out / "images" / "metadata.jsonl").read_text().splitlines()]
    assert len(metadata) == 12 and all(len(m["sha256"]) == 64 for m in metadata)
    summary = json.loads((out / "mining.json").read_text())
    assert summary["clip_min"] == CLIP_MIN and summary["search"]["quadruples"] == 3 and summary["ranking"]


def test_the_benchmark_refuses_a_mined_folder_until_the_author_writes_the_text(tmp_path):
    clip, dino, _ = _planted_folder(tmp_path / "photos")
    mine(tmp_path / "photos", tmp_path / "mined", clip=PlantedEncoder(clip, "clip"), dino=PlantedEncoder(dino, "dino"),
         cache_dir=tmp_path / "cache")  # fmt: skip
    with pytest.raises(DiscriBenchError, match="3 problem") as refused:
        get_benchmark("discribench", data=str(tmp_path / "mined")).items()
    assert "line 1: `context` must be a non-empty string" in str(refused.value)

    path = tmp_path / "mined" / "discribench_en_200.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for number, record in enumerate(records, start=1):
        record.update(context=f"Situation: test {number}.\nConversation:\nA: hi\nB: hello", question="Which?", answer=2)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    items = get_benchmark("discribench", data=str(tmp_path / "mined")).items()
    assert [i.id for i in items] == ["001", "002", "003"] and all(len(i.images) == 4 for i in items)


def test_mine_with_the_tiny_real_models_end_to_end(tiny_clip, tiny_dino, tmp_path):
    _photos(tmp_path / "photos", 10)
    # Random tiny models: choose thresholds from their own similarities so that some sets qualify.
    scan = scan_folder(tmp_path / "photos")
    done = embed_files(scan.files, [HFEncoder(tiny_clip, "clip"), HFEncoder(tiny_dino, "dino")], tmp_path / "cache")
    clip_sims, dino_sims = done.vectors["clip"] @ done.vectors["clip"].T, done.vectors["dino"] @ done.vectors["dino"].T
    upper = np.triu_indices(10, 1)
    clip_min = float(np.quantile(clip_sims[upper], 0.3))
    dino_max = float(np.quantile(dino_sims[upper], 0.7))
    expected = _oracle(done.vectors["clip"], done.vectors["dino"], clip_min, dino_max)
    assert expected, "the chosen thresholds should leave some quadruples"

    report = mine(tmp_path / "photos", tmp_path / "mined", clip=tiny_clip, dino=tiny_dino, clip_min=clip_min,
                  dino_max=dino_max, reuse=True, cache_dir=tmp_path / "cache")  # fmt: skip
    assert report.computed == {"clip": 0, "dino": 0}  # all from the cache filled above
    names = [f.name for f in done.files]
    details = [json.loads(line) for line in (tmp_path / "mined" / "quadruples.jsonl").read_text().splitlines()]
    assert {tuple(sorted(names.index(s) for s in d["sources"])) for d in details} == expected
    for detail in details:
        pairs = [(a, b) for a in range(4) for b in range(a + 1, 4)]
        assert min(detail["clip"][a][b] for a, b in pairs) >= clip_min
        assert min(detail["dino"][a][b] for a, b in pairs) < dino_max


def test_mine_refuses_what_it_cannot_do_and_leaves_nothing_half_written(tmp_path, monkeypatch):
    clip, dino, _ = _planted_folder(tmp_path / "photos")
    encoders = {"clip": PlantedEncoder(clip, "clip"), "dino": PlantedEncoder(dino, "dino"), "cache_dir": tmp_path / "c"}
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("someone's work")
    with pytest.raises(MiningError, match="not empty"):
        mine(tmp_path / "photos", tmp_path / "taken", **encoders)
    few = tmp_path / "few"
    few.mkdir()
    for index in range(3):
        planted_image(index).save(few / f"{index}.png")
    (few / "fake.png").write_bytes(b"<svg/>")
    with pytest.raises(MiningError, match="3 usable image.*at least 4.*1 refused: fake.png"):
        mine(few, tmp_path / "out-few", **encoders)
    with pytest.raises(MiningError, match="no such folder"):
        mine(tmp_path / "missing", tmp_path / "out-missing", **encoders)

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(mining.contact_sheet, "render", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        mine(tmp_path / "photos", tmp_path / "out", **encoders)
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.partial-*"))


def test_an_output_folder_inside_the_images_folder_is_not_mined_again(tmp_path):
    clip, dino, _ = _planted_folder(tmp_path / "photos")
    planted = {"clip": PlantedEncoder(clip, "clip"), "dino": PlantedEncoder(dino, "dino")}
    mine(tmp_path / "photos", tmp_path / "photos" / "mined", **planted, cache_dir=tmp_path / "c")
    again = mine(tmp_path / "photos", tmp_path / "second", **planted, cache_dir=tmp_path / "c")
    assert again.images == len(clip) and not again.duplicates
