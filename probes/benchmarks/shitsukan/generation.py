"""`shitsukan/generation`: the model writes three texture words for an object in a photo.

What it probes: which textures (質感) a model perceives in an object when nothing is suggested,
compared with the words people wrote for it. Source: Matsuda et al., 大規模視覚言語モデルの質感
知覚能力の分析, section 4, Figure 3, Eq. 1 and 2, Tables 2 and 3 (seed 001; SPEC.md section 3).

One item per record (see `folder.py`) and language. Scoring is the paper's match rate (Eq. 2):
per item |S_human ∩ S_model| / |S_model|, where S_human is the record's validated words and
S_model the model's three words, compared after `normalise_word` and otherwise exactly; the
report's accuracy is its mean. A reply that is not exactly three distinct words is malformed:
status unparsed, left out of the mean and counted, as the paper left such outputs out (GPT-4o
106 of 107 kept, LLaVA-1.5 81). Words are split by the shared word-list reader: on 、 , ， ; and
line breaks, numbering dropped, an "答え：" / "Answer:" line preferred. Three distinct words make
|S_model| = 3, Figure 4's w_i = 3, and stop "赤い、赤い、赤い" from scoring as one sure word.
`correct` is None: no reply is right or wrong. Each word the model wrote is stored (the result's parsed value) so that
people can judge it later: the yes/no judgement score of Eq. 1 needs that, not this module.

Parameters (`--param NAME=V1,V2`):
- `lang`: `ja` (default; the paper's Figure 3 prompt) or `en` (our translation, not the paper's).
- `seed`: default 0; seeds only baseline/chance's guesses (see below).
Groups: `lang`. No `chance` number: it depends on the folder's vocabulary. baseline/chance writes
three words drawn at random from every validated word of the folder (in the item's language),
one of a few seeded draws per item, which measures the match rate a blind guesser gets.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

from probes.benchmarks.shitsukan.folder import Phrase, Record, TextureBenchmark, normalise_word
from probes.core.registry import register
from probes.core.types import AnswerKind, Item, Parsed, Status

BENCHMARK_ID = "shitsukan/generation"
WORDS_ASKED = 3
CHANCE_DRAWS = 8  # guesses per item offered to baseline/chance; few, as they enter its cache key
SEPARATORS = {"ja": "、", "en": ", "}

# Figure 3 of the paper, characters as SPEC.md quotes them; one sentence or bullet per line and
# blank lines where the figure has them (SPEC.md breaks "出来る/だけ" only to wrap its text).
PROMPT_JA = (
    "画像内にあるモノの「質感」を述べていただくタスクです。\n"
    "質感とは、下記のようなものを指します。\n"
    "・物性（光沢感・透明感など）\n"
    "・状態（乾燥・凍結など）\n"
    "・印象（美しい・醜いなど）\n"
    "画像に対して感じる質感を表す表現を３個「、」で分けて書いてください。\n"
    "\n"
    "その際、3個とも出来るだけ違う観点の表現にしてください。\n"
    "また、似た表現（きらきら・きらんきらんなど）にならないようにしてください。\n"
    "\n"
    "写真内にある「{object}」は、どのような質感を持っているように感じますか？"
)
# Our translation, sentence for sentence; "、" becomes the English comma.
PROMPT_EN = (
    'This is a task of describing the "texture" (shitsukan) of a thing in an image.\n'
    "By texture we mean things like the following:\n"
    "・Material properties (glossiness, transparency, etc.)\n"
    "・States (dry, frozen, etc.)\n"
    "・Impressions (beautiful, ugly, etc.)\n"
    'Write 3 expressions for the texture you perceive in the image, separated by ",".\n'
    "\n"
    "Make the 3 expressions as different in viewpoint from each other as possible.\n"
    'Also, avoid similar expressions (such as "sparkly" and "sparkly-sparkly").\n'
    "\n"
    'What kind of texture do you feel the "{object}" in the photo has?'
)
PROMPTS = {"ja": PROMPT_JA, "en": PROMPT_EN}


def match_rate(model_words: Sequence[str], human_words: Sequence[str]) -> float:
    """Eq. 2 for one item: the share of the model's words that people also wrote."""
    generated = {normalise_word(w) for w in model_words}
    human = {normalise_word(w) for w in human_words}
    return len(generated & human) / len(generated)


