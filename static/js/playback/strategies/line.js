// line: paint whole lines, up to the last newline in the buffer.

import { createBoundaryStrategy } from "./boundary.js";

export function lastLineBoundary(text) { return text.lastIndexOf("\n") + 1; }

export function createStrategy(sink) { return createBoundaryStrategy(sink, lastLineBoundary); }
