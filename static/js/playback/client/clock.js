// Clock rounds over the playback socket (docs/protocol.md): ping/pong pairs timed on the client's wall clock at
// performance precision, and the offset estimate from the round with the smallest round trip. The offset is
// server epoch minus client epoch.

/** The client's wall clock at performance precision (ms since the epoch). */
export const clientNow = () => performance.timeOrigin + performance.now();

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
 * The pings of one client: `rounds(n)` sends n pings one after the other and resolves with their timings;
 * `pong(msg)` answers a ping; `abort()` fails every ping still waiting (the socket closed).
 * send(obj) -> false when the socket is not open; timeoutMs: how long a ping waits for its pong.
 */
export function createClockSync({ send, timeoutMs }) {
  const pings = new Map(); // id -> {resolve, reject}
  let pingId = 0;

  async function ping() {
    const id = ++pingId;
    const t0 = clientNow();
    const pong = await new Promise((resolve, reject) => {
      pings.set(id, { resolve, reject });
      if (!send({ type: "ping", id, t0 })) reject(new Error("socket closed during clock rounds"));
      setTimeout(() => { if (pings.delete(id)) reject(new Error("ping: no pong in time")); }, timeoutMs);
    });
    return { t0, t1: pong.t1, t2: pong.t2, t3: pong.t3 };
  }

  return {
    async rounds(n) {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await ping());
      return out;
    },
    pong(msg) {
      const waiter = pings.get(msg.id);
      if (waiter) { pings.delete(msg.id); waiter.resolve({ ...msg, t3: clientNow() }); }
    },
    abort() {
      for (const waiter of pings.values()) waiter.reject(new Error("socket closed during clock rounds"));
      pings.clear();
    },
  };
}
