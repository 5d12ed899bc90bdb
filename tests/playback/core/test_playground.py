"""The designer playground: its URL configuration (pure), variants as streams (pure), and the Django views
(login, playbacks per variant, errors shown on the page, saving a variant as a stimulus with CSRF)."""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playback.core import metrics, playground, synth, texts, tokenizers
from playback.core.playground import Config, Source, Variant
from playback.core.stream import Piece, Stream
from playback.core.timing import TimingSpec

# --- the URL configuration ------------------------------------------------------------------------


def _num(lo: float, hi: float):
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


@st.composite
def variants(draw) -> Variant:
    jitter = draw(st.sampled_from(playground.JITTERS))
    return Variant(
        rate=draw(st.none() | _num(0.01, 10_000)),
        ttft_ms=draw(st.none() | _num(0, 600_000)),
        jitter=jitter,
        jitter_cv=0.0 if jitter == "none" else draw(_num(0, 10)),
        stall_rate=draw(_num(0, 100)),
        stall_ms=draw(_num(0.001, 600_000)),
        burst=draw(st.integers(1, playground.MAX_BURST)),
        tokenizer=draw(st.sampled_from(tokenizers.names())),
        render=draw(st.sampled_from(playground.STRATEGIES)),
        batch_ms=draw(_num(0.001, 10_000)),
        indicator=draw(st.sampled_from(playground.INDICATORS)),
        mode=draw(st.sampled_from(playground.MODES)),
    )


sources = st.one_of(
    st.builds(Source, kind=st.just("demo"), name=st.sampled_from(list(texts.bundled_texts()))),
    st.builds(Source, kind=st.just("synthetic"), name=st.just(""),
              text=st.text(min_size=1, max_size=200).filter(lambda t: t.strip() and "\x00" not in t)),
    st.builds(Source, kind=st.sampled_from(playground.RECORDED_KINDS), name=st.just(""),
              id=st.integers(1, 2**40)),
)
configs = st.builds(Config, source=sources, variants=st.lists(variants(), min_size=2, max_size=4).map(tuple),
                    seed=st.integers(0, 2**32 - 1))


def _through_url(config: Config) -> dict[str, str]:
    """The parameters as a browser sends them back: URL-encoded and decoded again."""
    return dict(parse_qsl(playground.to_query(config), keep_blank_values=True))


@settings(max_examples=200, deadline=None)
@given(configs)
def test_a_configuration_survives_the_url_exactly(config):
    result = playground.parse(_through_url(config))
    assert result.errors == ()
    assert result.config == config


def test_no_parameters_give_the_default_configuration_and_it_round_trips():
    assert playground.parse({}).config == playground.DEFAULT_CONFIG
    assert playground.parse(_through_url(playground.DEFAULT_CONFIG)).config == playground.DEFAULT_CONFIG


def test_only_non_default_variant_fields_are_written():
    config = Config(variants=(Variant(), Variant(render="batch", batch_ms=50.0)))
    params = playground.to_params(config)
    assert {k for k in params if k.startswith("a.")} == set()
    assert params["b.render"] == "batch" and params["b.batch_ms"] == "50"
    assert params["n"] == "2"


@pytest.mark.parametrize(("params", "message"), [
    ({"a.rate": "fast"}, "a.rate: must be a number > 0 and <= 10000, got 'fast'"),
    ({"a.rate": "0"}, "a.rate: must be a number > 0 and <= 10000, got '0'"),
    ({"b.ttft": "nan"}, "b.ttft: must be a number >= 0 and <= 600000, got 'nan'"),
    ({"n": "5"}, "n: must be a whole number from 2 to 4, got '5'"),
    ({"a.render": "blink"}, "a.render: must be one of token, batch, word, line, sentence, smooth, fade, "
                               "ai-sdk-smooth, chat-ui-smooth, accelerating, typewriter; got 'blink'"),
    ({"a.tok": "gpt9"}, "a.tok: must be one of"),
    ({"b.cv": "0.5"}, "b.cv: must be 0 when the jitter is none (choose gamma or lognormal)"),
    ({"src": "trace"}, "id: a trace source needs the trace's id"),
    ({"src": "synthetic", "text": "   "}, "text: a synthetic source needs a text"),
    ({"name": "en-nothing"}, "name: must be one of"),
    ({"a.burst": "2.5"}, "a.burst: must be a whole number from 1 to 64, got '2.5'"),
    ({"colour": "red"}, "colour: unknown parameter"),
])
def test_a_bad_value_is_named_in_a_clear_message_and_falls_back_to_its_default(params, message):
    result = playground.parse({"src": "demo", **params})
    assert any(e.startswith(message) for e in result.errors), result.errors
    assert len(result.config.variants) >= playground.MIN_VARIANTS


