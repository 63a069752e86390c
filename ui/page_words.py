"""Messages from the engine as the page says them: its words name the command line's options
(`--data`, `--param gap=...`, `--clip`), which a person on the page has no way to type; here
they become the page's own fields. The command line keeps its flags (probes/ writes them).

Applied to every message a visitor sees through `ui.common.user_message`."""

from __future__ import annotations

import re

# Most specific first: each pattern replaced wherever it stands in the message.
_PAGE_TERMS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), words)
    for pattern, words in (
        (r"from --data hf\b", "from the Hub's release (“hf” as the Data folder)"),
        (r"--data hf\b", "“hf” as the Data folder"),
        (r"point --data at", "point the Data folder at"),
        (r"give --data a folder", "give the Data folder box a folder"),
        (r"reads no --data\b", "reads no Data folder (leave it empty)"),
        (r"--data\b(?: PATH)?", "Data folder"),
        (r"--param applies\b", "parameters apply"),
        (r"--param (?=\w)", "parameter "),
        (r"--param\b", "parameters"),
        (r"--clip-min\b", "“CLIP: every pair at least”"),
        (r"--dino-max\b", "“DINOv2: some pair below”"),
        (r"--clip\b", "CLIP model"),
        (r"--dino\b", "DINOv2 model"),
        (r"add --model provider/name", "choose a model"),
        (r"--model\b", "model"),
        (r"--perturb (rotate-options-\w+)", r"the \1 perturbation"),
        (r"--limit\b", "limit"),
        (r"--seed\b", "seed"),
        (r"run with --shots 0\b", "tick 0-shot only"),
        (r"`?report --by (\w+)`?", r"the Scoreboard's “Break down by: \1”"),
        (r"--out\b", "the output folder"),
        (r"give --store an? [^;,)]*", "set PROBE_HOME to a folder you can write"),
        (r"--store\b", "PROBE_HOME"),
    )
)


def page_words(message: str) -> str:
    """`message` with the command line's options named as the page names them."""
    if "--" not in message:
        return message
    for pattern, words in _PAGE_TERMS:
        message = pattern.sub(words, message)
    return message
