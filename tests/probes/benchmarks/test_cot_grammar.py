"""Chain-of-thought examples are part of the prompt a model sees: every worked reasoning text a
generated benchmark writes reads as a person writes it (number agreement, no empty lists, no
stray spaces), for the default design and for the parameters' small edge values."""

import re

import pytest

from probes.core.registry import generated_families, get_benchmark

NOUNS = r"(?:paths|squares|rows|columns|pixels|times|circles|pentagons|lines|points|letters|neighbours|words)"
SLIPS = {
    "a plural noun after 1": re.compile(rf"(?<![\d.])\b1 (?:[a-z-]+ )?{NOUNS}\b"),
    "a plural noun after 'one'": re.compile(rf"\bone {NOUNS}\b"),
    "a singular noun after a number above 1": re.compile(
        r"\b(?:[2-9]|\d{2,}) (?:[a-z-]+ )?(?:path|square|row|column|pixel|circle|pentagon|line|point)\b(?! ?\()"
    ),
    "a singular subject with a plural verb": re.compile(
        r"\b(?:path go|neighbour '[^']+' stay|circle overlap|circle meet)\b"
    ),
    "a plural subject with a singular verb": re.compile(r"\b(?:paths goes|neighbours '[^']+' stays)\b"),
    "one neighbour called neighbours": re.compile(r"\bneighbours '[^']+' stay"),
    "a space before punctuation": re.compile(r" [.,;:!?]"),
    "two spaces": re.compile(r"  "),
    "an empty list": re.compile(r": ?[.;]"),
    "a sentence starting in lower case": re.compile(r"[.!?] [a-z]"),
    "British and American spellings of one word": re.compile(r"coloured.*colored|colored.*coloured", re.DOTALL),
}

# Small edge values of each family's count parameters, where a text may say "1 ...".
EDGES = {
    "blind/olympic-circles": {"count": ["1", "2"]},
    "blind/olympic-pentagons": {"count": ["1", "2"]},
    "blind/grid-count": {"n": ["1", "2"], "canvas": ["500"]},
    "blind/nested-squares": {"depth": ["1", "2"], "repeats": ["2"]},
    "blind/circled-letter": {"word": ["Acknowledgement"], "letter": ["0", "1", "14"], "position": ["0"]},
    "blind/subway-paths": {"paths": ["1"], "maps": ["4"], "canvas": ["512"]},
    "blind/touching-circles": {"canvas": ["384"]},
    "blind/line-intersections": {"images": ["10"], "resolution": ["384"]},
}


def texts(benchmark_id: str) -> list[str]:
    found = [item.reasoning for item in get_benchmark(benchmark_id).examples()]
    if benchmark_id in EDGES:  # illusion items measure their pixels to reason: their examples suffice
        found += [item.reasoning for item in get_benchmark(benchmark_id, params=EDGES[benchmark_id]).items()]
    return list(dict.fromkeys(text for text in found if text))


@pytest.mark.parametrize("benchmark_id", sorted(generated_families()))
def test_every_reasoning_text_reads_as_a_person_writes(benchmark_id):
    written = texts(benchmark_id)
    assert written, f"{benchmark_id} writes no reasoning for its chain-of-thought examples"
    for text in written:
        assert text.endswith("."), text
        for slip, pattern in SLIPS.items():
            assert not pattern.search(text), f"{slip}: {text!r}"


def test_the_subway_examples_say_one_path_goes():
    said = " ".join(texts("blind/subway-paths"))
    assert "So 1 single-colored path goes from" in said and "single-colored path go " not in said
    assert re.search(r"So [23] single-colored paths go from", said)
