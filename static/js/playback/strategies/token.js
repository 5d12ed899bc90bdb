// token: paint every piece in the frame it becomes due; the reference strategy (lag < one frame).

export function createStrategy(sink) {
  return {
    push(piece) { sink.reveal(piece.text); },
    tick() {},
    end() {},
    idle() { return true; },
  };
}