def test_a_bad_field_takes_its_default_and_the_good_ones_are_kept():
    result = playground.parse({"src": "demo", "n": "3", "a.rate": "fast", "a.render": "fade", "c.render": "x"})
    assert len(result.errors) == 2
    assert result.config.variants[0] == Variant(render="fade")
    assert result.config.variants[2] == Variant()


def test_empty_values_and_the_settings_of_unused_variants_are_ignored():
    result = playground.parse({"src": "demo", "n": "2", "a.rate": "", "c.rate": "40", "d.render": "fade"})
    assert result.errors == ()
    assert len(result.config.variants) == 2 and result.config.variants[0].rate is None


def test_the_numbers_are_read_exactly_as_written():
    variant = playground.parse({"src": "demo", "a.rate": "33.3", "a.ttft": "1e3"}).config.variants[0]
    assert variant.rate == 33.3 and variant.ttft_ms == 1000.0


# --- variants as streams --------------------------------------------------------------------------


def test_a_synthetic_variant_is_the_same_stream_every_time_and_the_seed_changes_it():
    text = texts.bundled_text("en-chat-sleep")
    variant = Variant(rate=30.0, ttft_ms=250.0, jitter="gamma", jitter_cv=0.6, stall_rate=0.5, stall_ms=400.0,
                      burst=2, tokenizer="qwen3.6")
    first = playground.variant_stream(variant, seed=3, text=text)
    assert first == playground.variant_stream(variant, seed=3, text=text)
    assert first.to_json() == playground.variant_stream(variant, seed=3, text=text).to_json()
    assert first.text == text
    assert first != playground.variant_stream(variant, seed=4, text=text)
    assert first.pieces[0].t_ms == 250.0 and first.pieces[0].tokens == 2


def test_a_recorded_variant_gets_its_ttft_rate_and_stalls_and_keeps_its_text():
    recorded = Stream(tuple(Piece(f"w{i} ", 900.0 + 50.0 * i) for i in range(80)))
    variant = Variant(rate=40.0, ttft_ms=300.0, stall_rate=2.0, stall_ms=500.0)
    out = playground.variant_stream(variant, seed=1, stream=recorded)
    m = metrics.compute(out)
    assert out.text == recorded.text
    assert m.ttft_ms == 300.0
    assert m.stall_count >= 1 and m.stall_total_ms >= 500.0
    assert out == playground.variant_stream(variant, seed=1, stream=recorded)
    plain = playground.variant_stream(Variant(rate=40.0, ttft_ms=300.0), seed=1, stream=recorded)
    assert metrics.compute(plain).tokens_per_s == pytest.approx(40.0)
    kept = playground.variant_stream(Variant(), seed=1, stream=recorded)
    assert kept == recorded


def test_the_saved_spec_rebuilds_the_same_stream():
    config = Config(source=Source(kind="demo", name="zh-chat-tea"),
                    variants=(Variant(), Variant(rate=18.0, jitter="lognormal", jitter_cv=0.4,
                                                 tokenizer="deepseek-v4")),
                    seed=9)
    language, text = texts.bundled_texts()["zh-chat-tea"]
    stream = playground.variant_stream(config.variants[1], seed=9, text=text, language=language)
    spec = playground.variant_spec(config, 1)
    rebuilt = synth.synthesize(texts.bundled_text(spec["text"]), spec["tokenizer"],
                               TimingSpec.from_dict(spec["timing"]), seed=spec["seed"])
    assert [(p.text, p.t_ms) for p in rebuilt.pieces] == [(p.text, p.t_ms) for p in stream.pieces]
    assert playground.parse(dict(parse_qsl(spec["playground"]["query"]))).config == config
    assert spec["playground"]["variant"] == "b" and spec["presentation"]["render"] == "token"


