// The designer playground page: plays the variants' playbacks side by side (or one alone) through
// playback/client.js, at normal speed or in slow motion (the player's timeScale), keeps each panel's answer in
// view (own scroll, following the newest text), draws each variant's paint timeline (timeline.js) and its
// smoother numbers (smoother_stats.js, as benchmarks/smoothers.py computes them), and the server's stored
// fidelity summary at the end. A playback is played once: a second play asks the server for fresh ones.
// The settings form shows the options of the chosen strategy only, and checks a typed RegExp or locale
// by its field. window.__playground exposes the runs for
// browser tests.

import { createClient } from "../playback/client.js";
import { percentile } from "../playback/fidelity.js";
import { smootherStats } from "./smoother_stats.js";
import { drawTimeline } from "./timeline.js";

const data = JSON.parse(document.getElementById("playground-data").textContent);
const S = data.strings;
const runs = {};
const variants = {}; // letter -> {letter, token, mode, player, chars, end_ms}
const fresh = {}; // letter -> its token was not played yet
for (const v of data.variants) if (v.token) { variants[v.letter] = v; fresh[v.letter] = true; }
let round = 0;
let following = null; // rAF id of the auto-scroll loop

const $ = (id) => document.getElementById(id);
const panel = (letter) => $(`pg-panel-${letter}`);
const part = (letter, role) => panel(letter).querySelector(`[data-role="${role}"]`);
const fmt = (x) => (x === null || x === undefined || Number.isNaN(x) ? "–" : x.toFixed(1));
const ms = (x) => (x === null || x === undefined || !Number.isFinite(x) ? "–" : `${Math.round(x)} ms`);
const buttons = () => [$("pg-play"), $("pg-replay"), ...document.querySelectorAll("[data-role=play-one]")];

