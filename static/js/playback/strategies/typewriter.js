// typewriter: a fixed-rate typewriter, `charsPerSec` code points per second (default 100) whatever the
// network does, as useSmoothText-style React hooks do: a fast stream builds a backlog that drains at that
// rate after the stream ends; a slow one is shown as it comes. The credit carries between frames, so the rate holds
// on any frame rate; it is dropped while nothing waits (no burst after a pause). Written for PaceLab.

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {
  "charsPerSec": {"type": "number", "default": 100, "min": 0, "exclusiveMin": true, "max": 100000, "unit": "chars/s"}
};

export function createStrategy(sink, opts = {}) {
  const cps = opts.charsPerSec ?? 100;
  if (!(cps > 0)) throw new Error(`pacelab: typewriter: charsPerSec must be > 0, got ${opts.charsPerSec}`);
  const pending = [];
  let credit = 0;
  let last = null;
  return {
    push(piece) { pending.push(...Array.from(piece.text)); },
    tick(now) {
      const dt = last === null ? 1000 / 60 : Math.max(0, now - last);
      last = now;
      if (!pending.length) { credit = 0; return; }
      credit += (cps * dt) / 1000;
      const n = Math.min(pending.length, Math.floor(credit));
      if (n <= 0) return;
      credit -= n;
      sink.reveal(pending.splice(0, n).join(""));
    },
    end() {},
    idle() { return pending.length === 0; },
  };
}