# --- the Django views -----------------------------------------------------------------------------

PAGE = "/playground/"


@pytest.fixture
def designer(django_user_model):
    return django_user_model.objects.create_user("designer", password="pw-designer-1")


@pytest.fixture
def logged_in(client, designer):
    client.force_login(designer)
    return client


def _query(**params) -> str:
    config = playground.parse({"src": "demo", **params}).config
    return playground.to_query(config)


@pytest.mark.django_db
def test_the_playground_requires_login(client):
    response = client.get(f"{PAGE}?{_query()}")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_a_non_canonical_address_redirects_to_the_canonical_one(logged_in):
    response = logged_in.get(PAGE, {"src": "demo", "n": "2", "a.rate": "25.0", "c.rate": "", "b.mode": "live"})
    assert response.status_code == 302
    target = dict(parse_qsl(urlsplit(response["Location"]).query))
    assert target["a.rate"] == "25" and "c.rate" not in target and target["b.mode"] == "live"


@pytest.mark.django_db
def test_the_page_creates_one_owned_playback_per_variant_with_its_metrics(logged_in, designer):
    from playback.models.delivery import Playback

    query = _query(**{"n": "3", "a.rate": "20", "b.render": "batch", "b.batch_ms": "40", "c.mode": "live",
                      "c.ind": "progress"})
    response = logged_in.get(f"{PAGE}?{query}")
    assert response.status_code == 200
    playbacks = list(Playback.objects.filter(owner=designer))
    assert [p.mode for p in playbacks] == ["prefetch", "prefetch", "live"]
    assert playbacks[1].config["render"] == "batch" and playbacks[1].config["batch_ms"] == 40.0
    assert playbacks[2].config["indicator"] == "progress"
    config = playground.parse(dict(parse_qsl(query))).config
    expected = playground.variant_stream(config.variants[0], seed=config.seed,
                                         text=texts.bundled_text("en-chat-coffee"), language="en")
    assert playbacks[0].stream == expected.to_obj()
    page = response.content.decode()
    for p in playbacks:
        assert p.token in page
    rate = metrics.compute(expected).tokens_per_s
    assert re.search(rf'data-metric="tokens_per_s">{rate:.1f}<', page)


@pytest.mark.django_db
def test_bad_values_are_shown_on_the_page_which_still_renders(logged_in):
    response = logged_in.get(PAGE, {"src": "demo", "n": "2", "a.rate": "fast", "b.render": "blink"})
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="pg-errors"' in page
    assert "a.rate: must be a number &gt; 0 and &lt;= 10000, got &#x27;fast&#x27;" in page
    assert "b.render: must be one of" in page
    assert page.count('class="pg-panel"') == 2


@pytest.mark.django_db
def test_an_unknown_trace_is_an_error_on_the_page_not_a_crash(logged_in):
    response = logged_in.get(PAGE, {"src": "trace", "id": "999999"}, follow=True)
    assert response.status_code == 200
    assert "id: no trace 999999" in response.content.decode()


@pytest.mark.django_db
def test_saving_a_variant_with_csrf_stores_a_stimulus_that_reproduces_it(designer):
    from django.test import Client

    from playback.core.stream import Stream as StoredStream
    from playback.models import Stimulus

    client = Client(enforce_csrf_checks=True)
    client.force_login(designer)
    query = _query(**{"a.rate": "31", "b.jitter": "gamma", "b.cv": "0.3", "b.stalls": "0.4"})
    page = client.get(f"{PAGE}?{query}")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode()).group(1)
    response = client.post(f"{PAGE}save/", {"csrfmiddlewaretoken": token, "query": query, "variant": "b",
                                            "name": "jittery b"})
    assert response.status_code == 302 and urlsplit(response["Location"]).query == query
    stimulus = Stimulus.objects.get(owner=designer, name="jittery b")
    config = playground.parse(dict(parse_qsl(query))).config
    expected = playground.variant_stream(config.variants[1], seed=config.seed,
                                         text=texts.bundled_text("en-chat-coffee"), language="en")
    assert StoredStream.from_obj(stimulus.stream) == expected
    assert stimulus.spec["kind"] == "synthetic" and stimulus.spec["timing"]["jitter"] == "gamma"
    follow = client.get(response["Location"])
    assert "jittery b" in follow.content.decode()


