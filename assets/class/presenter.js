// The presenter's count, pushed: the Class tab's progress line names the class's event stream
// (data-class-events); the line is redrawn from each event as it arrives (a tap on a phone shows
// within a moment), and the stream follows whichever class the line names.
(() => {
  let source = null, followed = null;
  const follow = () => {
    const line = document.querySelector("#class-presenter .class-progress[data-class-events]");
    const wanted = line ? line.dataset.classEvents : null;
    if (wanted === followed) return;
    if (source) source.close();
    source = null;
    followed = wanted;
    if (!wanted) return;
    source = new EventSource(wanted);
    source.onmessage = (event) => {
      const status = JSON.parse(event.data);
      const shown = document.querySelector("#class-presenter .class-progress[data-class-events]");
      if (status.error) { source.close(); return; }
      if (shown && status.line) shown.innerHTML = status.line;
    };
  };
  new MutationObserver(follow).observe(document.documentElement, {subtree: true, childList: true});
})();
