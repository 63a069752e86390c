"""A probe's grid as files, for slides and spreadsheets: a PNG (the picture, the question, the right
answer and each model's answer under each condition, in type large enough for a projector) and a
CSV (one row per model x condition). Both read each cell through `grid.shown_cell`, so they
say exactly what the page's grid says.

Drawn with Pillow (no new dependency). File names are short (at most NAME_CHARS characters, cut
between words): a slide deck's file list shows them whole.
"""

from __future__ import annotations

import base64
import io
import re
import secrets
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from models.types import fit_within
from probes.core.types import Item
from probes.files.spreadsheet import csv_text as spreadsheet_csv
from ui.items import ItemSpec
from ui.probe.grid import Cell, Sent, Shown, chances_words, shown_answer, shown_cell, target_value

EXPORTS = Path(tempfile.gettempdir()) / "probe-grid-exports"  # swept hourly (app.py)
NAME_CHARS = 56  # a file name's stem; with ".png" under 60
# `source`: where an answer came from, in the grid's words ("asked now", "answered before, nothing
# sent"; empty for no answer); `probabilities`: the answers' probabilities where the model gave them
# ("A 62% · B 30%"), in the order shown; `alternatives`: the tokens offered at the answer. Empty
# where it gave none.
COLUMNS = ("model", "condition", "answer", "verdict", "source", "latency_s", "probabilities", "alternatives", "reply",
           "note")  # fmt: skip

WIDTH = 1600  # px: a 16:9 slide's width at a projector's resolution
MARGIN = 40
PICTURE = 520  # the item's picture fits in a square of this side
THUMB = 110  # each condition's picture as sent, in its column head
COLOURS = {"right": (220, 252, 231), "wrong": (254, 226, 226), "ungraded": (241, 245, 249)}
OTHER = (254, 243, 199)  # failed, refused, cannot answer, no reply, does not apply, not in the cache
MARKS = {"right": "✓", "wrong": "✗", "ungraded": "–"}


@dataclass
class Probed:
    """A finished grid as data: what Ask (or a replayed link) showed."""

    spec: ItemSpec | None
    item: Item
    models: list[str]
    conditions: list[str]
    cells: dict[tuple[str, str], Cell]
    sent: Mapping[str, Sent]
    picture: Image.Image | None = None  # the item's pictures for the slide, already small

    @classmethod
    def kept(cls, spec: ItemSpec | None, item: Item, models: list[str], conditions: list[str],
             cells: Mapping[tuple[str, str], Cell], sent: Mapping[str, Sent]) -> Probed:  # fmt: skip
        """What the downloads keep once Ask is done (in the session's state until the next Ask):
        words, truths and the slide's picture made small, never the pictures as decoded or sent
        (four 16 MP uploads under every condition held that way took the app from 1.4 to 1.9 GB)."""
        light = {name: replace(one, item=replace(one.item, images=()) if one.item is not None else None)
                 for name, one in sent.items()}  # fmt: skip
        return cls(spec, replace(item, images=()), models, conditions, dict(cells), light, _picture(item))

    def asked(self, condition: str) -> Item:
        """The item as `condition` asked it (options in the order shown, truth of the picture sent)."""
        one = self.sent.get(condition)
        return one.item if one is not None and one.item is not None else self.item

    def shown(self, model: str, condition: str) -> Shown:
        return shown_cell(self.asked(condition), self.cells.get((model, condition), Cell()))


def write(probed: Probed) -> tuple[Path, Path]:
    """The PNG and the CSV, in a folder of their own (two visitors' files never meet)."""
    folder = EXPORTS / secrets.token_hex(8)
    folder.mkdir(parents=True, exist_ok=True)
    stem = file_stem(probed)
    png, table = folder / f"{stem}.png", folder / f"{stem}.csv"
    render(probed).save(png, optimize=True)
    table.write_text(csv_text(probed), encoding="utf-8")
    return png, table


def file_stem(probed: Probed) -> str:
    """`probe-<task>-<item>-<n>-models`, cut between words to NAME_CHARS."""
    spec = probed.spec
    if spec is None or spec.source == "upload":
        words = ["probe", "upload"]
    else:
        words = ["probe", *re.split(r"[^a-z0-9]+", spec.benchmark.lower()), f"item{spec.index}"]
    words.append(f"{len(probed.models)}models")
    return cut_words([w for w in words if w], NAME_CHARS)


