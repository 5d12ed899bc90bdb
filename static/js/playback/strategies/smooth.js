// smooth: a typewriter that releases characters at a rate proportional to its backlog, so the buffer drains
// in about `drainMs` whatever rhythm the network has, without bursts (at most `maxChars` per frame) or crawls
// (at least `minChars` per frame while anything is waiting). Like the smoothers of the Vercel AI SDK.
// Characters are code points, so a surrogate pair is never split.

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
      const dt = last === null ? 1000 / 60 : Math.max(0, now - last);
      last = now;
      if (!pending.length) { credit = 0; return; }
      credit += (pending.length * Math.min(dt, drainMs)) / drainMs;
      let n = Math.floor(credit);
      n = Math.min(pending.length, Math.max(minChars, Math.min(maxChars, n)));
      credit = Math.min(1, Math.max(0, credit - n)); // carry only the fraction: no catch-up bursts
      sink.reveal(pending.splice(0, n).join(""));
    },
    end() {},
    idle() { return pending.length === 0; },
  };
}
