// sentence: paint whole sentences. A sentence ends at . ! ? … followed by whitespace (so "3.14" does not
// split), at Chinese 。！？ (no space needed), or at a newline (headings and list items have no full stop).

import { createBoundaryStrategy, pastLastMatch } from "./boundary.js";

const BOUNDARY = /[.!?…]+["'”’)\]]*\s+|[。！？]+[”’」』）]*\s*|\n+/gu;

export function lastSentenceBoundary(text) { return pastLastMatch(BOUNDARY, text); }

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {};

export function createStrategy(sink) { return createBoundaryStrategy(sink, lastSentenceBoundary); }