def cut_words(words: Sequence[str], limit: int) -> str:
    """The words joined with '-', as many whole ones as fit in `limit` (the first always, cut)."""
    kept: list[str] = []
    for word in words:
        if len("-".join([*kept, word])) > limit:
            break
        kept.append(word)
    return "-".join(kept) if kept else words[0][:limit]


# --- CSV ------------------------------------------------------------------------------------


def rows(probed: Probed) -> list[dict[str, str]]:
    """One row per model x condition, in the grid's order (models down, conditions across)."""
    out = []
    for model in probed.models:
        for condition in probed.conditions:
            shown = probed.shown(model, condition)
            out.append({
                "model": model,
                "condition": condition,
                "answer": shown.answer,
                "verdict": shown.verdict,
                "source": shown.source,
                "latency_s": "" if shown.latency is None else f"{shown.latency:.2f}",
                "probabilities": chances_words(shown.chances),
                "alternatives": shown.alternatives,
                "reply": shown.reply,
                "note": shown.note,
            })  # fmt: skip
    return out


def csv_text(probed: Probed) -> str:
    """The rows as a spreadsheet may open them: no cell runs as a formula (probes/files/spreadsheet.py)."""
    return spreadsheet_csv(COLUMNS, rows(probed))


# --- PNG ------------------------------------------------------------------------------------


def _font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu where the system has it (it draws ✓ and ✗), else Pillow's own scalable font."""
    try:
        return ImageFont.truetype("DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf", size)
    except OSError:
        return ImageFont.load_default(size)


def _wrap(draw: ImageDraw.ImageDraw, text: str, font: ImageFont.ImageFont, width: int, lines: int) -> list[str]:
    """`text` in lines no wider than `width`, at most `lines` (the last ends in … if cut)."""
    out: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for word in paragraph.split():
            trial = f"{line} {word}".strip()
            if draw.textlength(trial, font=font) <= width:
                line = trial
                continue
            if line:
                out.append(line)
            while draw.textlength(word, font=font) > width:  # a word wider than the column
                cut = max(1, int(len(word) * width / draw.textlength(word, font=font)) - 1)
                out.append(word[:cut])
                word = word[cut:]
            line = word
        out.append(line)
    if len(out) > lines:
        out = out[:lines]
        while out[-1] and draw.textlength(out[-1] + "…", font=font) > width:
            out[-1] = out[-1][:-1]
        out[-1] += "…"
    return out


def _picture(item: Item) -> Image.Image | None:
    """The item's pictures side by side (at most four), within PICTURE x PICTURE."""
    pictures = []
    for source in item.images[:4]:
        image = source.load().convert("RGB")
        pictures.append(fit_within(image, PICTURE, reducing_gap=2.0))
    if not pictures:
        return None
    gap = 8
    strip = Image.new("RGB", (sum(p.width for p in pictures) + gap * (len(pictures) - 1),
                              max(p.height for p in pictures)), "white")  # fmt: skip
    x = 0
    for picture in pictures:
        strip.paste(picture, (x, 0))
        x += picture.width + gap
    strip.thumbnail((PICTURE, PICTURE), Image.Resampling.LANCZOS)
    return strip


def _thumbnail(sent: Sent | None) -> Image.Image | None:
    if sent is None or not sent.thumbnail:
        return None
    data = base64.b64decode(sent.thumbnail.split(",", 1)[1])
    image = Image.open(io.BytesIO(data)).convert("RGB")
    image.thumbnail((THUMB, THUMB), Image.Resampling.LANCZOS)
    return image


