"""How a class looks: the presenter's screen (the code, the link as a QR code, how many have
answered, the countdown), the reveal (the class's answers as bars beside the truth and each
model's answer) and the end of the lesson (the students' own page: assets/class/student.html).
HTML built here, every piece of text from a person or a model through `html.escape`."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import segno

from ui.scoreboard.style import CHANCE_COLOUR, PEOPLE_COLOUR, styled


def qr_svg(link: str) -> str:
    """The class's link as a QR code a phone's camera reads off a projector (segno, BSD)."""
    return segno.make(link, error="m").svg_inline(scale=7, dark="#111111", light="#ffffff", border=2)


def progress_line(status: Mapping[str, Any]) -> str:
    """Where the class is, as the presenter's screen says it (HTML): pushed to it as it changes."""
    pace = status.get("pace")
    if pace == "self-paced":
        return (f"{status['students']} students · {status['answers']} answers · "
                f"{status['done']} finished all {status['items']} items")  # fmt: skip
    if status.get("phase") == "lobby":
        return f"{status['students']} joined · press Next to show the first item"
    if status.get("phase") == "finished":
        return f"finished · {status['students']} students"
    line = f"item {status['index'] + 1} of {status['items']} · <b>{status['answered']} of {status['students']} answered</b>"
    left = status.get("seconds_left")
    if left is not None:
        line += f' · <span class="class-countdown">{left:.0f} s</span>'
    if status.get("phase") == "revealed":
        line += " · revealed"
    return line


def presenter_html(status: Mapping[str, Any], link: str = "", events: str = "", warning: str = "") -> str:
    """The code, the link (and why phones may not open it), and where the class is; `events`: the
    stream the page's script follows to redraw the progress line as answers arrive."""
    code = html.escape(status.get("code", ""))
    join = f'<div class="class-link">{html.escape(link)}</div>' if link else ""
    warned = f'<p class="class-warning class-reach">⚠ {html.escape(warning)}</p>' if warning else ""
    follow = f' data-class-events="{html.escape(events)}"' if events else ""
    return (f'<div class="class-presenter"><div class="class-code">Join with code <b>{code}</b></div>{join}{warned}'
            f'<div class="class-progress"{follow}>{progress_line(status)}</div></div>')  # fmt: skip


def reveal_html(shown: Mapping[str, Any]) -> str:
    """One item's reveal: a bar per answer (the truth marked), then each model's answer."""
    total = max(1, sum(entry["count"] for entry in shown["tally"]))
    truth = shown.get("truth")
    bars = []
    for entry in shown["tally"]:
        answer = str(entry["answer"])
        right = truth is not None and answer == truth
        width = 100 * entry["count"] / total
        bars.append(
            f'<div class="class-bar{" right" if right else ""}"><span class="label">{"✓ " if right else ""}'
            f'{html.escape(answer)}</span><span class="track"><span class="fill" style="width:{width:.1f}%">'
            f'</span></span><span class="count">{entry["count"]}</span></div>'
        )
    said = f"<p class=\"class-truth\">Right answer: <b>{html.escape(truth)}</b></p>" if truth else (
        '<p class="class-truth">No answer is right for this item.</p>')  # fmt: skip
    models = []
    for model, answer in shown.get("models", {}).items():
        mark = {True: "✓", False: "✗", None: "–"}[answer.get("correct")]
        chosen = html.escape(str(answer["answer"])) if answer.get("answer") is not None else "no answer"
        reply = html.escape(str(answer.get("reply") or ""))[:600]
        verdict = {True: "right", False: "wrong", None: "ungraded"}[answer.get("correct")]
        models.append(f'<li class="class-model {verdict}"><b class="who">{html.escape(model)}</b>: '
                      f'<span class="said">{mark} {chosen}</span><details><summary>reply</summary>'
                      f"<pre>{reply}</pre></details></li>")  # fmt: skip
    listed = f'<ul class="class-models">{"".join(models)}</ul>' if models else ""
    return f'<div class="class-reveal">{said}{"".join(bars)}{listed}</div>'


