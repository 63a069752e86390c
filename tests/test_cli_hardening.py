"""Every bad path, unreadable or damaged store and out-of-range option is one `error:` line on
stderr and exit status 2 (issue 10's last row), never a traceback or an "internal error"."""

import asyncio
import json
import sqlite3

import pytest

from probes.core.registry import get_benchmark
from probes.core.selection import select_items
from probes.running.answerers import create
from probes.running.runner import RunPlan, run
from probes.running.store import Store
from tests.conftest import make_folder, run_cli, shapes_image
from tests.support.confined import cli_calls, in_mount_namespace

RUN = ("run", "blind/touching-circles", "--model", "baseline/chance", "--limit", "2")


def assert_one_error_line(done, *fragments: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.fixture
def filled_store(tmp_path):
    """A real results store of 448 answered items, closed (its WAL folded into the file)."""
    path = tmp_path / "filled.sqlite"
    benchmark = get_benchmark("blind/touching-circles", params={"canvas": ["384"]})
    with Store(path) as store:
        asyncio.run(run(RunPlan(benchmark, select_items(benchmark.items(), None, 0), [create("baseline/chance")]),
                        store))  # fmt: skip
    assert not (tmp_path / "filled.sqlite-wal").exists() or (tmp_path / "filled.sqlite-wal").stat().st_size == 0
    return path


def damaged(path, start_page: int, pages: int, name: str):
    data = path.read_bytes()
    page = 4096
    assert len(data) > (start_page + pages) * page
    out = path.with_name(name)
    out.write_bytes(data[: start_page * page] + b"\x07" * (pages * page) + data[(start_page + pages) * page :])
    return out


@pytest.mark.parametrize("command", ["report", "run", "import"])
def test_a_store_that_is_a_folder(tmp_path, command):
    folder = tmp_path / "store-folder"
    folder.mkdir()
    done = run_cli(*_with_store(command, tmp_path, folder))
    assert_one_error_line(done, str(folder), "it is a folder, not a file")


@pytest.mark.parametrize("command", ["report", "run", "import"])
def test_a_store_that_is_not_a_database(tmp_path, command):
    notes = tmp_path / "notes.sqlite"
    notes.write_text("my notes, not a database\n" * 200)
    done = run_cli(*_with_store(command, tmp_path, notes))
    assert_one_error_line(done, str(notes), "file is not a database")
    assert notes.read_text().startswith("my notes")  # left as it was


def test_a_store_inside_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    done = run_cli(*RUN, "--store", str(blocker / "results.sqlite"))
    assert_one_error_line(done, "is a file, not a folder")


def test_a_store_damaged_in_its_first_page(tmp_path, filled_store):
    broken = damaged(filled_store, 0, 1, "head.sqlite")
    for command in ("report", "run", "import"):
        assert_one_error_line(run_cli(*_with_store(command, tmp_path, broken)), str(broken), "cannot be opened")


def test_a_store_damaged_in_its_data(tmp_path, filled_store):
    """Opening reads only the schema; damage in the results' pages shows when they are read."""
    assert run_cli("report", "--store", str(filled_store)).returncode == 0
    broken = damaged(filled_store, 10, 20, "middle.sqlite")
    assert_one_error_line(run_cli("report", "--store", str(broken)), str(broken), "damaged", "malformed")


@pytest.mark.parametrize("command", ["models", "run"])
def test_a_models_file_that_is_a_folder(tmp_path, command):
    extra = (*RUN[1:], "--store", str(tmp_path / "s.sqlite")) if command == "run" else ()
    done = run_cli(command, *extra, "--models-file", str(tmp_path))
    assert_one_error_line(done, str(tmp_path), "is a folder", "name the TOML file")


def test_probe_models_naming_a_folder(tmp_path):
    done = run_cli("models", env={"PROBE_MODELS": str(tmp_path)})
    assert_one_error_line(done, str(tmp_path), "is a folder")


@pytest.mark.parametrize("where", ["file", "file/inside"])
def test_generate_out_where_no_folder_can_be(tmp_path, where):
    (tmp_path / "file").write_text("x")
    done = run_cli("generate", "blind/touching-circles", "--n", "2", "--out", str(tmp_path / where))
    assert_one_error_line(done, "--out", "cannot write there")
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize("form", ["png", "hf"])
def test_generate_out_on_a_disk_that_fills_up(tmp_path, form):
    """Pictures (png) or parquet shards (hf) written into a 256 KB disk: the disk fills up
    during the writing, and the command says so in one line naming --out."""
    disk = tmp_path / "disk"
    disk.mkdir()
    call = ["generate", "blind/touching-circles", "--n", "40", "--param", "canvas=768", "--out", str(disk / "set"),
            "--format", form]  # fmt: skip
    answers = in_mount_namespace(f"mount -t tmpfs -o size=256k tmpfs {disk}", cli_calls(call))
    if answers is None:
        pytest.skip("no private mount namespace here (unshare/mount not allowed)")
    [answer] = answers
    assert answer["rc"] == 2, answer
    assert "Traceback" not in answer["err"] and "internal error" not in answer["err"], answer["err"]
    [line] = [line for line in answer["err"].splitlines() if line.startswith("error: ")]
    assert line == f"error: --out {disk / 'set'}: writing failed (No space left on device)", line


@pytest.mark.parametrize(
    ("option", "value", "fragment"),
    [("--max-tokens", "-5", "--max-tokens must be from 1"), ("--max-tokens", "0", "--max-tokens must be from 1"),
     ("--max-tokens", "5000000", "--max-tokens must be from 1"),
     ("--temperature", "nan", "--temperature must be a number from 0 to 2"),
     ("--temperature", "inf", "--temperature must be a number from 0 to 2"),
     ("--temperature", "-0.5", "--temperature must be a number from 0 to 2"),
     ("--temperature", "7", "--temperature must be a number from 0 to 2"),
     ("--concurrency", "0", "--concurrency must be from 1 to 64"),
     ("--concurrency", "65", "--concurrency must be from 1 to 64"),
     ("--limit", "0", "--limit must be at least 1"), ("--shots", "-1", "--shots must be 0 or more"),
     ("--temperature", "warm", "invalid float value"), ("--concurrency", "many", "invalid int value")],
)  # fmt: skip
def test_out_of_range_run_options_are_refused_before_anything_is_sent(tmp_path, option, value, fragment):
    store = tmp_path / "s.sqlite"
    done = run_cli(*RUN, option, value, "--store", str(store))
    assert_one_error_line(done, fragment)
    if store.exists():
        assert sqlite3.connect(store).execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0


def test_a_huge_limit_is_all_items(tmp_path):
    store = tmp_path / "s.sqlite"
    done = run_cli("run", "blind/nested-squares", "--model", "baseline/chance", "--limit", str(10**30),
                   "--param", "repeats=1", "--store", str(store))  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = json.loads(run_cli("report", "--store", str(store), "--format", "json", "--no-references").stdout)
    assert next(r for r in rows if r["group"] == "overall")["n"] == len(
        get_benchmark("blind/nested-squares", params={"repeats": ["1"]}).items()
    )


def test_argparse_mistakes_are_one_line_too(tmp_path):
    assert_one_error_line(run_cli(*RUN, "--bogus"), "unrecognized arguments: --bogus", "--help")
    assert_one_error_line(run_cli("frobnicate"), "invalid choice: 'frobnicate'")
    assert_one_error_line(run_cli("generate", "blind/touching-circles", "--out", str(tmp_path)), "--n")


@pytest.mark.parametrize("number", ["NaN", "1e400", "Infinity", "[1e400, 3]"])
def test_a_custom_folder_answer_that_is_not_a_finite_number(tmp_path, number):
    folder = make_folder(tmp_path / "set", [], {"c.png": shapes_image("circle")})
    (folder / "items.jsonl").write_text(
        '{"id": "ok", "image": "c.png", "question": "How many?", "answer": 1}\n'
        f'{{"id": "bad", "image": "c.png", "question": "How many?", "answer": {number}}}\n'
    )
    done = run_cli("run", f"custom:{folder}", "--model", "baseline/chance", "--store", str(tmp_path / "s.sqlite"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "items.jsonl line 2: holds" in done.stderr and "not a finite number" in done.stderr


def _with_store(command: str, tmp_path, store) -> tuple[str, ...]:
    if command == "report":
        return ("report", "--store", str(store))
    if command == "run":
        return (*RUN, "--store", str(store))
    replies = tmp_path / "replies.jsonl"
    replies.write_text('{"item_id": 1, "response": "Yes", "target": "yes"}\n')
    return ("import", str(replies), "--benchmark", "blind/touching-circles", "--model", "m", "--store", str(store))
