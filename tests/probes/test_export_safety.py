"""`generate` never deletes or overwrites what it did not write, in any format: `--out` is empty,
not there yet, or a folder it wrote before (its `.probe-export.json` names every file it may
replace); anything else in the way is refused in one line naming it (exit 2), and no link under
`--out` is ever followed, when writing or when cleaning up. Driven through the command line."""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest

from probes.cli import main
from probes.core.errors import UsageError
from probes.files import export_folder, hf_export
from probes.files.export import generated_set, write_generated
from probes.files.export_folder import MANIFEST
from tests.conftest import run_cli

FORMATS = ("png", "hf", "lmms-eval")
BENCH = "blind/touching-circles"
REFUSED = "holds files this export did not write"


def generate(out: Path, form: str, n: int = 3, seed: int = 0) -> int:
    return main(["generate", BENCH, "--n", str(n), "--seed", str(seed), "--param", "canvas=384", "--out", str(out),
                 "--format", form])  # fmt: skip


def snapshot(root: Path) -> dict[str, tuple]:
    """Every entry under `root` as it is (a link by its target, a file by its digest), no link followed."""
    found: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = ("link", os.readlink(path))
            elif path.is_dir():
                found[key] = ("folder",)
            else:
                found[key] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def files_of(root: Path) -> set[str]:
    return {key for key, entry in snapshot(root).items() if entry[0] != "folder"}


def error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def expected_files(form: str, n: int) -> set[str] | None:
    """What a format writes at the top of the folder (the shards' and reader's names vary)."""
    if form == "png":
        return {f"{i:05d}.png" for i in range(n)} | {"metadata.jsonl", "items.jsonl", "probe_set.json", MANIFEST}
    return None


def others_dataset(folder: Path) -> None:
    """A Hugging Face dataset folder someone else wrote, with an lmms-eval task of their own."""
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "test-00000-of-00002.parquet").write_bytes(b"PAR1 theirs 0")
    (folder / "data" / "test-00001-of-00002.parquet").write_bytes(b"PAR1 theirs 1")
    (folder / "README.md").write_text("---\nconfigs: theirs\n---\n# Their dataset\n")
    (folder / "lmms_eval_task").mkdir()
    (folder / "lmms_eval_task" / "my_task.yaml").write_text("task: my_task\n")
    (folder / "probe_set.json").write_text('{"benchmark": "theirs"}')


@pytest.fixture
def outside(tmp_path):
    """A folder the export must never touch, full of files a link under --out may point at."""
    folder = tmp_path / "outside"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "test-00000-of-00001.parquet").write_bytes(b"outside shard")
    (folder / "README.md").write_text("outside card")
    (folder / "notes.txt").write_text("outside notes")
    (folder / "my_task.yaml").write_text("task: outside\n")
    (folder / "00000.png").write_bytes(b"outside picture")
    return folder


# --- a folder this command did not write --------------------------------------------------


@pytest.mark.parametrize("form", FORMATS)
def test_a_dataset_folder_of_someone_else_is_refused_and_left_byte_for_byte(tmp_path, capsys, form):
    out = tmp_path / "theirs"
    others_dataset(out)
    before = snapshot(out)
    assert generate(out, form) == 2
    line = error_line(capsys)
    assert f"output folder {out} {REFUSED} (" in line and "choose an empty folder" in line
    assert "README.md" in line and "data/test-00000-of-00002.parquet" in line and "and 1 more" in line
    assert snapshot(out) == before


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize(
    "plant",
    ["a file", "an empty folder", "a hidden file", "a manifest naming a path outside", "a manifest that is a link",
     "a manifest that is not JSON", "a manifest naming an absolute path"],
)  # fmt: skip
def test_any_entry_without_a_manifest_of_ours_is_in_the_way(tmp_path, outside, capsys, form, plant):
    out = tmp_path / "out"
    out.mkdir()
    forged = out / MANIFEST
    if plant == "a file":
        (out / "notes.txt").write_text("mine")
    elif plant == "an empty folder":
        (out / "keep").mkdir()
    elif plant == "a hidden file":
        (out / ".gitattributes").write_text("*.parquet filter=lfs\n")
    elif plant == "a manifest naming a path outside":
        forged.write_text(json.dumps({"files": {"../outside/notes.txt": None, "README.md": None}}))
        (out / "README.md").symlink_to(outside / "README.md")
    elif plant == "a manifest that is a link":
        (outside / "manifest.json").write_text(json.dumps({"files": {"notes.txt": None}}))
        forged.symlink_to(outside / "manifest.json")
        (out / "notes.txt").write_text("mine")
    elif plant == "a manifest that is not JSON":
        forged.write_bytes(b"\xff\xfe not json")
    else:
        forged.write_text(json.dumps({"files": {str(outside / "notes.txt"): None}}))
    before, around = snapshot(out), snapshot(outside)
    assert generate(out, form) == 2
    line = error_line(capsys)
    assert REFUSED in line
    assert snapshot(out) == before and snapshot(outside) == around


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("link", ["lmms_eval_task", "data", "README.md", "data/test-00000-of-00001.parquet",
                                  "00000.png", "metadata.jsonl"])  # fmt: skip
