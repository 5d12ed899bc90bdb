// Paint batches sent back to the server until each is acknowledged (docs/protocol.md). The player's paint log
// batches become report entries (one per frame that reached the screen); they go out as `paint` messages
// numbered 1, 2, ... per playback and stay pending until the server's `ack`. After a reconnect every pending
// batch is sent again with its number (the server stores a number once); a batch the server could not store is
// sent again shortly.

const MAX_ENTRIES = 2000; // entries per paint message
const RETRY_MS = 500;      // a batch the server could not store is sent again after this

const codePoints = (s) => Array.from(s).length;

/**
 * options: {send(obj) -> bool, isBound() -> bool (the socket said ready), afterSend() (called after a batch went
 * out on a bound socket)}.
 */
export function createPaintReport({ send, isBound, afterSend = () => {} }) {
  let nextBatch = 1;
  let sent = 0;
  const pending = new Map(); // batch number -> message, until acknowledged
  const hiddenAt = new Map(); // paint t_ms -> hidden flag
  const acks = [];

  /** The report entries of a player's paint batch. ctx: {mode, startAt, delivery} */
  function entriesOf(batch, { mode, startAt, delivery }) {
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
        recv_ms: mode === "live" ? (delivery.receivedAt(f.seq) ?? f.due_ms) : delivery.scheduleReceivedAt - startAt,
        paint_ms: f.painted_ms,
        chars: codePoints(delivery.textOf(f.seq)),
        hidden: hiddenAt.get(f.painted_ms) ?? document.visibilityState === "hidden",
      };
      if (mode === "live" && Number.isFinite(delivery.sentAt(f.seq))) entry.sent_ms = delivery.sentAt(f.seq);
      if (Number.isFinite(f.design_ms)) entry.design_ms = f.design_ms; // the strategy's intended paint time
      out.push(entry);
    }
    return out;
  }

  function queue(entries, clock) {
    const msg = { type: "paint", batch: nextBatch++, entries, clock: clock || undefined };
    pending.set(msg.batch, msg);
    sent += 1;
    if (isBound()) {
      send(msg);
      afterSend();
    }
  }

  return {
    /** Report a player's paint batch; `clock` (the client's estimate) goes with each message. */
    report(batch, ctx, clock) {
      const entries = entriesOf(batch, ctx);
      for (let i = 0; i < entries.length; i += MAX_ENTRIES) queue(entries.slice(i, i + MAX_ENTRIES), clock);
    },
    /** Every pending batch again, in order (a new socket is bound). */
    resendPending() {
      for (const batch of [...pending.keys()].sort((a, b) => a - b)) send(pending.get(batch));
    },
    /** The server's `ack`: the batch is no longer pending. */
    acknowledge(msg) {
      pending.delete(msg.batch);
      acks.push(msg);
    },
    /** The server's error text: a batch it could not store (a database hiccup) goes again shortly. */
    retryIfNotStored(text) {
      const m = /^paint: batch (\d+) was not stored/.exec(text);
      if (!m) return;
      const batch = Number(m[1]);
      setTimeout(() => { if (pending.has(batch)) send(pending.get(batch)); }, RETRY_MS);
    },
    acks,
    get pendingBatches() { return [...pending.keys()]; },
    get pendingCount() { return pending.size; },
    get sentBatches() { return sent; },
  };
}