def well_formed(words: Sequence[str]) -> list[str] | None:
    """The words, tidied, if they are exactly three distinct words; None if malformed."""
    # "shiny, smooth, and red": the list's own "and" is not part of the last word.
    tidy = [re.sub(r"^(?:and|or)\s+", "", w.strip(), flags=re.IGNORECASE) for w in words]
    tidy = [w for w in tidy if normalise_word(w)]
    if len(tidy) != WORDS_ASKED or len({normalise_word(w) for w in tidy}) != WORDS_ASKED:
        return None
    return tidy


def chance_guesses(record: Record, pool: Sequence[Record], seed: int, lang: str) -> tuple[str, ...]:
    """A few replies a blind guesser could write: three distinct words from the whole folder."""
    vocabulary: list[Phrase] = []
    seen: set[str] = set()
    for other in pool:
        for word in other.words:
            if not word.keys & seen:
                vocabulary.append(word)
                seen |= word.keys
    if len(vocabulary) < WORDS_ASKED:
        return ()  # baseline/chance then reports the item as an error, naming why
    rng = random.Random(f"shitsukan:{seed}:{record.id}:chance:{lang}")
    draws = (rng.sample(vocabulary, WORDS_ASKED) for _ in range(CHANCE_DRAWS))
    return tuple(dict.fromkeys(SEPARATORS[lang].join(w.in_lang(lang) for w in draw) for draw in draws))


class TextureGeneration(TextureBenchmark):
    id = BENCHMARK_ID
    title = "Texture perception (shitsukan): write three texture words (match rate)"
    kind = AnswerKind.WORDS

    def make_items(self, records: Sequence[Record], pool: Sequence[Record], prefix: str) -> list[Item]:
        return [self._item(r, pool, lang, prefix) for r in records for lang in self.langs]

    def _item(self, record: Record, pool: Sequence[Record], lang: str, prefix: str) -> Item:
        name = record.object.in_lang(lang)
        return Item(
            benchmark=self.id,
            id=f"{prefix}{record.id}|{lang}",
            question=PROMPTS[lang].replace("{object}", name),
            images=(record.image,),
            kind=AnswerKind.WORDS,
            target=tuple(w.in_lang(lang) for w in record.words),
            groups={"lang": lang},
            params={"lang": lang, "seed": self.seed, "record": record.id, "object": name},
            seed=self.seed,
            answer_space=chance_guesses(record, pool, self.seed, lang),
        )

    def parse_reply(self, reply: str, item: Item) -> Parsed:
        parsed = super().parse_reply(reply, item)  # the shared word-list reader
        if parsed.status is not Status.ANSWERED:
            return parsed
        words = well_formed(parsed.value)
        return Parsed(words, Status.ANSWERED) if words else Parsed(None, Status.UNPARSED)

    def grade(self, item: Item, parsed: Parsed) -> tuple[bool | None, float | None]:
        if parsed.status is not Status.ANSWERED:
            return None, None  # malformed (or refused): out of the mean, counted by status
        return None, match_rate(parsed.value, item.target)

    def render_answer(self, example: Item, cot: bool) -> str:
        """An example's reply: its first three validated words, written as the prompt asks."""
        answer = SEPARATORS[example.params["lang"]].join(example.target[:WORDS_ASKED])
        if cot:
            marker = "答え：" if example.params["lang"] == "ja" else "Answer: "
            return f"{example.reasoning or ''}\n{marker}{answer}".strip()
        return answer


@register(BENCHMARK_ID)
def texture_generation(data: str | None = None, params: Mapping[str, Sequence[str]] | None = None):
    return TextureGeneration(data, params)
