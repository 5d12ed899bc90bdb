// The render strategies by name. Each module exports createStrategy(sink, opts) returning
// {push(piece, now), tick(now), end(now), idle()}; `piece` is {seq, text, at} with `at` its arrival time
// (performance.now() time base), and `sink.reveal(text, {fadeMs})` makes text visible.

import * as batch from "./batch.js";
import * as fade from "./fade.js";
import * as line from "./line.js";
import * as sentence from "./sentence.js";
import * as smooth from "./smooth.js";
import * as token from "./token.js";
import * as word from "./word.js";

export const STRATEGIES = { token, batch, word, line, sentence, smooth, fade };

export function createStrategy(name, sink, opts = {}) {
  const mod = STRATEGIES[name];
  if (!mod) throw new Error(`pacelab: unknown strategy ${name}; known: ${Object.keys(STRATEGIES).join(", ")}`);
  return mod.createStrategy(sink, opts);
}
