// smooth: a typewriter that releases characters at a rate proportional to its backlog, so the buffer drains
// in about `drainMs` whatever rhythm the network has, without bursts (at most `maxChars` per frame) or crawls
// (at least `minChars` per frame while anything is waiting). Like the smoothers of the Vercel AI SDK.
// Characters are code points, so a surrogate pair is never split.
// `maxChars` is per 60 Hz frame of elapsed time: a browser that draws fewer frames (a loaded machine, WebKit
// painting without a GPU, a throttled page) is allowed the characters of the frames it skipped, so the backlog
// still drains in about `drainMs` instead of falling seconds behind at 24 characters a frame.

const FRAME_MS = 1000 / 60;

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {
  "drainMs": {"type": "number", "default": 120, "min": 0, "exclusiveMin": true, "max": 10000, "unit": "ms"},
  "minChars": {"type": "integer", "default": 1, "min": 1, "max": 1000, "unit": "chars"},
  "maxChars": {"type": "integer", "default": 24, "min": 1, "max": 10000, "unit": "chars", "atLeast": "minChars"}
};

export function createStrategy(sink, opts = {}) {
  const drainMs = opts.drainMs ?? 120;
  const minChars = opts.minChars ?? 1;
  const maxChars = opts.maxChars ?? 24;
  let pending = []; // code points not yet shown
  let credit = 0; // fractional characters carried between frames
  let last = null;

  return {
    push(piece) { pending.push(...Array.from(piece.text)); },
    tick(now) {
      const dt = last === null ? FRAME_MS : Math.max(0, now - last);
      last = now;
      if (!pending.length) { credit = 0; return; }
      credit += (pending.length * Math.min(dt, drainMs)) / drainMs;
      let n = Math.floor(credit);
      const cap = maxChars * Math.max(1, Math.round(dt / FRAME_MS));
      n = Math.min(pending.length, Math.max(minChars, Math.min(cap, n)));
      credit = Math.min(1, Math.max(0, credit - n)); // carry only the fraction: no catch-up bursts
      sink.reveal(pending.splice(0, n).join(""));
    },
    end() {},
    idle() { return pending.length === 0; },
  };
}
