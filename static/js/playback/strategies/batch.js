// batch: a client that flushes its buffer on a fixed clock every `intervalMs` (default 20 ms), as a
// setInterval-driven renderer would. A piece waits for the first flush boundary after its arrival, then for
// the next animation frame: lag <= intervalMs + one frame.

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {
  "intervalMs": {"type": "number", "default": 20, "min": 0, "exclusiveMin": true, "max": 10000, "unit": "ms"}
};

export function createStrategy(sink, opts = {}) {
  const interval = opts.intervalMs ?? 20;
  let origin = null; // the flush clock starts with the first piece's arrival
  let buffer = [];
  let ended = false;

  function flushUpTo(boundary) {
    const out = [];
    const keep = [];
    for (const p of buffer) (p.at <= boundary ? out : keep).push(p);
    buffer = keep;
    if (out.length) sink.reveal(out.map((p) => p.text).join(""));
  }

  return {
    push(piece) {
      if (origin === null) origin = piece.at;
      buffer.push(piece);
    },
    tick(now) {
      if (!buffer.length) return;
      if (ended) return flushUpTo(Infinity);
      // The latest flush boundary at or before now.
      const boundary = origin + Math.floor((now - origin) / interval) * interval;
      flushUpTo(boundary);
    },
    end() { ended = true; },
    idle() { return buffer.length === 0; },
  };
}
