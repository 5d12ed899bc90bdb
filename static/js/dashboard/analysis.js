// Live progress of an analysis run: stage and percent over a websocket, with a poll of status.json every 5 s
// as the fallback (the channel layer may drop notifications). When the run is done the page reloads to show the
// results; a failed or cancelled run just says so. Close code 4404 (no access) stops the socket.

const POLL_MS = 5_000;
const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 15_000;
const REFUSED = 4404;

export function startProgress(root) {
  const texts = {
    queued: root.dataset.textQueued, running: root.dataset.textRunning, done: root.dataset.textDone,
    failed: root.dataset.textFailed, cancelled: root.dataset.textCancelled,
  };
  // stage names arrive as keys ("psychometric"); the page carries their translations as data-stage-<key>
  const stageLabel = (stage) => {
    if (!stage) return "—";
    return root.dataset[`stage${stage.charAt(0).toUpperCase()}${stage.slice(1)}`] || stage;
  };
  const state = { ws: null, percents: [], stages: [], messages: 0, polls: 0, finished: false, socketStopped: false,
    backoff: BACKOFF_MIN_MS, poller: null, last: null };
  window.__analysis = state; // for tests and the curious

  const apply = (msg, source) => {
    if (state.finished || Number(msg.run) !== Number(root.dataset.run)) return;
    state.last = { ...msg, source };
    const percent = Number(msg.percent) || 0;
    if (!state.percents.includes(percent)) state.percents.push(percent);
    if (msg.stage && !state.stages.includes(msg.stage)) state.stages.push(msg.stage);
    document.getElementById("analysis-bar").value = percent;
    // whole percents, as the server renders them: "0", never "0.0" then "0"
    document.getElementById("analysis-percent").textContent = String(Math.round(percent));
    document.getElementById("analysis-stage").textContent = stageLabel(msg.stage);
    const badge = document.getElementById("analysis-state");
    badge.textContent = texts[msg.state] || msg.state;
    badge.className = `state state-${msg.state}`;
    root.dataset.state = msg.state;
    if (msg.finished) {
      state.finished = true;
      root.dataset.finished = "1";
      clearInterval(state.poller);
      if (state.ws) state.ws.close(1000);
      const cancel = document.getElementById("analysis-cancel");
      if (cancel) cancel.remove();
      if (msg.state === "done") setTimeout(() => location.reload(), 300);
    }
  };

  const poll = async () => {
    if (state.finished) return;
    try {
      const response = await fetch(root.dataset.statusUrl, { headers: { Accept: "application/json" } });
      if (response.ok) {
        state.polls += 1;
        apply(await response.json(), "poll");
      }
    } catch (e) {
      // offline for a moment: the next poll or the socket catches up
    }
  };

  const connect = () => {
    if (state.finished || state.socketStopped) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${scheme}://${location.host}${root.dataset.wsPath}`);
    state.ws = ws;
    ws.onopen = () => { state.backoff = BACKOFF_MIN_MS; };
    ws.onmessage = (event) => {
      const msg = JSON.parse(event.data);
      if (msg.type !== "progress") return;
      state.messages += 1;
      apply(msg, "socket");
    };
    ws.onclose = (event) => {
      if (state.finished) return;
      if (event.code === REFUSED) { state.socketStopped = true; return; }
      const wait = state.backoff * (0.75 + Math.random() * 0.5);
      state.backoff = Math.min(state.backoff * 2, BACKOFF_MAX_MS);
      setTimeout(() => { connect(); poll(); }, wait);
    };
  };

  if (root.dataset.finished === "1") {
    state.finished = true;
    return state;
  }
  connect();
  state.poller = setInterval(poll, POLL_MS);
  return state;
}

const root = document.getElementById("analysis-progress");
if (root) startProgress(root);
