"""A playground variant can name an arrival pattern (``a.arrival=proxy-bursts``): its timing replaces the
variant's, a text kind plays its own text, and the URL, the stream and the saved spec all keep it."""

import pytest

from playback.core import arrivals, playground, texts
from playback.core.playground import Config, Source, Variant


def test_an_arrival_pattern_round_trips_through_the_url():
    config = Config(variants=(Variant(arrival="proxy-bursts"), Variant(arrival="cjk", render="smooth")))
    params = playground.to_params(config)
    assert params["a.arrival"] == "proxy-bursts" and params["b.arrival"] == "cjk"
    assert playground.parse(params).config == config


def test_an_unknown_pattern_is_named_with_the_choices_and_the_variant_keeps_its_own_timing():
    result = playground.parse({"src": "demo", "b.arrival": "bursty"})
    assert result.errors and result.errors[0].startswith("b.arrival: must be one of steady-api, fast-dump")
    assert result.config.variants[1].arrival == ""


def test_the_pattern_replaces_the_variants_timing_but_a_given_ttft_still_applies():
    plain = Variant(rate=80, stall_rate=2.0)
    assert Variant(rate=80, stall_rate=2.0, arrival="long-stalls").timing() == arrivals.get("long-stalls").timing
    assert Variant(ttft_ms=1500, arrival="steady-api").timing().ttft_ms == 1500
    assert plain.timing().rate == 80


def test_a_text_kind_plays_its_own_text_and_tokenizer_in_that_variant_only():
    text = texts.bundled_text("en-chat-coffee")
    english = playground.variant_stream(Variant(arrival="steady-api"), seed=1, text=text, language="en")
    chinese = playground.variant_stream(Variant(arrival="cjk"), seed=1, text=text, language="en")
    assert "".join(p.text for p in english.pieces) == text
    assert "".join(p.text for p in chinese.pieces) == texts.bundled_text("zh-chat-tea")
    assert chinese.meta.tokenizer == "qwen3.6" and chinese.meta.language == "zh"


def test_a_pattern_on_a_recorded_source_is_refused_naming_the_key():
    stream = playground.variant_stream(Variant(), seed=1, text="a b c d")
    with pytest.raises(ValueError, match="^arrival: the pattern 'fast-dump' times a text source"):
        playground.variant_stream(Variant(arrival="fast-dump"), seed=1, stream=stream)


def test_the_saved_spec_names_the_pattern_and_reproduces_the_stream():
    config = Config(source=Source(kind="demo", name="en-chat-sleep"),
                    variants=(Variant(arrival="code-block"), Variant(arrival="keepalive-gaps")))
    code, gaps = playground.variant_spec(config, 0), playground.variant_spec(config, 1)
    assert code["arrival"] == "code-block" and code["text"] == "en-sample-code" and code["tokenizer"] == "cl100k_base"
    assert gaps["arrival"] == "keepalive-gaps" and gaps["text"] == "en-chat-sleep"
    assert gaps["timing"] == arrivals.get("keepalive-gaps").timing.to_dict()


@pytest.mark.django_db
def test_the_page_offers_every_pattern_and_plays_a_text_kind_with_its_own_text(client, django_user_model):
    from playback.core.stream import Stream
    from playback.models.delivery import Playback

    designer = django_user_model.objects.create_user("arrivals-designer", password="pw-designer-1")
    client.force_login(designer)
    query = playground.to_query(playground.parse({"src": "demo", "a.arrival": "proxy-bursts",
                                                  "b.arrival": "cjk"}).config)
    response = client.get(f"/playground/?{query}")
    assert response.status_code == 200
    page = response.content.decode()
    for name in arrivals.names():
        assert f'<option value="{name}"' in page
    assert 'name="a.arrival"' in page and "· proxy-bursts</span>" in page
    a, b = (Stream.from_obj(p.stream) for p in Playback.objects.filter(owner=designer).order_by("pk"))
    assert len({p.t_ms for p in a.pieces}) < len(a.pieces) / 5  # bursts: many pieces per arrival
    assert "".join(p.text for p in b.pieces) == texts.bundled_text("zh-chat-tea")