def test_links_planted_in_a_fresh_folder_are_refused_and_not_followed(tmp_path, outside, capsys, form, link):
    out = tmp_path / "out"
    out.mkdir()
    target = {"lmms_eval_task": outside, "data": outside / "data", "README.md": outside / "README.md",
              "data/test-00000-of-00001.parquet": outside / "data" / "test-00000-of-00001.parquet",
              "00000.png": outside / "00000.png"}.get(link, outside / "notes.txt")  # fmt: skip
    if "/" in link:
        (out / "data").mkdir()
    (out / link).symlink_to(target)
    before, around = snapshot(out), snapshot(outside)
    assert generate(out, form) == 2
    assert f"{link} [a link]" in error_line(capsys)
    assert snapshot(out) == before and snapshot(outside) == around


# --- a folder this command wrote -----------------------------------------------------------


def shard_of(out: Path) -> str:
    [shard] = (out / "data").glob("test-*.parquet")
    return f"data/{shard.name}"


@pytest.mark.parametrize("form", FORMATS)
def test_the_same_command_again_replaces_its_files_and_keeps_others(tmp_path, capsys, form):
    out = tmp_path / "set"
    assert generate(out, form) == 0
    first = snapshot(out)
    (out / "notes.txt").write_text("my notes beside the set")  # not in the way of anything
    assert generate(out, form) == 0, capsys.readouterr().err
    again = snapshot(out)
    assert again.pop("notes.txt") == ("file", hashlib.sha256(b"my notes beside the set").hexdigest())
    assert again == first  # the same command writes the same bytes, the manifest included
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    assert set(manifest) == files_of(out) - {MANIFEST, "notes.txt"}
    assert all(manifest[name] == hashlib.sha256((out / name).read_bytes()).hexdigest() for name in manifest)
    if expected_files(form, 3):
        assert files_of(out) == expected_files(form, 3) | {"notes.txt"}


