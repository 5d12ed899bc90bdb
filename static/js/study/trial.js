// A trial page: play the trial's stream(s) with the playback client (one websocket per playback token from
// step-data), then show the response controls and collect the answer.
//
// Timing definitions (docs/participant.md):
//   response_ms  from the moment the response controls are shown to the answer (the choice, or the press of
//                "Next" for a slider); with controls "immediately" they are shown when the trial starts.
//   reading_ms   (reading trials) from the first painted piece of the answer to the "Done reading" press.
// A 2AFC plays its two streams one after the other with the task's gap (the second panel appears when it
// starts), or both at once side by side; answer "a" is the first / left, "b" the second / right.

import { createClient } from "../playback/client.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function playerOptions(config, container, lang) {
  const c = config || {};
  return { container, strategy: c.strategy || "token", strategyOptions: c.strategy_options || {},
           indicator: c.indicator || "none", indicatorOptions: c.indicator_options || {}, lang,
           format: c.format || "markdown" };
}

/** Open and prepare one client per playback; the player options follow the config the server sends in ready. */
async function prepareClients(playbacks, containers, lang, onError) {
  const clients = playbacks.map((pb, i) => {
    const player = { container: containers[i], lang };
    const client = createClient({ token: pb.token, player, onError });
    client.playerOptions = player; // filled in from `ready` below (createClient keeps this object)
    return client;
  });
  await Promise.all(clients.map((c) => c.prepare()));
  for (const c of clients) Object.assign(c.playerOptions, playerOptions(c.config, c.playerOptions.container, lang));
  return clients;
}

/** The time of the first content paint of a player (performance.now() base), or null. */
function firstPaintAt(player) {
  const p = player && player.paintLog.paints.find((e) => e.channel === "content");
  return p ? p.perf_ms : null;
}

/**
 * Run the trial. `ui`: {status(text), showControls(), text(key)}. `state` receives `clients` once they are
 * prepared and `players` as they begin (an early answer needs them). Resolves once every stream has ended.
 */
export async function playTrial({ trial, lang, root, ui, state = {} }) {
  const playbacks = trial.playbacks || [];
  const containers = playbacks.map((_, i) => root.querySelector(`#player-${i}`));
  const errors = [];
  const clients = await prepareClients(playbacks, containers, lang, (m) => errors.push(m));
  state.clients = clients;
  const immediately = trial.controls === "immediately";
  if (immediately) ui.showControls();
  ui.status(ui.text("playing"));
  const players = [];
  state.players = players;
  if (trial.type === "afc" && trial.presentation !== "side_by_side" && clients.length === 2) {
    players.push(clients[0].begin());
    await players[0].done;
    await sleep(Math.max(0, Number(trial.gap_ms ?? 1000)));
    const second = root.querySelector('[data-stage="1"]');
    if (second) second.hidden = false;
    players.push(clients[1].begin());
    await players[1].done;
  } else {
    const at = performance.now();
    for (const c of clients) players.push(c.begin(at));
    await Promise.all(players.map((p) => p.done));
  }
  if (!immediately) ui.showControls();
  ui.status(ui.text("answerNow"));
  return { clients, players, errors };
}

/** Wait (bounded) until the paint logs are acknowledged, then close the sockets. */
export async function finishPlayback(clients, maxWaitMs = 2500) {
  await Promise.race([Promise.allSettled(clients.map((c) => c.done)), sleep(maxWaitMs)]);
  for (const c of clients) c.close();
}

export { firstPaintAt };
