"""One of the item's options, named by its label ("b", "(b)", "Option B", "1番", "「1」",
"選択肢1") or by its text ("The right object", "光沢感です"), whole or by a fragment that fits one
option only ("Both." for "Both objects", "The right one is darker." for "No, the right one is
darker.").

A label and a text that name different options ("a. The right object", "1: 光沢感" when 1 is
ざらざら) are no answer. A reply that names two options ("the left object or both", "0か1") is
a hedge. The value is the option's index.
"""

from __future__ import annotations

import re
from functools import lru_cache

from probes.reading.common import ALTERNATIVE_GLUE, HEDGE, Context, Found, sentence_start, sentences

_STOPWORDS = frozenset(
    {"the", "a", "an", "of", "is", "are", "it", "its", "it's", "this", "that", "one", "ones", "object", "objects",
     "answer", "option", "choice", "i", "think", "to", "in", "on", "and", "with", "be", "there", "they", "them",
     "which", "what", "from", "image", "picture", "correct", "actually", "just", "only", "probably", "definitely",
     "clearly", "surely", "likely", "i'd", "say", "would", "go", "choose", "pick", "select", "my", "so"}
)  # fmt: skip
# Japanese endings after an answer: "0です。", "1番", "光沢感だと思います".
_JA_TAIL = r"(?:です|だ|である|番目?|でしょう|と思います|が(?:最も)?適切)"


# Each item's options and labels are read for every reply to it, several times per reply: what
# is derived from them alone is kept (by their text), and so are the simplified options.
@lru_cache(maxsize=1024)
def _labels_pattern_of(labels: tuple[str, ...]) -> str:
    return "|".join(re.escape(label) for label in sorted(labels, key=len, reverse=True))


def _labels_pattern(ctx: Context) -> str:
    return _labels_pattern_of(ctx.labels)


_NON_WORDS = re.compile(r"[\s\W_]+")
_SPACES = re.compile(r"\s+")
_ENDING = re.compile(r"(?:です|だ|である)?[。.!]*$")


# Options and questions are short and come again with every reply to their item; a reply may be
# 50,000 characters and rarely comes again: only short texts are kept (16,384 of at most
# `_KEPT_CHARS` each, a few MB), so a long-running app's memory does not grow with the replies read.
_KEPT_CHARS = 256


def _simplify(text: str) -> str:
    return _simplify_kept(text) if len(text) <= _KEPT_CHARS else _simplified(text)


def _simplified(text: str) -> str:
    return _NON_WORDS.sub(" ", text.casefold()).strip()


_simplify_kept = lru_cache(maxsize=16384)(_simplified)


def _light(text: str) -> str:
    """Case and spacing ignored, symbols kept ("1 > 2 = 3." and "1 = 2 = 3." stay apart)."""
    return _light_kept(text) if len(text) <= _KEPT_CHARS else _lightened(text)


def _lightened(text: str) -> str:
    text = _SPACES.sub(" ", text.casefold()).strip().strip("\"'“”‘’「」")
    return _ENDING.sub("", text).strip()


_light_kept = lru_cache(maxsize=16384)(_lightened)


def _exact(text: str, ctx: Context) -> int | None:
    """The one option whose whole text the reply is (symbols kept, then ignored)."""
    light = _light(text)
    kept = [i for i, o in enumerate(ctx.options) if _light(o) == light]
    if len(kept) == 1:
        return kept[0]
    simple = _simplify(light)
    loose = [i for i, o in enumerate(ctx.options) if _simplify(o) == simple]
    return loose[0] if len(loose) == 1 else None


def _is_cjk(text: str) -> bool:
    return bool(re.search(r"[\u3040-\u30ff\u3400-\u9fff]", text))


@lru_cache(maxsize=1024)
def _mention_patterns(options: tuple[str, ...]) -> tuple[tuple[int, tuple[str, ...], str], ...]:
    """(index, words, pattern) of each option whose text can be told apart from the others'."""
    simple_options = [_simplify(o) for o in options]
    found = []
    for index, option in enumerate(options):
        words = simple_options[index]
        if not words or simple_options.count(words) > 1:
            continue  # options that read alike cannot be told apart by their text
        pattern = r"[\s\W_]+".join(re.escape(w) for w in words.split())
        if not _is_cjk(option):
            pattern = rf"(?<!\w){pattern}(?!\w)"
        found.append((index, tuple(words.split()), pattern))
    return tuple(found)


