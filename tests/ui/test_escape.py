"""Model text shown through Markdown: every character as itself, nothing rendered."""

from ui.common import escape


def test_markup_is_neutralised_and_entities_stay_whole():
    assert escape('it\'s "x" <b>') == "it&#x27;s &quot;x&quot; &lt;b&gt;"  # no backslash inside an entity
    assert escape("> quoted") == "&gt; quoted"
    assert escape("# **b** [l](u) 1. `c`") == r"\# \*\*b\*\* \[l\]\(u\) 1\. \`c\`"
    assert escape("a\\&b") == "a\\\\&amp;b"
    assert escape("one\ntwo") == "one  \ntwo"
