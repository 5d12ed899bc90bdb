// The live dashboard: one websocket per study page, snapshots in, numbers on the page.
// The socket only says "here is the latest": the client asks for a fresh snapshot every 10 s and after every
// reconnect (the channel layer may drop notifications, e.g. across a Redis restart), and reconnects with
// exponential backoff. Close code 4404 means no access: the page stops trying.

const REFRESH_MS = 10_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15_000;
const REFUSED = 4404;

export function startLive(root) {
  const texts = {
    live: root.dataset.textLive, connecting: root.dataset.textConnecting,
    reconnecting: root.dataset.textReconnecting, refused: root.dataset.textRefused, none: root.dataset.textNone,
  };
  const state = { ws: null, backoff: BACKOFF_MIN_MS, timer: null, stopped: false, snapshots: 0, last: null };
  window.__dashboard = state; // for tests and the curious

  const status = (key) => {
    const el = document.getElementById("live-status");
    el.textContent = texts[key];
    el.dataset.status = key;
  };

  const url = () => {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${location.host}${root.dataset.wsPath}`;
  };

  const refresh = () => {
    if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify({ type: "refresh" }));
  };

  const connect = () => {
    if (state.stopped) return;
    const ws = new WebSocket(url());
    state.ws = ws;
    ws.onopen = () => {
      state.backoff = BACKOFF_MIN_MS;
      status("live");
      clearInterval(state.timer);
      state.timer = setInterval(refresh, REFRESH_MS);
    };
    ws.onmessage = (event) => {
      const msg = JSON.parse(event.data);
      if (msg.type === "snapshot") render(msg);
    };
    ws.onclose = (event) => {
      clearInterval(state.timer);
      if (event.code === REFUSED) {
        state.stopped = true;
        status("refused");
        return;
      }
      status("reconnecting");
      const wait = state.backoff * (0.75 + Math.random() * 0.5);
      state.backoff = Math.min(state.backoff * 2, BACKOFF_MAX_MS);
      setTimeout(connect, wait);
    };
  };

  const setText = (el, value) => { if (el) el.textContent = value === null || value === undefined ? texts.none : String(value); };

  const cell = (text, cls, code) => {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    if (code) {
      const c = document.createElement("code");
      c.textContent = text;
      td.append(c);
    } else {
      td.textContent = text;
    }
    return td;
  };

  const render = (snap) => {
    state.snapshots += 1;
    state.last = snap;
    for (const [key, n] of Object.entries(snap.counts)) setText(root.querySelector(`[data-count="${key}"]`), n);
    setText(document.getElementById("live-at"), new Date(snap.at).toLocaleTimeString());
    const badge = document.getElementById("study-state");
    if (badge && badge.dataset.state !== snap.study.state) {
      badge.dataset.state = snap.study.state;
      badge.className = `state state-${snap.study.state}`;
    }
    const att = snap.attention;
    setText(document.getElementById("attention-rate"), att.rate === null ? null : `${Math.round(att.rate * 1000) / 10}%`);
    setText(document.getElementById("attention-failed"), att.failed);
    setText(document.getElementById("attention-answered"), att.answered);
    setText(document.getElementById("fidelity-flagged"), snap.fidelity.flagged);
    setText(document.getElementById("fidelity-checked"), snap.fidelity.checked);
    setText(document.getElementById("median-trial"), snap.median_trial_s === null ? null : `${snap.median_trial_s} s`);

    const groups = root.querySelector("#groups tbody");
    groups.replaceChildren(...snap.groups.map((g) => {
      const tr = document.createElement("tr");
      tr.dataset.group = g.group;
      const meter = document.createElement("meter");
      meter.min = 0;
      meter.max = g.quota || 1;
      meter.value = g.completed;
      const td = document.createElement("td");
      td.append(meter);
      tr.append(cell(g.group, "", true), cell(g.started, "num"), cell(g.active, "num"), cell(g.completed, "num"),
        cell(g.quota ?? texts.none, "num"), td);
      return tr;
    }));
    const conditions = root.querySelector("#conditions tbody");
    conditions.replaceChildren(...snap.conditions.map((c) => {
      const tr = document.createElement("tr");
      tr.append(cell(c.block), cell(c.condition, "", true), cell(c.answered, "num"), cell(c.planned, "num"));
      return tr;
    }));
  };

  status("connecting");
  connect();
  return state;
}

const root = document.getElementById("live");
if (root) startLive(root);
