"""Look-alikes tab: DiscriBench's construction method on a small folder of a visitor's images.

Upload up to a few hundred images; the tab embeds them with CLIP and DINOv2, finds the quadruples
that CLIP cannot tell apart and DINOv2 can (`probes.tools.mining`), and shows each quadruple's
contact sheet with its similarities, plus the DiscriBench-layout folder as a zip for a person to
write the conversations (or to run `mine --draft`). It loads models and reads folders of the
server, so it is off in public mode.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import gradio as gr

from probes.running.limits import current as limits
from probes.tools.embeddings import DEFAULT_CLIP, DEFAULT_DINO
from probes.tools.mining import mine
from ui.common import escape, user_message

MAX_IMAGES = 300
WORK = Path(tempfile.gettempdir()) / "probe-mining"


def build_mining() -> None:
    if limits().public:
        gr.Markdown("Finding look-alike images loads large models and reads folders: it is off on this "
                    "public playground. Run it on your own machine: `python -m probes mine FOLDER --out DIR`.",
                    elem_id="mine-off")  # fmt: skip
        return
    gr.Markdown(
        "Find **look-alike quadruples** in your own images, as DiscriBench built its options: every pair "
        "alike to CLIP, some pair apart to DINOv2. Each quadruple is a candidate item; write its "
        "conversation and question, then evaluate it as *discribench* with its folder as the Data folder."
    )
    with gr.Row():
        with gr.Column(scale=1):
            files = gr.File(file_count="multiple", file_types=["image"], label=f"Images (up to {MAX_IMAGES})",
                            elem_id="mine-files")  # fmt: skip
            clip = gr.Textbox(DEFAULT_CLIP, label="CLIP model (Hub id or local folder)", elem_id="mine-clip")
            dino = gr.Textbox(DEFAULT_DINO, label="DINOv2 model (Hub id or local folder)", elem_id="mine-dino")
            with gr.Row():
                clip_min = gr.Number(0.95, label="CLIP: every pair at least", elem_id="mine-clip-min")
                dino_max = gr.Number(0.6, label="DINOv2: some pair below", elem_id="mine-dino-max")
            reuse = gr.Checkbox(False, label="let an image appear in several quadruples", elem_id="mine-reuse")
            start = gr.Button("Find look-alikes", variant="primary", elem_id="mine-start")
        with gr.Column(scale=2):
            status = gr.Markdown(elem_id="mine-status")
            sheets = gr.Gallery(label="Quadruples (contact sheets with their similarities)", columns=2,
                                height="auto", object_fit="contain", elem_id="mine-sheets")  # fmt: skip
            folder = gr.File(label="The DiscriBench-layout folder (zip)", visible=False, elem_id="mine-zip")
    start.click(find_lookalikes, [files, clip, dino, clip_min, dino_max, reuse], [status, sheets, folder],
                api_name="mine", concurrency_limit=1, concurrency_id="mining")  # fmt: skip


def find_lookalikes(
    files: list[str] | None,
    clip: str,
    dino: str,
    clip_min: float | None,
    dino_max: float | None,
    reuse: bool,
    progress: gr.Progress = gr.Progress(),  # noqa: B008 - Gradio's way of asking for a progress bar
) -> list[Any]:
    nothing = [gr.update(value=None), gr.update(value=None, visible=False)]
    try:
        bounds = limits()
        if bounds.public:
            return [f"⚠ {escape('finding look-alikes is off on this public playground')}", *nothing]
        paths = [Path(f) for f in files or []]
        if len(paths) < 4:
            return ["⚠ upload at least four images", *nothing]
        if len(paths) > MAX_IMAGES:
            return [f"⚠ {len(paths)} images: at most {MAX_IMAGES} here (the command line takes any number)", *nothing]
        work = Path(tempfile.mkdtemp(prefix="mine-", dir=_work_dir()))
        source = work / "images"
        source.mkdir()
        for number, path in enumerate(paths):
            shutil.copy(path, source / f"{number:04d}{path.suffix.lower()}")
        progress(0, desc="Embedding")
        report = mine(source, work / "lookalikes", clip=bounds.text("CLIP model", clip).strip() or DEFAULT_CLIP,
                      dino=bounds.text("DINOv2 model", dino).strip() or DEFAULT_DINO,
                      clip_min=float(0.95 if clip_min is None else clip_min),
                      dino_max=float(0.6 if dino_max is None else dino_max), reuse=bool(reuse),
                      progress=lambda done, total: progress((done, max(total, 1)), desc="Embedding", unit="images"))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - user_message logs what is not the visitor's mistake
        return [f"⚠ {escape(user_message(exc))}", *nothing]
    sheets = sorted(str(p) for p in (report.out / "contact_sheets").glob("*.png"))
    archive = _zip(report.out, report.out.parent / "lookalikes.zip")
    lines = [line.replace(str(report.out), "the zip below") for line in report.lines()]
    return ["  \n".join(escape(line) for line in lines), sheets, gr.update(value=str(archive), visible=True)]


def _work_dir() -> Path:
    WORK.mkdir(parents=True, exist_ok=True)
    return WORK


def _zip(folder: Path, archive: Path) -> Path:
    with zipfile.ZipFile(archive, "w") as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                bundle.write(path, path.relative_to(folder).as_posix())
    return archive
