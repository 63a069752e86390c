"""Where a reply changes its mind, and where it declines to commit.

- Self-corrections: "Yes. Wait, looking again ... so no", "I count 6 ... no wait, 7". The reply
  is cut at each correction cue (said at the start of a clause); the last part that holds an
  answer is read. A last part that only doubts ("Hmm, actually I'm not sure") withdraws the
  answer before it; one that neither answers nor doubts ("Actually, let me add: ...") leaves it.
- Doubts: "not sure", "hard to tell", "わかりません": they matter when nothing is committed after
  them, never as answers ("no idea" is not "no").
- Refusals: the model declines ("I'm sorry, I can't help with that"), in English or Japanese.
"""

from __future__ import annotations

import re

# Said at the start of a clause, these take back what came before. The first ones retract
# outright ("no wait", "correction"): if nothing readable follows them, nothing is answered. The
# others may only look again ("Actually, let me add ...", "Hmm"): if nothing follows them, what
# came before stands.
_RETRACTING = (
    r"no,?\s+wait|no,?\s+actually|no,?\s+sorry|correction|scratch\s+that|i\s+mean|my\s+mistake|i\s+was\s+wrong"
    r"|i\s+miscounted|rather"
)
_CUE_WORDS = (
    r"wait|hold\s+on|hmm+|oops|actually"
    r"|on\s+(?:second|further|closer|a\s+closer)\s+(?:thought|look|inspection|examination|glance)"
    r"|upon\s+(?:closer|further|second|a\s+closer)\s+(?:look|inspection|examination|thought)"
    r"|looking\s+(?:again|more\s+closely|closer|more\s+carefully|carefully\s+again|back)"
    r"|(?:let\s+me|i'?ll|i\s+will|i\s+need\s+to|i\s+should)\s+(?:re-?count|re-?check|double[- ]check|look\s+again"
    r"|check\s+again|count\s+again|reconsider|re-?examine|re-?evaluate|correct\s+(?:that|myself))"
    r"|re-?counting|(?:on|after|upon)\s+(?:a\s+)?re-?count(?:ing)?|but\s+on\s+recount"
)
_CUES = re.compile(
    r"(?:^|(?<=[.!?…\n,;:—–(\-])|(?<=[.!?…\n,;:—–(\-]\s)|(?<=\bbut\s)|(?<=\bso\s))\s*"
    r"(?:(?P<retract>" + _RETRACTING + r")|" + _CUE_WORDS + r")\b"
    # Japanese: "いや", "いえ", "訂正" retract; "待って", "やはり", "よく見ると", "改めて" look again.
    r"|(?:^|(?<=[。、…\n!?]))(?:(?P<retract_ja>いや|いえ|訂正)|待って|やはり|やっぱり|よく見ると|改めて|もう一度)",
    re.IGNORECASE,
)

DOUBT = re.compile(
    r"\bnot\s+(?:sure|certain|confident)\b|\bunsure\b|\buncertain\b|\bunclear\b"
    r"|\bcan(?:no|')?t\s+(?:tell|be\s+sure|say|determine|decide)|\bcannot\s+(?:tell|say|determine|decide)"
    r"|\b(?:hard|difficult|impossible)\s+to\s+(?:say|tell|determine|count|see)"
    r"|\bno\s+(?:idea|clue|way\s+to\s+(?:tell|know|say))\b|\b(?:wrong|incorrect|mistaken|a\s+mistake)\b"
    r"|わかりません|分かりません|判断できません|自信がありません|言えません|いえません",
    re.IGNORECASE,
)

_REFUSAL = re.compile(
    r"\b(?:can(?:no|')?t|cannot|won'?t(?:\s+be\s+able\s+to)?|will\s+not|unable\s+to|not\s+able\s+to)\s+"
    r"(?:help|assist|comply|fulfil+|engage|do\s+that|answer\s+that|respond\s+to\s+that|provide\s+(?:that|this|assistance|help))"
    r"|\bI\s+(?:must|have\s+to)\s+(?:decline|refuse)"
    r"|\bI(?:'m|\s+am)\s+not\s+(?:comfortable|going\s+to)\s"
    r"|\bagainst\s+(?:my|the)\s+(?:guidelines|polic(?:y|ies))"
    r"|お答え(?:することは)?できません|お答えしかねます|回答(?:することは)?できません|お手伝い(?:することは)?できません"
    r"|対応(?:することは)?できません|応じ(?:ることは|られ)(?:できません|ません)",
    re.IGNORECASE,
)


def is_refusal_text(text: str) -> bool:
    return bool(_REFUSAL.search(text))


def corrections(text: str) -> list[tuple[int, int, bool]]:
    """Each correction cue: (start, end, whether it retracts outright)."""
    return [
        (match.start(), match.end(), bool(match.group("retract") or match.group("retract_ja")))
        for match in _CUES.finditer(text)
    ]


def doubts(text: str) -> bool:
    return bool(DOUBT.search(text))
