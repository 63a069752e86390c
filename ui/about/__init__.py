"""About tab: what each probe family tests, its paper, and how to add keys and models."""

from __future__ import annotations

import gradio as gr

from probes.baselines.pixels import ANSWERED as PIXELS_ANSWER
from probes.classroom import ClassBounds
from probes.running.limits import NEW_SESSION_WINDOW, Limits
from probes.running.limits import current as limits
from probes.stimuli.illusions import FAMILIES
from ui.about import my_results

ABOUT = """
## What this is

A playground for seeing how vision-language models perceive. Pick a benchmark item, upload your
own images, or generate a stimulus; ask up to four models side by side, in 0-shot, 4-shot (real
few-shot conversations with the example images) or chain-of-thought mode; perturb the item
(no image, upside down, mirror, grayscale, smaller, options rotated), each graded against the
truth of the picture actually sent (ungraded, with the reason, where that truth cannot be known);
and read scoreboards beside the numbers the papers published. Replies are read by a deterministic parser: an answer it cannot
read counts as *unparsed*, never as a guess.

## The probe families

| Family | What it tests | Paper |
| --- | --- | --- |
| **BlindTest** (`blind/*`) | Seven geometry tasks trivial for people: touching circles, line intersections, the circled letter, Olympic-like rings, nested squares, grid rows and columns, subway paths. Generated here, exact ground truth, every parameter sweepable. | Rahmanzadehgervi et al., *Vision language models are blind* (2024) |
| **IllusionVQA** (`illusionvqa/*`) | Comprehension of optical illusions (435 items) and soft localisation of geometrically impossible objects (1000 items). | Shahgir et al., *IllusionVQA* (2024) |
| **Texture perception** (`shitsukan/*`) | Choosing and writing texture words (gloss, dryness, beauty...) for an object in a photograph. | the *shitsukan* paper (Japanese) |
| **DiscriBench** (`discribench`) | Choosing the right image, among look-alikes, from a situation and a conversation. | the DiscriBench paper (Japanese) |
| **Parametric illusions** (`illusion/*`) | Is a model fooled like a person, or does it answer by geometry? {illusion_count} figures: {illusions}. Generated here, the truth measured in the pixels drawn; psychometric curves, people beside the models, perceive or recall. | Makowski et al., *A Parametric Framework to Generate Visual Illusions using Python* (2021), the *Illusion Game* (2023); VLMBias's illusion design |

## Models and keys

- **OpenAI** models (`openai/...`) use `OPENAI_API_KEY`; **Anthropic** models (`anthropic/...`)
  use `ANTHROPIC_API_KEY`. On a Space, set them as secrets. A visitor can paste their own key
  under *API keys*: it is used for that session's requests only and never stored or shown.
- **Any OpenAI-compatible server** (vLLM, Ollama, LM Studio, TGI, Gemini's compatible endpoint):
  name it in a TOML file and point `PROBE_MODELS` at it:

  ```toml
  [[endpoints]]
  name = "ollama"
  base_url = "http://localhost:11434/v1"
  models = ["llava:7b"]
  ```
  then use `ollama/llava:7b`.
- **Local models** (`hf/<hub id or folder>`) run through transformers on this machine; weights
  download on first use. `hf/HuggingFaceTB/SmolVLM-256M-Instruct` answers on a CPU.
- `baseline/chance` guesses uniformly; it needs nothing.
- `baseline/pixels` answers by measuring the picture (classical image analysis, no model, no
  key): {pixels}. A reference for what plain seeing achieves.

The same engine runs headless: `python -m probes run blind/touching-circles --model ...`.

## A class in the room

The **Class** tab runs a lesson: students join on their phones (the link, its QR code or the
code), answer with taps, and the teacher's screen reveals their answers beside the models'. Its
named API endpoints, for a notebook with `gradio_client`: `class_open(benchmark, params, count,
seconds, models)`, `class_join(code, name)`, `class_item(student_token)`, `class_answer(student_token,
answer)`, `class_next(teacher_token)`, `class_reveal(teacher_token)`, `class_results(teacher_token)`,
`class_close(teacher_token)`; each returns a JSON object, a refusal `{{"error": "..."}}`. Classes live
in this server's memory for {hours:g} hours at most, {empty:g} minutes if nobody joins, and {grace:g}
minutes after the lesson ends ({students} students, {items} items each; {classes} classes at once;
one page holds one seat).
"""


