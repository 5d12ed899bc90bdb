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

/**
 * Summarise a playback.
 * frames: [{seq, channel, painted_minus_scheduled|null}], longFrames: [{duration_ms}],
 * visibility: [{state}], paints: [{hidden}], rafGaps: [ms between successive rAF callbacks].
 */
export function summarize({ frames = [], longFrames = [], visibility = [], paints = [], rafGaps = [],
                            intervalMs = 1000 / 60 }) {
  const content = frames.filter((f) => f.channel === "content" && !f.empty);
  const lags = content.map((f) => f.painted_minus_scheduled).filter((x) => x !== null && x !== undefined);
  const sorted = [...lags].sort((a, b) => a - b);
  const stat = (q) => (sorted.length ? percentile(sorted, q) : null);
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
  };
}
