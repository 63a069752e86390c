"""A generated set on disk: the items `generate` draws and the folder it writes, shared by the
command line and the Stimulus lab's export."""

import json

from PIL import Image

from probes.core.types import AnswerKind, ImageSource, Item
from probes.files import export
from probes.files.export import generated_set, write_generated
from probes.files.set_spec import spec_of
from tests.conftest import run_cli, shapes_image


def folder_bytes(folder):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


def test_written_folder_holds_one_png_per_item_and_a_metadata_row_each(tmp_path):
    benchmark, items = generated_set("blind/touching-circles", {"gap": ["-0.1", "0.3"]}, 4, seed=2)
    done = []
    records = write_generated(items, tmp_path / "set", done.append)
    assert done == [1, 2, 3, 4]
    rows = [json.loads(line) for line in (tmp_path / "set" / "metadata.jsonl").read_text().splitlines()]
    assert rows == records and len(rows) == 4
    assert sorted(p.name for p in (tmp_path / "set").glob("*.png")) == [f"{i:05d}.png" for i in range(4)]
    for row, item in zip(rows, items, strict=True):
        assert row["id"] == item.id and row["prompt"] == item.question
        assert row["answer"] == ("Yes" if row["gap"] < 0 else "No")  # both prompts: overlap iff gap < 0
        assert row["gap"] in (-0.1, 0.3) and row["prompt_name"] in ("touching", "overlapping")
        with Image.open(tmp_path / "set" / row["file_name"]) as image:
            assert image.format == "PNG" and image.size == (row["canvas"], row["canvas"])


def test_an_item_with_several_images_gets_numbered_files(tmp_path):
    item = Item(
        benchmark="test/pairs",
        id="pair-1",
        question="Same shape?",
        images=(ImageSource("a", lambda: shapes_image("circle")), ImageSource("b", lambda: shapes_image("square"))),
        kind=AnswerKind.YES_NO,
        target="no",
    )
    [record] = write_generated([item], tmp_path)
    assert record["file_name"] == ["00000_0.png", "00000_1.png"] and record["answer"] == "No"
    assert (tmp_path / "00000_1.png").exists()


def test_the_seed_picks_the_sample_and_the_design_seed_is_a_parameter():
    # As `run --limit N --seed S` draws: another seed is another sample of the same design; a
    # family drawn with random positions takes another design through its `seed` parameter.
    _, first = generated_set("blind/nested-squares", {"depth": ["3"]}, 3, seed=1)
    _, other = generated_set("blind/nested-squares", {"depth": ["3"]}, 3, seed=2)
    assert {i.params["seed"] for i in first} == {i.params["seed"] for i in other} == {0}
    assert [i.id for i in first] != [i.id for i in other]
    _, fixed = generated_set("blind/nested-squares", {"depth": ["3"], "seed": ["9"]}, 3, seed=1)
    assert {i.params["seed"] for i in fixed} == {9} and {i.params["depth"] for i in fixed} == {3}


def test_asking_for_more_items_than_the_design_holds_gives_the_whole_design():
    benchmark, items = generated_set(
        "blind/touching-circles", {"gap": ["0.2"], "canvas": ["384"], "diameter": ["1/5"]}, 50, seed=0
    )
    assert len(items) == len(benchmark.items()) == 8  # 4 orientations x 2 prompts


def test_the_command_line_writes_the_very_same_folder(tmp_path):
    done = run_cli("generate", "blind/circled-letter", "--n", "3", "--seed", "4", "--param", "letter=1",
                   "--out", str(tmp_path / "cli"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    _, items = generated_set("blind/circled-letter", {"letter": ["1"]}, 3, seed=4)
    write_generated(items, tmp_path / "lib", spec=spec_of("blind/circled-letter", {"letter": ["1"]}, 3, 4))
    assert folder_bytes(tmp_path / "cli") == folder_bytes(tmp_path / "lib")
    assert "probe_set.json" in folder_bytes(tmp_path / "lib")


def test_parallel_writing_gives_the_same_bytes_as_serial_and_draws_shared_images_once(tmp_path, monkeypatch):
    benchmark, items = generated_set("blind/touching-circles", {"canvas": ["384"]}, 48, seed=5)
    assert len({item.images[0].ref for item in items}) >= 16  # enough distinct images to go parallel
    write_generated(items, tmp_path / "parallel", workers=2)
    drawn = []
    original = export.encode_png
    monkeypatch.setattr(export, "encode_png", lambda source: drawn.append(source.ref) or original(source))
    write_generated(items, tmp_path / "serial", workers=1)
    assert len(drawn) == len(set(drawn)) == len({item.images[0].ref for item in items})  # once per distinct image
    for path in sorted((tmp_path / "serial").iterdir()):
        assert path.read_bytes() == (tmp_path / "parallel" / path.name).read_bytes()
