// Where revealed text goes. Strategies call reveal(text); the player calls flush(now) once per animation
// frame, so several reveals in one frame cost one render; `visible` counts the non-blank
// rendered characters after it.
//
// The markdown sink keeps completed blocks stable: text up to the last blank line outside a code fence is
// rendered one final time into its own element and never touched again; only the open last block is
// re-rendered on each paint. Cheap (the tail is short) and free of layout jumps above the growing block.

import MarkdownIt from "../../vendor/markdown-it/markdown-it.esm.min.js";
import { applyFades } from "./fadewrap.js";

let sharedMd = null;
function markdown() {
  // html: false — stream text is untrusted; raw HTML is shown as text.
  if (!sharedMd) sharedMd = new MarkdownIt({ html: false, linkify: false, breaks: false });
  return sharedMd;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// An unfinished last line holding only block syntax ("## ", "- ", "1.", "> ", "``"): rendering it would
// show an empty heading or bullet that jumps when its first word lands, so it waits for that word.
const BARE_SYNTAX = /(^|\n) {0,3}(#{1,6}|[-*+]|\d{1,9}[.)]|>|`{1,3}|~{1,3})[ \t]*$/;

/** Offset just past the last blank line outside a fenced code block in source[from:], or `from` if none. */
export function lastBlockBoundary(source, from = 0) {
  let boundary = from;
  let fence = null;
  let pos = from;
  for (;;) {
    const nl = source.indexOf("\n", pos);
    if (nl < 0) break; // the last line is incomplete
    const line = source.slice(pos, nl);
    const m = FENCE.exec(line);
    if (fence === null && m) fence = m[1][0].repeat(m[1].length);
    else if (fence !== null && m && m[1][0] === fence[0] && m[1].length >= fence.length && !line.trim().slice(m[1].length)) {
      fence = null;
    } else if (fence === null && line.trim() === "") boundary = nl + 1;
    pos = nl + 1;
  }
  return boundary;
}

function blockElement(output) {
  const el = output.ownerDocument.createElement("div");
  el.className = "pl-block";
  output.appendChild(el);
  return el;
}

/** A sink rendering markdown incrementally into `output`. */
export function createMarkdownSink(output, { md = markdown() } = {}) {
  let source = "";
  let rendered = 0; // source length at the last flush
  let committed = 0; // source offset where the open block starts
  let live = null; // {el, len, segments}
  let fadeMs = 0;
  let visible = 0;
  let committedVisible = 0;

  function render(block, src, now) {
    const before = block.len;
    block.el.innerHTML = md.render(src);
    const shown = block.el.textContent;
    block.len = shown.length;
    block.ink = shown.replace(/\s+/g, "").length;
    if (fadeMs > 0 && block.len > before) block.segments.push({ from: before, to: block.len, t: now, dur: fadeMs });
    if (block.segments.length) block.segments = applyFades(block.el, block.segments, now);
  }

  return {
    reveal(text, opts = {}) {
      source += text;
      fadeMs = opts.fadeMs || 0;
    },
    /** Render what was revealed since the last flush. */
    flush(now) {
      if (source.length === rendered) {
        if (live && live.segments.length) live.segments = applyFades(live.el, live.segments, now);
        return;
      }
      const boundary = lastBlockBoundary(source, committed);
      if (boundary > committed) {
        if (!live) live = { el: blockElement(output), len: 0, ink: 0, segments: [] };
        render(live, source.slice(committed, boundary), now); // final render of the completed blocks
        live.el.classList.add("pl-done");
        committedVisible += live.ink;
        live = null;
        committed = boundary;
      }
      if (source.length > committed) {
        if (!live) live = { el: blockElement(output), len: 0, ink: 0, segments: [] };
        render(live, source.slice(committed).replace(BARE_SYNTAX, "$1"), now);
      }
      rendered = source.length;
      visible = committedVisible + (live ? live.ink : 0);
    },
    get text() { return source; },
    /** Non-blank characters of rendered text on screen. */
    get visible() { return visible; },
  };
}

/** A sink appending plain text (white-space: pre-wrap), fading pieces in when asked. */
export function createPlainSink(output) {
  let source = "";
  let pending = "";
  let fadeMs = 0;
  return {
    reveal(text, opts = {}) {
      pending += text;
      source += text;
      fadeMs = opts.fadeMs || 0;
    },
    flush() {
      if (!pending) return;
      const doc = output.ownerDocument;
      if (fadeMs > 0) {
        const span = doc.createElement("span");
        span.className = "pl-fade";
        span.style.animationDuration = `${fadeMs}ms`;
        span.textContent = pending;
        output.appendChild(span);
      } else {
        output.appendChild(doc.createTextNode(pending));
      }
      pending = "";
    },
    get text() { return source; },
    get visible() { return source.slice(0, source.length - pending.length).replace(/\s+/g, "").length; },
  };
}

export function createSink(output, format = "markdown") {
  if (format === "markdown") return createMarkdownSink(output);
  if (format === "plain") return createPlainSink(output);
  throw new Error(`pacelab: unknown format ${format}; known: markdown, plain`);
}