def render(probed: Probed) -> Image.Image:
    """The slide: picture left, question and right answer beside it, the grid under both."""
    title, body, small = _font(34, bold=True), _font(26), _font(20)
    scratch = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    picture = probed.picture if probed.picture is not None else _picture(probed.item)
    text_x = MARGIN + (picture.width + MARGIN if picture else 0)
    text_width = WIDTH - text_x - MARGIN
    question = _wrap(scratch, probed.item.question, title, text_width, 6)
    truth = ""
    if probed.item.target is not None:
        truth = f"Right answer: {shown_answer(probed.item, target_value(probed.item))}"
    truth_lines = _wrap(scratch, truth, body, text_width, 2) if truth else []
    top_height = max(picture.height if picture else 0, 44 * len(question) + 16 + 34 * len(truth_lines))

    label_width = 300
    count = max(1, len(probed.conditions))
    cell_width = (WIDTH - 2 * MARGIN - label_width) // count
    heads = {name: _thumbnail(probed.sent.get(name)) for name in probed.conditions}
    head_height = 40 + (THUMB + 8 if any(heads.values()) else 0) + 30
    cell_lines = {(m, c): _cell_lines(scratch, probed.shown(m, c), body, small, cell_width - 24)
                  for m in probed.models for c in probed.conditions}  # fmt: skip
    row_heights = [max(70, max((_lines_height(cell_lines[(m, c)]) for c in probed.conditions), default=0) + 24)
                   for m in probed.models]  # fmt: skip
    height = MARGIN + top_height + MARGIN + head_height + sum(row_heights) + 6 * len(row_heights) + MARGIN

    image = Image.new("RGB", (WIDTH, height), "white")
    draw = ImageDraw.Draw(image)
    if picture:
        image.paste(picture, (MARGIN, MARGIN))
        draw.rectangle(
            (MARGIN - 1, MARGIN - 1, MARGIN + picture.width, MARGIN + picture.height), outline=(200, 200, 200)
        )
    y = MARGIN
    for line in question:
        draw.text((text_x, y), line, font=title, fill=(17, 24, 39))
        y += 44
    y += 16
    for line in truth_lines:
        draw.text((text_x, y), line, font=body, fill=(21, 128, 61))
        y += 34

    y = MARGIN + top_height + MARGIN
    x0 = MARGIN + label_width
    for column, name in enumerate(probed.conditions):
        x = x0 + column * cell_width
        draw.text((x + 8, y), name, font=body, fill=(17, 24, 39))
        below = y + 40
        thumb = heads[name]
        if thumb is not None:
            image.paste(thumb, (x + 8, below))
            draw.rectangle((x + 7, below - 1, x + 8 + thumb.width, below + thumb.height), outline=(203, 213, 225))
            below += THUMB + 8
        asked = probed.asked(name)
        if asked.target is not None:
            note = f"right: {shown_answer(asked, target_value(asked))}"
        else:
            note = asked.ungraded_because or "not graded"
        draw.text((x + 8, below), _wrap(scratch, note, small, cell_width - 16, 1)[0], font=small, fill=(75, 85, 99))
    y += head_height
    for model, row_height in zip(probed.models, row_heights, strict=True):
        for line_number, line in enumerate(_wrap(scratch, model, body, label_width - 16, 2)):
            draw.text((MARGIN, y + 12 + 32 * line_number), line, font=body, fill=(17, 24, 39))
        for column, name in enumerate(probed.conditions):
            x = x0 + column * cell_width
            shown = probed.shown(model, name)
            box = (x + 4, y, x + cell_width - 4, y + row_height)
            draw.rounded_rectangle(box, radius=8, fill=COLOURS.get(shown.verdict, OTHER), outline=(203, 213, 225))
            ty = y + 12
            for text, font in cell_lines[(model, name)]:
                draw.text((x + 16, ty), text, font=font, fill=(17, 24, 39) if font is body else (55, 65, 81))
                ty += _line_height(font)
        y += row_height + 6
    return image


def _cell_lines(draw: ImageDraw.ImageDraw, shown: Shown, body: ImageFont.ImageFont, small: ImageFont.ImageFont,
                width: int) -> list[tuple[str, ImageFont.ImageFont]]:  # fmt: skip
    """What a cell shows on the slide: verdict and answer large, seconds or the reason small."""
    if shown.verdict in MARKS:
        head = f"{MARKS[shown.verdict]} {shown.answer}"
        tail = "" if shown.latency is None else f"{shown.latency:.2f} s"
        if shown.chances:  # the bars in words: a slide has no tooltips
            tail = f"{tail} · {chances_words(shown.chances)}" if tail else chances_words(shown.chances)
        if shown.verdict == "ungraded" and shown.note:
            tail = f"{tail} · {shown.note}" if tail else shown.note
    else:
        head, tail = shown.verdict, shown.note
    lines = [(text, body) for text in _wrap(draw, head, body, width, 3)]
    if tail:
        lines += [(text, small) for text in _wrap(draw, tail, small, width, 2)]
    return lines


def _line_height(font: ImageFont.ImageFont) -> int:
    return int(getattr(font, "size", 20) * 1.3)


def _lines_height(lines: list[tuple[str, ImageFont.ImageFont]]) -> int:
    return sum(_line_height(font) for _, font in lines)
