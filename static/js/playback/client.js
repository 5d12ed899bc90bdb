// The browser end of the playback websocket (docs/protocol.md): clock rounds, hello, delivery (prefetch or
// live) into a player (player.js), and paint batches sent back until each is acknowledged.
//
//   const client = createClient({ token, player: { container, strategy, indicator, lang }, onError });
//   await client.prepare();          // connect, clock rounds, hello -> ready; prefetch: the whole schedule
//   client.begin(startAt);           // the trial starts (several clients may share one startAt)
//   const result = await client.done;  // the player finished and every paint batch was acknowledged
//
// Time bases. Paint entries are on the trial clock: ms since `startAt` (performance.now() time base), which is
// when the client begins pacing (prefetch) or sends `start` (live). Clock pings use the client's wall clock at
// performance precision (performance.timeOrigin + performance.now()), so `clock.offset_ms` is server epoch
// minus client epoch, taken from the ping round with the smallest round trip.
//
// Reliability. Batches are numbered 1, 2, ... per playback and kept until acknowledged. When the socket drops,
// the client reconnects with exponential backoff, says hello again and re-sends every unacknowledged batch with
// its number; the server stores a batch number once (`ack.stored` is false for a repeat). A live trial cannot
// resume on a new socket (the server stopped pacing): the player ends with what arrived and an error is raised.
//
// This module holds the client's states and its public API; each concern is a module of client/:
// connection.js (the socket and its retries), clock.js (clock rounds), delivery.js (the schedule and live
// frames as they arrive) and paintreport.js (paint batches until acknowledged).

import { clockEstimate, createClockSync } from "./client/clock.js";
import { createConnection, playbackUrl } from "./client/connection.js";
import { createDelivery } from "./client/delivery.js";
import { createPaintReport } from "./client/paintreport.js";
import { createPlayer } from "./player.js";

export { clockEstimate, playbackUrl };

const DEFAULTS = {
  clockRounds: 5,
  pingTimeoutMs: 3000,
  backoffMs: 250,
  backoffMaxMs: 8000,
  maxReconnects: 10,
  helloTimeoutMs: 10000,
};

/**
 * options: {token, url = playbackUrl(), player: createPlayer options (container, strategy, indicator, ...),
 *           onError(message), onStatus(state), onPaintBatch(batch, player), onAck(ack), WebSocket,
 *           clockRounds, backoffMs, backoffMaxMs, maxReconnects}
 */
