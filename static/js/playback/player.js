// The in-browser player. It paces frames itself in "prefetch" mode (play(schedule)) or takes them as the
// network delivers them in "live" mode (pushFrame / end), hands due pieces to a render strategy once per
// animation frame, removes the waiting indicator in the frame of the first paint, and logs every paint.
//
// Time base: performance.now(). A frame is due when frameTime - start >= t_ms, frameTime being the rAF
// timestamp (the start of the animation frame in which the text is painted). A frame's painted time is the
// moment its last character entered the DOM (performance.now() after the render; never earlier than the
// frame start, which is kept as frame_start_ms); painted_minus_scheduled = that - (start + t_ms). Its design time is
// when the strategy means to show it (designclock.js); painted_minus_design is the lateness the page adds.
//
// Slow motion (`timeScale` < 1, e.g. 0.5): the whole stream runs on a slowed clock, stream time = start +
// (performance.now() - start) * timeScale. Arrivals, the strategy's timers, the design clock and every time in
// the paint log are on that clock, and the strategy is ticked once per 60 Hz frame *of stream time* (every
// second animation frame at ½), so a slowed play paints what the real-speed play would, just slower to watch.
// A live frame's network arrival keeps its offset from the start in stream time (it waits in the inbox).

import { createDesignClock } from "./designclock.js";
import { summarize } from "./fidelity.js";
import { createIndicator } from "./indicators.js";
import { createPaintLog } from "./paintlog.js";
import { createSink } from "./sinks.js";
import { createStrategy } from "./strategies/index.js";

const HIDDEN_TICK_MS = 100; // rAF stops in hidden tabs; keep the clock going with a timer meanwhile
const STREAM_FRAME_MS = 1000 / 60; // slow motion ticks the strategy once per 60 Hz frame of stream time

function resolveContainer(container) {
  const el = typeof container === "string" ? document.querySelector(container) : container;
  if (!el) throw new Error(`pacelab: no container ${container}`);
  return el;
}

function validFrame(f) {
  if (!f || typeof f !== "object") throw new Error("pacelab: a frame must be an object");
  if (!Number.isFinite(f.t_ms)) throw new Error(`pacelab: frame ${f.seq}: t_ms must be a number`);
  if (typeof f.text !== "string") throw new Error(`pacelab: frame ${f.seq}: text must be a string`);
  const channel = f.channel ?? "content";
  if (channel !== "content" && channel !== "reasoning") {
    throw new Error(`pacelab: frame ${f.seq}: channel must be "content" or "reasoning"`);
  }
  return { seq: f.seq, t_ms: f.t_ms, text: f.text, channel, tokens: f.tokens ?? null };
}

const codePoints = (s) => Array.from(s).length;

/**
 * options: {container, strategy = "token", strategyOptions, indicator = "none", indicatorOptions, lang = "en",
 *           format = "markdown" | "plain", batch: {everyMs, maxEntries}, timeScale = 1 (0.5: half speed)}
 */
