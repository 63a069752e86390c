"""The Probe stage in the browser: the picture sized so that it, the question and every answer
cell are on screen together, the page address naming what is on stage, and the previous item's
answers cleared the moment another item is chosen.

Why a script: Gradio gives an image a fixed height, and the grid's height is known only once it
is drawn (models x conditions, replies of any length). The script measures what sits under the
picture and gives the picture what is left of the window (never less than MIN_PX, never more
than MAX_PX); the picture keeps its proportions (object-fit: contain), so it shrinks, never crops.
"""

from __future__ import annotations

MIN_PX = 150  # a picture smaller than this is no longer worth looking at: the page scrolls instead
MAX_PX = 560  # on a tall screen with nothing under it, the picture does not grow past this

# Installed once per page (the status box's js_on_load). `window.probeStage.reveal_soon()` asks for
# the stage to be scrolled into view once the next grid is drawn (Ask, a replayed link).
SCRIPT = r"""
if (!window.probeStage) {
  const MIN = __MIN__, MAX = __MAX__, GAP = 8, PAD = 12;
  const stage = (window.probeStage = { reveal: false, last: "" });
  const $ = (selector) => document.querySelector(selector);
  const docTop = (el) => el.getBoundingClientRect().top + window.scrollY;
  stage.reveal_soon = () => { setTimeout(() => { stage.reveal = true; }, 0); };
  const fit = () => {
    const row = $("#probe-stage-images"), column = $("#probe-stage");
    if (!row || !column || row.offsetParent === null) return;  // another tab is open
    const slots = [...row.children].filter((el) => el.offsetParent !== null);
    if (!slots.length) return;
    // What must be in view with the picture: the question, the right answer, the status and
    // the grid (the link, downloads and prompts may follow below the fold).
    const grid = $("#probe-grid table");
    const last = grid ? $("#probe-grid") : ($("#probe-status") || row);
    const under = Math.max(0, last.getBoundingClientRect().bottom - row.getBoundingClientRect().bottom);
    const rows = new Set(slots.map((el) => Math.round(el.offsetTop))).size;
    const share = (room) => Math.floor((room - (rows - 1) * GAP) / rows);
    // First from where the stage stands on the page (the header stays in view); if that leaves
    // the picture too small, from the top of the window (the page is scrolled to the stage).
    // In projector mode (ui/projector.py) the tabs stay on screen as long as the picture is worth
    // looking at, and a tall screen's picture may grow past MAX.
    const projector = document.documentElement.classList.contains("projector");
    const max = projector ? Math.max(MAX, Math.floor(window.innerHeight * 0.6)) : MAX;
    const fromHere = share(window.innerHeight - docTop(row) - under - PAD);
    const fromTop = share(window.innerHeight - under - 2 * PAD);
    const here = fromHere >= (projector ? MIN : Math.min(max, 280));
    const height = Math.max(MIN, Math.min(max, here ? fromHere : fromTop));
    const value = height + "px";
    if (column.style.getPropertyValue("--probe-stage-h") !== value) column.style.setProperty("--probe-stage-h", value);
    // After Ask (or on a shared link) the stage is kept in view while the grid fills (its
    // cells grow as answers come), until the person scrolls or clicks themselves: from the
    // page's top where it fits there (the tabs stay in view), else from the stage's.
    if (stage.reveal && grid) {
      requestAnimationFrame(() => {
        const top = row.getBoundingClientRect().top, bottom = $("#probe-grid").getBoundingClientRect().bottom;
        if (top < 0 || bottom > window.innerHeight + 1) window.scrollTo({ top: here ? 0 : docTop(row) - PAD });
      });
    }
  };
  const mine = () => { stage.reveal = false; };
  for (const name of ["wheel", "touchstart", "keydown", "mousedown"]) window.addEventListener(name, mine, true);
  setInterval(fit, 150);
  window.addEventListener("resize", fit);
}
""".replace("__MIN__", str(MIN_PX)).replace("__MAX__", str(MAX_PX))

# Ask: the stage comes into view with the grid as soon as it is drawn.
REVEAL = "() => { window.probeStage?.reveal_soon(); }"

# The page address names what is on stage: `?probe=...` for a shareable item or probe, no
# `probe` parameter for an upload (its files are the visitor's and cannot be shared). Other
# parameters (a class code) stay. Returns the address, shown as the share link after an Ask.
SET_ADDRESS = """(query) => {
  const url = new URL(location.href);
  const value = query ? new URLSearchParams(query).get("probe") : null;
  if (value) url.searchParams.set("probe", value); else url.searchParams.delete("probe");
  history.replaceState(null, "", url);
  return value ? url.href : "";
}"""

# Another item chosen: the last item's answers, prompts, link, downloads and address go at
# once, in the browser, before the server has drawn the new item (that takes a moment).
# Outputs: status, grid, prompts, query, link.
CLEAR = """() => {
  const url = new URL(location.href);
  url.searchParams.delete("probe");
  history.replaceState(null, "", url);
  return ['<p class="probe-status">Putting the item on the stage…</p>', "", "", "", ""];
}"""
