// Shared core of the word, line and sentence strategies: hold text back until a unit boundary arrives,
// then paint everything up to the last boundary in the buffer. The rest is painted when the stream ends.

/**
 * @param sink the render sink
 * @param lastBoundary (text) => index just past the last complete unit in `text`, or 0 when there is none
 */
export function createBoundaryStrategy(sink, lastBoundary) {
  let buffer = "";
  let ended = false;
  return {
    push(piece) { buffer += piece.text; },
    tick() {
      if (!buffer) return;
      const cut = ended ? buffer.length : lastBoundary(buffer);
      if (cut > 0) {
        sink.reveal(buffer.slice(0, cut));
        buffer = buffer.slice(cut);
      }
    },
    end() { ended = true; },
    idle() { return buffer.length === 0; },
  };
}

// CJK characters are words on their own (as playback/core/textunits.py counts them).
export const CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u{20000}-\u{3134f}";

/** Index just past the last match of global regex `re` in `text` (0 when none). */
export function pastLastMatch(re, text) {
  let cut = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    cut = m.index + m[0].length;
    if (m[0].length === 0) re.lastIndex++;
  }
  return cut;
}
