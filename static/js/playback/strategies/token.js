// token: paint every piece in the frame it becomes due; the reference strategy (lag < one frame).

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {};

export function createStrategy(sink) {
  return {
    push(piece) { sink.reveal(piece.text); },
    tick() {},
    end() {},
    idle() { return true; },
  };
}
