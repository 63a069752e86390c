"""A round trip through the real lmms-eval (issue 27): our set out, their log back, the same grade.

1. Installs the pinned lmms-eval in a virtual environment of its own under the cache folder
   (`python -m venv`, then pip; never in the app's requirements). Pins: lmms-eval 0.7.3, and
   filelock 3.32.7 because lmms-eval 0.7.3 patches `filelock._api`, which filelock 4 removed.
2. Exports a generated set (`generate ... --format lmms-eval`; default: 40 Mueller-Lyer items, a
   sweep of the difference at six levels, with and without inducers).
3. Starts an OpenAI-protocol server on 127.0.0.1 in its own process (tests/support/fake_servers.py)
   that answers deterministically from what it is sent: the text parts and the decoded pixels of
   the images, in order, hashed; the hash picks one of a few replies written the ways models write
   (a bare letter, "Answer: a", markdown, a sentence, an option's text, a refusal to say).
4. Our side: `run` of the set's items (drawn again from its description) against that server,
   through a models file, in a process of its own.
5. Their side: `python -m lmms_eval --model openai ... --include_path SET/lmms_eval_task
   --log_samples`, in the venv, against the same server.
6. `import --from lmms-eval` of their log into the same store, then compares, item by item:
   the same items, the same replies, the same grades (ours on our run, ours on their replies,
   and their task's own grade, which uses the copy of our reader the export wrote).

It prints the figures (items, agreement, wall time of each side) and exits 1 if any differ. If
lmms-eval cannot be installed or run here, it says exactly what failed and that the round trip did
not run.

Run from the repository root:  python -m bench.roundtrip [--n 40] [--cache DIR]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PINS = ("lmms-eval==0.7.3", "filelock==3.32.7")
BENCHMARK = "illusion/mueller-lyer"
# Differences the 384 px canvas draws as unequal lengths: every item has a right answer, so all
# 40 are asked on both sides (targets that measure equal are left out of the task, as of `run`).
PARAMS = {"difference": ["-0.1", "-0.05", "-0.03", "0.03", "0.05", "0.1"], "canvas": ["384"]}
MODEL = "fake-vlm"
REPLIES = ("a", "b", "Answer: a", "**b**", "The top line is longer. Answer: a", "b. Bottom", "Top",
           "I cannot tell which one is longer.")  # fmt: skip


def respond(body: dict) -> str:
    """The server's reply: a pure function of the request's text parts and decoded pixels."""
    from PIL import Image

    digest = hashlib.sha256()
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": str(content)}]
        for part in parts:
            if part.get("type") == "text":
                digest.update(b"text:" + part["text"].encode())
            elif part.get("type") == "image_url":
                url = part["image_url"]["url"] if isinstance(part["image_url"], dict) else part["image_url"]
                with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
                    rgb = image.convert("RGB")
                digest.update(b"image:" + repr(rgb.size).encode() + hashlib.sha256(rgb.tobytes()).digest())
    return REPLIES[digest.digest()[0] % len(REPLIES)]


def serve() -> None:
    """The server process: prints its base URL, then serves until killed."""
    from tests.support.fake_servers import FakeOpenAIServer

    server = FakeOpenAIServer(responder=respond).start()
    print(server.base_url, flush=True)
    while True:
        time.sleep(3600)


def our_side(set_dir: str, models_file: str, store: str, concurrency: int) -> None:
    """Our run of the set's items against the server (in its own process, timed from outside)."""
    import asyncio

    from models.types import GenerateConfig
    from probes.cli.checks import load_endpoints
    from probes.core.types import Mode
    from probes.files.set_spec import read_spec
    from probes.running import answerers
    from probes.running.runner import RunPlan, run
    from probes.running.store import Store

    benchmark, items = read_spec(Path(set_dir)).draw()
    items = [item for item in items if item.target is not None]  # as the task's process_docs
    backend = answerers.resolve(f"local/{MODEL}", load_endpoints(models_file))
    plan = RunPlan(benchmark, items, [backend], Mode(), "none", GenerateConfig(max_tokens=512), concurrency)
    with Store(store) as opened:
        results = asyncio.run(run(plan, opened))
    print(json.dumps({"results": len(results), "errors": sum(r.status.value == "error" for r in results)}))


def venv_python(cache: Path) -> Path:
    """The venv's python, created and filled on first use; a marker file names what it holds."""
    folder = cache / ("lmms-eval-venv-" + hashlib.sha256(" ".join(PINS).encode()).hexdigest()[:8])
    python = folder / "bin" / "python"
    marker = folder / "installed.txt"
    if marker.is_file() and marker.read_text() == " ".join(PINS):
        return python
    shutil.rmtree(folder, ignore_errors=True)
    step(f"installing {' '.join(PINS)} into {folder} (once; several GB with torch)")
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PINS], capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        cannot(f"pip install {' '.join(PINS)} failed: {lines[-1] if lines else 'no message'}")
    marker.write_text(" ".join(PINS))
    return python


def cannot(reason: str) -> None:
    print(f"the round trip did not run: {reason}", file=sys.stderr)
    sys.exit(1)


def step(text: str) -> None:
    print(f"- {text}", file=sys.stderr, flush=True)