def _option_mentions(text: str, ctx: Context) -> list[Found]:
    """Where an option's whole text is said (word-bounded unless it is Japanese)."""
    found = []
    lowered = text.casefold()
    for index, words, pattern in _mention_patterns(ctx.options):
        if not all(word in lowered for word in words):
            continue  # the pattern is those words, literally: it cannot match
        for match in re.finditer(pattern, lowered):
            found.append(Found(index, match.start(), match.end()))
    # An option said inside another option's text ("object" in "both objects") is not a mention:
    # one sweep, longest first at each start, keeps the mentions no earlier one covers.
    found.sort(key=lambda f: (f.start, -f.end))
    kept: list[Found] = []
    reach = -1
    for mention in found:
        if mention.end <= reach:
            continue
        kept.append(mention)
        reach = max(reach, mention.end)
    return kept


def _fragment(text: str, ctx: Context, contiguous_only: bool = False) -> int | None:
    """The one option a short reply is a piece of: "Both.", "Same size.", "The right one". The
    piece must hold a word only that option has (never a bare number: "2" is no fragment of
    "The number 2.")."""
    if len(text) > 200:
        return None
    simple = _simplify(text)
    words = simple.split()
    if not words or len(words) > 8 or all(w in _STOPWORDS for w in words):
        return None
    distinctive = _distinctive(ctx)
    options = [_simplify(o) for o in ctx.options]
    holders = [i for i, o in enumerate(options) if f" {simple} " in f" {o} "]
    if len(holders) == 1 and any(distinctive.get(w) == holders[0] for w in words):
        return holders[0]
    if contiguous_only:
        return None
    # A short reply whose first content word belongs to one option only, and which names no
    # other ("left object", "Both are impossible" when no other option says "both").
    content = [w for w in words if w not in _STOPWORDS]
    named = {distinctive[w] for w in content if w in distinctive}
    if len(named) == 1 and content and content[0] in distinctive:
        return named.pop()
    return None


def _distinctive(ctx: Context) -> dict[str, int]:
    """Words that appear in exactly one option's text (not stopwords). Read only: it is shared."""
    return _distinctive_of(ctx.options)


@lru_cache(maxsize=1024)
def _distinctive_of(options: tuple[str, ...]) -> dict[str, int]:
    owners: dict[str, set[int]] = {}
    for index, option in enumerate(options):
        for word in set(_simplify(option).split()):
            if word not in _STOPWORDS:
                owners.setdefault(word, set()).add(index)
    return {word: next(iter(held)) for word, held in owners.items() if len(held) == 1 and not word.isdigit()}


def _text_after_label(rest: str, ctx: Context) -> int | None | object:
    """What the words after a label name: an option index, None (nothing), HEDGE (unclear)."""
    line = rest.split("\n", 1)[0].strip(" \t.:)-–—(）」")
    line = re.sub(r"^(?:です|番)", "", line).strip(" 。.:(（「」)）")
    if not line:
        return None
    exact = _exact(line, ctx)
    if exact is not None:
        return exact
    mentions = {f.value for f in _option_mentions(line, ctx)}
    if len(mentions) == 1:
        return mentions.pop()
    fragment = _fragment(line, ctx)
    return fragment


def _label_at(text: str, ctx: Context) -> Found | None:
    """A label that opens the text: "b", "(b)", "b. The right object", "Option D", "0です", "1番",
    "「1」", "3 - transparent"."""
    if not ctx.labels:
        return None
    labels = _labels_pattern(ctx)
    match = re.match(
        r"[\s\"'“‘*(\[:「【-]*(?:(?:option|choice|answer)\s*|選択肢\s*)?\(?(" + labels + r")"
        r"(?=[.):\]」】,]|\s*$|[ \t]*\n|\s+[-–—:(]|\s*\(|" + _JA_TAIL + r"|[。、:：]|\s+(?:because|since|as)\b)",
        text,
        re.IGNORECASE,
    )
    if not match:
        return None
    index = ctx.labels.index(match.group(1).lower())
    said = _text_after_label(text[match.end() :], ctx)
    if said is HEDGE or (said is not None and said != index):
        return Found(HEDGE, match.start(1), match.end(1))
    return Found(index, match.start(1), match.end(1))