def test_other_sizes_and_formats_clean_only_their_own_old_files(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(hf_export, "SHARD_ROWS", 2)  # several shards from a few items
    out = tmp_path / "set"
    assert generate(out, "png", n=5) == 0
    mine = {"notes.txt": b"mine", "data/mine.txt": b"mine too", "lmms_eval_task/mine.yaml": b"task: mine\n"}
    for name, data in mine.items():
        (out / name).parent.mkdir(exist_ok=True)
        (out / name).write_bytes(data)
    steps = [("png", 2, 0), ("hf", 5, 1), ("hf", 3, 2), ("lmms-eval", 4, 1), ("hf", 2, 0), ("lmms-eval", 1, 0),
             ("png", 3, 0)]  # fmt: skip
    for form, n, seed in steps:
        assert generate(out, form, n=n, seed=seed) == 0, capsys.readouterr().err
        written = set(json.loads((out / MANIFEST).read_text())["files"])
        assert files_of(out) == written | set(mine) | {MANIFEST}, (form, n)  # nothing of the run before left
        assert all((out / name).read_bytes() == data for name, data in mine.items())
        shards = sorted(name for name in written if name.startswith("data/"))
        if form == "png":
            assert not shards and expected_files("png", n) <= files_of(out)
        else:
            count = -(-n // 2)
            assert len(shards) == count and all(f"-of-{count:05d}-" in name for name in shards)
            assert (out / "README.md").read_text().count("    - data/test-") == count
        tasks = [name for name in written if name.startswith("lmms_eval_task/") and name.endswith(".yaml")]
        assert len(tasks) == (form == "lmms-eval")
    assert not (out / "data" / "test-00000-of-00001.parquet").exists()
    assert sorted(p.name for p in (out / "lmms_eval_task").iterdir()) == ["mine.yaml"]  # the reader's copy went


def test_folders_left_empty_by_an_older_set_go(tmp_path, capsys):
    out = tmp_path / "set"
    assert generate(out, "lmms-eval") == 0
    assert generate(out, "png") == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(expected_files("png", 3))


@pytest.mark.parametrize("form", FORMATS)
def test_an_empty_existing_folder_is_written(tmp_path, capsys, form):
    out = tmp_path / "empty"
    out.mkdir()
    assert generate(out, form) == 0
    assert MANIFEST in os.listdir(out)


@pytest.mark.parametrize("form", FORMATS)
@pytest.mark.parametrize("trap", ["README.md", "shard", "data", "lmms_eval_task", "00000.png", "metadata.jsonl",
                                  "probe_set.json", "utils.py", "the manifest"])  # fmt: skip
def test_links_planted_in_its_own_folder_are_not_followed(tmp_path, outside, capsys, form, trap):
    """The folder is ours (a manifest names its files), then someone swaps one of them, or a
    folder of them, for a link to elsewhere: the export refuses it, or (where it only had to
    remove the file) leaves the link alone; nothing outside changes either way."""
    out = tmp_path / "set"
    assert generate(out, form) == 0
    manifest = set(json.loads((out / MANIFEST).read_text())["files"])
    name = {
        "shard": shard_of(out) if form != "png" else "data/test-00000-of-00001.parquet",
        "data": "data",
        "lmms_eval_task": "lmms_eval_task",
        "utils.py": "lmms_eval_task/utils.py",
        "the manifest": MANIFEST,
    }.get(trap, trap)
    path = out / name
    if path.is_dir():
        for inner in sorted(path.rglob("*"), reverse=True):
            inner.unlink() if inner.is_file() else inner.rmdir()
        path.rmdir()
    elif path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(outside if trap in ("data", "lmms_eval_task") else outside / "notes.txt")
    capsys.readouterr()
    before, around = snapshot(out), snapshot(outside)
    ours = name in manifest or any(entry.startswith(f"{name}/") for entry in manifest)
    rc = generate(out, form)
    assert snapshot(outside) == around
    assert path.is_symlink() and os.readlink(path) == before[name][1]  # the link itself stays
    if ours or trap == "the manifest":  # where this format writes: refused, naming the link
        assert rc == 2 and f"{name} [a link]" in error_line(capsys)
        if trap == "shard":  # known by its digest only once drawn: the manifest already names it
            before.pop(MANIFEST)
            assert {k: v for k, v in snapshot(out).items() if k != MANIFEST} == before
        else:  # refused before anything was written
            assert snapshot(out) == before
    else:  # a link where nothing of this format goes is someone else's, and left alone
        assert rc == 0, capsys.readouterr().err


@pytest.mark.parametrize("form", FORMATS)
def test_a_stale_file_swapped_for_a_link_is_not_followed_when_cleaning(tmp_path, outside, capsys, form):
    """The set before was another format; its file (and its folder) became links: the clean-up
    neither deletes through them nor removes them."""
    out = tmp_path / "set"
    before_form = "png" if form != "png" else "lmms-eval"
    assert generate(out, before_form, n=4) == 0
    stale = sorted(set(json.loads((out / MANIFEST).read_text())["files"]))
    # probe_set.json is written in every format: a link there is in the way (see the test above)
    swapped = [name for name in stale if "/" not in name and name != "probe_set.json"][:2]
    for name in swapped:
        (out / name).unlink()
        (out / name).symlink_to(outside / "notes.txt")
    if (out / "data").is_dir():
        for inner in (out / "data").iterdir():
            inner.unlink()
        (out / "data").rmdir()
        (out / "data").symlink_to(outside / "data")
    around = snapshot(outside)
    assert generate(out, form) == 0, capsys.readouterr().err
    assert snapshot(outside) == around
    assert all((out / name).is_symlink() for name in swapped)
    assert set(json.loads((out / MANIFEST).read_text())["files"]).isdisjoint(swapped)


@pytest.mark.parametrize("form", FORMATS)
def test_a_file_of_the_set_edited_since_is_kept(tmp_path, capsys, form):
    out = tmp_path / "set"
    assert generate(out, form) == 0
    edited = "metadata.jsonl" if form == "png" else "README.md"
    (out / edited).write_text("edited by hand\n")
    capsys.readouterr()
    assert generate(out, form) == 2
    assert f"{edited} [changed since it was written]" in error_line(capsys)
    assert (out / edited).read_text() == "edited by hand\n"
    other = "hf" if form == "png" else "png"  # a format that does not write it: it stays, unlisted
    assert generate(out, other) == 0
    assert (out / edited).read_text() == "edited by hand\n"
    assert edited not in json.loads((out / MANIFEST).read_text())["files"]


@pytest.mark.parametrize("form", FORMATS)
def test_a_folder_where_a_file_goes_is_in_the_way(tmp_path, capsys, form):
    out = tmp_path / "set"
    assert generate(out, form) == 0
    name = "items.jsonl" if form == "png" else "probe_set.json"
    (out / name).unlink()
    (out / name).mkdir()
    (out / name / "inside.txt").write_text("mine")
    capsys.readouterr()
    assert generate(out, form) == 2
    assert f"{name}/" in error_line(capsys) and (out / name / "inside.txt").read_text() == "mine"


def test_an_interrupted_export_leaves_a_folder_the_command_writes_again(tmp_path, capsys):
    out = tmp_path / "set"
    _, items = generated_set(BENCH, {"canvas": ["384"]}, 5, 0)

    def stop(done: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_generated(items, out, stop, workers=1)
    claimed = json.loads((out / MANIFEST).read_text())["files"]
    assert set(claimed) >= {"00000.png", "00001.png", "metadata.jsonl"} and set(claimed.values()) == {None}
    assert generate(out, "hf", n=2) == 0, capsys.readouterr().err
    assert not any(out.glob("*.png")) and not (out / "metadata.jsonl").exists()


def test_a_link_planted_between_the_check_and_the_write_is_not_followed(tmp_path, outside, monkeypatch):
    """The checks pass, then a link appears at a file's name before it is written: the write
    fails on it (O_EXCL, O_NOFOLLOW) instead of writing through it."""
    out = tmp_path / "set"
    _, items = generated_set(BENCH, {"canvas": ["384"]}, 3, 0)
    original = export_folder.ExportFolder.write

    def planting(self, name, data):
        if name == "00001.png":
            (out / name).symlink_to(outside / "00000.png")
        return original(self, name, data)

    monkeypatch.setattr(export_folder.ExportFolder, "write", planting)
    around = snapshot(outside)
    with pytest.raises(UsageError, match=r"00001\.png \[a link\]"):
        write_generated(items, out, workers=1)
    assert snapshot(outside) == around and (out / "00001.png").is_symlink()


# --- the real command line, and the Stimulus lab ---------------------------------------------


@pytest.mark.parametrize("form", ["hf", "lmms-eval"])
def test_the_issue_s_dataset_folder_through_python_m_probes(tmp_path, outside, form):
    out = tmp_path / "theirs"
    others_dataset(out)
    (out / "lmms_eval_task" / "linked").symlink_to(outside)
    before, around = snapshot(out), snapshot(outside)
    done = run_cli("generate", BENCH, "--n", "3", "--out", str(out), "--format", form)
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"error: output folder {out} {REFUSED} (README.md, data/test-00000-of-00002.parquet")
    assert snapshot(out) == before and snapshot(outside) == around
    fresh = tmp_path / "fresh"
    for _ in range(2):
        done = run_cli("generate", BENCH, "--n", "3", "--out", str(fresh), "--format", form)
        assert done.returncode == 0, done.stderr


def test_the_stimulus_lab_zip_is_the_command_s_folder(tmp_path, monkeypatch, capsys):
    """The lab writes through the same export into a folder of its own; unzipped, the command
    writes it again as its own."""
    import ui.stimuli as lab

    monkeypatch.setattr(lab, "LAB_DIR", tmp_path / "lab")
    update, note, command = lab.export_stimuli({"task": BENCH, "params": {"canvas": "384"}}, ["canvas"], 3, 0,
                                               progress=lambda *args, **kwargs: None)  # fmt: skip
    assert note.startswith("Exported 3 items"), note
    unzipped = tmp_path / "unzipped"
    with zipfile.ZipFile(update["value"]) as bundle:
        assert MANIFEST in bundle.namelist()
        bundle.extractall(unzipped)
    assert generate(tmp_path / "cli", "png") == 0
    assert snapshot(unzipped) == snapshot(tmp_path / "cli")
    assert generate(unzipped, "png", n=2) == 0, capsys.readouterr().err
    assert files_of(unzipped) == expected_files("png", 2)