export function createClient(options) {
  const opts = { ...DEFAULTS, ...options };
  if (!opts.token) throw new Error("pacelab client: a playback token is required");

  const client = {
    token: opts.token,
    mode: null,
    config: null,
    frames: null,          // prefetch: the schedule
    player: null,
    clock: null,           // {offset_ms, uncertainty_ms, rtt_ms} from the best ping round
    clockRounds: [],
    errors: [],
    acks: null,            // the server's acknowledgements, in arrival order (paintreport.js)
    state: "idle",         // idle -> connecting -> ready -> playing -> finishing -> done | failed
    endMsg: null,
  };

  let readyWaiter = null;
  let scheduleWaiter = null;
  let started = false;       // begin() was called
  let liveEnded = false;
  let startAt = null;
  let playerDone = false;
  let finalQueued = false;
  let dropAfterPaint = false;
  let resolveDone;
  let rejectDone;
  client.done = new Promise((resolve, reject) => { resolveDone = resolve; rejectDone = reject; });
  client.done.catch(() => {}); // callers that never await done must not see an unhandled rejection

  function status(state) {
    client.state = state;
    if (opts.onStatus) opts.onStatus(state);
  }

  function error(message, fatal = false) {
    client.errors.push(message);
    if (opts.onError) opts.onError(message);
    if (fatal) {
      status("failed");
      rejectDone(new Error(message));
    }
  }

  const connection = createConnection({
    url: opts.url || playbackUrl(),
    WebSocket: opts.WebSocket || WebSocket,
    backoffMs: opts.backoffMs,
    backoffMaxMs: opts.backoffMaxMs,
    maxReconnects: opts.maxReconnects,
    onOpen: (socket) => {
      clockRoundsThenHello().catch((e) => { if (connection.isCurrent(socket)) error(`connection: ${e.message}`); });
    },
    onMessage: receive,
    onDrop: () => clock.abort(),
    shouldRetry: () => client.state !== "failed" && client.state !== "done",
    onInterrupted: () => {
      if (started && client.mode === "live" && !liveEnded && client.player) {
        liveEnded = true;
        error("live delivery was interrupted: the connection dropped before the end of the stream");
        client.player.end();
      }
    },
    onGiveUp: (reconnects) => error(`connection: gave up after ${reconnects} reconnects`, true),
    onRetry: () => status("reconnecting"),
  });
  const send = (obj) => connection.send(obj);
  const clock = createClockSync({ send, timeoutMs: opts.pingTimeoutMs });
  const delivery = createDelivery();
  const paints = createPaintReport({
    send,
    isBound: () => connection.bound,
    afterSend: () => { // test hook: lose the socket before the acknowledgement can arrive
      if (dropAfterPaint && connection.drop(4000, "test: dropped after a paint batch")) dropAfterPaint = false;
    },
  });
  client.acks = paints.acks;

  async function clockRoundsThenHello() {
    const rounds = await clock.rounds(opts.clockRounds);
    client.clockRounds.push(...rounds);
    client.clock = clockEstimate(rounds);
    send({ type: "hello", protocol: 1, token: client.token });
  }

  // --- inbound ---------------------------------------------------------------------------------
  function receive(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch (e) {
      error(`server sent malformed JSON: ${e.message}`);
      return;
    }
    switch (msg.type) {
      case "pong": clock.pong(msg); break;
      case "ready": onReady(msg); break;
      case "schedule": onSchedule(msg); break;
      case "frame": onFrame(msg); break;
      case "end": onEnd(msg); break;
      case "ack": onAck(msg); break;
      case "error": onServerError(msg.error || "unknown error"); break;
      default: break;
    }
  }

  function onReady(msg) {
    connection.bind();
    client.mode = msg.mode;
    client.config = msg.config;
    client.frameCount = msg.frames;
    if (client.state === "connecting" || client.state === "reconnecting") {
      status(started ? (playerDone ? "finishing" : "playing") : "ready");
    }
    // Prefetch before begin(), reconnected: ask for the schedule again (start is accepted once per socket).
    if (!started && client.mode === "prefetch" && client.frames === null && scheduleWaiter) send({ type: "start" });
    paints.resendPending();
    if (readyWaiter) { const w = readyWaiter; readyWaiter = null; w.resolve(msg); }
  }

  function onSchedule(msg) {
    const frames = delivery.schedulePart(msg);
    if (frames === null) return; // more parts to come: pacing starts once all of them are here
    client.frames = frames;
    if (scheduleWaiter) { const w = scheduleWaiter; scheduleWaiter = null; w.resolve(client.frames); }
  }

  function onFrame(msg) {
    if (!client.player || liveEnded) return;
    delivery.frameReceived(msg, performance.now() - startAt);
    client.player.pushFrame(msg);
  }

  function onEnd(msg) {
    client.endMsg = msg;
    if (client.mode === "live" && client.player && !liveEnded) {
      liveEnded = true;
      client.player.end();
    }
  }

  function onAck(msg) {
    paints.acknowledge(msg);
    if (opts.onAck) opts.onAck(msg);
    maybeDone();
  }

  function onServerError(text) {
    paints.retryIfNotStored(text);
    if (text.startsWith("hello:")) {
      error(text, true);
      if (readyWaiter) { const w = readyWaiter; readyWaiter = null; w.reject(new Error(text)); }
      if (scheduleWaiter) { const w = scheduleWaiter; scheduleWaiter = null; w.reject(new Error(text)); }
      connection.hangUp();
      return;
    }
    error(text);
  }

  // --- paint batches from the player -----------------------------------------------------------
  function onBatch(batch) {
    paints.report(batch, { mode: client.mode, startAt, delivery }, client.clock);
    if (opts.onPaintBatch) opts.onPaintBatch(batch, client.player);
    if (batch.final) { finalQueued = true; maybeDone(); }
  }

  function maybeDone() {
    if (!playerDone || !finalQueued || paints.pendingCount || client.state === "done" || client.state === "failed") {
      return;
    }
    status("done");
    resolveDone({ summary: client.summary, acks: client.acks, clock: client.clock, mode: client.mode,
                  errors: client.errors, endMsg: client.endMsg });
  }

  // --- public API ------------------------------------------------------------------------------
  /** Connect, run the clock rounds and bind the playback; in prefetch mode also fetch the whole schedule. */
  client.prepare = async function prepare() {
    if (client.state !== "idle") throw new Error("pacelab client: prepare() was already called");
    status("connecting");
    const ready = new Promise((resolve, reject) => { readyWaiter = { resolve, reject }; });
    connection.open();
    const msg = await ready;
    if (msg.mode === "prefetch") {
      const frames = new Promise((resolve, reject) => { scheduleWaiter = { resolve, reject }; });
      send({ type: "start" });
      await frames;
    }
    return msg;
  };

  /** Start the trial at `at` (performance.now() time base; default now) and return the player. */
  client.begin = function begin(at) {
    if (started) throw new Error("pacelab client: begin() was already called");
    if (client.state !== "ready") throw new Error(`pacelab client: not ready (state ${client.state})`);
    started = true;
    const player = createPlayer(opts.player || {});
    client.player = player;
    player.onPaintBatch(onBatch);
    startAt = at ?? performance.now();
    if (client.mode === "prefetch") {
      delivery.scheduleLoaded(client.frames);
      player.load(client.frames).start(startAt);
    } else {
      player.start(startAt);
      send({ type: "start" });
    }
    status("playing");
    player.done.then((summary) => {
      client.summary = summary;
      playerDone = true;
      if (client.state === "playing") status("finishing");
      maybeDone();
    });
    return player;
  };

  /** prepare() then begin() now. */
  client.play = async function playNow() {
    await client.prepare();
    return client.begin();
  };

  /** Close for good (no reconnect). Unacknowledged batches stay in `client.pending`. */
  client.close = function close() { connection.close(); };

  /** Test hook: close the socket right after the next paint batch is sent, before its acknowledgement. */
  client.dropAfterNextPaint = function dropAfterNextPaint() { dropAfterPaint = true; };

  Object.defineProperty(client, "pending", { get: () => paints.pendingBatches });
  Object.defineProperty(client, "connected", { get: () => connection.bound });
  Object.defineProperty(client, "sentBatches", { get: () => paints.sentBatches, enumerable: true });
  Object.defineProperty(client, "connections", { get: () => connection.connections, enumerable: true });
  return client;
}
