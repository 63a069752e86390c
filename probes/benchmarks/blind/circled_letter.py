"""blind/circled-letter (BlindTest task 3): which letter of a word has a red oval around it?

Probes whether a model sees which of several closely spaced letters is enclosed, not just that
there is a red oval over a word it can read. As the paper: the words "Acknowledgement" (15
letters), "Subdermatoglyphic" (17) and "tHyUiKaRbNqWeOpXcZvM" (20, a random string to separate
seeing from knowing the word); a 512 x 512 white canvas; for each (word, circled letter) 3 oval
line thicknesses x 2 font sizes x 4 random positions of the word = 24 images, so 360 + 408 +
480 = 1248 images, each asked with both prompts = 2496 items.

Parameters (every one can be fixed or swept, `--param letter=0,1`): `word`; `letter` (index of
the circled letter, "all" by default); `thickness` of the oval's line as a share of the font's
px size, 0.04, 0.08, 0.12; `font_size`, the word's width as a share of the canvas width, 0.6
and 0.8; `position`, which of the 4 random placements (0-3); `seed`, the design seed the
placements are drawn from. The paper gives no thickness or font size values; these are ours.
Its generator drew text and oval large and then fit the whole word to the canvas width, so the
letters' size depends on the word's length and the line thickness scales with the letters; we
keep both: the font's px size is the largest at which the word spans 0.6 (or 0.8) of the canvas
(Acknowledgement 35/47 px, Subdermatoglyphic 34/45, the random string 25/33), and the line is
0.04-0.12 of that (1 to 5.6 px). Text is Pillow's bundled FreeType font, so the pixels do not
depend on the machine's fonts.

The oval is red, drawn over the text as in the paper's generator, and centred on the circled
letter's ink. It is the smallest ellipse (by area, from round to tall and narrow) that holds
every ink pixel of the letter (at least 1.2 px inside its inner edge) while leaving at most 30%
of each neighbour's ink inside and at least a quarter of it uncovered by the line: sized to
the letter like the paper's ovals, it may cross a neighbour, but never cuts the circled letter
and never swallows or erases a neighbour. The word's random position is drawn within the range where the whole word and the
oval stay 4 px from the canvas edge, so an oval around a first or last letter moves the word
inwards. Ground truth is the one letter whose ink lies wholly inside the oval, from the drawn
masks; a stimulus where that is not exactly the intended letter is refused.

Answers are graded case-insensitively (so any "e" of "Acknowledgement" is right when an "e" is
circled). The paper reports no chance rate, and a uniform guess differs per word (1/12, 1/17,
1/20 over each word's distinct letters), so `chance` is None; `answer_space` gives each word's
distinct characters for baseline/chance. Groups: prompt, word, letter (index), thickness,
font_size, position.
Source: Rahmanzadehgervi et al., Vision language models are blind (2024), seed 002.
"""

from __future__ import annotations

import itertools

from probes.benchmarks.blind import SOURCE, BlindTruth
from probes.benchmarks.blind.released import released
from probes.benchmarks.generated import EXAMPLE_SEED_BASE, GeneratedBenchmark, Param
from probes.core.registry import register
from probes.core.truth import grey_of
from probes.core.types import AnswerKind
from probes.stimuli.circled_letter import RED, CircledLetter, placement

WORDS = ("Acknowledgement", "Subdermatoglyphic", "tHyUiKaRbNqWeOpXcZvM")
# Few-shot examples circle letters of other words, so that no example shows a test image.
EXAMPLE_WORDS = ("Playground", "Bewilderment", "qUoKtRfEmZ")
ORDINALS = {1: "st", 2: "nd", 3: "rd"}


def _letter(text: str) -> int | str:
    return "all" if text == "all" else int(text)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else ORDINALS.get(n % 10, "th")
    return f"{n}{suffix}"


class CircledLetterBenchmark(BlindTruth, GeneratedBenchmark):
    expansion = max(len(word) for word in WORDS)  # letter=all: each of the word's letters
    id = "blind/circled-letter"
    title = "Circled letter: which letter has a red oval around it?"
    source = SOURCE
    chance = None  # differs per word: 1/12, 1/17, 1/20 of the distinct letters
    kind = AnswerKind.LETTER
    told_apart_in_grey = (
        f"the red oval turns a grey ring ({grey_of(RED)} of 255), the only ring among the black letters"
    )
    prompts = {
        "circled": "Which letter is being circled?",
        "highlighted": "Which character is being highlighted with a red oval?",
    }
    params = {
        "word": Param(WORDS),
        "letter": Param(("all",), _letter),  # "all": every letter of the word (expansion)
        "thickness": Param((0.04, 0.08, 0.12), float, minimum=0.005, maximum=0.5),
        "font_size": Param((0.6, 0.8), float, minimum=0.05, maximum=1.0),
        "position": Param((0, 1, 2, 3), int, minimum=0, maximum=1000),
        "seed": Param((0,), int),
    }

    def design(self) -> list[CircledLetter]:
        grid = self.grid
        stimuli = []
        for word in grid["word"]:
            indices = range(len(word)) if "all" in grid["letter"] else grid["letter"]
            for index, thickness, size, position, seed in itertools.product(
                indices, grid["thickness"], grid["font_size"], grid["position"], grid["seed"]
            ):
                if not 0 <= index < len(word):
                    raise ValueError(f"letter {index} is outside {word!r} (0 to {len(word) - 1})")
                x, y = placement(seed, word, index, thickness, size, position)
                stimuli.append(CircledLetter(word, index, thickness, size, x, y, position, seed))
        return stimuli

    def example_design(self) -> list[CircledLetter]:
        """16 stimuli on words not under test, the circled letter walking along each word so
        that the examples' answers differ."""
        examples = []
        for index in range(16):
            word = EXAMPLE_WORDS[index % len(EXAMPLE_WORDS)]
            seed = EXAMPLE_SEED_BASE + index
            letter = (index * 7) % len(word)
            thickness, size = (0.04, 0.08, 0.12)[index % 3], (0.6, 0.8)[index % 2]
            x, y = placement(seed, word, letter, thickness, size, 0)
            examples.append(CircledLetter(word, letter, thickness, size, x, y, 0, seed))
        return examples

    def truth(self, stimulus: CircledLetter, prompt: str) -> str:
        return stimulus.target

    def answer_space(self, stimulus: CircledLetter, prompt: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(stimulus.word))

    def reasoning(self, stimulus: CircledLetter, prompt: str) -> str:
        word, index = stimulus.word, stimulus.letter
        beside_letters = [f"'{word[i]}'" for i in (index - 1, index + 1) if 0 <= i < len(word)]
        if len(beside_letters) == 2:
            beside = f" Its neighbours {' and '.join(beside_letters)} stay mostly outside the oval."
        else:  # the first or last letter has one neighbour (a one-letter word, none)
            beside = "".join(f" Its neighbour {letter} stays mostly outside the oval." for letter in beside_letters)
        return (
            f'The word is "{word}". The red oval encloses its {_ordinal(index + 1)} character, '
            f"'{stimulus.target}'.{beside}"
        )


@register("blind/circled-letter", generated=CircledLetterBenchmark)
def circled_letter(data: str | None = None, params=None):
    if data is not None:
        return released(CircledLetterBenchmark.id, data, CircledLetterBenchmark, params)
    return CircledLetterBenchmark(params)
