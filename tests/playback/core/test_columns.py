"""Streams held in columns (playback.core.columns): the same Stream when built, the same refusals when made."""

from __future__ import annotations

import numpy as np
import pytest

from playback.core.columns import StreamColumns, StreamList
from playback.core.stream import Piece, Stream, StreamError, StreamMeta

META = StreamMeta(source="vllm:x.json", model="m", tokenizer="char", notes=("a note",))


def _columns(text="Hello world", cuts=(0, 5, 5, 11), t_ms=(10.0, 20.0, 20.0), tokens=(2, 0, 3), **kw):
    return StreamColumns(text, np.array(cuts, dtype=np.int32), np.array(t_ms), np.array(tokens, dtype=np.int32),
                         META, kw.pop("id", "vllm:0"), kw.pop("output_tokens", 5))


def test_columns_build_the_stream_the_pieces_would_make():
    built = _columns().check().to_stream()
    expected = Stream(pieces=(Piece("Hello", 10.0, "content", 2), Piece("", 20.0, "content", 0),
                              Piece(" world", 20.0, "content", 3)), meta=META, id="vllm:0", output_tokens=5)
    assert built == expected and built.to_json() == expected.to_json()
    assert built.text == "Hello world" and type(built.pieces[0].t_ms) is float and type(built.pieces[2].tokens) is int


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"text": "Hel\x00lo world"}, "pieces[0].text: contains the NUL character"),
        ({"text": "Hello w\x00orld"}, "pieces[2].text: contains the NUL character"),
        ({"tokens": (2, -1, 3)}, "pieces[1].tokens: must be >= 0, got -1"),
        ({"t_ms": (10.0, float("nan"), 20.0)}, "pieces[1].t_ms: must be >= 0, got nan"),
        ({"t_ms": (-1.0, 20.0, 20.0)}, "pieces[0].t_ms: must be >= 0"),
        ({"t_ms": (10.0, 30.0, 20.0)}, "pieces[2].t_ms: 20.0 is earlier than the previous piece (30.0)"),
        ({"output_tokens": -2}, "output_tokens: must be >= 0"),
        ({"cuts": (0, 6, 5, 11)}, "the cuts do not split the text in order"),
        ({"cuts": (0, 5, 11)}, "columns:"),
    ],
)
def test_checking_columns_refuses_what_a_stream_refuses_with_its_message(change, message):
    if "text" in change:  # the same length as the original, so the cuts still fit
        change = {"text": change["text"], "cuts": (0, 5, 5, 12)}
    with pytest.raises(StreamError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        _columns(**change).check()


def test_a_stream_list_reads_columns_as_streams_and_keeps_plain_streams():
    plain = Stream(pieces=(Piece("x", 1.0),), id="plain")
    streams = StreamList([_columns(id="a"), plain])
    streams.append(_columns(id="b"))
    assert len(streams) == 3 and streams.piece_count() == 7
    assert [s.id for s in streams] == ["a", "plain", "b"]
    assert all(isinstance(s, Stream) for s in streams)
    assert streams[1] is plain and streams[-1] == _columns(id="b").to_stream()
    assert isinstance(streams[:2], StreamList) and [s.id for s in streams[:2]] == ["a", "plain"]
    assert streams == [_columns(id="a").to_stream(), plain, _columns(id="b").to_stream()]
    assert streams != [plain] and StreamList() == [] and bool(StreamList()) is False
    del streams[0]
    assert [s.id for s in streams] == ["plain", "b"]
    other = StreamList([_columns(id="c")])
    streams.extend(other)
    assert isinstance(streams.raw()[-1], StreamColumns)  # moved without being built
