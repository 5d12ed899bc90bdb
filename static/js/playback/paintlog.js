// What the browser actually painted, and when: paints, per-frame lags, long animation frames, visibility
// changes and rAF gaps. A frame enters `frames` once settled (painted, or the stream ended without it).
// New entries are handed to onPaintBatch listeners every `everyMs` or `maxEntries`
// (the live page forwards them over the websocket); the full log stays on the object.

const LIST_NAMES = ["paints", "frames", "longFrames", "visibility"];

export function createPaintLog({ everyMs = 250, maxEntries = 50 } = {}) {
  const log = { paints: [], frames: [], longFrames: [], visibility: [], rafGaps: [] };
  const sent = { paints: 0, frames: 0, longFrames: 0, visibility: 0 };
  const listeners = [];
  let lastFlush = null;
  let observer = null;
  let onVisibility = null;

  function unsent() {
    return LIST_NAMES.reduce((n, k) => n + log[k].length - sent[k], 0);
  }

  function flush(now, final = false) {
    lastFlush = now;
    if (!listeners.length || (!unsent() && !final)) return;
    const batch = { final };
    for (const k of LIST_NAMES) {
      batch[k === "longFrames" ? "long_frames" : k] = log[k].slice(sent[k]);
      sent[k] = log[k].length;
    }
    for (const cb of listeners) cb(batch);
  }

  return Object.assign(log, {
    onBatch(cb) { listeners.push(cb); },
    maybeFlush(now) {
      if (lastFlush === null) lastFlush = now;
      if (now - lastFlush >= everyMs || unsent() >= maxEntries) flush(now);
    },
    flush,
    /** Start observing long animation frames (or long tasks) and visibility changes, relative to `start`. */
    observe(start, doc = document) {
      const types = (typeof PerformanceObserver !== "undefined" && PerformanceObserver.supportedEntryTypes) || [];
      const kind = types.includes("long-animation-frame") ? "long-animation-frame"
        : types.includes("longtask") ? "longtask" : null;
      if (kind) {
        observer = new PerformanceObserver((list) => {
          for (const e of list.getEntries()) {
            if (e.startTime + e.duration < start) continue;
            log.longFrames.push({
              kind,
              start_ms: e.startTime - start,
              duration_ms: e.duration,
              blocking_ms: e.blockingDuration ?? Math.max(0, e.duration - 50),
            });
          }
        });
        observer.observe({ type: kind, buffered: false });
      }
      onVisibility = () => log.visibility.push({ t_ms: performance.now() - start, state: doc.visibilityState });
      doc.addEventListener("visibilitychange", onVisibility);
      log.observing = kind;
    },
    disconnect(doc = document) {
      if (observer) observer.disconnect();
      if (onVisibility) doc.removeEventListener("visibilitychange", onVisibility);
      observer = onVisibility = null;
    },
  });
}