def mode_text(bounds: Limits) -> str:
    """Which mode is on, and what it limits (so a visitor knows why a request was refused)."""
    if bounds.public:
        head = (
            "## This playground is public\n\nAnyone can use it, so it runs with bounds: no data folders or "
            "server paths, local models only as the operator set them up, your evaluations and probes kept "
            "in your own session (kept a day after your last visit, across reloads of this page), and a budget of requests on the "
            "Space's keys (below). An answer this Space already has (a demo its operator prepared, or one "
            "another visitor's request bought) costs nothing. Past a budget, paste your own key under "
            "*API keys* for a provider that has a box there (a server of this Space's own takes no key of yours): "
            "your own key's requests are never counted."
        )
    else:
        head = "## This playground runs locally\n\nEverything is open to you; the bounds below only guard against mistakes."
    budgets = [
        f"{label}: {value:,}" for label, value in (
            ("per session", bounds.session_budget), ("per visitor address and hour", bounds.client_budget),
            ("for everyone, per hour", bounds.global_budget),
        ) if value is not None
    ]  # fmt: skip
    rows = [
        ("Items one request may design", f"{bounds.max_items:,}"),
        ("Values per swept parameter", f"{bounds.max_values:,}"),
        ("Results one evaluation may ask", f"{bounds.max_eval_results:,}"),
        ("Generated picture side", f"{bounds.max_canvas:,} px"),
        ("Uploads per question", f"{bounds.max_upload_images}, each at most {bounds.max_upload_pixels / 1e6:g} MP "
         f"and {bounds.max_upload_bytes // 2**20} MB"),
        ("Text in one field", f"{bounds.max_text:,} characters"),
        ("Time one request may work", f"{bounds.deadline:g} s"),
        ("Requests on the server's keys", ("; ".join(budgets) if budgets else "no budget set")
         + (" (the defaults: the operator set no budget)" if bounds.default_budgets else "")),
        ("Sessions (pages and API clients) kept at once", f"{bounds.max_sessions:,}, the least recently used "
         "forgotten first" + (f"; {bounds.new_sessions:,} new ones per address in {NEW_SESSION_WINDOW / 60:g} minutes"
                              if bounds.new_sessions is not None else "")),
        ("Calls to the class's named endpoints (scripts)", f"{bounds.class_api_rate:,} a second per address; "
         "phones answer on the class's own page, not counted" if bounds.class_api_rate is not None else "no bound"),
    ]  # fmt: skip
    table = "\n".join(["| bound | here |", "| --- | --- |", *(f"| {name} | {value} |" for name, value in rows)])
    return f"{head}\n\n{table}\n"


def build_about() -> None:
    gr.Markdown(mode_text(limits()), elem_id="about-mode")
    if limits().public:
        with gr.Accordion("Your results", open=False, elem_id="about-my-results"):
            gr.Markdown(
                "Everything you asked on this Space (probes, evaluations, your answers) is kept in your "
                "session, across reloads of this page, until a day after your last visit; then it is "
                "deleted. Take it with you:"
            )
            take = gr.Button("Download my results", size="sm", elem_id="about-download")
            said = gr.Markdown(elem_id="about-download-note")
            with gr.Row():
                as_csv = gr.File(label="CSV", elem_id="about-my-csv")
                as_json = gr.File(label="JSON", elem_id="about-my-json")
            take.click(my_results.download, None, [said, as_csv, as_json], api_name="my_results")
    gr.Markdown(about_text(), elem_id="about-text")


def about_text() -> str:
    """The families and what baseline/pixels answers come from the code: a new figure is listed
    without an edit here."""
    bounds = ClassBounds()
    illusions = ", ".join(f"`illusion/{family}`" for family in FAMILIES)
    return ABOUT.format(hours=bounds.lifetime / 3600, students=bounds.max_students, items=bounds.max_items,
                        empty=bounds.empty_lifetime / 60, grace=bounds.grace / 60,
                        classes=bounds.max_classes, illusions=illusions, illusion_count=len(FAMILIES),
                        pixels=PIXELS_ANSWER)  # fmt: skip
