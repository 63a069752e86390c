"""Projector mode: a layout for a room, not a second UI. One switch beside the title and one
address parameter (`?projector=1`, so a bookmark opens it) put the class `projector` on the page's
root; assets/app.css then lays the Probe and the Class tab out for the back row under that one
scope (`html.projector ...`), with sizes in rem: the root's font size is the one number that
scales the stage. The Probe's controls go under its stage (the stage gets the whole width), the
grid shrinks its columns and wraps its words instead of scrolling sideways, and the class's
picture gets what the window leaves under it once the reveal is drawn (the script below, as
ui/probe/stage.py does for the Probe's picture)."""

from __future__ import annotations

from typing import Any

import gradio as gr

PARAMETER = "projector"  # the address parameter: `?projector=1` opens the page in projector mode
SCOPE = "projector"  # the class on <html> that assets/app.css scopes projector mode under
CLASS_MIN_PX = 150  # the class's picture is never drawn smaller than this: the page scrolls instead

# Read from the address as the page opens (before Gradio draws it: no flash of the desk layout),
# and, in projector mode, the class's picture sized to what the window leaves under it.
_SCRIPT = r"""
(() => {
  if (window.projectorMode) return;
  const OFF = ["0", "false", "off", "no"];
  const wanted = () => {
    const value = new URLSearchParams(location.search).get("__PARAMETER__");
    return value !== null && !OFF.includes(value.trim().toLowerCase());
  };
  const apply = (on) => {
    document.documentElement.classList.toggle("__SCOPE__", !!on);
    const url = new URL(location.href);
    if (on) url.searchParams.set("__PARAMETER__", "1"); else url.searchParams.delete("__PARAMETER__");
    if (url.href !== location.href) history.replaceState(history.state, "", url);
    return !!on;
  };
  window.projectorMode = { wanted, apply };
  document.documentElement.classList.toggle("__SCOPE__", wanted());

  // The class's picture, in projector mode: the window's height less what stands above it and
  // what must be seen under it (the question, and after Reveal the tally and each model's answer).
  const MIN = __MIN__, PAD = 12;
  const $ = (selector) => document.querySelector(selector);
  const fit = () => {
    const stage = $("#class-stage"), picture = $("#class-item-image");
    if (!stage) return;
    if (!document.documentElement.classList.contains("__SCOPE__") || !picture || picture.offsetParent === null) {
      if (stage.style.getPropertyValue("--class-stage-h")) stage.style.removeProperty("--class-stage-h");
      return;
    }
    const box = picture.getBoundingClientRect();
    let bottom = box.bottom;
    for (const selector of ["#class-item-text", "#class-revealed"]) {
      const el = $(selector);
      if (el && el.offsetParent !== null && el.getBoundingClientRect().height > 0)
        bottom = Math.max(bottom, el.getBoundingClientRect().bottom);
    }
    const top = box.top + window.scrollY;
    const height = Math.max(MIN, Math.floor(window.innerHeight - top - (bottom - box.bottom) - PAD));
    const value = height + "px";
    if (stage.style.getPropertyValue("--class-stage-h") !== value) stage.style.setProperty("--class-stage-h", value);
  };
  setInterval(fit, 150);
  window.addEventListener("resize", fit);
})();
"""
HEAD = "<script>" + (
    _SCRIPT.replace("__PARAMETER__", PARAMETER).replace("__SCOPE__", SCOPE).replace("__MIN__", str(CLASS_MIN_PX))
) + "</script>"  # fmt: skip

# The switch: on or off at once, in the browser (nothing is sent), and the address says which.
APPLY = "(on) => { window.projectorMode?.apply(on); }"
# The page opens: the switch shows what the address asked for (its change applies it again).
FROM_ADDRESS = "() => !!window.projectorMode?.wanted()"


def build_switch() -> gr.Checkbox:
    """The switch beside the title; `wire` connects it once the page's Blocks exist."""
    return gr.Checkbox(
        False,
        label="Projector mode",
        container=False,
        min_width=160,
        elem_id="projector-switch",
    )


def wire(demo: gr.Blocks, switch: gr.Checkbox) -> None:
    """The switch applies the layout as it changes; the page's load sets it from the address."""
    private: dict[str, Any] = {"api_visibility": "private", "queue": False}
    switch.change(None, switch, None, js=APPLY, **private)
    demo.load(None, None, switch, js=FROM_ADDRESS, **private)
