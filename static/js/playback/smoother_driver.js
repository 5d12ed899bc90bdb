// The public API of pacelab-smoother.js (scripts/build_smoother.py appends this file to the strategies): a
// render strategy driven by the browser's animation frames on a stream of text chunks, outside PaceLab.
//
//   import { createSmoother } from "./pacelab-smoother.js";
//   const s = createSmoother({ strategy: "chat-ui-smooth", options: { maxBufferedMs: 400 },
//                              onText: (delta, text) => { el.textContent = text; } });
//   for await (const chunk of stream) s.push(chunk);
//   s.end(); await s.done;
//
// Each chunk is stamped with its arrival (performance.now()); every animation frame the strategy decides what
// to reveal, and onText gets it. While the tab is hidden (no animation frames) a 100 ms timer keeps the clock
// going, as in PaceLab's player.

import { STRATEGIES } from "./strategies/index.js";

export const STRATEGY_NAMES = Object.keys(STRATEGIES).filter((k) => k !== "boundary");
const HIDDEN_TICK_MS = 100;

/** The options `strategy` declares: {name: {type, default, min, max, exclusiveMin, choices, unit, atLeast}}. */
export function strategyOptions(strategy) {
  const mod = STRATEGIES[strategy];
  if (!mod || strategy === "boundary") throw new Error(`pacelab-smoother: unknown strategy ${strategy}`);
  return JSON.parse(JSON.stringify(mod.OPTIONS ?? {}));
}

const hidden = () => typeof document !== "undefined" && document.visibilityState === "hidden";

/**
 * options: {strategy = "smooth", options = {} (the strategy's), onText(delta, text, {at}), onDone(text)}.
 * Returns {push(chunk), end(), stop(), text, done: Promise<text>}.
 */
export function createSmoother({ strategy = "smooth", options = {}, onText = () => {}, onDone = null } = {}) {
  const mod = STRATEGIES[strategy];
  if (!mod || strategy === "boundary") {
    throw new Error(`pacelab-smoother: unknown strategy ${strategy}; known: ${STRATEGY_NAMES.join(", ")}`);
  }
  let revealed = "";
  let text = "";
  let seq = 0;
  let ended = false;
  let finished = false;
  let raf = null;
  let timer = null;
  let resolveDone;
  const done = new Promise((r) => { resolveDone = r; });
  const strat = mod.createStrategy({ reveal(t) { revealed += t; } }, options);

  function frame() {
    const now = performance.now(); // not the rAF timestamp: a chunk may arrive after the frame began
    raf = null;
    timer = null;
    if (finished) return;
    strat.tick(now);
    if (revealed) {
      const delta = revealed;
      revealed = "";
      text += delta;
      onText(delta, text, { at: now });
    }
    if (ended && strat.idle()) {
      finished = true;
      if (onDone) onDone(text);
      resolveDone(text);
      return;
    }
    if (!strat.idle() || ended) schedule();
  }

  function schedule() {
    if (finished || raf !== null || timer !== null) return;
    if (hidden() || typeof requestAnimationFrame === "undefined") {
      timer = setTimeout(frame, HIDDEN_TICK_MS);
    } else {
      raf = requestAnimationFrame(frame);
    }
  }

  return {
    /** A chunk of text arrived from the network. */
    push(chunk) {
      if (ended) throw new Error("pacelab-smoother: push after end");
      const now = performance.now();
      strat.push({ seq: seq++, text: String(chunk), at: now }, now);
      schedule();
    },
    /** No more chunks: what is held is revealed at the strategy's pace, then `done` resolves. */
    end() {
      if (ended) return;
      ended = true;
      strat.end(performance.now());
      schedule();
    },
    /** Stop now (the component unmounts); `done` never resolves. */
    stop() {
      finished = true;
      if (raf !== null) cancelAnimationFrame(raf);
      if (timer !== null) clearTimeout(timer);
    },
    get text() { return text; },
    done,
  };
}

/** Smooth an async iterable of text chunks: yields what is revealed, frame by frame, until the end. */
export async function* smooth(chunks, opts = {}) {
  const queue = [];
  let wake = null;
  let over = false;
  const s = createSmoother({ ...opts, onText: (d) => { queue.push(d); if (wake) wake(); } });
  s.done.then(() => { over = true; if (wake) wake(); });
  (async () => { for await (const c of chunks) s.push(c); s.end(); })();
  for (;;) {
    if (queue.length) { yield queue.shift(); continue; }
    if (over) return;
    await new Promise((r) => { wake = r; });
    wake = null;
  }
}