function csrfToken() {
  const input = document.querySelector("input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

function lags(player) {
  return player.paintLog.frames
    .filter((f) => f.channel === "content" && !f.empty && f.painted_minus_scheduled !== null)
    .map((f) => f.painted_minus_scheduled)
    .sort((a, b) => a - b);
}

/** The arrivals of a run: the schedule (prefetch) or the frames the player took in (live), content only. */
function arrivals(run) {
  const client = run.client;
  if (client.frames) {
    return client.frames.filter((f) => (f.channel ?? "content") === "content" && f.text)
      .map((f) => ({ seq: f.seq, t_ms: f.t_ms, chars: f.text.length }));
  }
  return client.player.paintLog.frames.filter((f) => f.channel === "content" && !f.empty)
    .map((f) => ({ seq: f.seq, t_ms: f.t_ms, chars: f.charEnd - f.charStart }))
    .sort((a, b) => a.t_ms - b.t_ms || a.seq - b.seq);
}

const contentPaints = (player) => player.paintLog.paints.filter((p) => p.channel === "content");

function showLive(letter, run, final = false) {
  const player = run.client.player;
  if (!player) return;
  const sorted = lags(player);
  if (sorted.length) {
    part(letter, "p50").textContent = fmt(percentile(sorted, 50));
    part(letter, "p95").textContent = fmt(percentile(sorted, 95));
    part(letter, "painted").textContent = `(${sorted.length} ${S.frames})`;
  }
  const frames = arrivals(run);
  const paints = contentPaints(player);
  const v = variants[letter];
  // the timeline is drawn once the variant finished: building hundreds of SVG nodes while the players paint
  // would take main-thread time from the very paints being measured
  if (final) drawTimeline(part(letter, "timeline"), { frames, paints, totalChars: v.chars, endMs: v.end_ms,
                                                     labels: S });
  const stats = smootherStats(frames, paints);
  run.stats = stats;
  if (!stats) return;
  const stat = (name) => panel(letter).querySelector(`[data-stat="${name}"]`);
  stat("delay").textContent = `${Math.round(stats.p50)} / ${Math.round(stats.p95)} / ${Math.round(stats.max)} ms`;
  stat("ttfp").textContent = ms(stats.ttfp);
  stat("hold").textContent = ms(stats.hold);
  stat("last").textContent = stats.complete ? ms(stats.last) : "–";
}

async function showServer(letter, token, run) {
  const url = data.urls.fidelity.replace("TOKEN", encodeURIComponent(token));
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  const body = await response.json();
  const f = body.fidelity;
  run.server = body;
  const flag = f.flagged ? ` · ${S.flagged}` : "";
  part(letter, "server").textContent =
    `${S.server}: p50 ${fmt(f.p50_ms)} ms · p95 ${fmt(f.p95_ms)} ms · ${f.frames} ${S.frames}${flag}`;
}

function reset(letter) {
  const host = part(letter, "player");
  host.replaceChildren();
  host.className = "pg-player";
  host.dataset.follow = "1";
  host.scrollTop = 0;
  for (const role of ["p50", "p95"]) part(letter, role).textContent = "–";
  for (const role of ["painted", "server", "error"]) part(letter, role).textContent = "";
  for (const dd of panel(letter).querySelectorAll("[data-stat]")) dd.textContent = "–";
  part(letter, "timeline").replaceChildren();
  return host;
}

/** Each playing panel follows its newest text unless the designer scrolled up in it. */
function follow() {
  for (const run of Object.values(runs)) {
    const player = run.client && run.client.player;
    const length = player ? player.revealedText.length : 0;
    if (length === run.followed) continue; // nothing new: no layout read this frame
    run.followed = length;
    const host = part(run.letter, "player");
    if (host.dataset.follow === "1") host.scrollTop = host.scrollHeight;
  }
  following = Object.values(runs).some((r) => !r.finished) ? requestAnimationFrame(follow) : null;
}

for (const host of document.querySelectorAll(".pg-player")) {
  host.addEventListener("scroll", () => {
    host.dataset.follow = host.scrollTop + host.clientHeight >= host.scrollHeight - 24 ? "1" : "0";
  });
}

/** Fresh playbacks from the server: of every variant, or of `only` one. */
async function refresh(only) {
  const body = new URLSearchParams(only ? { only } : {});
  const response = await fetch(`${data.urls.playbacks}${window.location.search}`, {
    method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() }, body,
  });
  const out = await response.json().catch(() => ({ errors: [`HTTP ${response.status}`] }));
  if (!response.ok) throw new Error(`${S.replay_failed}: ${(out.errors || []).join("; ")}`);
  for (const v of out.variants) if (v.token) { variants[v.letter] = v; fresh[v.letter] = true; }
}

async function play(letters, { renew = false } = {}) {
  const myRound = ++round;
  for (const b of buttons()) b.disabled = true;
  for (const run of Object.values(runs)) if (run.client && !run.finished) run.client.close();
  for (const key of Object.keys(runs)) delete runs[key];
  const timeScale = Number($("pg-speed").value) || 1;
  try {
    if (renew) await refresh("");
    else await Promise.all(letters.filter((l) => !fresh[l]).map((l) => refresh(l))); // played ones only
  } catch (e) {
    for (const l of letters) part(l, "error").textContent = String(e.message || e);
    for (const b of buttons()) b.disabled = false;
    return;
  }
  $("pg-stage").scrollIntoView({ block: "start" });
  const clients = letters.map((letter) => {
    const v = variants[letter];
    fresh[letter] = false;
    const container = reset(letter);
    const run = { letter, token: v.token, mode: v.mode, timeScale, result: null, server: null, errors: [],
                  stats: null };
    runs[letter] = run;
    run.client = createClient({
      token: v.token,
      player: { ...v.player, container, timeScale },
      onStatus: (state) => { part(letter, "status").textContent = S[state] || state; },
      onError: (message) => { run.errors.push(message); part(letter, "error").textContent = message; },
      onPaintBatch: () => showLive(letter, run),
    });
    return run;
  });
  try {
    await Promise.all(clients.map((run) => run.client.prepare()));
  } catch (e) {
    for (const b of buttons()) b.disabled = false;
    return;
  }
  if (myRound !== round) return;
  const startAt = performance.now(); // every variant starts on the same clock tick
  for (const run of clients) { run.startAt = startAt; run.client.begin(startAt); }
  if (following === null) following = requestAnimationFrame(follow);
  await Promise.all(clients.map(async (run) => {
    try {
      run.result = await run.client.done;
      run.wallMs = performance.now() - run.startAt;
      showLive(run.letter, run, true);
      await showServer(run.letter, run.token, run);
    } catch (e) {
      run.errors.push(String(e.message || e));
      part(run.letter, "error").textContent = String(e.message || e);
    } finally {
      run.finished = true;
    }
  }));
  if (myRound === round) for (const b of buttons()) b.disabled = false;
}

const letters = () => Object.keys(variants).sort();
$("pg-play").addEventListener("click", () => { play(letters()); });
$("pg-replay").addEventListener("click", () => { play(letters(), { renew: true }); });
for (const button of document.querySelectorAll("[data-role=play-one]")) {
  button.addEventListener("click", () => { play([button.closest(".pg-panel").dataset.letter]); });
}
if (!letters().length) $("pg-play").disabled = true;
$("pg-replay").disabled = true;

// The settings form: only the chosen strategy's options are shown and submitted.
for (const select of document.querySelectorAll("select[data-role=render]")) {
  const form = select.closest("fieldset");
  const sync = () => {
    for (const group of form.querySelectorAll(".pg-opts")) {
      const on = group.dataset.strategy === select.value;
      group.hidden = !on;
      for (const input of group.querySelectorAll("input, select")) input.disabled = !on;
    }
  };
  select.addEventListener("change", sync);
  sync();
}

// Text options are checked as they are typed, by the engine that will run them: a RegExp with `new RegExp`
// (and its sibling `flags`), a locale with Intl.getCanonicalLocales. The message shows by the field, and the
// field's custom validity keeps the form from being applied until it is fixed. The server checks again
// (playback/core/strategy_options.py) for what every browser refuses.
const say = (template, name, error) => template.replace("%(name)s", name).replace("%(error)s", error);

function textProblem(input) {
  const value = input.value;
  const name = input.dataset.option;
  const group = input.closest(".pg-opts");
  try {
    if (input.dataset.format === "regexp" && value) {
      const flags = group.querySelector("input[data-format=flags]");
      new RegExp(value, flags && flags.validity.valid ? flags.value : "");
    } else if (input.dataset.format === "flags" && value) {
      new RegExp("", value);
    } else if (input.dataset.format === "locale" && value) {
      Intl.getCanonicalLocales(value);
    }
  } catch (e) {
    const template = { regexp: S.bad_regexp, locale: S.bad_locale }[input.dataset.format] ?? S.bad_text;
    return say(template, name, e.message);
  }
  return "";
}

function checkText(input) {
  input.setCustomValidity("");
  let message = textProblem(input);
  if (!message && !input.validity.valid) message = say(S.bad_text, input.dataset.option, input.validationMessage);
  input.setCustomValidity(message);
  const shown = input.closest("label").querySelector("[data-role=option-error]");
  shown.textContent = message;
  shown.hidden = !message;
  return !message;
}

for (const input of document.querySelectorAll(".pg-opts input[type=text]")) {
  const group = input.closest(".pg-opts");
  input.addEventListener("input", () => {
    checkText(input);
    if (input.dataset.format === "flags") {
      for (const re of group.querySelectorAll("input[data-format=regexp]")) checkText(re);
    }
  });
  checkText(input);
}

function result(letter) {
  const run = runs[letter];
  const player = run.client.player;
  const paints = player ? contentPaints(player) : [];
  return {
    letter,
    token: run.token,
    mode: run.mode,
    state: run.client.state,
    timeScale: run.timeScale,
    wallMs: run.wallMs ?? null,
    strategyOptions: player ? player.strategyOptions : null,
    revealedText: player ? player.revealedText : null,
    textContent: player ? panel(letter).querySelector(".pl-output").textContent : null,
    summary: run.result ? run.result.summary : null,
    acks: run.client.acks,
    clock: run.client.clock,
    sentBatches: run.client.sentBatches,
    server: run.server,
    errors: run.errors,
    stats: run.stats,
    arrivals: player ? arrivals(run) : [],
    paints: paints.map((p) => ({ t_ms: p.t_ms, dom_ms: p.dom_ms, wall_ms: p.wall_ms, text: p.text })),
    designPaints: player ? player.designPaintTimes : [],
    timelinePoints: part(letter, "timeline").querySelectorAll(".pg-tl-paints circle").length,
    shown: {
      p50: part(letter, "p50").textContent,
      p95: part(letter, "p95").textContent,
      server: part(letter, "server").textContent,
      stats: Object.fromEntries([...panel(letter).querySelectorAll("[data-stat]")]
        .map((dd) => [dd.dataset.stat, dd.textContent])),
    },
  };
}

window.__playground = {
  runs,
  round: () => round,
  get started() { return Object.values(runs).some((r) => r.client && r.client.player); },
  get done() {
    const all = Object.values(runs);
    return all.length > 0 && all.every((r) => r.finished);
  },
  results: () => Object.fromEntries(Object.keys(runs).map((k) => [k, result(k)])),
  ready: true,
};
