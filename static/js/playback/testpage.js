// The standalone test page: runs one or more players side by side from a config and exposes
// window.__pacelab so browser tests can start them and read paint logs and summaries.
// "live" players are fed by a timer standing in for the network (pushFrame at start + t_ms, then end()).

import { percentile, summarize } from "./fidelity.js";
import { t } from "./i18n.js";
import { createPlayer } from "./player.js";
import { lastBlockBoundary } from "./sinks.js";

const players = {};

function feedLive(player, schedule) {
  const start = player.startTime;
  const frames = [...schedule].sort((a, b) => a.t_ms - b.t_ms);
  let i = 0;
  (function step() {
    while (i < frames.length && performance.now() - start >= frames[i].t_ms) player.pushFrame(frames[i++]);
    if (i < frames.length) setTimeout(step, Math.max(0, start + frames[i].t_ms - performance.now()));
    else player.end();
  })();
}

// An outside observer of what is on screen: after every DOM change, is a waiting indicator present, is any
// answer text present? Records each change of that pair, so tests can check the indicator never shares the
// screen with answer text and never leaves before it.
function watch(root, clock) {
  const states = [];
  const observe = () => {
    const output = root.querySelector(".pl-output");
    const state = { indicator: root.querySelector("[data-pacelab-indicator]") !== null,
                    text: Boolean(output && output.textContent.trim()) };
    const last = states[states.length - 1];
    if (!last || last.indicator !== state.indicator || last.text !== state.text) {
      states.push({ ...state, t_ms: performance.now() - clock.startAt });
    }
  };
  new MutationObserver(observe).observe(root, { subtree: true, childList: true, characterData: true,
                                                attributes: true });
  return states;
}

function run(config) {
  const host = document.getElementById("players");
  const clock = { startAt: performance.now() };
  const entries = [];
  for (const spec of config.players) {
    const cell = document.createElement("section");
    cell.className = "pl-cell";
    cell.innerHTML = `<h2></h2><div class="pl-host" id="player-${spec.id}"></div>`;
    cell.querySelector("h2").textContent = spec.id;
    host.append(cell);
    const player = createPlayer({ ...spec.options, container: cell.querySelector(".pl-host") });
    const entry = { player, batches: [], mode: spec.mode || "prefetch" };
    player.onPaintBatch((b) => entry.batches.push(b));
    players[spec.id] = entry;
    entry.states = watch(cell.querySelector(".pl-host"), clock);
    if (entry.mode === "prefetch") player.load(spec.schedule);
    entries.push([entry, spec]);
  }
  // Start every player together once the page has laid out all of them (two animation frames later), so that
  // building a page of fourteen players is not measured as the first frames' lateness.
  requestAnimationFrame(() => requestAnimationFrame(() => {
    clock.startAt = performance.now();
    for (const [entry, spec] of entries) {
      entry.player.start(clock.startAt);
      if (entry.mode === "live") feedLive(entry.player, spec.schedule);
      entry.player.done.then((summary) => { entry.summary = summary; });
    }
  }));
  return Object.keys(players);
}

function result(id) {
  const { player, batches, summary, mode, states } = players[id];
  const log = player.paintLog;
  const root = document.getElementById(`player-${id}`);
  return {
    mode,
    summary: summary ?? player.summary(),
    paints: log.paints,
    frames: log.frames,
    longFrames: log.longFrames,
    revealedText: player.revealedText,
    textContent: root.querySelector(".pl-output").textContent,
    indicatorPresent: root.querySelector("[data-pacelab-indicator]") !== null,
    batches,
    states,
  };
}

window.__pacelab = {
  run,
  players,
  result,
  results: () => Object.fromEntries(Object.keys(players).map((id) => [id, result(id)])),
  get done() {
    const all = Object.values(players);
    return all.length > 0 && all.every((p) => p.summary !== undefined);
  },
  percentile,
  summarize,
  lastBlockBoundary,
  t,
  ready: true,
};

async function autostart() {
  const tag = document.getElementById("pacelab-config");
  let config = tag && tag.textContent.trim() ? JSON.parse(tag.textContent) : null;
  const url = new URLSearchParams(location.search).get("config");
  if (!config && url) {
    const target = new URL(url, location.href);
    if (target.origin !== location.origin) throw new Error("pacelab: ?config must be same-origin");
    config = await (await fetch(target)).json();
  }
  if (config) run(config);
}

autostart();
