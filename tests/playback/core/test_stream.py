"""The Stream value: validated, immutable, and exact through JSON."""

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from playback.core.stream import Piece, Stream, StreamError, StreamMeta


def test_pieces_must_not_go_back_in_time():
    with pytest.raises(StreamError, match=r"pieces\[1\]\.t_ms: 5.0 is earlier"):
        Stream(pieces=(Piece("a", 10.0), Piece("b", 5.0)))


@pytest.mark.parametrize(
    ("piece", "message"),
    [(Piece("a", -1.0), "must be >= 0"), (Piece("a", float("nan")), "must be >= 0"),
     (Piece("a", 1.0, "thinking"), "is not one of"), (Piece("a", 1.0, tokens=-1), "tokens: must be >= 0"),
     (Piece("a\x00b", 1.0), r"text: contains the NUL character")],
)
def test_invalid_pieces_are_refused_with_the_field_named(piece, message):
    with pytest.raises(StreamError, match=message):
        Stream(pieces=(piece,))


def test_streams_are_immutable():
    s = Stream(pieces=[Piece("a", 1.0)])
    assert isinstance(s.pieces, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.id = "x"  # type: ignore[misc]


def test_text_joins_the_content_channel_only():
    s = Stream(pieces=(Piece("think", 10.0, "reasoning"), Piece("Hel", 20.0), Piece("", 25.0), Piece("lo", 30.0)))
    assert s.text == "Hello"
    assert s.reasoning_text == "think"
    assert len(s.channel("content")) == 3


def test_with_pieces_appends_a_note():
    s = Stream(pieces=(Piece("a", 1.0),), meta=StreamMeta(notes=("imported",)))
    t = s.with_pieces([Piece("b", 2.0)], note="truncated")
    assert t.meta.notes == ("imported", "truncated") and t.text == "b" and s.text == "a"


def test_unknown_format_version_is_refused():
    obj = Stream(pieces=(Piece("a", 1.0),)).to_obj() | {"pacelab_stream": 99}
    with pytest.raises(StreamError, match="unsupported version 99"):
        Stream.from_obj(obj)


pieces = st.lists(
    st.tuples(
        st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6),
        st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False),
        st.sampled_from(["content", "reasoning"]),
        st.integers(min_value=0, max_value=5),
    ),
    max_size=30,
)


@given(pieces, st.text(max_size=20), st.one_of(st.none(), st.integers(min_value=0, max_value=10**6)))
def test_json_round_trip_is_exact(raw, model, output_tokens):
    times = sorted(t for _, t, _, _ in raw)
    s = Stream(
        pieces=tuple(Piece(text, t, ch, k) for (text, _, ch, k), t in zip(raw, times)),
        meta=StreamMeta(source="test", model=model, tokenizer="char", prompt="p", language="zh", notes=("n",)),
        id="r1",
        output_tokens=output_tokens,
    )
    back = Stream.from_json(s.to_json())
    assert back == s
    assert back.content_hash() == s.content_hash()
    assert [p.t_ms for p in back.pieces] == times  # bit-exact floats
