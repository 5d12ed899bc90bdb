// chat-ui-smooth: Hugging Face chat-ui's smoothStreamUpdates as its authors describe the mid-2026 version
// (issue 43): the reveal speed follows an exponentially decayed estimate of the arrival rate (chars/ms, time
// constant `tauMs` 1 s) times a headroom of 1.1, so the buffer drains a little faster than it fills; no
// character is held more than `maxBufferedMs` (400) past its arrival; when the stream is slower than the
// floor (`floorCharsPerSec`) text is painted at once; text is released in whole words, a word being complete
// at the start of the next one (Intl.Segmenter words, so CJK streams at word cadence); text with no
// boundary is flushed in runs of `flushChars` (64). Written from that description for PaceLab, not copied.
//
// The arrival-rate estimate: every arrival adds its characters to a sum that decays as exp(-dt / tau); the
// rate is that sum over the decayed window tau * (1 - exp(-elapsed / tau)) (elapsed since the first arrival,
// at least `minWindowMs`), which is unbiased from the first arrival on. PaceLab's choices where the
// description gives no number: floor 20 chars/s, minWindowMs 250 (so a first small chunk
// reads as a slow stream and is painted at once).

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {
  "maxBufferedMs": {"type": "number", "default": 400, "min": 0, "max": 60000, "unit": "ms"},
  "floorCharsPerSec": {"type": "number", "default": 20, "min": 0, "max": 100000, "unit": "chars/s"},
  "tauMs": {"type": "number", "default": 1000, "min": 0, "exclusiveMin": true, "max": 60000, "unit": "ms"},
  "headroom": {"type": "number", "default": 1.1, "min": 0, "exclusiveMin": true, "max": 10},
  "flushChars": {"type": "integer", "default": 64, "min": 1, "max": 100000, "unit": "chars"},
  "minWindowMs": {"type": "number", "default": 250, "min": 1, "max": 60000, "unit": "ms"},
  "locale": {"type": "text", "default": "", "maxLength": 35, "format": "locale"}
};

export function createStrategy(sink, opts = {}) {
  const tau = opts.tauMs ?? 1000;
  const headroom = opts.headroom ?? 1.1;
  const maxBufferedMs = opts.maxBufferedMs ?? 400;
  const floor = (opts.floorCharsPerSec ?? 20) / 1000; // chars/ms
  const flushChars = opts.flushChars ?? 64;
  const minWindowMs = opts.minWindowMs ?? 250;
  const seg = new Intl.Segmenter(opts.locale || undefined, { granularity: "word" });

  let text = ""; // pending text (UTF-16) and the arrival time of each of its code units
  let arrivals = [];
  let sum = 0; // decayed characters
  let sumAt = null; // when `sum` was last decayed to
  let firstAt = null;
  let credit = 0; // characters the current speed allows and not yet used
  let last = null; // previous tick
  let ended = false;

  function decayTo(t) {
    if (sumAt !== null && t > sumAt) sum *= Math.exp(-(t - sumAt) / tau);
    sumAt = sumAt === null ? t : Math.max(sumAt, t);
  }

  /** Estimated arrival rate at `now`, chars/ms. */
  function rate(now) {
    if (firstAt === null) return 0;
    decayTo(now);
    const elapsed = Math.max(minWindowMs, now - firstAt);
    return sum / (tau * (1 - Math.exp(-elapsed / tau)));
  }

  /** Where pending text may be cut, ascending: the start of every word after the first, every 64 characters
   * of boundary-less text after the last such start, and (once the stream ended) the end. */
  function cuts() {
    const out = [];
    for (const s of seg.segment(text)) if (s.isWordLike && s.index > 0) out.push(s.index); // a word starts here
    const last = out.length ? out[out.length - 1] : 0;
    for (let c = last + flushChars; c <= text.length; c += flushChars) out.push(c);
    if (ended && out[out.length - 1] !== text.length) out.push(text.length);
    return out;
  }

  function releaseUpTo(n) {
    if (n <= 0) return;
    // never split a surrogate pair
    if (n < text.length && /[\uDC00-\uDFFF]/.test(text[n])) n += 1;
    const out = text.slice(0, n);
    text = text.slice(n);
    arrivals = arrivals.slice(n);
    sink.reveal(out);
  }

  return {
    push(piece) {
      const n = Array.from(piece.text).length;
      decayTo(piece.at);
      sum += n;
      if (firstAt === null) firstAt = piece.at;
      text += piece.text;
      for (let i = 0; i < piece.text.length; i++) arrivals.push(piece.at);
    },
    tick(now) {
      const dt = last === null ? 1000 / 60 : Math.max(0, now - last);
      last = now;
      if (!text) { credit = 0; return; }
      const speed = headroom * rate(now);
      if (speed < floor) { credit = 0; return releaseUpTo(text.length); } // slower than the floor: paint at once
      credit = Math.min(text.length, credit + speed * dt);
      // whole words (each with what follows it up to the next word) while the speed allows
      let n = 0;
      for (const c of cuts()) {
        if (c > credit) break;
        n = c;
      }
      // the deadline: what would be held past maxBufferedMs by the next frame goes now, cut or not
      const horizon = now + Math.max(dt, 1) - maxBufferedMs;
      let due = 0;
      while (due < arrivals.length && arrivals[due] <= horizon) due++;
      n = Math.max(n, due);
      credit = Math.max(0, credit - n);
      releaseUpTo(n);
    },
    end() { ended = true; },
    idle() { return !text; },
  };
}
