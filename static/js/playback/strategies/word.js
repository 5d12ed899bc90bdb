// word: paint whole words; a word is complete when whitespace follows it. Each CJK character, and CJK
// punctuation, is a word by itself (no spaces in Chinese).

import { CJK, createBoundaryStrategy, pastLastMatch } from "./boundary.js";

const BOUNDARY = new RegExp(`\\s+|[${CJK}\\u3000-\\u303f\\uff00-\\uffef]`, "gu");

export function lastWordBoundary(text) { return pastLastMatch(BOUNDARY, text); }

export function createStrategy(sink) { return createBoundaryStrategy(sink, lastWordBoundary); }
