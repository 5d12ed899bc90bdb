// line: paint whole lines, up to the last newline in the buffer.

import { createBoundaryStrategy } from "./boundary.js";

export function lastLineBoundary(text) { return text.lastIndexOf("\n") + 1; }

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {};

export function createStrategy(sink) { return createBoundaryStrategy(sink, lastLineBoundary); }
