// What the server delivered, and when: the prefetch schedule (sent in parts, put together once all are here)
// and the live frames (their text, when each arrived on the trial clock and when the server sent it). The paint
// report reads these records to say how much text each painted frame held and how late it arrived.

export function createDelivery() {
  let scheduleParts = [];
  let scheduleRecvAt = null;  // performance.now() when the whole schedule was here
  const recvAt = new Map();   // seq -> client receive time (trial clock)
  const sentMs = new Map();   // seq -> server sent_ms (live)
  const textBySeq = new Map(); // seq -> frame text (for the chars of an entry)

  return {
    /**
     * One `schedule` message. A long schedule comes in parts (part 1..parts, in order); returns the whole
     * schedule's frames once all of them are here, else null.
     */
    schedulePart(msg) {
      const parts = msg.parts || 1;
      if ((msg.part || 1) === 1) scheduleParts = [];
      scheduleParts.push(msg.frames);
      if (scheduleParts.length < parts) return null;
      scheduleRecvAt = performance.now();
      const frames = scheduleParts.flat();
      scheduleParts = [];
      return frames;
    },
    /** A live frame, received at `atMs` on the trial clock. */
    frameReceived(msg, atMs) {
      textBySeq.set(msg.seq, msg.text);
      recvAt.set(msg.seq, atMs);
      sentMs.set(msg.seq, msg.sent_ms);
    },
    /** The prefetched schedule's texts, once pacing starts. */
    scheduleLoaded(frames) {
      for (const f of frames) textBySeq.set(f.seq, f.text);
    },
    textOf(seq) { return textBySeq.get(seq) ?? ""; },
    receivedAt(seq) { return recvAt.get(seq); },
    sentAt(seq) { return sentMs.get(seq); },
    get scheduleReceivedAt() { return scheduleRecvAt; },
  };
}
