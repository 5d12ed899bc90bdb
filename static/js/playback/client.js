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

import { createPlayer } from "./player.js";

const DEFAULTS = {
  clockRounds: 5,
  pingTimeoutMs: 3000,
  backoffMs: 250,
  backoffMaxMs: 8000,
  maxReconnects: 10,
  helloTimeoutMs: 10000,
};

/** The playback socket URL of this page's host: ws(s)://host/ws/playback/. */
export function playbackUrl(loc = window.location) {
  return `${loc.protocol === "https:" ? "wss" : "ws"}://${loc.host}/ws/playback/`;
}

const clientNow = () => performance.timeOrigin + performance.now();
const codePoints = (s) => Array.from(s).length;

/** Best clock estimate from ping rounds [{t0, t1, t2, t3}]: the round with the smallest round trip. */
export function clockEstimate(rounds) {
  let best = null;
  for (const { t0, t1, t2, t3 } of rounds) {
    const rtt = (t3 - t0) - (t2 - t1);
    if (best === null || rtt < best.rtt_ms) {
      best = { offset_ms: ((t1 - t0) + (t2 - t3)) / 2, uncertainty_ms: Math.max(rtt, 0) / 2,
               rtt_ms: Math.max(rtt, 0) };
    }
  }
  return best;
}

/**
 * options: {token, url = playbackUrl(), player: createPlayer options (container, strategy, indicator, ...),
 *           onError(message), onStatus(state), onPaintBatch(batch, player), onAck(ack), WebSocket,
 *           clockRounds, backoffMs, backoffMaxMs, maxReconnects}
 */
