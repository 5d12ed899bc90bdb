// Fade-in spans that survive re-rendering: a fading range is remembered by its offsets in the element's
// textContent and its start time, and re-wrapped after every render with a negative animation-delay so the
// animation continues where it was instead of restarting.

/** Wrap characters [from, to) of `root`'s textContent in span.pl-fade, already `elapsedMs` into `durMs`. */
export function wrapRange(root, from, to, elapsedMs, durMs) {
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const targets = [];
  let pos = 0;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const len = node.data.length;
    const a = Math.max(from, pos);
    const b = Math.min(to, pos + len);
    if (a < b) targets.push([node, a - pos, b - pos]);
    pos += len;
    if (pos >= to) break;
  }
  for (const [node, a, b] of targets) {
    let mid = node;
    if (a > 0) mid = mid.splitText(a);
    if (b - a < mid.data.length) mid.splitText(b - a);
    const span = root.ownerDocument.createElement("span");
    span.className = "pl-fade";
    span.style.animationDuration = `${durMs}ms`;
    span.style.animationDelay = `${-elapsedMs}ms`;
    mid.replaceWith(span);
    span.appendChild(mid);
  }
}

/** Segments still animating at `now`; wraps each of them in `root`. */
export function applyFades(root, segments, now) {
  const live = segments.filter((s) => now - s.t < s.dur);
  for (const s of live) wrapRange(root, s.from, s.to, now - s.t, s.dur);
  return live;
}
