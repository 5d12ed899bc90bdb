// The playback socket and its retries: one socket at a time; when it drops (not closed by us), a new one is
// opened after an exponential backoff (backoffMs * 2^n, at most backoffMaxMs), up to maxReconnects times in a
// row. A socket counts as bound once the server said `ready` on it (bind()), which also resets the count.

/** The playback socket URL of this page's host: ws(s)://host/ws/playback/. */
export function playbackUrl(loc = window.location) {
  return `${loc.protocol === "https:" ? "wss" : "ws"}://${loc.host}/ws/playback/`;
}

/**
 * options: {url, WebSocket, backoffMs, backoffMaxMs, maxReconnects} and the client's hooks:
 *   onOpen()              the socket opened (the client runs its clock rounds and says hello)
 *   onMessage(data)       a message of the current socket
 *   onDrop()              the current socket closed, whoever closed it
 *   shouldRetry()         after a drop we did not ask for: false when the client is finished
 *   onInterrupted()       a drop that will be retried (or given up)
 *   onGiveUp(reconnects)  maxReconnects reached: no new socket
 *   onRetry()             a new socket is opened after the backoff
 */
export function createConnection(options) {
  const { url, backoffMs, backoffMaxMs, maxReconnects } = options;
  const WS = options.WebSocket;
  let ws = null;
  let bound = false;
  let closedByUs = false;
  let reconnects = 0;
  let reconnectTimer = null;
  let connections = 0;

  function open() {
    connections += 1;
    bound = false;
    const socket = new WS(url);
    ws = socket;
    socket.onmessage = (ev) => { if (socket === ws) options.onMessage(ev.data); };
    socket.onclose = () => { if (socket === ws) lost(); };
    socket.onerror = () => {}; // onclose follows
    socket.onopen = () => { if (socket === ws) options.onOpen(socket); };
  }

  function lost() {
    ws = null;
    bound = false;
    options.onDrop();
    if (closedByUs || !options.shouldRetry()) return;
    options.onInterrupted();
    if (reconnects >= maxReconnects) {
      options.onGiveUp(reconnects);
      return;
    }
    const delay = Math.min(backoffMaxMs, backoffMs * 2 ** reconnects);
    reconnects += 1;
    options.onRetry();
    reconnectTimer = setTimeout(() => { reconnectTimer = null; open(); }, delay);
  }

  return {
    open,
    /** Send on the open socket; false when there is none. */
    send(obj) {
      if (!ws || ws.readyState !== 1) return false;
      ws.send(JSON.stringify(obj));
      return true;
    },
    /** The server said `ready` on this socket. */
    bind() { bound = true; reconnects = 0; },
    /** Whether `socket` (from onOpen) is still the current one. */
    isCurrent(socket) { return socket === ws; },
    /** Close for good and forget the socket at once (no reconnect, no onDrop). */
    close() {
      closedByUs = true;
      if (reconnectTimer !== null) clearTimeout(reconnectTimer);
      if (ws) ws.close();
      ws = null;
    },
    /** Close for good after a refusal: the socket's close still reaches onDrop. */
    hangUp() {
      closedByUs = true;
      if (ws) ws.close();
    },
    /** Test hook: close the current socket as if the network dropped it; false when there is none. */
    drop(code, reason) {
      if (!ws) return false;
      ws.close(code, reason);
      return true;
    },
    get bound() { return bound; },
    get connections() { return connections; },
  };
}
