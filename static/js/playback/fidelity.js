// Timing-fidelity summary of one playback, computed in the browser from the paint log.
// Pure and small so the server can mirror it exactly (definitions in docs/rendering.md).

/** Linear-interpolation percentile (numpy's default, as playback/core/metrics.py) of a sorted, non-empty list. */
export function percentile(sorted, q) {
  if (!sorted.length) throw new Error("percentile of an empty list");
  if (!(q >= 0 && q <= 100)) throw new Error(`percentile q must be in [0, 100], got ${q}`);
  const pos = ((sorted.length - 1) * q) / 100;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

/** Frames the compositor skipped: a gap of k nominal intervals between rAF callbacks drops k - 1. */
export function droppedFrames(gaps, intervalMs) {
  let dropped = 0;
  for (const g of gaps) dropped += Math.max(0, Math.round(g / intervalMs) - 1);
  return dropped;
}

export const DEFAULT_BOUND_MS = 33.4; // two frames at 60 Hz

/**
 * Stalls the participant saw: gaps between successive visible paints (`paintTimes`, ms, ascending) far above
 * what the design would have shown over the same stretch — a gap G is a stall when G >= 2 S and G - S >
 * `boundMs`, S being the longest gap between the design's paints (`designTimes`) inside it, cut at both ends.
 * A design without paints inside the gap meant it (S = G). Whatever the strategy: a token play with an 85 ms
 * freeze at 25 ms per token is a stall; a word play holding a long word is not.
 */
export function seenStalls(paintTimes, designTimes, boundMs = DEFAULT_BOUND_MS) {
  const stalls = [];
  let j = 0;
  for (let i = 1; i < paintTimes.length; i++) {
    const a = paintTimes[i - 1];
    const b = paintTimes[i];
    const g = b - a;
    if (g <= boundMs) continue;
    while (j < designTimes.length && designTimes[j] <= a) j++;
    let prev = a;
    let s = 0;
    for (let k = j; k < designTimes.length && designTimes[k] < b; k++) { s = Math.max(s, designTimes[k] - prev); prev = designTimes[k]; }
    s = prev === a ? g : Math.max(s, b - prev);
    if (g >= 2 * s && g - s > boundMs) stalls.push({ from_ms: a, gap_ms: g, design_gap_ms: s });
  }
  return stalls;
}

/**
 * Summarise a playback.
 * frames: [{seq, channel, painted_minus_scheduled|null}], longFrames: [{duration_ms}],
 * visibility: [{state}], paints: [{hidden, t_ms, dom_ms}], rafGaps: [ms between successive rAF callbacks],
 * designPaints: [ms of the design clock's paints]. Lateness beyond design (painted_minus_design, where frames
 * carry it) is what the "over the bound" flag reads, so each strategy is judged against its own design lag.
 */
export function summarize({ frames = [], longFrames = [], visibility = [], paints = [], rafGaps = [],
                            intervalMs = 1000 / 60, designPaints = null, boundMs = DEFAULT_BOUND_MS }) {
  const content = frames.filter((f) => f.channel === "content" && !f.empty);
  const lags = content.map((f) => f.painted_minus_scheduled).filter((x) => x !== null && x !== undefined);
  const sorted = [...lags].sort((a, b) => a - b);
  const stat = (q) => (sorted.length ? percentile(sorted, q) : null);
  const late = content.map((f) => f.painted_minus_design).filter((x) => x !== null && x !== undefined)
    .sort((a, b) => a - b);
  const lateStat = (q) => (late.length ? percentile(late, q) : null);
  const bound = boundMs ?? DEFAULT_BOUND_MS;
  const shown = paints.filter((p) => !p.hidden);
  const paintTimes = shown.map((p) => Math.max(p.t_ms, p.dom_ms ?? p.t_ms));
  const stalls = designPaints ? seenStalls(paintTimes, designPaints, bound) : [];
  const domLag = shown.filter((p) => p.dom_ms !== undefined).map((p) => p.dom_ms - p.t_ms).sort((a, b) => a - b);
  return {
    frames: content.length,
    painted: lags.length,
    unpainted: content.length - lags.length,
    p50_ms: stat(50),
    p95_ms: stat(95),
    max_ms: sorted.length ? sorted[sorted.length - 1] : null,
    paints: paints.length,
    hidden_paints: paints.filter((p) => p.hidden).length,
    frames_dropped: droppedFrames(rafGaps, intervalMs),
    long_frames: longFrames.length,
    long_frames_ms: longFrames.reduce((s, f) => s + f.duration_ms, 0),
    visibility_changes: visibility.length,
    late_p50_ms: lateStat(50),
    late_p95_ms: lateStat(95),
    late_max_ms: late.length ? late[late.length - 1] : null,
    bound_ms: bound,
    over_bound: late.length ? lateStat(95) > bound : null,
    stalls_seen: stalls.length,
    longest_stall_ms: stalls.length ? Math.max(...stalls.map((x) => x.gap_ms)) : null,
    dom_minus_frame_p95_ms: domLag.length ? percentile(domLag, 95) : null,
  };
}
