"""What the Human tab draws: the answer keys of an item, the progress bar and clock, thumbnails
and the results table (HTML built here, every value escaped), and the browser script that reads
the keys.

Keys: Y and N for yes/no; for choices the option's own label (a, b ... or 1, 2 ...) and its
place (1-4 for letters, A-D for digits); for a two-alternative illusion the arrow that points at
its option (Top/Bottom, Above/Below, Left/Right: the Illusion Game's keys). A key clicks the
option, and choosing an option submits it (auto-advance), so a mouse click and a key take the
same path to the server, which times the answer. Other kinds (numbers, letters, rows x columns)
are typed into the answer box, which has the focus, and sent with Enter.

A key pressed while the last answer is on its way (the moment between two items) is kept and
answers the next item as soon as it shows (what was typed goes into its box), and the page says
so; a key that is no answer to that item is said to be not taken. A presenter loses nothing
unseen. (Kept rather than refused: a person answering quickly has already read the next item's
keys; the time stored is still the server's, from sending the item to its answer.)
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image

from probes.core.types import AnswerKind, Item

THUMB_PX = 72  # the results table's thumbnails fit in a square of this side
THUMB_IMAGES = 4  # an item with more images shows its first four side by side
ARROWS = {"top": "ArrowUp", "above": "ArrowUp", "bottom": "ArrowDown", "below": "ArrowDown",
          "left": "ArrowLeft", "right": "ArrowRight"}  # fmt: skip
ARROW_SIGNS = {"ArrowUp": "↑", "ArrowDown": "↓", "ArrowLeft": "←", "ArrowRight": "→"}
MARKS = {True: "✓ right", False: "✗ wrong"}


@dataclass(frozen=True)
class Answered:
    """One answer as the results table shows it."""

    item: str
    answer: str
    expected: str
    correct: bool | None
    score: float | None
    seconds: float
    thumbnail: str = ""  # a data: URL, small (see `thumbnail`)


# --- keys ------------------------------------------------------------------------------------


def answer_keys(item: Item) -> dict[str, int]:
    """Key (as the browser's KeyboardEvent.key, letters lower case) -> the option's place among
    the radio buttons. Empty for kinds typed into the answer box."""
    if item.kind is AnswerKind.YES_NO:
        return {"y": 0, "n": 1}  # the radio lists Yes, then No
    if item.kind is not AnswerKind.CHOICE:
        return {}
    labels = [label.lower() for label in item.labels]
    keys = {label: place for place, label in enumerate(labels) if len(label) == 1}
    by_letter = not any(label.isalpha() for label in labels)  # digit labels: A, B ... as well
    by_digit = not any(label.isdigit() for label in labels)  # letter labels: 1, 2 ... as well
    for place in range(min(len(labels), 9)):
        if by_digit:
            keys.setdefault(str(place + 1), place)
        if by_letter:
            keys.setdefault(chr(ord("a") + place), place)
    arrows = [ARROWS.get(option.strip().lower()) for option in item.options]
    if None not in arrows and len(set(arrows)) == len(arrows):  # each option has its own arrow
        keys.update({arrow: place for place, arrow in enumerate(arrows)})
    return keys


def keys_hint(item: Item) -> str:
    """One line (Markdown) saying which key gives which answer."""
    if item.kind is AnswerKind.YES_NO:
        return "Keys: <kbd>Y</kbd> yes · <kbd>N</kbd> no · the answer is sent as soon as you press"
    keys = answer_keys(item)
    if not keys:
        return "Type your answer and press <kbd>Enter</kbd>"
    per_option: dict[int, list[str]] = {}
    for key, place in keys.items():
        per_option.setdefault(place, []).append(ARROW_SIGNS.get(key, key.upper()))
    parts = [
        "".join(f"<kbd>{html.escape(k)}</kbd>" for k in per_option[place]) + f" {html.escape(option)}"
        for place, option in enumerate(item.options)
        if place in per_option
    ]
    return "Keys: " + " · ".join(parts) + " · the answer is sent as soon as you press"


# --- progress and clock ----------------------------------------------------------------------


def clock(state: str, token: str = "", position: int = 0, total: int = 0, keys: dict[str, int] | None = None,
          typed: bool = False, seconds: float | None = None) -> str:  # fmt: skip
    """The bar and the clock above the item. `state` is idle, running or finished; the
    browser script reads the data attributes (a new `token` restarts the clock and moves the
    focus), and shows the seconds the current item has been on screen. The seconds stored are
    the server's, from sending the item to receiving the answer."""
    attributes = (
        f'class="human-clock" data-state="{state}" data-item="{html.escape(token)}" '
        f'data-kind="{"text" if typed else "choice"}" data-keys="{html.escape(json.dumps(keys or {}))}" '
        f'data-position="{position}"'
    )
    if state == "idle":
        return f'<div {attributes}><span class="human-hint">Press <kbd>Enter</kbd> to start.</span></div>'
    done = position if state == "running" else total
    share = 0 if not total else round(100 * done / total, 1)
    bar = (
        f'<div class="human-bar" role="progressbar" aria-valuemin="0" aria-valuemax="{total}" '
        f'aria-valuenow="{done}"><div style="width: {share}%"></div></div>'
    )
    if state == "finished":
        took = "" if seconds is None else f"{seconds:.1f} s in all"
        return f'<div {attributes}>{bar}<span class="human-time">{took}</span></div>'
    return (
        f'<div {attributes}>{bar}<span class="human-time" aria-live="off">'
        '<span class="human-label">time</span> <b class="human-seconds">0.0</b> s</span></div>'
    )


# --- thumbnails and results ------------------------------------------------------------------


def thumbnail(images: Sequence[Image.Image]) -> str:
    """The item's images (at most four, side by side) in a THUMB_PX square, as a WebP data URL
    of a few kilobytes: the results table needs no files served."""
    shown = list(images)[:THUMB_IMAGES]
    if not shown:
        return ""
    small = []
    for image in shown:
        copy = image.convert("RGB")
        copy.thumbnail((THUMB_PX, THUMB_PX))
        small.append(copy)
    width = sum(i.width for i in small) + 2 * (len(small) - 1)
    strip = Image.new("RGB", (width, max(i.height for i in small)), "white")
    x = 0
    for image in small:
        strip.paste(image, (x, 0))
        x += image.width + 2
    strip.thumbnail((THUMB_PX * 2, THUMB_PX))  # several images: a strip up to twice as wide
    buffer = io.BytesIO()
    strip.save(buffer, format="WEBP", quality=80)
    return "data:image/webp;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def mark(answer: Answered) -> str:
    if answer.correct is not None:
        return MARKS[answer.correct]
    return "–" if answer.score is None else f"match {answer.score:.2f}"


def results_table(answers: Sequence[Answered]) -> str:
    """The person's answers: the item as a thumbnail (its id on hover and under "id"), the
    answer, the right answer, right or wrong, seconds."""
    rows = []
    for number, a in enumerate(answers, start=1):
        item_id = html.escape(a.item)
        picture = (
            f'<img src="{a.thumbnail}" alt="item {number}" title="{item_id}" loading="lazy">' if a.thumbnail else ""
        )
        verdict = {True: "right", False: "wrong", None: "ungraded"}[a.correct]
        rows.append(
            f'<tr class="human-{verdict}"><td class="human-n">{number}</td>'
            f'<td class="human-thumb">{picture}<details><summary>id</summary><code>{item_id}</code></details></td>'
            f"<td>{html.escape(a.answer)}</td><td>{html.escape(a.expected)}</td>"
            f'<td class="human-mark">{html.escape(mark(a))}</td><td class="human-s">{a.seconds:.1f}</td></tr>'
        )
    head = "<tr><th>#</th><th>item</th><th>your answer</th><th>correct answer</th><th>result</th><th>s</th></tr>"
    return f'<div class="human-results"><table><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></div>'


# --- the browser side ------------------------------------------------------------------------

# Installed once per page by the clock's js_on_load. Keys act only while the Take section is on
# screen, never while a text box, number box or list has the focus (a name being typed).
SCRIPT = r"""
if (!window.humanTake) {
  const take = (window.humanTake = { item: null, since: 0, focusPending: false, sentFor: null, sentAt: 0,
                                     queued: null, typed: "", submit: false, noteFor: null, status: "" });
  const $ = (selector) => document.querySelector(selector);
  const onScreen = (el) => !!el && el.offsetParent !== null;
  const typing = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit", "range"].includes(el.type)));
  const answerBox = () => $("#human-answer textarea, #human-answer input");
  const clockOf = () => $("#human-clock .human-clock");
  // Between items: the answer is on its way and the next item not yet drawn. Gradio shows its
  // loading veil on the clock while the server works; the moment before it appears is covered
  // by the time the answer was sent.
  // by the time the answer was sent, until the server's reply shows (its status line changes:
  // "Answer n saved", or why the answer was not taken).
  const statusText = () => $("#human-status")?.textContent ?? "";
  const between = () => {
    if ($("#human-clock .wrap.full:not(.hide)")) return true;
    if (take.sentFor === null) return false;
    if (take.sentFor !== clockOf()?.dataset.item || statusText() !== take.status ||
        performance.now() - take.sentAt > 1500) { take.sentFor = null; return false; }
    return true;
  };
  const sent = () => { take.sentFor = clockOf()?.dataset.item ?? null; take.sentAt = performance.now(); take.status = statusText(); };
  // A key pressed between items is never dropped without a word: it is kept for the next item
  // and said so here, then used (or, if the next item has no such answer, said to be not taken).
  const note = (text, kind = "") => {
    const box = $("#human-pending");
    if (!box) return;
    let line = box.querySelector(".human-note");
    if (!line) { line = document.createElement("p"); line.className = "human-note"; line.setAttribute("aria-live", "polite"); box.appendChild(line); }
    line.textContent = text;
    line.dataset.kind = kind;
    take.noteFor = clockOf()?.dataset.item ?? null;
  };
  const sign = (key) => ({ ArrowUp: "↑", ArrowDown: "↓", ArrowLeft: "←", ArrowRight: "→" })[key] || key.toUpperCase();
  document.addEventListener("change", (event) => {  // a click on an option sends it as well
    if (event.target.matches?.("#human-choice input[type=radio]")) sent();
  }, true);
  document.addEventListener("click", (event) => {
    if (event.target.closest?.("#human-submit")) sent();
  }, true);
  window.addEventListener("keydown", (event) => {
    const clock = clockOf();
    if (!onScreen(clock) || event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    // What was kept from the gap goes first, so that keys keep their order (the gap may have
    // just ended, before the next tick would have used it).
    if (!between() && (take.queued !== null || take.typed)) useQueued(clock);
    const box = answerBox();
    if (event.target === box && clock.dataset.state === "running") {
      if (between()) {  // typed ahead: kept for the next item's box
        if (event.key.length === 1) take.typed += event.key;
        else if (event.key === "Backspace") take.typed = take.typed.slice(0, -1);
        else if (event.key === "Enter") take.submit = !!take.typed;
        else return;
        event.preventDefault();
        event.stopPropagation();
        note(event.key === "Enter" && !take.typed
          ? "Enter came while the last answer was on its way: it was not taken."
          : `Typed while the next item was on its way: “${take.typed}” goes into its box` +
            (take.submit ? " and is sent." : "."), "queued");
      } else if (event.key === "Enter" && box.value.trim()) {
        sent();
      }
      return;
    }
    if (typing(event.target)) return;
    const state = clock.dataset.state;
    if (event.key === "Enter") {
      // Enter starts a first session; after the end it does nothing (a stray Enter must not
      // hide the results); on a button it is the button's own.
      if (state === "idle" && event.target.tagName !== "BUTTON") {
        event.preventDefault();
        $("#human-start")?.click();
      }
      return;
    }
    if (state !== "running") return;
    if (clock.dataset.kind === "text") {
      if (event.key.length === 1 && onScreen(box)) box.focus(); // the character lands in the box
      return;
    }
    const keys = JSON.parse(clock.dataset.keys || "{}");
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (between()) {
      if (!(key in keys) && !(key.length === 1 && /[a-z0-9]/.test(key)) && !key.startsWith("Arrow")) return;
      event.preventDefault();
      event.stopPropagation();
      take.queued = key;
      note(`${sign(key)} came while the next item was on its way: it answers the next item as soon as it shows.`, "queued");
      return;
    }
    if (!(key in keys)) return;
    const option = document.querySelectorAll("#human-choice input[type=radio]")[keys[key]];
    if (option) {
      event.preventDefault();
      event.stopPropagation(); // not also the gallery's arrows or a focused radio's own
      if (!option.checked) { sent(); option.click(); } // choosing submits (the radio's input event)
    }
  }, true);
  function useQueued(clock) {
    if (take.queued === null && !take.typed) return;
    if (clock.dataset.state !== "running") {
      note("The test ended before the key pressed between items could be used: it was not taken.", "dropped");
      take.queued = null; take.typed = ""; take.submit = false;
      return;
    }
    if (clock.dataset.kind === "text") {
      const box = answerBox();
      if (!onScreen(box)) return;
      const text = take.typed || (take.queued && take.queued.length === 1 ? take.queued : "");
      const submit = take.submit && !!take.typed;
      take.queued = null; take.typed = ""; take.submit = false;
      if (!text) { note("The key pressed between items is not an answer here: it was not taken.", "dropped"); return; }
      const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(box), "value").set;
      setter.call(box, text);
      box.dispatchEvent(new Event("input", { bubbles: true }));
      box.focus();
      if (submit) {  // Enter came too: sent as if pressed now
        setTimeout(() => { sent(); $("#human-submit")?.click(); }, 50);
        note(`“${text}”, typed between items, answered item ${Number(clock.dataset.position || 0) + 1}.`, "used");
      } else {
        note(`“${text}”, typed between items, is in this item's box: press Enter to send it.`, "used");
      }
      return;
    }
    const keys = JSON.parse(clock.dataset.keys || "{}");
    const options = document.querySelectorAll("#human-choice input[type=radio]");
    const key = take.queued ?? (take.typed.length === 1 ? take.typed.toLowerCase() : null);
    take.queued = null; take.typed = ""; take.submit = false;
    if (key === null || !(key in keys)) {
      note(`${key ? sign(key) : "What was typed"}, pressed between items, is no answer to this item: it was not taken.`,
           "dropped");
      return;
    }
    const option = options[keys[key]];
    if (!option || [...options].some((o) => o.checked)) { take.queued = key; return; }  // not drawn yet
    sent();
    option.click();
    note(`${sign(key)}, pressed between items, answered item ${Number(clock.dataset.position || 0) + 1}.`, "used");
  };
  setInterval(() => {
    const clock = clockOf();
    if (!clock) return;
    if (clock.dataset.item !== take.item) {
      take.item = clock.dataset.item;
      take.since = performance.now();
      take.focusPending = clock.dataset.state === "running";
      take.reveal = clock.dataset.state === "running";
      // A note about the item before last has had its time.
      const line = $("#human-pending .human-note");
      if (line && take.noteFor !== null && take.noteFor !== take.item && line.dataset.kind !== "queued") {
        line.textContent = ""; line.dataset.kind = "";
      }
    }
    const seconds = clock.querySelector(".human-seconds");
    if (seconds) seconds.textContent = ((performance.now() - take.since) / 1000).toFixed(1);
    const top = $("#human-progress");
    const bottom = [$("#human-choice"), $("#human-answer")].find(onScreen);
    if (take.reveal && onScreen(clock) && top && bottom) {
      // The item and its answer buttons in view together (a phone's header pushes them down);
      // once per item, when its buttons are drawn.
      take.reveal = false;
      if (top.getBoundingClientRect().top < 0 || bottom.getBoundingClientRect().bottom > window.innerHeight) {
        window.scrollTo({ top: top.getBoundingClientRect().top + window.scrollY - 8 });
      }
    }
    if (!between() && (take.queued !== null || take.typed) && onScreen(clock)) useQueued(clock);
    if (take.focusPending && onScreen(clock)) {
      // A new item: the answer box takes the focus; for keys, nothing does (Start or a radio
      // button keeping it would take the next Enter or arrow).
      const box = answerBox();
      if (clock.dataset.kind === "text") {
        if (onScreen(box)) { box.focus(); take.focusPending = false; }
      } else {
        if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
        take.focusPending = false;
      }
    }
  }, 100);
}
"""


def show_tab_js(tab_id: str, name: str) -> str:
    """A click on the app's tab `tab_id` (its button, or the same name in the overflow menu a
    narrow screen shows): the tab's own select event runs, as when a person clicks it."""
    return f"""() => {{
  window.scrollTo({{ top: 0 }});
  const direct = document.querySelector('button[role="tab"][data-tab-id={json.dumps(tab_id)}]');
  if (direct) {{ direct.click(); return []; }}
  document.querySelector('.overflow-menu button[aria-label="More tabs"]')?.click();
  for (const b of document.querySelectorAll('.overflow-dropdown button')) {{
    if (b.textContent.trim() === {json.dumps(name)}) {{ b.click(); break; }}
  }}
  return [];
}}"""