export function createPlayer(options = {}) {
  const root = resolveContainer(options.container);
  const lang = options.lang || "en";
  const strategyName = options.strategy || "token";
  const indicatorName = options.indicator || "none";
  const doc = root.ownerDocument;
  const scale = options.timeScale ?? 1;
  if (!(scale > 0 && scale <= 1)) throw new Error(`pacelab: timeScale must be in (0, 1], got ${options.timeScale}`);
  const slow = scale !== 1;
  /** Stream time of a performance.now() reading (the identity at normal speed). */
  const streamTime = (real) => (slow && start !== null ? start + (real - start) * scale : real);
  const perfNow = () => streamTime(performance.now());

  root.classList.add("pl-player");
  root.dataset.strategy = strategyName;
  root.dataset.format = options.format || "markdown";
  const output = doc.createElement("div");
  output.className = "pl-output";
  output.lang = lang;
  root.append(output);

  const log = createPaintLog(options.batch);
  const sink = createSink(output, options.format || "markdown");
  let revealedThisFrame = "";
  const strategy = createStrategy(strategyName, {
    reveal(text, opts) {
      if (!text) return;
      revealedThisFrame += text;
      sink.reveal(text, opts);
    },
  }, options.strategyOptions || {});

  let start = null;
  let schedule = null; // prefetch: frames sorted by t_ms
  let next = 0;
  const inbox = []; // live: [frame, arrival]
  let inputEnded = false;
  let strategyEnded = false;
  let finished = false;
  let indicator = null;
  let indicatorRemovedAt = null;
  let firstPaintAt = null;
  let rafId = null;
  let timerId = null;
  let lastRaf = null;
  let design = null; // the strategy's intended paint times (designclock.js), from start()
  let lastTick = null; // the clock of the previous tick: a player's paint times never go back

  // Content frames in reveal order with their [charStart, charEnd) in the revealed text.
  const pendingContent = [];
  let pushedLen = 0;
  let revealedLen = 0;

  let resolveDone;
  const done = new Promise((r) => { resolveDone = r; });

  function settle(rec, paintedAt, frameAt = paintedAt) {
    rec.painted_ms = paintedAt === null ? null : paintedAt - start;
    rec.painted_minus_scheduled = paintedAt === null ? null : paintedAt - (start + rec.t_ms);
    if (paintedAt !== null && rec.channel === "content") {
      rec.frame_start_ms = frameAt - start;
      rec.design_ms = design?.designAt(rec.seq) ?? rec.frame_start_ms; // not yet meant by the design: shown early
      rec.painted_minus_design = rec.painted_ms - rec.design_ms;
    }
    log.frames.push(rec);
  }

  function dispatch(frame, at, now) {
    const rec = { seq: frame.seq, channel: frame.channel, t_ms: frame.t_ms, tokens: frame.tokens,
                  due_ms: now - start };
    if (!frame.text) {
      rec.empty = true;
      settle(rec, null);
      return;
    }
    if (frame.channel === "reasoning") {
      if (indicator && indicator.reasoning && indicatorRemovedAt === null) {
        indicator.reasoning(frame.text);
        log.paints.push(paintEntry(now, frame.text, frame.seq, frame.seq, "reasoning", perfNow()));
        settle(rec, now);
      } else {
        settle(rec, null); // not shown by this indicator (or arrived after the answer began)
      }
      return;
    }
    rec.charStart = pushedLen;
    pushedLen += frame.text.length;
    rec.charEnd = pushedLen;
    pendingContent.push(rec);
    design?.push({ seq: frame.seq, text: frame.text, at }, rec.charEnd, frame.seq);
    strategy.push({ seq: frame.seq, text: frame.text, at }, now);
  }

  // t_ms: the frame start; dom_ms: when the text was in the DOM; after_paint_ms: the first task after the
  // frame's rendering (a setTimeout(0) queued inside the rAF callback), filled in later where rAF drives.
  function paintEntry(now, text, seqFrom, seqTo, channel, domAt) {
    const entry = { t_ms: now - start, perf_ms: now, dom_ms: Math.max(domAt, now) - start, after_paint_ms: null,
                    wall_ms: performance.now() - start, // real time since the start (= dom_ms unless slow motion)
                    chars: codePoints(text), text, seq_from: seqFrom, seq_to: seqTo, channel,
                    hidden: doc.visibilityState === "hidden" };
    if (timerId === null) setTimeout(() => { entry.after_paint_ms = perfNow() - start; }, 0);
    return entry;
  }

  function tick(real, fromRaf) {
    rafId = null;
    if (finished) return;
    let now = streamTime(real);
    if (slow && lastTick !== null && now - lastTick < STREAM_FRAME_MS - 1) { schedule_(); return; }
    if (fromRaf) {
      if (lastRaf !== null) log.rafGaps.push(now - lastRaf);
      lastRaf = now;
    }
    // Chromium and Firefox stamp an animation frame with its vsync time, which on a busy main thread is tens of
    // ms before the callback runs and before frames a socket (or timer) delivered meanwhile (WebKit stamps the
    // callback's own time). Nothing is painted before it arrived, nor before an earlier paint of this player.
    if (inbox.length && !slow) now = Math.max(now, inbox[inbox.length - 1][1]);
    if (lastTick !== null) now = Math.max(now, lastTick);
    lastTick = now;
    const rel = now - start;
    if (schedule) {
      while (next < schedule.length && schedule[next].t_ms <= rel) {
        const f = schedule[next++];
        dispatch(f, start + f.t_ms, now);
      }
    }
    while (inbox.length && (!slow || inbox[0][1] <= now)) { // slow motion: a frame waits for its stream time
      const [f, arrival] = inbox.shift();
      dispatch(f, arrival, now);
    }
    const allIn = inputEnded && (!schedule || next >= schedule.length) && !inbox.length;
    if (allIn && !strategyEnded) {
      strategyEnded = true;
      strategy.end(now);
      design?.end();
    }
    design?.advance(now);
    strategy.tick(now);
    const shownBefore = sink.visible;
    if (revealedThisFrame) {
      const text = revealedThisFrame;
      revealedThisFrame = "";
      sink.flush(now);
      const domAt = Math.max(now, perfNow()); // the text is in the DOM now
      const from = revealedLen;
      revealedLen += text.length;
      let seqFrom = null;
      let seqTo = null;
      for (const rec of pendingContent) {
        if (rec.charStart >= revealedLen) break;
        if (rec.charEnd > from) { seqFrom ??= rec.seq; seqTo = rec.seq; }
      }
      while (pendingContent.length && pendingContent[0].charEnd <= revealedLen) {
        settle(pendingContent.shift(), domAt, now);
      }
      const entry = paintEntry(now, text, seqFrom, seqTo, "content", domAt);
      entry.visible_chars = sink.visible - shownBefore; // non-blank rendered characters added
      log.paints.push(entry);
    } else {
      sink.flush(now); // keeps fades alive between pieces
    }
    // The first paint is the first frame with answer text on screen; the indicator leaves in that frame.
    if (firstPaintAt === null && sink.visible > 0) {
      firstPaintAt = now;
      if (indicator) indicator.remove(now);
      indicatorRemovedAt = now;
    }
    if (indicator && indicatorRemovedAt === null) indicator.tick(now);
    log.maybeFlush(now);
    if (allIn && strategy.idle()) return finish(now);
    schedule_();
  }

  function schedule_() {
    if (finished || rafId !== null || timerId !== null) return; // hidden: the timer alone drives the clock
    rafId = requestAnimationFrame((ts) => tick(ts, true));
  }

  function onVisibility() {
    if (doc.visibilityState === "hidden" && timerId === null && !finished) {
      timerId = setInterval(() => tick(performance.now(), false), HIDDEN_TICK_MS);
      // Firefox keeps running rAF (throttled) in hidden tabs; one driver keeps hidden paints on one cadence.
      if (rafId !== null) { cancelAnimationFrame(rafId); rafId = null; }
    } else if (doc.visibilityState !== "hidden" && timerId !== null) {
      clearInterval(timerId);
      timerId = null;
      lastRaf = null; // the hidden gap is not a dropped frame
      if (rafId === null) schedule_();
    }
  }

  function finish(now) {
    finished = true;
    for (const rec of pendingContent.splice(0)) settle(rec, null);
    if (schedule) while (next < schedule.length) settle({ ...schedule[next++], due_ms: null }, null);
    if (timerId !== null) clearInterval(timerId);
    doc.removeEventListener("visibilitychange", onVisibility);
    log.disconnect(doc);
    root.dataset.state = "done";
    const summary = player.summary();
    log.flush(now, true);
    resolveDone(summary);
  }

  const player = {
    /** Show the indicator and start the clock; `startAt` (performance.now() base) defaults to now. */
    start(startAt) {
      if (start !== null) throw new Error("pacelab: player already started");
      start = startAt ?? performance.now();
      design = createDesignClock(strategyName, options.strategyOptions || {}, start);
      const firstContent = schedule && schedule.find((f) => f.channel === "content" && f.text);
      const io = options.indicatorOptions || {};
      let etaMs = io.expectedMs ?? null;
      if (schedule && schedule.length && etaMs === null) {
        etaMs = io.until === "last" ? schedule[schedule.length - 1].t_ms : firstContent?.t_ms ?? null;
      }
      indicator = createIndicator(indicatorName, root, { lang, start, etaMs, opts: io });
      root.dataset.state = "waiting";
      log.observe(start, doc);
      doc.addEventListener("visibilitychange", onVisibility);
      onVisibility();
      schedule_();
      return player;
    },
    /** Prefetch mode: the whole schedule is known; the player paces it. */
    load(frames) {
      if (schedule || inbox.length) throw new Error("pacelab: schedule already loaded");
      schedule = frames.map(validFrame).sort((a, b) => a.t_ms - b.t_ms);
      inputEnded = true;
      return player;
    },
    /** Live mode: a frame arrived from the network; it is due now. */
    pushFrame(frame) {
      if (inputEnded) throw new Error("pacelab: stream already ended");
      // slow motion: the arrival keeps its offset from the start, now on the stream clock (held until then)
      inbox.push([validFrame(frame), performance.now()]);
      if (start !== null) schedule_();
    },
    /** Live mode: no more frames will come. */
    end() {
      inputEnded = true;
      if (start !== null) schedule_();
    },
    onPaintBatch(cb) { log.onBatch(cb); return player; },
    summary() {
      const gaps = [...log.rafGaps].sort((a, b) => a - b);
      const intervalMs = gaps.length ? Math.max(gaps[Math.floor(gaps.length / 2)], 1000 / 240) : 1000 / 60;
      return {
        strategy: strategyName,
        indicator: indicatorName,
        first_paint_ms: firstPaintAt === null ? null : firstPaintAt - start,
        indicator_removed_ms: indicatorRemovedAt === null ? null : indicatorRemovedAt - start,
        frame_interval_ms: intervalMs,
        long_frame_source: log.observing ?? null,
        ...summarize({ frames: log.frames, longFrames: log.longFrames, visibility: log.visibility,
                       paints: log.paints.filter((p) => p.channel === "content"), rafGaps: log.rafGaps,
                       intervalMs, designPaints: design ? design.paintTimes : [],
                       boundMs: options.fidelityBoundMs }),
      };
    },
    /** Stop without finishing (page teardown). */
    destroy() {
      finished = true;
      if (rafId !== null) cancelAnimationFrame(rafId);
      if (timerId !== null) clearInterval(timerId);
      doc.removeEventListener("visibilitychange", onVisibility);
      log.disconnect(doc);
    },
    get paintLog() { return log; },
    get revealedText() { return sink.text; },
    get startTime() { return start; },
    get timeScale() { return scale; },
    /** When the strategy means to paint (its design clock's paints, ms from the start, stream time). */
    get designPaintTimes() { return design ? [...design.paintTimes] : []; },
    get strategyOptions() { return { ...(options.strategyOptions || {}) }; },
    get finished() { return finished; },
    done,
  };
  return player;
}

/** Prefetch playback in one call: play(schedule, options) starts now and returns the player. */
export function play(schedule, options = {}) {
  return createPlayer(options).load(schedule).start(options.startAt);
}
