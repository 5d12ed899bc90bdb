// fade: paint every piece when due, like `token`, but each new piece fades in (CSS animation on a span).

export function createStrategy(sink, opts = {}) {
  const durationMs = opts.durationMs ?? 400;
  return {
    push(piece) { sink.reveal(piece.text, { fadeMs: durationMs }); },
    tick() {},
    end() {},
    idle() { return true; },
  };
}
