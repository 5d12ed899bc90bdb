// fade: paint every piece when due, like `token`, but each new piece fades in (CSS animation on a span).

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {
  "durationMs": {"type": "number", "default": 400, "min": 0, "max": 10000, "unit": "ms"}
};

export function createStrategy(sink, opts = {}) {
  const durationMs = opts.durationMs ?? 400;
  return {
    push(piece) { sink.reveal(piece.text, { fadeMs: durationMs }); },
    tick() {},
    end() {},
    idle() { return true; },
  };
}
