"""Finding a key in text a server sent back, in any form a server could return it.

A server that echoes the request (its headers, an error page quoting the key) can hand the key
back exact, upper- or lower-cased, reversed, split by whitespace or line breaks, masked
("sk-...abcd", "sk-proj-****wxyz"), hex-encoded or base64-encoded, alone or inside an encoded
"Bearer <key>" or "<user>:<key>". `redact_secrets` removes all of these. Fragments count too: a
run of 8 characters of a key (or of its encodings) is already more of it than anyone should see.

Matching works on the text with whitespace, invisible characters and backslashes (JSON's "\\/")
taken out, so a key split across lines or spaces is found as well; what is removed is the
whole stretch of the original text, and the rest of the token it sits in.
"""

from __future__ import annotations

import base64
import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

FRAGMENT = 8  # characters of a key (or its base64) that count as a leak on their own
HEX_FRAGMENT = 16  # hex digits: 8 bytes of the key
FUZZY_MIN = 12  # shorter secrets are matched whole (case, whitespace, reversed) but not by fragment
SUFFIX_MIN = 4  # a standalone token equal to a key's last 4+ characters ("key ending in abcd")
MASKED_VISIBLE_MIN = 4  # a masked key showing at least this many of its characters

REDACTED = "[redacted]"

# Taken out before matching: whitespace (keys split over lines), zero-width and soft-hyphen
# characters (invisible splits), escaped line breaks and tabs (an error quoted as a Python or
# JSON string shows "\n" as a backslash and an n) and other backslashes (JSON's "\/").
_SEPARATORS = re.compile(r"(?:[\s\u00ad\u200b-\u200f\u2060\ufeff]|\\[nrt]|\\)+")
# What a redaction grows over in the original text, so no piece of a key (or of its base64)
# survives beside it.
_KEY_CHAR = re.compile(r"[A-Za-z0-9_\-]")
_BASE64_CHAR = re.compile(r"[A-Za-z0-9+/=_\-]")
_KEY_CHARS = r"A-Za-z0-9_\-"
_MASK = r"(?:\*+|•+|●+|·{2,}|…+|\.{2,}|x{4,}|X{4,}|#{3,})"
_MASK_RUN = re.compile(_MASK)
_MASK_SIGNS = ("*", "•", "●", "··", "…", "..", "xxxx", "XXXX", "###")  # no mask without one of these
_MASKED_CHAR = re.compile(rf"[{_KEY_CHARS}*•●·…#]")


@dataclass(frozen=True)
class _Search:
    """Fragments of one length to look for, on the lower-cased text (`folded`: a key, reversed
    or not, and its hex) or on the text as it is (base64, whose case is its content)."""

    folded: bool
    size: int
    fragments: frozenset[str]
    anchors: frozenset[str]  # every piece of half the size of the strings fragments come from
    grows_over: re.Pattern


@dataclass(frozen=True)
class _Matcher:
    searches: tuple[_Search, ...]
    keys: tuple[str, ...]  # lower-cased secrets long enough for the masked rule
    endings: re.Pattern | None  # a word that is one of their last few characters


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """`text` with every form of every secret in `secrets` replaced by "[redacted]"."""
    chosen = tuple(sorted({s for s in secrets if s}, key=lambda s: (-len(s), s)))
    if not text or not chosen:
        return text
    matcher = _matcher(chosen)
    spans = _fragment_spans(text, matcher) + _masked_spans(text, matcher.keys) + _suffix_spans(text, matcher.endings)
    return _replace(text, spans)


