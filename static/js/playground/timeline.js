// A variant's paint timeline as an inline SVG: characters arrived (grey steps, from the schedule) and painted
// (coloured steps, one dot per paint, from the player's paint log) over stream time, so the lag between the
// two curves — what smoothing, word boundaries or a typewriter add — is visible at a glance; a strip below
// plots each paint's lag (painted − arrival of the oldest character it shows) on its own scale.

import { paintTime } from "./smoother_stats.js";

const NS = "http://www.w3.org/2000/svg";
const W = 300;
const H = 140;
const LAG_H = 26; // the lag strip under the curves
const PAD = { l: 30, r: 6, t: 6, b: 18 + LAG_H + 6 };

function el(name, attrs, text) {
  const node = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}

function niceStep(span, target) {
  const raw = span / target;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) || raw;
}

function steps(points, x, y) {
  let d = "";
  let last = 0;
  for (const [t, c] of points) {
    d += d ? `H${x(t).toFixed(1)}V${y(c).toFixed(1)}` : `M${x(t).toFixed(1)},${y(0).toFixed(1)}V${y(c).toFixed(1)}`;
    last = t;
  }
  return { d, last };
}

/**
 * frames: [{t_ms, chars}] arrivals; paints: content paints; totalChars: the answer's length (the y axis);
 * labels: {arrived, painted, chars, time_s, timeline}. Draws into `host` (replacing what was there).
 */
export function drawTimeline(host, { frames, paints, totalChars, endMs, labels }) {
  const arrived = [];
  let a = 0;
  for (const f of frames) { a += f.chars; arrived.push([f.t_ms, a]); }
  const painted = [];
  const lagOf = []; // per paint: painted − arrival of its first (oldest) character
  let c = 0;
  let k = 0; // the arrival holding character c
  let before = 0; // characters arrived before arrival k
  for (const p of paints) {
    while (k < frames.length && before + frames[k].chars <= c) { before += frames[k].chars; k += 1; }
    lagOf.push(k < frames.length ? paintTime(p) - frames[k].t_ms : 0);
    c += p.text.length;
    painted.push([paintTime(p), c]);
  }
  const tMax = Math.max(1, endMs || 0, ...arrived.map((p) => p[0]), ...painted.map((p) => p[0])) * 1.02;
  const cMax = Math.max(1, totalChars || 0, a, c);
  const x = (t) => PAD.l + (t / tMax) * (W - PAD.l - PAD.r);
  const y = (n) => H - PAD.b - (n / cMax) * (H - PAD.t - PAD.b);
  const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "pg-timeline-svg", role: "img",
                          "aria-label": labels.timeline });
  svg.append(el("title", {}, labels.timeline));
  const axes = el("g", { class: "pg-tl-axes" });
  const step = niceStep(tMax / 1000, 5);
  for (let s = 0; s * 1000 <= tMax; s += step) {
    axes.append(el("line", { x1: x(s * 1000), x2: x(s * 1000), y1: PAD.t, y2: H - 12, class: "pg-tl-grid" }));
    axes.append(el("text", { x: x(s * 1000), y: H - 3, "text-anchor": "middle" }, `${+s.toFixed(2)}`));
  }
  axes.append(el("text", { x: W - PAD.r, y: H - 3, "text-anchor": "end", class: "pg-tl-unit" }, "s"));
  axes.append(el("text", { x: PAD.l - 3, y: y(cMax) + 8, "text-anchor": "end" }, String(cMax)));
  axes.append(el("text", { x: PAD.l - 3, y: y(0), "text-anchor": "end" }, "0"));
  axes.append(el("line", { x1: PAD.l, x2: W - PAD.r, y1: y(0), y2: y(0), class: "pg-tl-axis" }));
  axes.append(el("line", { x1: PAD.l, x2: PAD.l, y1: PAD.t, y2: y(0), class: "pg-tl-axis" }));
  svg.append(axes);
  if (arrived.length) svg.append(el("path", { d: steps(arrived, x, y).d, class: "pg-tl-arrived" }));
  if (painted.length) svg.append(el("path", { d: steps(painted, x, y).d, class: "pg-tl-painted" }));
  const dots = el("g", { class: "pg-tl-paints" });
  for (const [t, n] of painted) dots.append(el("circle", { cx: x(t).toFixed(1), cy: y(n).toFixed(1), r: 1.6 }));
  svg.append(dots);
  const legend = el("g", { class: "pg-tl-legend" });
  legend.append(el("line", { x1: PAD.l + 6, x2: PAD.l + 20, y1: PAD.t + 5, y2: PAD.t + 5, class: "pg-tl-arrived" }));
  legend.append(el("text", { x: PAD.l + 23, y: PAD.t + 8 }, labels.arrived));
  legend.append(el("line", { x1: PAD.l + 6, x2: PAD.l + 20, y1: PAD.t + 16, y2: PAD.t + 16, class: "pg-tl-painted" }));
  legend.append(el("text", { x: PAD.l + 23, y: PAD.t + 19 }, labels.painted));
  svg.append(legend);
  // the lag strip
  const lagMax = Math.max(50, ...lagOf);
  const top = H - LAG_H - 14;
  const ly = (ms) => top + LAG_H - (Math.max(0, ms) / lagMax) * LAG_H;
  const strip = el("g", { class: "pg-tl-lag" });
  strip.append(el("line", { x1: PAD.l, x2: W - PAD.r, y1: ly(0), y2: ly(0), class: "pg-tl-axis" }));
  strip.append(el("text", { x: PAD.l - 3, y: ly(lagMax) + 6, "text-anchor": "end" }, `${Math.round(lagMax)}`));
  strip.append(el("text", { x: PAD.l - 3, y: ly(0), "text-anchor": "end" }, "0"));
  strip.append(el("text", { x: PAD.l + 4, y: top + 2 }, `${labels.lag} (ms)`));
  painted.forEach(([t], i) => strip.append(el("line", { x1: x(t).toFixed(1), x2: x(t).toFixed(1), y1: ly(0),
                                                          y2: ly(lagOf[i]).toFixed(1), class: "pg-tl-lagbar" })));
  svg.append(strip);
  host.replaceChildren(svg);
  return svg;
}
