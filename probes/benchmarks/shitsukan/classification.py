"""`shitsukan/classification`: pick the texture word that fits an object in a photo, among N.

What it probes: whether a model perceives texture (質感: material properties such as gloss and
transparency, states such as dry or frozen, impressions such as beautiful or ugly) the way people
do. Source: Matsuda et al., 大規模視覚言語モデルの質感知覚能力の分析, section 3, Figure 2 and
Table 1 (seed 001; SPEC.md section 3).

Each record of the folder (see `folder.py`) gives one item per N and language: 1 word people
validated for this object in this image (the positive) and N-1 words drawn from OTHER records'
validated words (the paper: "これ以外のサンプルから無作為に抽出"), listed as `0: word` lines in a
shuffled order; the model answers with the option's half-width digit (a full-width １ or "答え：2"
reads too). Distractors are never a word validated for this record or for another record of the
same object name (such a word may well fit), and the record's own `negatives` (words known not to
fit) are used first. The draw is language-independent, so `lang=ja` and `lang=en` items ask the
same question, and nested: the 2-choice distractor is the first of the 5-choice ones.

Parameters (`--param NAME=V1,V2`):
- `n`: options per item, default `2,5` as in the paper (2 to 10).
- `lang`: `ja` (default; the paper's Figure 2 prompt) or `en` (our translation, not the paper's).
- `seed`: default 0; the same seed and folder always give the same items.
Groups: `n` and `lang`. Chance is 100/N: 50 for n=2 and 20 for n=5 (the paper's "Random" row,
kept as published rows per group). The `chance` attribute is that number when one N is asked and
None otherwise: a report's overall row then mixes Ns, and a single number would mislead.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from probes.benchmarks.shitsukan.folder import FolderError, Phrase, Record, TextureBenchmark, normalise_word
from probes.core.errors import BenchmarkError
from probes.core.registry import register
from probes.core.types import AnswerKind, Item, LabelStyle

BENCHMARK_ID = "shitsukan/classification"
DEFAULT_N = ("2", "5")
MAX_N = 10  # single-digit labels 0-9

# Figure 2 of the paper, characters as SPEC.md quotes them; one sentence or bullet per line and
# blank lines where the figure has them (SPEC.md's own line breaks are just its text wrapping).
PROMPT_JA = (
    "画像内にあるモノの「質感」を選択していただくタスクです。\n"
    "質感とは、下記のようなものを指します。\n"
    "・物性（光沢感・透明感など）\n"
    "・状態（乾燥・凍結など）\n"
    "・印象（美しい・醜いなど）\n"
    "与えられた表現の中で、指定された物体に対して最も適切と感じる表現を選択してください。\n"
    "\n"
    "写真内にある{object}に対して最も適切な質感を選択してください。\n"
    "\n"
    "解答の際には、選択肢に対応する半角数字を使って解答してください。"
)
# Our translation, sentence for sentence.
PROMPT_EN = (
    'This is a task of choosing the "texture" (shitsukan) of a thing in an image.\n'
    "By texture we mean things like the following:\n"
    "・Material properties (glossiness, transparency, etc.)\n"
    "・States (dry, frozen, etc.)\n"
    "・Impressions (beautiful, ugly, etc.)\n"
    "Among the given expressions, choose the one you feel is most appropriate for the specified object.\n"
    "\n"
    "Choose the most appropriate texture for the {object} in the photo.\n"
    "\n"
    "When answering, use the half-width digit (0, 1, 2, ...) that corresponds to the option."
)
PROMPTS = {"ja": PROMPT_JA, "en": PROMPT_EN}


def positive_word(record: Record, seed: int) -> Phrase:
    """The validated word asked about; the same for every N, so 2- and 5-choice items compare."""
    return random.Random(f"shitsukan:{seed}:{record.id}:positive").choice(record.words)


def distractors(record: Record, pool: Sequence[Record], seed: int) -> list[Phrase]:
    """Every usable distractor for `record`, best first: its own `negatives` (shuffled), then
    other records' validated words in a seeded random order. N-choice items take the first N-1.

    Drawing over other records' words with repeats weights a word by how many samples hold it,
    as drawing samples does in the paper; each word is then kept once.
    """
    rng = random.Random(f"shitsukan:{seed}:{record.id}:negatives")
    own_words = _keys(record.words)
    same_object = normalise_word(record.object.text)
    fitting = own_words.union(*(_keys(r.words) for r in pool if normalise_word(r.object.text) == same_object))
    known_wrong = list(record.negatives)
    rng.shuffle(known_wrong)
    others = [word for other in pool if other.id != record.id for word in other.words]
    rng.shuffle(others)
    chosen: list[Phrase] = []
    taken: set[str] = set()
    for word, excluded in [*((w, own_words) for w in known_wrong), *((w, fitting) for w in others)]:
        if word.keys & (excluded | taken):
            continue
        chosen.append(word)
        taken |= word.keys
    return chosen


def options_for(record: Record, pool: Sequence[Record], seed: int, n: int) -> tuple[list[Phrase], int]:
    """The N options in asking order, and the index of the positive among them."""
    positive = positive_word(record, seed)
    negatives = distractors(record, pool, seed)[: n - 1]
    if len(negatives) < n - 1:
        raise FolderError(
            f"{record.where}: a {n}-choice item needs {n - 1} distractors; only {len(negatives)} words from "
            "other lines (and this line's `negatives`) are usable. Add records or `negatives`, or use a smaller n"
        )
    options = [positive, *negatives]
    random.Random(f"shitsukan:{seed}:{record.id}:order:{n}").shuffle(options)
    return options, options.index(positive)


def _keys(words: Sequence[Phrase]) -> frozenset[str]:
    return frozenset().union(*(w.keys for w in words))


class TextureClassification(TextureBenchmark):
    id = BENCHMARK_ID
    title = "Texture perception (shitsukan): pick the fitting texture word among N"
    kind = AnswerKind.CHOICE
    label_style = LabelStyle.DIGIT0
    task_params = ("n",)

    def __init__(self, data: str | None = None, params: Mapping[str, Sequence[str]] | None = None):
        super().__init__(data, params)
        self.ns = _ns((params or {}).get("n", DEFAULT_N))
        self.chance = 100 / self.ns[0] if len(self.ns) == 1 else None

    def make_items(self, records: Sequence[Record], pool: Sequence[Record], prefix: str) -> list[Item]:
        return [self._item(r, pool, n, lang, prefix) for r in records for n in self.ns for lang in self.langs]

    def _item(self, record: Record, pool: Sequence[Record], n: int, lang: str, prefix: str) -> Item:
        options, target = options_for(record, pool, self.seed, n)
        name = record.object.in_lang(lang)
        return Item(
            benchmark=self.id,
            id=f"{prefix}{record.id}|n={n}|{lang}",
            question=PROMPTS[lang].replace("{object}", name),
            images=(record.image,),
            kind=AnswerKind.CHOICE,
            target=target,
            options=tuple(o.in_lang(lang) for o in options),
            label_style=LabelStyle.DIGIT0,
            groups={"n": str(n), "lang": lang},
            params={
                "n": n,
                "lang": lang,
                "seed": self.seed,
                "record": record.id,
                "object": name,
                "positive": options[target].in_lang(lang),
            },
            seed=self.seed,
        )

    def render_question(self, item: Item) -> str:
        lines = [f"{label}: {text}" for label, text in zip(item.labels, item.options, strict=True)]
        return item.question + "\n" + "\n".join(lines)


def _ns(values: Sequence[str]) -> tuple[int, ...]:
    try:
        ns = tuple(dict.fromkeys(int(v) for v in values))
    except ValueError:
        raise BenchmarkError(f"--param n={','.join(values)}: whole numbers, e.g. n=2,5") from None
    if not ns or any(not 2 <= n <= MAX_N for n in ns):
        raise BenchmarkError(f"--param n={','.join(values)}: each N must be 2 to {MAX_N}")
    return ns


@register(BENCHMARK_ID)
def texture_classification(data: str | None = None, params: Mapping[str, Sequence[str]] | None = None):
    return TextureClassification(data, params)
