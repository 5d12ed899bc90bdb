// The design clock: when the render strategy *means* to paint each frame. A shadow instance of the same
// strategy, with the same options, is fed the same pieces at the same arrival times and ticked on an ideal
// 60 Hz clock (aligned to the trial start, never late, tab never hidden). The time it reveals a frame's last
// character is that frame's design time: what smoothing, word boundaries or a typewriter intend. The
// player's lateness beyond design (painted − design) is then a fault of the page, not a choice of the
// strategy, so one bound (two frames) fits every strategy, and a smooth play is late only beyond what
// smoothing intends (issue 43 item 4). Pure: no DOM.

import { createStrategy } from "./strategies/index.js";

export const IDEAL_FRAME_MS = 1000 / 60;

/**
 * start: the trial start (performance.now() base). Returns {push(piece, charEnd, seq), advance(now), end(),
 * designAt(seq) -> ms from start or undefined, paintTimes: [ms from start of each design paint]}.
 */
export function createDesignClock(name, opts, start, frameMs = IDEAL_FRAME_MS) {
  let revealed = 0;
  let v = start; // the next ideal tick
  let ended = false;
  let endedShadow = false;
  const inbox = []; // pieces not yet given to the shadow: {piece, charEnd, seq}
  const waiting = []; // [charEnd, seq] not yet revealed by the shadow, in order
  const design = new Map();
  const paintTimes = [];
  let now = start;
  const shadow = createStrategy(name, {
    reveal(text) {
      if (!text) return;
      revealed += text.length;
      if (paintTimes[paintTimes.length - 1] !== now - start) paintTimes.push(now - start);
      while (waiting.length && waiting[0][0] <= revealed) design.set(waiting.shift()[1], now - start);
    },
  }, { ...opts, isHidden: () => false });

  return {
    push(piece, charEnd, seq) { inbox.push({ piece, charEnd, seq }); },
    /** Run the ideal clock up to `until` (performance.now() base). */
    advance(until) {
      while (v <= until) {
        now = v;
        // v is a running sum on the performance.now() base, so an arrival on a tick (300 ms = 18 ticks) may
        // compare a rounding error above it: a microsecond's tolerance keeps the design the same on every start
        while (inbox.length && inbox[0].piece.at <= v + 1e-3) {
          const { piece, charEnd, seq } = inbox.shift();
          waiting.push([charEnd, seq]);
          shadow.push(piece, v);
        }
        if (ended && !inbox.length && !endedShadow) { endedShadow = true; shadow.end(v); }
        shadow.tick(v);
        v += frameMs;
        if (endedShadow && shadow.idle()) break;
      }
    },
    end() { ended = true; },
    designAt(seq) { return design.get(seq); },
    get paintTimes() { return paintTimes; },
  };
}
