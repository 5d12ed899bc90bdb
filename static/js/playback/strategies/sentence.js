// sentence: paint whole sentences. A sentence ends at . ! ? … followed by whitespace (so "3.14" does not
// split), at Chinese 。！？ (no space needed), or at a newline (headings and list items have no full stop).

import { createBoundaryStrategy, pastLastMatch } from "./boundary.js";

const BOUNDARY = /[.!?…]+["'”’)\]]*\s+|[。！？]+[”’」』）]*\s*|\n+/gu;

export function lastSentenceBoundary(text) { return pastLastMatch(BOUNDARY, text); }

export function createStrategy(sink) { return createBoundaryStrategy(sink, lastSentenceBoundary); }
