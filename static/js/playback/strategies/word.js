// word: paint whole words; a word is complete when whitespace follows it. Each CJK character, and CJK
// punctuation, is a word by itself (no spaces in Chinese).

import { CJK, createBoundaryStrategy, pastLastMatch } from "./boundary.js";

const BOUNDARY = new RegExp(`\\s+|[${CJK}\\u3000-\\u303f\\uff00-\\uffef]`, "gu");

export function lastWordBoundary(text) { return pastLastMatch(BOUNDARY, text); }

// The options a designer may set (the playground's form, its validation and the export are generated from
// this declaration; playback/core/strategy_options.py reads it, so it stays strict JSON).
export const OPTIONS = {};

export function createStrategy(sink) { return createBoundaryStrategy(sink, lastWordBoundary); }
