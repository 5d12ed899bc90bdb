// The render strategies by name. Each module exports createStrategy(sink, opts) returning
// {push(piece, now), tick(now), end(now), idle()}; `piece` is {seq, text, at} with `at` its arrival time
// (performance.now() time base), and `sink.reveal(text, {fadeMs})` makes text visible.

import * as accelerating from "./accelerating.js";
import * as aiSdkSmooth from "./ai-sdk-smooth.js";
import * as batch from "./batch.js";
import * as chatUiSmooth from "./chat-ui-smooth.js";
import * as fade from "./fade.js";
import * as line from "./line.js";
import * as sentence from "./sentence.js";
import * as smooth from "./smooth.js";
import * as token from "./token.js";
import * as typewriter from "./typewriter.js";
import * as word from "./word.js";

export const STRATEGIES = {
  token, batch, word, line, sentence, smooth, fade,
  // client presets (issue 43)
  "ai-sdk-smooth": aiSdkSmooth, "chat-ui-smooth": chatUiSmooth, accelerating, typewriter,
};

export function createStrategy(name, sink, opts = {}) {
  const mod = STRATEGIES[name];
  if (!mod) throw new Error(`pacelab: unknown strategy ${name}; known: ${Object.keys(STRATEGIES).join(", ")}`);
  return mod.createStrategy(sink, opts);
}
