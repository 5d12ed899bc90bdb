// accelerating: LobeChat's accelerating typewriter as described for its 1.x chat (issue 43): every animation
// frame reveals a number of characters that rises from `startSpeed` towards `endSpeed` as the backlog grows,
// so a short backlog types out slowly and a long one catches up fast. PaceLab's form of the rise:
// speed = end - (end - start) * exp(-backlog / `rampChars`), rounded down, at least 1 character.
// Written from that description for PaceLab, not copied. Characters are code points (no split surrogates).

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {
  "startSpeed": {"type": "integer", "default": 2, "min": 1, "max": 1000, "unit": "chars/frame"},
  "endSpeed": {"type": "integer", "default": 24, "min": 1, "max": 1000, "unit": "chars/frame", "atLeast": "startSpeed"},
  "rampChars": {"type": "number", "default": 120, "min": 0, "exclusiveMin": true, "max": 100000, "unit": "chars"}
};

export function createStrategy(sink, opts = {}) {
  const start = opts.startSpeed ?? 2;
  const end = opts.endSpeed ?? 24;
  const ramp = opts.rampChars ?? 120;
  if (!(start >= 1 && end >= start)) throw new Error("pacelab: accelerating: need 1 <= startSpeed <= endSpeed");
  const pending = [];
  return {
    push(piece) { pending.push(...Array.from(piece.text)); },
    tick() {
      if (!pending.length) return;
      const speed = Math.max(1, Math.floor(end - (end - start) * Math.exp(-pending.length / ramp)));
      sink.reveal(pending.splice(0, speed).join(""));
    },
    end() {},
    idle() { return pending.length === 0; },
  };
}

/** Characters per frame at a backlog of `backlog` characters (the documented speed curve). */
export function speedAt(backlog, { startSpeed = 2, endSpeed = 24, rampChars = 120 } = {}) {
  return Math.max(1, Math.floor(endSpeed - (endSpeed - startSpeed) * Math.exp(-backlog / rampChars)));
}