def _label_mentions(text: str, ctx: Context) -> list[Found]:
    """Labels named as labels anywhere: "option b", "(b)", "選択肢1", "「1」", "2です", "1番"."""
    if not ctx.labels:
        return []
    labels = _labels_pattern(ctx)
    digits = all(label.isdigit() for label in ctx.labels)
    pattern = (
        r"\b(?:option|choice)\s*\(?(" + labels + r")\)?(?!\w)|(?<!\w)\((" + labels + r")\)|選択肢\s*(" + labels + r")"
        r"|「(" + labels + r")」"
    )
    if digits:
        # Japanese: "2です", "1番", "2が最も適切", "2を選", and "0の光沢感" (a label then its own text).
        pattern += r"|(?<![A-Za-z0-9.])(" + labels + r")(?=" + _JA_TAIL + r"|を選|が)"
        pattern += r"|(?<![A-Za-z0-9.])(" + labels + r")\s*の\s*「?(?P<text>[^\s」。、]{1,20})"
    found = []
    for match in re.finditer(pattern, text, re.IGNORECASE):
        label = next(g for g in match.groups()[:6] if g)
        index = ctx.labels.index(label.lower())
        if match.groupdict().get("text"):
            if _text_after_label(match.group("text"), ctx) != index:
                continue
        found.append(Found(index, match.start(), match.end()))
    return found


def strict(text: str, ctx: Context) -> int | object | None:
    label = _label_at(text, ctx)
    if label is not None:
        return label.value
    if not ctx.options:
        return None
    first = re.split(r"(?<=[.。!?])\s|\n", text, maxsplit=1)[0]
    said = _text_after_label(first, ctx)
    return said


def whole(text: str, ctx: Context) -> int | object | None:
    """A line that is only an answer: a label (with its own option's text, or nothing, after it)
    or an option's text ("光沢感です。")."""
    stripped = text.strip()
    label = _label_at(stripped, ctx)
    if label is not None:
        rest = stripped[label.end :]
        if not rest.strip(" \t\"'”’)]」】.!。:：-–—") or re.fullmatch(r"[\s.)\]:：」–—-]*(?:です|番)?[。.!]*", rest):
            return label.value
        if label.value is not HEDGE and _text_after_label(rest, ctx) == label.value:
            return label.value
        return HEDGE if label.value is HEDGE else None
    if ctx.options:
        return _exact(re.sub(_JA_TAIL + r"[。.!]*$", "", stripped), ctx)
    return None


def loose(text: str, ctx: Context) -> Found | object | None:
    opening = _label_at(text, ctx)
    if opening is not None:
        return opening
    whole_text = whole(text, ctx)
    if whole_text is not None and whole_text is not HEDGE:
        return Found(whole_text, 0, len(text))
    named = _label_mentions(text, ctx)
    said = _option_mentions(text, ctx) if ctx.options else []
    if named and said and len({f.value for f in named}) == 1 and {f.value for f in said} - {named[0].value}:
        return HEDGE  # "Neither object. (c)": the label and the text disagree
    reading = _named_once(text, named, said, ctx)
    if reading is not None:
        return reading
    # Reasoning that weighs several options, then concludes: "... Therefore, the right object is
    # geometrically impossible." The conclusion alone is read.
    conclusions = list(_CONCLUSION.finditer(text))
    conclusion = conclusions[-1] if conclusions else None
    if conclusion is not None:
        end = re.search(r"[.!?\n]|$", text[conclusion.end() :])
        tail_end = conclusion.end() + (end.start() if end else 0)
        tail = text[conclusion.end() : tail_end]
        if tail.strip():
            found = _named_once(tail, _label_mentions(tail, ctx), _option_mentions(tail, ctx), ctx)
            if found is not None and found is not HEDGE:
                return Found(found.value, conclusion.end() + found.start, conclusion.end() + found.end)
    if ctx.options and not named and not said:
        fragment = _fragment(text, ctx)
        if fragment is not None:
            return Found(fragment, 0, len(text))
    return None