def results_html(results: Mapping[str, Any]) -> str:
    overall = results["overall"]
    rows = []
    own = overall["class"]
    rows.append(_row("the class", own))
    for model, share in overall["models"].items():
        rows.append(_row(model, share))
    for person in overall["people"]:
        rows.append(f"<tr><td>people in the paper ({html.escape(person['benchmark'])})</td>"
                    f"<td>{person['accuracy']:.1f}%</td><td>published</td></tr>")  # fmt: skip
    items = []
    for item in results["items"]:
        accuracy = "–" if item["accuracy"] is None else f"{item['accuracy']:.0f}%"
        marks = " ".join(
            f"{html.escape(m)} {dict([(True, '✓'), (False, '✗')]).get(a['correct'], '–')}"
            for m, a in item["models"].items()
        )
        items.append(f"<tr><td>{item['index'] + 1}</td><td>{html.escape(str(item['truth']))}</td>"
                     f"<td>{item['answered']}</td><td>{accuracy}</td><td>{marks}</td></tr>")  # fmt: skip
    return (
        '<div class="class-results"><h3>The class beside the models</h3><table><thead><tr><th></th>'
        "<th>accuracy</th><th>95% interval</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        "<h3>Item by item</h3><table><thead><tr><th>item</th><th>right answer</th><th>answers</th>"
        "<th>class right</th><th>models</th></tr></thead><tbody>" + "".join(items) + "</tbody></table></div>"
    )


def _row(who: str, share: Mapping[str, Any]) -> str:
    if share.get("accuracy") is None:
        return f"<tr><td>{html.escape(who)}</td><td>–</td><td>–</td></tr>"
    band = f"{share['ci_low']:.1f} to {share['ci_high']:.1f}"
    return f"<tr><td>{html.escape(who)}</td><td>{share['accuracy']:.1f}% of {share['n']}</td><td>{band}</td></tr>"


def curve_figure(fits: list[Mapping[str, Any]]) -> go.Figure | None:
    """The class's psychometric curve beside each model's, with each PSE and its interval."""
    if not fits:
        return None
    traces = []
    palette = ("#636EFA", "#EF553B", "#AB63FA", "#FFA15A", "#19D3F3")
    for index, fit in enumerate(sorted(fits, key=lambda f: f["who"] != "class")):
        colour = PEOPLE_COLOUR if fit["who"] == "class" else palette[index % len(palette)]
        points = fit["points"]
        traces.append({"type": "scatter", "mode": "markers", "name": fit["who"], "legendgroup": fit["who"],
                       "x": [p["x"] for p in points], "y": [p["proportion"] for p in points],
                       "marker": {"color": colour, "size": 8}, "showlegend": False})  # fmt: skip
        if fit["curve"]["x"]:
            traces.append({"type": "scatter", "mode": "lines", "name": fit["who"], "legendgroup": fit["who"],
                           "x": fit["curve"]["x"], "y": fit["curve"]["p"], "line": {"color": colour, "width": 3}})  # fmt: skip
        if fit.get("pse") is not None:
            low, high = fit.get("pse_low"), fit.get("pse_high")
            traces.append({"type": "scatter", "mode": "markers", "x": [fit["pse"]], "y": [0.5], "showlegend": False,
                           "marker": {"color": colour, "size": 13, "symbol": "diamond"},
                           "error_x": {"type": "data", "symmetric": False,
                                       "array": [0 if high is None else high - fit["pse"]],
                                       "arrayminus": [0 if low is None else fit["pse"] - low]},
                           "hovertext": [f"{fit['who']}: PSE {fit['pse']:+.3f}"], "hoverinfo": "text"})  # fmt: skip
    figure = go.Figure(data=traces, _validate=False)
    styled(figure, "The class's curve beside the models'", height=420)
    figure.update_layout(
        xaxis={"title": {"text": "difference (positive: the top or left target is bigger)"}},
        yaxis={"title": {"text": "chose that target"}, "range": [-0.04, 1.04], "tickformat": ".0%"},
        shapes=[{"type": "line", "x0": 0, "x1": 0, "y0": 0, "y1": 1, "xref": "x", "yref": "y domain",
                 "line": {"color": CHANCE_COLOUR, "dash": "dot", "width": 1}}],
    )  # fmt: skip
    return figure
