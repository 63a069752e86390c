"""Message builders for 0-shot, k-shot and chain-of-thought prompts.

Few-shot prompts are real conversations: each example is a user turn (its images, then its
question) followed by an assistant turn with its answer; the item under test comes last. This is
what the published toolkits do not do (they paste example answers as text, without images). A
benchmark may instead lay out the whole prompt as one user message (`Benchmark.one_message`), so
a paper's numbers can be reproduced as they were obtained.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass

from models.types import ImagePart, Message, TextPart, assistant, canonical
from probes.asking import perturb
from probes.core.benchmark import Benchmark
from probes.core.types import Item, Mode


@dataclass(frozen=True)
class Prompt:
    messages: tuple[Message, ...]
    hash: str  # sha256 of the messages with images replaced by their content hashes

    @property
    def image_count(self) -> int:
        return sum(len(m.images) for m in self.messages)


def prompt_hash(messages: tuple[Message, ...] | list[Message]) -> str:
    return hashlib.sha256(json.dumps(canonical(messages), sort_keys=True).encode()).hexdigest()


def build_prompt(
    benchmark: Benchmark,
    item: Item,
    mode: Mode,
    examples: list[Item],
    image_parts: Callable[[Item], list[ImagePart]],
) -> Prompt:
    """The conversation for `item` in `mode`, with `examples` (len == mode.shots) before it.

    `image_parts` turns an item's image sources into message parts; the runner passes one that
    reuses the examples' encoded images across items.
    """
    if len(examples) != mode.shots:
        raise ValueError(f"{mode.label} needs {mode.shots} examples, got {len(examples)}")
    inline = benchmark.one_message(item, examples, mode, image_parts)
    if inline is not None:  # a paper's own layout: examples pasted into one user message
        one = (Message("user", tuple(inline)),)
        return Prompt(one, prompt_hash(one))
    messages: list[Message] = []
    preamble = benchmark.preamble(mode.shots, mode.cot)
    for example in examples:
        messages.append(_user_turn(benchmark, example, mode, image_parts, preamble if not messages else None))
        messages.append(assistant(benchmark.render_answer(example, mode.cot)))
    opening = preamble if not messages else None
    prefix = benchmark.query_prefix(mode.shots, mode.cot)
    if prefix:
        opening = f"{opening}\n{prefix}" if opening else prefix
    messages.append(_user_turn(benchmark, item, mode, image_parts, opening))
    frozen = tuple(messages)
    return Prompt(frozen, prompt_hash(frozen))


def _user_turn(
    benchmark: Benchmark,
    item: Item,
    mode: Mode,
    image_parts: Callable[[Item], list[ImagePart]],
    opening: str | None,
) -> Message:
    text = benchmark.render_question(item)
    instruction = benchmark.cot_instruction(item) if mode.cot else ""
    if instruction:
        text = f"{text}\n{instruction}"
    parts: list[TextPart | ImagePart] = [TextPart(opening)] if opening else []
    parts += benchmark.user_parts(item, image_parts(item), text)
    return Message("user", tuple(parts))


def assemble_prompt(
    benchmark: Benchmark,
    original: Item,
    mode: Mode,
    perturbation: str,
    query_parts: Callable[[Item], list[ImagePart]] | None = None,
    example_parts: Callable[[Item], list[ImagePart]] | None = None,
) -> tuple[Item, Prompt]:
    """The perturbed item and its full prompt, examples included: what a model is sent.
    The part builders let the runner reuse cached hashes and encoded example images."""
    item = perturb.apply(benchmark, original, perturbation)
    examples = benchmark.select_examples(item, mode.shots) if mode.shots else []
    plain = _plain_parts
    query_parts, example_parts = query_parts or plain, example_parts or plain

    def image_parts(which: Item) -> list[ImagePart]:
        if perturb.drops_all_images(perturbation):
            return []
        return query_parts(which) if which.id == item.id else example_parts(which)

    return item, build_prompt(benchmark, item, mode, examples, image_parts)


def _plain_parts(item: Item) -> list[ImagePart]:
    return [ImagePart(source.load) for source in item.images]