@pytest.mark.django_db
def test_saving_without_csrf_is_refused(designer):
    from django.test import Client

    from playback.models import Stimulus

    client = Client(enforce_csrf_checks=True)
    client.force_login(designer)
    response = client.post(f"{PAGE}save/", {"query": _query(), "variant": "a", "name": "sneaky"})
    assert response.status_code == 403
    assert not Stimulus.objects.filter(name="sneaky").exists()


@pytest.mark.django_db
def test_a_save_with_a_bad_variant_or_name_says_why_and_stores_nothing(logged_in):
    from playback.models import Stimulus

    response = logged_in.post(f"{PAGE}save/", {"query": _query(), "variant": "d", "name": "x"}, follow=True)
    assert "Not saved: variant: &#x27;d&#x27; is not one of the variants" in response.content.decode()
    response = logged_in.post(f"{PAGE}save/", {"query": _query(), "variant": "a", "name": "  "}, follow=True)
    assert "Not saved: name:" in response.content.decode()
    assert Stimulus.objects.count() == 0


@pytest.mark.django_db
def test_a_stored_stimulus_is_a_source_and_other_peoples_are_not(logged_in, designer, django_user_model):
    from playback.services import streams as services

    stream = Stream(tuple(Piece(f"p{i} ", 200.0 + 30.0 * i) for i in range(40)))
    mine = services.stimulus_save(name="mine", stream=stream, spec={}, owner=designer)
    other = django_user_model.objects.create_user("other", password="pw-other-1")
    theirs = services.stimulus_save(name="theirs", stream=stream, spec={}, owner=other)
    ok = logged_in.get(PAGE + "?" + urlencode({"src": "stimulus", "id": mine.pk, "seed": 1, "n": 2}))
    assert ok.status_code == 200 and "pg-errors" not in ok.content.decode()
    refused = logged_in.get(PAGE + "?" + urlencode({"src": "stimulus", "id": theirs.pk, "seed": 1, "n": 2}))
    assert f"id: no stimulus {theirs.pk} that you may use" in refused.content.decode()


@pytest.mark.django_db
def test_replay_makes_new_playbacks_and_fidelity_is_only_for_the_owner(logged_in, designer, django_user_model):
    from django.test import Client

    from playback.models.delivery import Playback

    query = _query()
    response = logged_in.post(f"{PAGE}playbacks/?{query}")
    assert response.status_code == 200
    tokens = [v["token"] for v in response.json()["variants"]]
    assert len(tokens) == 2 and Playback.objects.filter(owner=designer, token__in=tokens).count() == 2
    fidelity = logged_in.get(f"{PAGE}fidelity/{tokens[0]}/")
    assert fidelity.status_code == 200 and fidelity.json()["fidelity"]["frames"] == 0
    stranger = Client()
    stranger.force_login(django_user_model.objects.create_user("stranger", password="pw-stranger-1"))
    assert stranger.get(f"{PAGE}fidelity/{tokens[0]}/").status_code == 404
    assert logged_in.post(f"{PAGE}playbacks/?src=demo&a.rate=fast").status_code == 400


@pytest.mark.django_db
def test_each_variant_exports_as_code_for_a_chat_client_and_an_ai_sdk_preset_also_as_smooth_stream(logged_in):
    import html

    query = _query(**{"n": "3", "a.render": "chat-ui-smooth", "b.render": "ai-sdk-smooth", "c.render": "batch",
                      "c.batch_ms": "40"})
    body = html.unescape(logged_in.get(f"{PAGE}?{query}").content.decode())
    assert body.count('data-role="export-module"') == 3
    assert 'strategy: "chat-ui-smooth"' in body and 'strategy: "ai-sdk-smooth"' in body
    assert "options: { intervalMs: 40.0 }" in body  # the variant's own options
    assert body.count('data-role="export-ai-sdk"') == 1 and "experimental_transform: smoothStream()" in body
    assert "js/pacelab-smoother.js" in body
