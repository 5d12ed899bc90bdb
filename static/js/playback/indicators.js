// Waiting indicators: what the participant sees before the first piece of the answer is painted. Each one is
// removed (or, for the reasoning kinds, closed into a record) in the very frame of the first paint.
// create(kind, host, ctx) -> {el, tick(now), reasoning(text), remove(now)}; ctx = {lang, start, etaMs, opts}.
// Elements carry data-pacelab-indicator="<kind>" while they are waiting, so tests and CSS can find them.

import { t } from "./i18n.js";

function el(doc, tag, cls, text) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function mount(host, kind, node) {
  node.dataset.pacelabIndicator = kind;
  node.classList.add("pl-indicator");
  host.insertBefore(node, host.firstChild);
  return node;
}

const seconds = (ms) => Math.max(0, Math.floor(ms / 1000));

function removable(node, extra = {}) {
  return {
    el: node,
    tick() {},
    reasoning: null,
    remove() { node.remove(); },
    ...extra,
  };
}

const KINDS = {
  none() {
    return { el: null, tick() {}, reasoning: null, remove() {} };
  },

  spinner(host, ctx) {
    const doc = host.ownerDocument;
    const node = el(doc, "div", "pl-spinner");
    node.setAttribute("role", "status");
    node.append(el(doc, "span", "pl-spinner-ring"), el(doc, "span", "pl-label", t(ctx.lang, "thinking")));
    node.firstChild.setAttribute("aria-hidden", "true");
    return removable(mount(host, "spinner", node));
  },

  dots(host, ctx) {
    const doc = host.ownerDocument;
    const node = el(doc, "div", "pl-dots");
    node.setAttribute("role", "status");
    node.setAttribute("aria-label", t(ctx.lang, "thinking"));
    for (let i = 0; i < 3; i++) node.append(el(doc, "span", "pl-dot"));
    return removable(mount(host, "dots", node));
  },

  shimmer(host, ctx) {
    const doc = host.ownerDocument;
    const node = el(doc, "div", "pl-shimmer");
    node.setAttribute("role", "status");
    node.setAttribute("aria-label", t(ctx.lang, "loading"));
    for (const w of ctx.opts.lines || [92, 78, 60]) {
      const line = el(doc, "div", "pl-shimmer-line");
      line.style.width = `${w}%`;
      node.append(line);
    }
    return removable(mount(host, "shimmer", node));
  },

  progress(host, ctx) {
    // Fills towards ctx.etaMs (from the schedule, or opts.expectedMs in live mode); without one the bar
    // is indeterminate and the text just says "Waiting…".
    const doc = host.ownerDocument;
    const node = el(doc, "div", "pl-progress");
    node.setAttribute("role", "progressbar");
    const track = el(doc, "div", "pl-progress-track");
    const bar = el(doc, "div", "pl-progress-bar");
    const label = el(doc, "div", "pl-label", t(ctx.lang, "waiting"));
    track.append(bar);
    node.append(track, label);
    if (ctx.etaMs == null) node.classList.add("pl-indeterminate");
    let shown = null;
    return removable(mount(host, "progress", node), {
      tick(now) {
        if (ctx.etaMs == null || ctx.etaMs <= 0) return;
        const elapsed = now - ctx.start;
        const frac = Math.min(1, Math.max(0, elapsed / ctx.etaMs));
        bar.style.transform = `scaleX(${frac.toFixed(4)})`;
        node.setAttribute("aria-valuenow", String(Math.round(frac * 100)));
        const left = Math.ceil((ctx.etaMs - elapsed) / 1000);
        const text = left >= 1 ? t(ctx.lang, "eta", { n: left }) : t(ctx.lang, "eta_soon");
        if (text !== shown) label.textContent = shown = text;
      },
    });
  },

  elapsed(host, ctx) {
    const doc = host.ownerDocument;
    const node = el(doc, "div", "pl-elapsed", t(ctx.lang, "elapsed", { n: 0 }));
    node.setAttribute("role", "timer");
    let shown = 0;
    return removable(mount(host, "elapsed", node), {
      tick(now) {
        const n = seconds(now - ctx.start);
        if (n !== shown) node.textContent = t(ctx.lang, "elapsed", { n: (shown = n) });
      },
    });
  },

  reasoning(host, ctx) {
    // The thinking text streams dimmed inside an open <details>; at the first answer paint the box closes
    // into a "Thought for N s" record the participant may reopen.
    const doc = host.ownerDocument;
    const node = el(doc, "details", "pl-reasoning");
    node.open = true;
    const summary = el(doc, "summary", "pl-label", t(ctx.lang, "thinking"));
    const body = el(doc, "div", "pl-reasoning-text");
    node.append(summary, body);
    mount(host, "reasoning", node);
    let shown = -1;
    return {
      el: node,
      tick(now) {
        const n = seconds(now - ctx.start);
        if (n !== shown && n > 0) summary.textContent = t(ctx.lang, "thinking_for", { n: (shown = n) });
      },
      reasoning(text) { body.append(doc.createTextNode(text)); },
      remove(now) {
        node.open = false;
        summary.textContent = t(ctx.lang, "thought_for", { n: Math.max(1, seconds(now - ctx.start)) });
        delete node.dataset.pacelabIndicator;
        node.classList.remove("pl-indicator");
        node.dataset.state = "done";
      },
    };
  },

  "reasoning-collapsed"(host, ctx) {
    // Only a counting line; the thinking text itself is never shown.
    const doc = host.ownerDocument;
    const node = el(doc, "div", "pl-reasoning-line", t(ctx.lang, "thinking"));
    node.setAttribute("role", "status");
    mount(host, "reasoning-collapsed", node);
    let shown = -1;
    return {
      el: node,
      tick(now) {
        const n = seconds(now - ctx.start);
        if (n !== shown && n > 0) node.textContent = t(ctx.lang, "thinking_for", { n: (shown = n) });
      },
      reasoning: null, // the thinking text is not shown
      remove(now) {
        node.textContent = t(ctx.lang, "thought_for", { n: Math.max(1, seconds(now - ctx.start)) });
        delete node.dataset.pacelabIndicator;
        node.classList.remove("pl-indicator");
        node.dataset.state = "done";
      },
    };
  },
};

export const INDICATORS = Object.keys(KINDS);

export function createIndicator(kind, host, ctx) {
  const make = KINDS[kind];
  if (!make) throw new Error(`pacelab: unknown indicator ${kind}; known: ${INDICATORS.join(", ")}`);
  return make(host, { opts: {}, ...ctx });
}
