// ai-sdk-smooth: the Vercel AI SDK's smoothStream() transform, as documented for AI SDK 5.x
// (ai-sdk.dev, reference/ai-sdk-core/smooth-stream): text is buffered and released one chunk at a time, a chunk
// being the buffer up to the end of the first match of the chunking rule, with `delayInMs` (default 10 ms)
// between two releases; whatever is left is released when the stream ends. Chunking: "word" (a run of
// non-blanks and the blanks after it), "line" (up to and including a run of newlines), a RegExp (given as
// {regexp: "source", flags}, or in the flat options as chunking "regexp" with `regexp` and `flags`), or
// "segmenter" (Intl.Segmenter words, for CJK: a segment is released once the next one has begun, so no
// word is cut). While the tab is hidden the delay is skipped, as issue 43 describes.
// Written from that description for PaceLab, not copied.
//
// In the player the SDK's timer runs on a virtual clock: chunk k is released at
// max(arrival of its last character, release of chunk k-1 + delayInMs); each animation frame paints every
// chunk whose release time has come. An optional `sink.release(text, at)` hears each chunk and its release
// time (the unit tests check the spacing with it).

const RULES = { word: /\S+\s+/m, line: /\n+/m };

/** The chunk detector for `chunking`: (buffer) => length of the first complete chunk, or 0. */
export function chunkDetector(chunking = "word", locale = undefined) {
  if (chunking === "segmenter" || (typeof Intl !== "undefined" && chunking instanceof Intl.Segmenter)) {
    const seg = chunking instanceof Intl.Segmenter ? chunking : new Intl.Segmenter(locale, { granularity: "word" });
    return (buffer) => {
      const it = seg.segment(buffer)[Symbol.iterator]();
      const first = it.next();
      if (first.done || it.next().done) return 0; // the first word is complete only once another has begun
      return first.value.segment.length;
    };
  }
  let re = RULES[chunking] ?? null;
  if (chunking instanceof RegExp) re = chunking;
  else if (chunking && typeof chunking === "object" && typeof chunking.regexp === "string") {
    re = new RegExp(chunking.regexp, (chunking.flags ?? "m").replace("g", ""));
  }
  if (!re) throw new Error(`pacelab: ai-sdk-smooth: chunking must be "word", "line", "segmenter", "regexp" or {regexp}, got ${chunking}`);
  return (buffer) => {
    const m = re.exec(buffer);
    return m && m[0].length ? m.index + m[0].length : 0;
  };
}

const pageHidden = () => typeof document !== "undefined" && document.visibilityState === "hidden";

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
// `chunking: "regexp"` uses `regexp` (its source, e.g. [.!?]\s+ for sentences) and `flags`; `locale` is the
// Intl.Segmenter's language for `chunking: "segmenter"` (empty: the browser's own).
export const OPTIONS = {
  "delayInMs": {"type": "number", "default": 10, "min": 0, "max": 10000, "unit": "ms"},
  "chunking": {"type": "choice", "default": "word", "choices": ["word", "line", "segmenter", "regexp"], "needs": {"regexp": ["regexp"]}},
  "regexp": {"type": "text", "default": "", "maxLength": 200, "format": "regexp"},
  "flags": {"type": "text", "default": "", "maxLength": 4, "pattern": "[imsu]*", "format": "flags"},
  "locale": {"type": "text", "default": "", "maxLength": 35, "format": "locale"}
};

/** The `chunking` the detector takes, from the flat options a designer sets. */
function chunkingOf(opts) {
  const chunking = opts.chunking ?? "word";
  return chunking === "regexp" ? { regexp: opts.regexp ?? "", flags: opts.flags ?? "" } : chunking;
}

export function createStrategy(sink, opts = {}) {
  const delayInMs = opts.delayInMs === null ? 0 : (opts.delayInMs ?? 10);
  if (!(delayInMs >= 0)) throw new Error(`pacelab: ai-sdk-smooth: delayInMs must be >= 0, got ${opts.delayInMs}`);
  const detect = chunkDetector(chunkingOf(opts), opts.locale || undefined);
  const isHidden = typeof opts.isHidden === "function" ? opts.isHidden : pageHidden;
  let buffer = ""; // text not yet cut into chunks
  let bufferAt = 0; // arrival time of the latest text in the buffer
  const queue = []; // [{text, at}] chunks with their release time, not yet painted
  let free = -Infinity; // when the SDK's delay after the last release is over
  let ended = false;

  function release(text, ready) {
    const at = Math.max(ready, free);
    free = at + (isHidden() ? 0 : delayInMs);
    queue.push({ text, at });
  }

  function cut() {
    for (let n = detect(buffer); n > 0 && buffer; n = detect(buffer)) {
      release(buffer.slice(0, n), bufferAt);
      buffer = buffer.slice(n);
    }
  }

  return {
    push(piece, now) {
      buffer += piece.text;
      bufferAt = now === undefined ? piece.at : Math.min(piece.at, now); // live: it may land after the frame began
      cut();
    },
    tick(now) {
      if (ended && buffer) { release(buffer, Math.max(bufferAt, now)); buffer = ""; }
      let out = "";
      while (queue.length && queue[0].at <= now) {
        const c = queue.shift();
        out += c.text;
        if (sink.release) sink.release(c.text, c.at);
      }
      if (out) sink.reveal(out);
    },
    end(now) { ended = true; if (now !== undefined && buffer) { release(buffer, Math.max(bufferAt, now)); buffer = ""; } },
    idle() { return !buffer && !queue.length; },
  };
}