def timed(command: list[str], env: dict[str, str], log: Path) -> float:
    started = time.perf_counter()
    with log.open("w") as out:
        done = subprocess.run(command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = log.read_text().strip().splitlines()[-3:]
        cannot(f"{' '.join(command[:4])} ... exited {done.returncode}: {' | '.join(tail)}")
    return seconds


def results_by_item(store: Path, model: str) -> dict[str, dict]:
    from probes.running.store import Store

    with Store(store) as opened:
        results = opened.results(model=model)
    return {r.item_id: {"reply": r.reply, "status": r.status.value, "correct": r.correct} for r in results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--cache", default=str(Path.home() / ".cache" / "probe-bench"), help="where the venv lives")
    args = parser.parse_args()
    python = venv_python(Path(args.cache))
    work = Path(tempfile.mkdtemp(prefix="roundtrip-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env |= {"PYTHONPATH": str(REPO), "PROBE_HOME": str(work / "home"), "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(work / "hf-cache"), "WANDB_MODE": "disabled",
            "OPENAI_API_KEY": "sk-local-roundtrip"}  # fmt: skip
    server = subprocess.Popen([sys.executable, "-c", "from bench.roundtrip import serve; serve()"], cwd=REPO,
                              env=env, stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        base_url = server.stdout.readline().strip()
        if not base_url.startswith("http://127.0.0.1:"):
            cannot("the local server did not start")
        set_dir, store = work / "set", work / "results.sqlite"
        words = [f"--param={name}={','.join(values)}" for name, values in PARAMS.items()]
        step(f"exporting {args.n} items of {BENCHMARK} to {set_dir}")
        export_s = timed([sys.executable, "-m", "probes", "generate", BENCHMARK, "--n", str(args.n), "--seed",
                          str(args.seed), *words, "--out", str(set_dir), "--format", "lmms-eval"], env,
                         work / "generate.log")  # fmt: skip
        [task_yaml] = (set_dir / "lmms_eval_task").glob("*.yaml")
        models_file = work / "models.toml"
        models_file.write_text(f'[[endpoints]]\nname = "local"\nbase_url = "{base_url}"\nmodels = ["{MODEL}"]\n'
                               f'api_key_env = "OPENAI_API_KEY"\nconcurrency = {args.concurrency}\n')  # fmt: skip
        step("our side: run against the local server")
        ours_s = timed([sys.executable, "-c", "import sys; from bench.roundtrip import our_side; our_side(*sys.argv[1:4], "
                        "int(sys.argv[4]))", str(set_dir), str(models_file), str(store), str(args.concurrency)],
                       env, work / "ours.log")  # fmt: skip
        step("their side: lmms-eval --model openai against the same server")
        theirs_s = timed([str(python), "-m", "lmms_eval", "--model", "openai", "--model_args",
                          f"model={MODEL},base_url={base_url},num_concurrent={args.concurrency}", "--include_path",
                          str(task_yaml.parent), "--tasks", task_yaml.stem, "--log_samples", "--output_path",
                          str(work / "lmms-out")], env, work / "lmms-eval.log")  # fmt: skip
        step("importing their samples log")
        import_s = timed([sys.executable, "-m", "probes", "import", str(work / "lmms-out"), "--from", "lmms-eval",
                          "--model", f"lmms-eval:{MODEL}", "--store", str(store)], env, work / "import.log")  # fmt: skip
    finally:
        server.kill()
        server.wait()
    ours = results_by_item(store, f"local/{MODEL}")
    theirs = results_by_item(store, f"lmms-eval:{MODEL}")
    samples = [json.loads(line) for f in (work / "lmms-out").rglob("*_samples_*.jsonl") for line in f.open()]
    in_run = {s["probe"]["id"]: s["probe"]["correct"] for s in samples}
    shared = sorted(set(ours) & set(theirs))
    same_reply = sum(ours[i]["reply"] == theirs[i]["reply"] for i in shared)
    same_grade = sum(ours[i]["correct"] == theirs[i]["correct"] for i in shared)
    same_in_run = sum(bool(theirs[i]["correct"]) == in_run.get(i) for i in shared)
    right = sum(bool(ours[i]["correct"]) for i in shared)
    figures = {
        "items": {"ours": len(ours), "theirs": len(theirs), "shared": len(shared), "exported": args.n},
        "same reply": f"{same_reply}/{len(shared)}",
        "same grade (ours on our run vs ours on their replies)": f"{same_grade}/{len(shared)}",
        "same grade (their task's copy of our reader vs ours)": f"{same_in_run}/{len(shared)}",
        "accuracy": f"{100 * right / max(len(shared), 1):.1f}%",
        "wall seconds": {
            "export": round(export_s, 1),
            "ours (run)": round(ours_s, 1),
            "theirs (lmms-eval)": round(theirs_s, 1),
            "import": round(import_s, 1),
        },  # fmt: skip
        "lmms-eval": PINS[0],
    }
    print(json.dumps(figures, indent=2))
    print((work / "import.log").read_text().strip())
    agree = len(shared) == len(ours) == len(theirs) and same_reply == same_grade == same_in_run == len(shared)
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if agree else 1)


if __name__ == "__main__":
    main()
