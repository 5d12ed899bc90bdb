// The designer playground page: plays every variant's playback side by side through playback/client.js,
// shows each panel's fidelity live (from the player's paint log) and the server's stored summary at the end.
// "Replay" asks the server for fresh playbacks of the same configuration (a playback is played once).
// window.__playground exposes the runs for browser tests.

import { createClient } from "../playback/client.js";
import { percentile } from "../playback/fidelity.js";

const data = JSON.parse(document.getElementById("playground-data").textContent);
const S = data.strings;
const runs = {};
let variants = data.variants.filter((v) => v.token);
let round = 0;

const panel = (letter) => document.getElementById(`pg-panel-${letter}`);
const part = (letter, role) => panel(letter).querySelector(`[data-role="${role}"]`);
const fmt = (x) => (x === null || x === undefined || Number.isNaN(x) ? "–" : x.toFixed(1));

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

function showLive(letter, player) {
  const sorted = lags(player);
  if (!sorted.length) return;
  part(letter, "p50").textContent = fmt(percentile(sorted, 50));
  part(letter, "p95").textContent = fmt(percentile(sorted, 95));
  part(letter, "painted").textContent = `(${sorted.length} ${S.frames})`;
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
  for (const role of ["p50", "p95"]) part(letter, role).textContent = "–";
  for (const role of ["painted", "server", "error"]) part(letter, role).textContent = "";
  return host;
}

async function playAll() {
  const myRound = ++round;
  document.getElementById("pg-play").disabled = true;
  document.getElementById("pg-replay").disabled = true;
  for (const run of Object.values(runs)) if (run.client) run.client.close();
  for (const key of Object.keys(runs)) delete runs[key];
  const clients = variants.map((v) => {
    const container = reset(v.letter);
    const run = { letter: v.letter, token: v.token, mode: v.mode, result: null, server: null, errors: [] };
    runs[v.letter] = run;
    run.client = createClient({
      token: v.token,
      player: { ...v.player, container },
      onStatus: (state) => { part(v.letter, "status").textContent = S[state] || state; },
      onError: (message) => { run.errors.push(message); part(v.letter, "error").textContent = message; },
      onPaintBatch: (_batch, player) => showLive(v.letter, player),
    });
    return run;
  });
  try {
    await Promise.all(clients.map((run) => run.client.prepare()));
  } catch (e) {
    document.getElementById("pg-replay").disabled = false;
    return;
  }
  if (myRound !== round) return;
  const startAt = performance.now(); // every variant starts on the same clock tick
  for (const run of clients) run.client.begin(startAt);
  await Promise.all(clients.map(async (run) => {
    try {
      run.result = await run.client.done;
      showLive(run.letter, run.client.player);
      await showServer(run.letter, run.token, run);
    } catch (e) {
      run.errors.push(String(e.message || e));
      part(run.letter, "error").textContent = String(e.message || e);
    } finally {
      run.finished = true;
    }
  }));
  if (myRound === round) document.getElementById("pg-replay").disabled = false;
}

async function replay() {
  document.getElementById("pg-replay").disabled = true;
  const response = await fetch(`${data.urls.playbacks}${window.location.search}`, {
    method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrfToken() },
  });
  const body = await response.json().catch(() => ({ errors: [`HTTP ${response.status}`] }));
  if (!response.ok) {
    for (const v of variants) part(v.letter, "error").textContent = `${S.replay_failed}: ${body.errors.join("; ")}`;
    document.getElementById("pg-replay").disabled = false;
    return;
  }
  variants = body.variants.filter((v) => v.token);
  await playAll();
}

document.getElementById("pg-play").addEventListener("click", () => { playAll(); });
document.getElementById("pg-replay").addEventListener("click", () => { replay(); });
if (!variants.length) document.getElementById("pg-play").disabled = true;

function result(letter) {
  const run = runs[letter];
  const player = run.client.player;
  return {
    letter,
    token: run.token,
    mode: run.mode,
    state: run.client.state,
    revealedText: player ? player.revealedText : null,
    textContent: player ? panel(letter).querySelector(".pl-output").textContent : null,
    summary: run.result ? run.result.summary : null,
    acks: run.client.acks,
    clock: run.client.clock,
    sentBatches: run.client.sentBatches,
    server: run.server,
    errors: run.errors,
    shown: {
      p50: part(letter, "p50").textContent,
      p95: part(letter, "p95").textContent,
      server: part(letter, "server").textContent,
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