@lru_cache(maxsize=64)
def _matcher(secrets: tuple[str, ...]) -> _Matcher:
    sources: dict[tuple[bool, int], set[str]] = {}  # (folded, fragment size) -> strings to cut
    keys = []
    for secret in secrets:
        lower = secret.lower()
        if len(secret) < FUZZY_MIN:  # a short secret: whole, in any case, either direction
            sources.setdefault((True, len(secret)), set()).update({lower, lower[::-1]})
            continue
        keys.append(lower)
        sources.setdefault((True, FRAGMENT), set()).update({lower, lower[::-1]})
        sources.setdefault((True, HEX_FRAGMENT), set()).add(secret.encode().hex())
        sources.setdefault((False, FRAGMENT), set()).update(_base64_cores(secret.encode()))
    searches = tuple(
        _Search(
            folded,
            size,
            frozenset(g for source in strings for g in _grams(source, size)),
            frozenset(g for source in strings for g in _grams(source, size // 2)),
            _KEY_CHAR if folded else _BASE64_CHAR,
        )
        for (folded, size), strings in sorted(sources.items())
    )
    endings = sorted({key[-size:] for key in keys for size in range(SUFFIX_MIN, FRAGMENT)}, key=len, reverse=True)
    words = "|".join(map(re.escape, endings))
    pattern = re.compile(rf"(?<![{_KEY_CHARS}])(?:{words})(?![{_KEY_CHARS}])", re.IGNORECASE) if endings else None
    return _Matcher(searches, tuple(keys), pattern)


def _grams(text: str, size: int) -> set[str]:
    return {text[i : i + size] for i in range(len(text) - size + 1)}


def _base64_cores(data: bytes) -> list[str]:
    """The base64 characters that any encoding of a text holding `data` must contain, whatever
    comes before it ("Bearer ", "user:", a JSON object): for each of the three alignments, the
    characters made of `data`'s bits alone; in the standard and the URL-safe alphabets."""
    cores = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data + b"\0\0").decode("ascii")
        first = -(-8 * offset // 6)  # the first character whose 6 bits all come from `data`
        last = (8 * (offset + len(data))) // 6  # one past the last such character
        core = encoded[first:last]
        cores += [core, core.replace("+", "-").replace("/", "_")]
    return cores


def _fragment_spans(text: str, matcher: _Matcher) -> list[tuple[int, int]]:
    """Stretches of `text` holding a fragment of a secret, once whitespace and the like are out."""
    squeezed = _SEPARATORS.sub("", text)
    lowered = squeezed.lower()
    found = [
        (search, hits) for search in matcher.searches if (hits := _hits(lowered if search.folded else squeezed, search))
    ]
    if not found:
        return []
    # squeezed index -> original index, from where each piece between separators starts in both.
    starts_squeezed, starts_original, at, kept = [0], [0], 0, 0
    for separator in _SEPARATORS.finditer(text):
        kept += separator.start() - at
        at = separator.end()
        starts_squeezed.append(kept)
        starts_original.append(at)

    def original(index: int) -> int:
        k = bisect.bisect_right(starts_squeezed, index) - 1
        return starts_original[k] + index - starts_squeezed[k]

    return [
        _grown(text, original(start), original(end - 1) + 1, search.grows_over)
        for search, hits in found
        for start, end in _merged(hits)
    ]


def _hits(haystack: str, search: _Search) -> list[tuple[int, int]]:
    """Where `haystack` holds one of the search's fragments. Only every `half`-th position is
    looked up at first: a fragment of `size` characters always covers one of them with a piece
    of `half` characters of its own, so the windows around such an anchor are all there is to
    check (four times fewer lookups for 8-character fragments)."""
    size, half = search.size, max(1, search.size // 2)
    hits = []
    for anchor in range(0, len(haystack) - half + 1, half):
        if haystack[anchor : anchor + half] not in search.anchors:
            continue
        for start in range(max(0, anchor + half - size), min(anchor, len(haystack) - size) + 1):
            if haystack[start : start + size] in search.fragments:
                hits.append((start, start + size))
    return hits


def _masked_spans(text: str, keys: Sequence[str]) -> list[tuple[int, int]]:
    """Masked forms ("sk-...abcd", "****wxyz", "sk-proj-AbC1****xyZ9"): the characters shown
    are a key's own, in its order, starting at its start (or after a mask) and ending at its end
    (or before a mask), and there are at least MASKED_VISIBLE_MIN of them."""
    if not keys or not any(mask in text for mask in _MASK_SIGNS):
        return []
    spans = []
    end = 0
    # From each mask, the token around it (grown character by character: a regex that looks
    # for a mask inside a long run would go back and forth over the run, quadratic in it).
    for mask in _MASK_RUN.finditer(text):
        if mask.start() < end:
            continue  # inside the token just looked at
        start, end = mask.start(), mask.end()
        while start > 0 and _in_masked_token(text, start - 1):
            start -= 1
        while end < len(text) and _in_masked_token(text, end):
            end += 1
        fragments = _MASK_RUN.split(text[start:end].lower())
        if sum(map(len, fragments)) >= MASKED_VISIBLE_MIN and any(_shown_by(key, fragments) for key in keys):
            spans.append((start, end))
    return spans


def _in_masked_token(text: str, index: int) -> bool:
    """A key's character, a mask's, or a dot of a run of dots (one dot ends a sentence)."""
    if text[index] == ".":
        return text[index - 1 : index] == "." or text[index + 1 : index + 2] == "."
    return bool(_MASKED_CHAR.match(text[index]))


def _shown_by(key: str, fragments: list[str]) -> bool:
    """Whether `fragments` (split by masks; "" where the token starts or ends with a mask) are
    what a masked `key` shows."""
    if fragments[0] and not key.startswith(fragments[0]):
        return False
    if fragments[-1] and not key.endswith(fragments[-1]):
        return False
    at = 0
    for fragment in fragments:
        found = key.find(fragment, at)
        if found < 0:
            return False
        at = found + len(fragment)
    return True


def _suffix_spans(text: str, endings: re.Pattern | None) -> list[tuple[int, int]]:
    """A word that is a key's last few characters ("the key ending in 9xQa"). Longer stretches
    are fragments, found above."""
    return [m.span() for m in endings.finditer(text)] if endings is not None else []


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _grown(text: str, start: int, end: int, grows_over: re.Pattern) -> tuple[int, int]:
    """The span grown over the token it sits in: no piece of an encoded key is left beside it."""
    while start > 0 and grows_over.match(text[start - 1]):
        start -= 1
    while end < len(text) and grows_over.match(text[end]):
        end += 1
    return start, end


def _replace(text: str, spans: list[tuple[int, int]]) -> str:
    if not spans:
        return text
    out, at = [], 0
    for start, end in _merged(spans):
        out += [text[at:start], REDACTED]
        at = end
    out.append(text[at:])
    return "".join(out)