export function createClient(options) {
  const opts = { ...DEFAULTS, ...options };
  if (!opts.token) throw new Error("pacelab client: a playback token is required");
  const url = opts.url || playbackUrl();
  const WS = opts.WebSocket || WebSocket;

  const client = {
    token: opts.token,
    mode: null,
    config: null,
    frames: null,          // prefetch: the schedule
    player: null,
    clock: null,           // {offset_ms, uncertainty_ms, rtt_ms} from the best ping round
    clockRounds: [],
    errors: [],
    acks: [],
    sentBatches: 0,
    connections: 0,
    state: "idle",         // idle -> connecting -> ready -> playing -> finishing -> done | failed
    endMsg: null,
  };

  let ws = null;
  let bound = false;
  let closedByUs = false;
  let reconnects = 0;
  let reconnectTimer = null;
  let nextBatch = 1;
  const pending = new Map(); // batch number -> message, until acknowledged
  const pings = new Map();   // id -> resolve
  let pingId = 0;
  let readyWaiter = null;
  let scheduleWaiter = null;
  let started = false;       // begin() was called
  let liveEnded = false;
  let startAt = null;
  let scheduleRecvAt = null;
  const recvAt = new Map();  // seq -> client receive time (trial clock)
  const sentMs = new Map();  // seq -> server sent_ms (live)
  const hiddenAt = new Map(); // paint t_ms -> hidden flag
  const textBySeq = new Map(); // seq -> frame text (for the chars of an entry)
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

  function send(obj) {
    if (!ws || ws.readyState !== 1) return false;
    ws.send(JSON.stringify(obj));
    return true;
  }

  // --- connection ------------------------------------------------------------------------------
  function open() {
    client.connections += 1;
    bound = false;
    const socket = new WS(url);
    ws = socket;
    socket.onmessage = (ev) => { if (socket === ws) receive(ev.data); };
    socket.onclose = () => { if (socket === ws) lost(); };
    socket.onerror = () => {}; // onclose follows
    socket.onopen = () => {
      if (socket !== ws) return;
      clockRoundsThenHello().catch((e) => { if (socket === ws) error(`connection: ${e.message}`); });
    };
  }

  async function ping() {
    const id = ++pingId;
    const t0 = clientNow();
    const pong = await new Promise((resolve, reject) => {
      pings.set(id, { resolve, reject });
      if (!send({ type: "ping", id, t0 })) reject(new Error("socket closed during clock rounds"));
      setTimeout(() => { if (pings.delete(id)) reject(new Error("ping: no pong in time")); }, opts.pingTimeoutMs);
    });
    return { t0, t1: pong.t1, t2: pong.t2, t3: pong.t3 };
  }

  async function clockRoundsThenHello() {
    const rounds = [];
    for (let i = 0; i < opts.clockRounds; i++) rounds.push(await ping());
    client.clockRounds.push(...rounds);
    client.clock = clockEstimate(rounds);
    send({ type: "hello", protocol: 1, token: client.token });
  }

  function lost() {
    ws = null;
    bound = false;
    for (const waiter of pings.values()) waiter.reject(new Error("socket closed during clock rounds"));
    pings.clear();
    if (closedByUs || client.state === "failed" || client.state === "done") return;
    if (started && client.mode === "live" && !liveEnded && client.player) {
      liveEnded = true;
      error("live delivery was interrupted: the connection dropped before the end of the stream");
      client.player.end();
    }
    if (reconnects >= opts.maxReconnects) {
      error(`connection: gave up after ${reconnects} reconnects`, true);
      return;
    }
    const delay = Math.min(opts.backoffMaxMs, opts.backoffMs * 2 ** reconnects);
    reconnects += 1;
    status("reconnecting");
    reconnectTimer = setTimeout(() => { reconnectTimer = null; open(); }, delay);
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
      case "pong": {
        const waiter = pings.get(msg.id);
        if (waiter) { pings.delete(msg.id); waiter.resolve({ ...msg, t3: clientNow() }); }
        break;
      }
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
    bound = true;
    reconnects = 0;
    client.mode = msg.mode;
    client.config = msg.config;
    client.frameCount = msg.frames;
    if (client.state === "connecting" || client.state === "reconnecting") {
      status(started ? (playerDone ? "finishing" : "playing") : "ready");
    }
    // Prefetch before begin(), reconnected: ask for the schedule again (start is accepted once per socket).
    if (!started && client.mode === "prefetch" && client.frames === null && scheduleWaiter) send({ type: "start" });
    for (const batch of [...pending.keys()].sort((a, b) => a - b)) send(pending.get(batch));
    if (readyWaiter) { const w = readyWaiter; readyWaiter = null; w.resolve(msg); }
  }

  let scheduleParts = [];
  function onSchedule(msg) {
    // A long schedule comes in parts (part 1..parts, in order); pacing starts once all of them are here.
    const parts = msg.parts || 1;
    if ((msg.part || 1) === 1) scheduleParts = [];
    scheduleParts.push(msg.frames);
    if (scheduleParts.length < parts) return;
    scheduleRecvAt = performance.now();
    client.frames = scheduleParts.flat();
    scheduleParts = [];
    if (scheduleWaiter) { const w = scheduleWaiter; scheduleWaiter = null; w.resolve(client.frames); }
  }

  function onFrame(msg) {
    if (!client.player || liveEnded) return;
    textBySeq.set(msg.seq, msg.text);
    recvAt.set(msg.seq, performance.now() - startAt);
    sentMs.set(msg.seq, msg.sent_ms);
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
    pending.delete(msg.batch);
    client.acks.push(msg);
    if (opts.onAck) opts.onAck(msg);
    maybeDone();
  }

  function onServerError(text) {
    const m = /^paint: batch (\d+) was not stored/.exec(text);
    if (m) { // a database hiccup: the batch stays pending; send it again shortly
      const batch = Number(m[1]);
      setTimeout(() => { if (pending.has(batch)) send(pending.get(batch)); }, 500);
    }
    if (text.startsWith("hello:")) {
      error(text, true);
      if (readyWaiter) { const w = readyWaiter; readyWaiter = null; w.reject(new Error(text)); }
      if (scheduleWaiter) { const w = scheduleWaiter; scheduleWaiter = null; w.reject(new Error(text)); }
      closedByUs = true;
      if (ws) ws.close();
      return;
    }
    error(text);
  }

  // --- paint batches ---------------------------------------------------------------------------
  function entriesOf(batch) {
    for (const p of batch.paints || []) { // a frame's painted_ms is its paint's DOM moment (or frame start)
      hiddenAt.set(p.t_ms, p.hidden);
      if (p.dom_ms !== undefined) hiddenAt.set(p.dom_ms, p.hidden);
    }
    const out = [];
    for (const f of batch.frames || []) {
      if (f.painted_ms === null || f.painted_ms === undefined || f.empty) continue; // never on screen
      const entry = {
        seq: f.seq,
        t_ms: f.t_ms,
        recv_ms: client.mode === "live" ? (recvAt.get(f.seq) ?? f.due_ms) : scheduleRecvAt - startAt,
        paint_ms: f.painted_ms,
        chars: codePoints(frameText(f)),
        hidden: hiddenAt.get(f.painted_ms) ?? document.visibilityState === "hidden",
      };
      if (client.mode === "live" && Number.isFinite(sentMs.get(f.seq))) entry.sent_ms = sentMs.get(f.seq);
      if (Number.isFinite(f.design_ms)) entry.design_ms = f.design_ms; // the strategy's intended paint time
      out.push(entry);
    }
    return out;
  }

  function frameText(f) { return textBySeq.get(f.seq) ?? ""; }

  function queuePaint(entries) {
    const msg = { type: "paint", batch: nextBatch++, entries, clock: client.clock || undefined };
    pending.set(msg.batch, msg);
    client.sentBatches += 1;
    if (bound) {
      send(msg);
      if (dropAfterPaint && ws) { // test hook: lose the socket before the acknowledgement can arrive
        dropAfterPaint = false;
        ws.close(4000, "test: dropped after a paint batch");
      }
    }
  }

  function onBatch(batch) {
    const entries = entriesOf(batch);
    for (let i = 0; i < entries.length; i += 2000) queuePaint(entries.slice(i, i + 2000));
    if (opts.onPaintBatch) opts.onPaintBatch(batch, client.player);
    if (batch.final) { finalQueued = true; maybeDone(); }
  }

  function maybeDone() {
    if (!playerDone || !finalQueued || pending.size || client.state === "done" || client.state === "failed") return;
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
    open();
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
      for (const f of client.frames) textBySeq.set(f.seq, f.text);
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
  client.close = function close() {
    closedByUs = true;
    if (reconnectTimer !== null) clearTimeout(reconnectTimer);
    if (ws) ws.close();
    ws = null;
  };

  /** Test hook: close the socket right after the next paint batch is sent, before its acknowledgement. */
  client.dropAfterNextPaint = function dropAfterNextPaint() { dropAfterPaint = true; };

  Object.defineProperty(client, "pending", { get: () => [...pending.keys()] });
  Object.defineProperty(client, "connected", { get: () => bound });
  return client;
}