_CONCLUSION = re.compile(
    r"\b(?:therefore|thus|hence|so|in\s+conclusion|overall|consequently|as\s+a\s+result|this\s+means(?:\s+that)?"
    r"|which\s+means(?:\s+that)?|i\s+conclude(?:\s+that)?|it\s+is\s+clear\s+that)\b\s*,?",
    re.IGNORECASE,
)


def _named_once(text: str, named: list[Found], said: list[Found], ctx: Context) -> Found | None:
    """The one option a text names (by label, or by its text with no other option hinted at)."""
    values = {f.value for f in named} | {f.value for f in said}
    if len(values) != 1:
        return None
    last = max(named + said, key=lambda f: f.start)
    if named:
        return last
    if not _about_the_question(text, last, ctx):
        return None
    # An option's text in a longer reply names it only if no other option is hinted at ("The
    # left object is impossible, and so is the right one").
    said_words = set(_simplify(text).split())
    others = {i for w, i in _distinctive(ctx).items() if w in said_words}
    return None if others - {last.value} else last


def _about_the_question(text: str, mention: Found, ctx: Context) -> bool:
    """Whether an option named in a sentence is said to answer the question: the sentence holds
    one of the question's own content words ("The left object is impossible") or is the option
    alone. "The left object appears to be a regular cube" names an option but answers nothing."""
    option = ctx.options[mention.value]
    if _is_cjk(option) or not ctx.question:
        return True
    start = sentence_start(text, mention.start)
    end = re.search(r"[.!?\n]|$", text[mention.end :])
    sentence = _simplify(text[start : mention.end + (end.start() if end else 0)])
    rest = sentence.replace(_simplify(option), " ").split()
    if not [w for w in rest if w not in _STOPWORDS]:
        return True
    asked = {w[:6] for w in _simplify(ctx.question).split() if len(w) >= 4 and w not in _STOPWORDS}
    asked -= {w[:6] for w in _simplify(option).split()}
    return any(w[:6] in asked for w in rest)


def consistent_before(text: str, value: int, ctx: Context) -> bool:
    """Whether the short sentence just before a marked answer, if it is itself an answer, names
    the same option ("The left one is darker. Answer: d" names two)."""
    spans = [(a, b) for a, b in sentences(text) if text[a:b].strip()]
    if not spans or not ctx.options:
        return True
    start, end = spans[-1]
    sentence = text[start:end].strip()
    if not sentence or len(sentence.split()) > 8:
        return True
    said = whole(sentence, ctx)
    if said is None:
        said = _fragment(sentence, ctx, contiguous_only=True)
    return said is None or said == value


def confirms(text: str, ctx: Context) -> Found | object | None:
    named = _label_mentions(text, ctx)
    if len({f.value for f in named}) == 1:
        return named[-1]
    return None


def hedged(zone: str, ctx: Context) -> bool:
    mentions = sorted(_label_mentions(zone, ctx) + _option_mentions(zone, ctx), key=lambda f: f.start)
    bare = _bare_labels(zone, ctx)
    for group in (mentions, bare):
        for first, second in zip(group, group[1:], strict=False):
            if first.value != second.value and ALTERNATIVE_GLUE.fullmatch(zone, first.end, second.start):
                return True
    return bool(re.search(r"どちらか|いずれか", zone))


def _bare_labels(text: str, ctx: Context) -> list[Found]:
    """Labels standing alone ("b or c", "0か1"), for finding alternatives only."""
    if not ctx.labels:
        return []
    labels = _labels_pattern(ctx)
    return [
        Found(ctx.labels.index(m.group(1).lower()), m.start(), m.end())
        for m in re.finditer(r"(?<![A-Za-z0-9])\(?(" + labels + r")\)?(?![A-Za-z0-9])", text, re.IGNORECASE)
    ]


def protected(text: str, ctx: Context) -> list[tuple[int, int]]:
    """Spans that are an option's own text: words there ("rather", "Upon closer inspection") are
    the option's, not the reply's self-corrections."""
    return [(f.start, f.end) for f in _option_mentions(text, ctx)] if ctx.options else []


def same(a: int, b: int) -> bool:
    return a == b
