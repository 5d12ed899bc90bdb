"""The arrival curves of the named arrival patterns: characters arrived against time, one panel per pattern.

Drawn the way analysis figures are (matplotlib, Agg backend, fonts kept as text, a fixed SVG hash salt so the
same patterns give the same file). ``manage.py arrival_patterns --plot`` writes it; docs/arrival-patterns.md
shows it. Each panel draws the pattern's sample text for three seeds: the bold one is ``seed`` and the faint
ones show what a different seed moves (jitter, stall places, the proxy's flush phase). No Django import.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from playback.core import arrivals, synth, texts  # noqa: E402
from playback.core.stream import Stream  # noqa: E402
from playback.core.textunits import count_chars  # noqa: E402

plt.rcParams.update({"svg.fonttype": "none", "font.size": 8, "axes.spines.top": False, "axes.spines.right": False,
                     "svg.hashsalt": "pacelab"})


def pattern_stream(name: str, seed: int = 0) -> Stream:
    """The pattern's sample text, synthesised with its tokenizer and timing under ``seed``."""
    pattern = arrivals.get(name)
    return synth.synthesize(texts.bundled_text(pattern.text), pattern.tokenizer, pattern.timing, seed=seed)


def arrival_curve(stream: Stream) -> tuple[list[float], list[int]]:
    """(time in ms, characters arrived so far) at each distinct arrival time, starting at (0, 0)."""
    times, counts = [0.0], [0]
    total = 0
    for piece in stream.pieces:
        total += count_chars(piece.text)
        if piece.t_ms == times[-1]:
            counts[-1] = total
        else:
            times.append(piece.t_ms)
            counts.append(total)
    return times, counts


def figure(names: Sequence[str] | None = None, seed: int = 0, extra_seeds: int = 2):
    """A grid of arrival curves, three panels a row."""
    names = list(names) if names is not None else arrivals.names()
    cols = 3
    rows = -(-len(names) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.2 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names):
        pattern = arrivals.get(name)
        for k in range(extra_seeds, -1, -1):
            t, c = arrival_curve(pattern_stream(name, seed + k))
            ax.step([x / 1000.0 for x in t], c, where="post", linewidth=1.4 if k == 0 else 0.7,
                    alpha=1.0 if k == 0 else 0.35, color="C0" if pattern.kind == "timing" else "C1")
        ax.set_title(f"{name} ({pattern.kind})", fontsize=9)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("time since request (s)")
        ax.set_ylabel("characters arrived")
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.tight_layout()
    return fig


def write(path: str | Path, seed: int = 0) -> Path:
    """Write the figure to ``path`` (SVG, PNG at 150 dpi or PDF, by its suffix)."""
    path = Path(path)
    fig = figure(seed=seed)
    try:
        fmt = path.suffix.lstrip(".").lower() or "svg"
        fig.savefig(path, format=fmt, dpi=150 if fmt == "png" else None,
                    metadata={"Date": None} if fmt == "svg" else None)
    finally:
        plt.close(fig)
    return path
