// The replay page: what a participant's screen showed, frame by frame, next to the intended schedule.
// The data (dashboard.core.replay.build) lists each stream piece with its scheduled time and, where the browser's paint
// log named it, the time it was painted. The screen at time t is every frame painted by t, in stream order; the
// schedule pane shows every frame due by t. Both run on one clock, in real time or slowed down; the plot shows
// painted − scheduled per frame with a cursor at the current time.

const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attrs = {}, text = null) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== null) el.textContent = text;
  return el;
}

function screen(pane) {
  const reasoning = document.createElement("div");
  reasoning.className = "reasoning";
  const content = document.createElement("div");
  content.className = "content";
  pane.replaceChildren(reasoning, content);
  return { reasoning, content, shown: -1 };
}

/** The frames visible at time t (ms), in stream order: `timeOf` gives a frame's time (scheduled or painted). */
function visible(frames, t, timeOf) {
  return frames.filter((f) => timeOf(f) <= t);
}

function fill(view, frames) {
  if (frames.length === view.shown) return;
  view.shown = frames.length;
  view.content.textContent = frames.filter((f) => f.channel === "content").map((f) => f.text).join("");
  view.reasoning.textContent = frames.filter((f) => f.channel === "reasoning").map((f) => f.text).join("");
}

function plot(root, data, texts) {
  const W = 760, H = 220, L = 56, R = 12, T = 12, B = 34;
  const painted = data.painted;
  const xmax = Math.max(1, data.duration_ms);
  const lates = painted.map((p) => p.late_ms);
  const ymin = Math.min(0, ...lates);
  const ymax = Math.max(data.bound_ms * 1.2, ...lates, 1);
  const x = (v) => L + (W - L - R) * (v / xmax);
  const y = (v) => T + (H - T - B) * (1 - (v - ymin) / (ymax - ymin));
  const el = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": texts.late, class: "late-plot" });
  el.append(svg("line", { x1: L, y1: y(0), x2: W - R, y2: y(0), stroke: "#888", "stroke-width": 1 }));
  el.append(svg("line", { x1: L, y1: y(data.bound_ms), x2: W - R, y2: y(data.bound_ms), stroke: "#b42318",
    "stroke-dasharray": "4 3", "stroke-width": 1 }));
  el.append(svg("text", { x: W - R, y: y(data.bound_ms) - 3, "text-anchor": "end", "font-size": 10, fill: "#b42318" },
    `${texts.bound} ${data.bound_ms.toFixed(1)} ms`));
  for (const v of [ymin, (ymin + ymax) / 2, ymax]) {
    el.append(svg("text", { x: L - 4, y: y(v) + 3, "text-anchor": "end", "font-size": 10, fill: "#555" }, v.toFixed(0)));
  }
  for (const v of [0, xmax / 2, xmax]) {
    el.append(svg("text", { x: x(v), y: H - B + 14, "text-anchor": "middle", "font-size": 10, fill: "#555" },
      `${Math.round(v)} ms`));
  }
  el.append(svg("text", { x: 12, y: T + (H - T - B) / 2, "font-size": 10, fill: "#333",
    transform: `rotate(-90 12 ${T + (H - T - B) / 2})`, "text-anchor": "middle" }, texts.late));
  for (const p of painted) {
    const dot = svg("circle", { cx: x(p.t_ms), cy: y(p.late_ms), r: 2.5, fill: p.hidden ? "#c98a00"
      : p.late_ms > data.bound_ms ? "#b42318" : "#1f6feb", "data-seq": p.seq });
    dot.append(svg("title", {}, `${texts.frame} ${p.seq}: ${p.late_ms.toFixed(1)} ms${p.hidden ? ` (${texts.hidden})` : ""}`));
    el.append(dot);
  }
  const cursor = svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#222", "stroke-width": 1, id: "replay-cursor" });
  el.append(cursor);
  root.replaceChildren(el);
  return (t) => { const cx = x(Math.min(t, xmax)); cursor.setAttribute("x1", cx); cursor.setAttribute("x2", cx); };
}

export function startReplay(root, data) {
  const texts = {
    play: root.dataset.textPlay, pause: root.dataset.textPause, late: root.dataset.textLate,
    frame: root.dataset.textFrame, bound: root.dataset.textBound, hidden: root.dataset.textHidden,
  };
  const scheduled = screen(document.getElementById("pane-scheduled"));
  const painted = screen(document.getElementById("pane-painted"));
  const playButton = document.getElementById("replay-play");
  const speedSelect = document.getElementById("replay-speed");
  const scrub = document.getElementById("replay-scrub");
  const clock = document.getElementById("replay-clock");
  const moveCursor = plot(document.getElementById("late-plot"), data, texts);
  const end = data.duration_ms;
  const state = { t: 0, playing: false, done: false, speed: Number(speedSelect.value), plays: 0 };
  let origin = 0; // performance.now() at replay time 0, for the current speed
  let raf = null;

  const show = (t) => {
    state.t = Math.min(t, end);
    fill(scheduled, visible(data.scheduled, state.t, (f) => f.t_ms));
    fill(painted, visible(data.painted, state.t, (f) => f.paint_ms));
    clock.textContent = Math.round(state.t);
    scrub.value = String(Math.round(state.t));
    moveCursor(state.t);
  };

  const stop = () => {
    state.playing = false;
    playButton.textContent = texts.play;
    if (raf !== null) cancelAnimationFrame(raf);
    raf = null;
  };

  const tick = (now) => {
    show((now - origin) * state.speed);
    if (state.t >= end) {
      stop();
      state.done = true;
      root.dataset.done = "1";
      return;
    }
    raf = requestAnimationFrame(tick);
  };

  const play = () => {
    if (state.t >= end) show(0);
    state.done = false;
    delete root.dataset.done;
    state.playing = true;
    state.plays += 1;
    playButton.textContent = texts.pause;
    origin = performance.now() - state.t / state.speed;
    raf = requestAnimationFrame(tick);
  };

  playButton.addEventListener("click", () => (state.playing ? stop() : play()));
  document.getElementById("replay-restart").addEventListener("click", () => { stop(); show(0); play(); });
  speedSelect.addEventListener("change", () => {
    state.speed = Number(speedSelect.value);
    origin = performance.now() - state.t / state.speed; // keep the position, change the pace
  });
  scrub.addEventListener("input", () => { stop(); show(Number(scrub.value)); });

  show(0);
  window.__replay = Object.assign(state, {
    paintedText: () => painted.content.textContent,
    scheduledText: () => scheduled.content.textContent,
  });
  return state;
}

const root = document.getElementById("replay");
const node = document.getElementById("replay-data");
if (root && node) startReplay(root, JSON.parse(node.textContent));
