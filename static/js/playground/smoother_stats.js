// A variant's smoother numbers, the one implementation the playground's panels and benchmarks/smoothers.py's
// table share (the benchmark evaluates this module in the page it drives), per UTF-16 unit of text:
// added delay (painted − arrived: p50, p95, max), time to first paint, cadence (CV of the intervals between
// paints, characters per paint), the longest hold (the screen standing still while arrived text waits) and
// the last character's lag after the last arrival. "Arrived" is the frame's stream time (t_ms); "painted" is
// the later of the frame start and the DOM write. All on the trial's stream clock, in ms.

import { percentile } from "../playback/fidelity.js";

export const paintTime = (p) => Math.max(p.t_ms, p.dom_ms ?? p.t_ms);

/**
 * frames: [{t_ms, chars}] in arrival order (chars in UTF-16 units); paints: content paints [{t_ms, dom_ms, text}].
 * Returns null until something is painted.
 */
export function smootherStats(frames, paints) {
  if (!paints.length || !frames.length) return null;
  const arrived = [];
  for (const f of frames) for (let i = 0; i < f.chars; i++) arrived.push(f.t_ms);
  const painted = [];
  for (const p of paints) for (let i = 0; i < p.text.length; i++) painted.push(paintTime(p));
  const n = Math.min(arrived.length, painted.length);
  const delay = [];
  for (let i = 0; i < n; i++) delay.push(painted[i] - arrived[i]);
  delay.sort((a, b) => a - b);
  const times = paints.map(paintTime);
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  const mean = gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : NaN;
  const sd = gaps.length ? Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length) : NaN;
  let hold = 0;
  let shown = 0;
  let prev = -Infinity; // the wait before the first paint is a hold too
  paints.forEach((p, i) => {
    const t = times[i];
    if (shown < arrived.length && arrived[shown] < t) hold = Math.max(hold, t - Math.max(prev, arrived[shown]));
    shown += p.text.length;
    prev = t;
  });
  return {
    p50: percentile(delay, 50),
    p95: percentile(delay, 95),
    max: delay[delay.length - 1],
    ttfp: times[0],
    cv: gaps.length > 1 && mean > 0 ? sd / mean : NaN,
    chars: arrived.length / paints.length,
    hold,
    last: times[times.length - 1] - frames[frames.length - 1].t_ms,
    paints: paints.length,
    complete: painted.length >= arrived.length,
  };
}
