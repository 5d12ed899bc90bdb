"""The designer playground (docs/playground.md): compare 2 to 4 variants of one stream side by side.

The configuration lives in the URL (``playback.core.playground``). The page builds each variant's stream on the
server (deterministic), computes its metrics and creates one playback per variant owned by the designer; the
browser plays them over the playback websocket (static/js/playground/playground.js with playback/client.js).
Any logged-in user is a designer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from pacelab.tokens import token_shaped
from playback import selectors
from playback.core import arrivals, metrics, playground, smoother_export, strategy_options, texts, tokenizers
from playback.core.stream import Stream
from playback.models.delivery import Playback
from playback.services import streams as services
from playback.services.delivery import playback_create, playback_fidelity

NAME_MAX = 200


@dataclass
class Built:
    """Each variant's stream (or the error that prevented it) for one configuration."""

    streams: list[Stream | None] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    language: str = ""


def _source(user, source: playground.Source) -> tuple[dict[str, Any], str]:
    """The resolved source as ``variant_stream`` keyword arguments, and its language; ``ValueError`` if unusable."""
    if source.kind == "demo":
        language, text = texts.bundled_texts()[source.name]
        return {"text": text, "language": language}, language
    if source.kind == "synthetic":
        return {"text": source.text}, ""
    if source.kind == "trace":
        trace = selectors.traces_for(user).filter(pk=source.id).first()
        if trace is None:
            raise ValueError(_("id: no trace %(id)s that you may use") % {"id": source.id})
        stream = selectors.trace_stream(trace)
        return {"stream": stream}, stream.meta.language
    stimulus = selectors.stimuli_for(user).filter(pk=source.id).first()
    if stimulus is None:
        raise ValueError(_("id: no stimulus %(id)s that you may use") % {"id": source.id})
    stream = selectors.stimulus_stream(stimulus)
    return {"stream": stream}, stream.meta.language


def build(user, config: playground.Config, only: str = "") -> Built:
    """Each variant's stream (only variant ``only``'s when given; the others are left out as None)."""
    built = Built()
    try:
        source, built.language = _source(user, config.source)
    except ValueError as exc:
        built.errors.append(str(exc))
        built.streams = [None] * len(config.variants)
        return built
    for letter, variant in zip(playground.LETTERS, config.variants):
        if only and letter != only:
            built.streams.append(None)
            continue
        try:
            built.streams.append(playground.variant_stream(variant, seed=config.seed, **source))
        except (ValueError, KeyError) as exc:
            built.errors.append(f"{letter}: {exc}")
            built.streams.append(None)
    return built


def _playbacks(user, config: playground.Config, built: Built) -> list[dict[str, Any]]:
    """One new playback per buildable variant, and what the page needs to show and play it."""
    out = []
    for letter, variant, stream in zip(playground.LETTERS, config.variants, built.streams):
        lang = (stream.meta.language if stream is not None else "") or built.language or get_language() or "en"
        item: dict[str, Any] = {"letter": letter, "variant": variant, "token": None, "metrics": None,
                                "question": playground.question(config, variant)}
        if stream is not None:
            playback = playback_create(
                stream=stream, mode=variant.mode, owner=user,
                config={"render": variant.render, "batch_ms": variant.batch_ms, "indicator": variant.indicator,
                        "options": variant.strategy_options()})
            item["token"] = playback.token
            item["metrics"] = metrics.compute(stream).as_dict()
            item["frames"] = len(stream.pieces)
            content = [p for p in stream.pieces if p.channel == "content" and p.text]
            item["chars"] = sum(len(p.text.encode("utf-16-le")) // 2 for p in content)  # JS string length
            item["end_ms"] = content[-1].t_ms if content else 0.0
        item["player"] = {
            "strategy": variant.render,
            "strategyOptions": variant.strategy_options(),
            "indicator": variant.indicator,
            "lang": "zh-hans" if lang.startswith("zh") else "en",
        }
        item["export"] = {  # the variant as code for a chat client (Export)
            "module": smoother_export.module_snippet(variant.render, item["player"]["strategyOptions"]),
            "ai_sdk": smoother_export.ai_sdk_call(variant.render, item["player"]["strategyOptions"]),
        }
        out.append(item)
    return out


def _js_variant(item: dict[str, Any]) -> dict[str, Any]:
    return {"letter": item["letter"], "token": item["token"], "mode": item["variant"].mode, "player": item["player"],
            "frames": item.get("frames"), "chars": item.get("chars"), "end_ms": item.get("end_ms")}


def _option_forms(variant: playground.Variant, letter: str) -> list[dict[str, Any]]:
    """Per strategy, its declared options as form fields of this variant (the current value where set)."""
    values = dict(variant.options)
    forms = []
    for strategy in playground.STRATEGIES:
        fields = []
        for spec in strategy_options.as_json(strategy):
            name = spec["name"]
            if strategy == "batch" and name == "intervalMs":  # its own key, batch_ms
                key, value = f"{letter}.batch_ms", variant.batch_ms if variant.batch_ms != spec["default"] else ""
            else:
                key = f"{letter}.{playground.OPTION_KEY}.{name}"
                value = values.get(name, "") if strategy == variant.render else ""
            if isinstance(value, float):
                value = playground.number_text(value)
            fields.append({**spec, "key": key, "value": value})
        forms.append({"strategy": strategy, "fields": fields, "active": strategy == variant.render})
    return forms


def _strings() -> dict[str, str]:
    return {
        "idle": _("Not started"),
        "connecting": _("Connecting…"),
        "ready": _("Ready"),
        "playing": _("Playing…"),
        "reconnecting": _("Reconnecting…"),
        "finishing": _("Sending the paint log…"),
        "done": _("Done"),
        "failed": _("Failed"),
        "frames": _("frames"),
        "server": _("Stored on the server"),
        "flagged": _("over the bound"),
        "replay_failed": _("Could not create new playbacks"),
        "arrived": _("arrived"),
        "painted": _("painted"),
        "chars": _("characters"),
        "time_s": _("time (s, stream clock)"),
        "delay": _("added delay"),
        "ttfp": _("first paint"),
        "hold": _("longest hold"),
        "last": _("last-char lag"),
        "paints": _("paints"),
        "lag": _("lag of each paint"),
        "timeline": _("Paint timeline: characters arrived and painted over time"),
        "no_paints": _("No paints yet."),
        "bad_regexp": _("%(name)s: not a valid regular expression: %(error)s"),
        "bad_locale": _("%(name)s: not a language tag (such as en, zh, ja, zh-Hant): %(error)s"),
        "bad_text": _("%(name)s: %(error)s"),
    }


@login_required
@require_GET
def playground_page(request: HttpRequest) -> HttpResponse:
    result = playground.parse(request.GET.dict())
    canonical = playground.to_params(result.config)
    if not result.errors and request.GET.dict() != canonical:
        return HttpResponseRedirect(f"{reverse('playground:page')}?{playground.to_query(result.config)}")
    built = build(request.user, result.config)
    items = _playbacks(request.user, result.config, built)
    variants_form = list(result.config.variants)
    variants_form += [playground.Variant()] * (playground.MAX_VARIANTS - len(variants_form))
    option_forms = [_option_forms(v, letter) for letter, v in zip(playground.LETTERS, variants_form)]
    return render(request, "playback/playground.html", {
        "config": result.config,
        "query": playground.to_query(result.config),
        "errors": [*result.errors, *built.errors],
        "items": items,
        "form_variants": list(zip(playground.LETTERS, variants_form, option_forms)),
        "n_choices": range(playground.MIN_VARIANTS, playground.MAX_VARIANTS + 1),
        "demo_texts": list(texts.bundled_texts()),
        "tokenizers": tokenizers.names(),
        "strategies": playground.STRATEGIES,
        "indicators": playground.INDICATORS,
        "modes": playground.MODES,
        "jitters": playground.JITTERS,
        "arrival_patterns": [(p.name, p.kind) for p in arrivals.PATTERNS.values()],
        "source_kinds": playground.SOURCE_KINDS,
        "page_data": {"variants": [_js_variant(i) for i in items], "strings": _strings(),
                      "urls": {"playbacks": reverse("playground:playbacks"),
                               "fidelity": reverse("playground:fidelity", args=["TOKEN"])}},
    })


@login_required
@require_POST
def playground_playbacks(request: HttpRequest) -> JsonResponse:
    """Fresh playbacks (new tokens) for the configuration in the query string: the Replay button."""
    result = playground.parse(request.GET.dict())
    only = request.POST.get("only", "")  # one variant's letter: a fresh playback for that variant alone
    config = result.config
    if only:
        index = playground.LETTERS.find(only) if len(only) == 1 else -1
        if not 0 <= index < len(config.variants):
            return JsonResponse({"variants": [], "errors": [
                _("only: %(letter)r is not one of the variants") % {"letter": only}]}, status=400)
    built = build(request.user, config, only=only)
    errors = [*result.errors, *built.errors]
    items = _playbacks(request.user, config, built) if not errors else []
    if only:
        items = [i for i in items if i["letter"] == only]
    return JsonResponse({"variants": [_js_variant(i) for i in items], "errors": errors},
                        status=400 if errors else 200)


@login_required
@require_GET
def playground_fidelity(request: HttpRequest, token: str) -> JsonResponse:
    """The server's fidelity summary of one of the designer's playbacks (from its stored paint batches)."""
    playback = Playback.objects.filter(token=token, owner=request.user).first() if token_shaped(token) else None
    if playback is None:
        raise Http404("no such playback")
    return JsonResponse({
        "fidelity": playback_fidelity(playback=playback).as_dict(),
        "batches": playback.paint_reports.count(),
        "end_reason": playback.end_reason,
        "pacing": playback.pacing,
    })


@login_required
@require_POST
def playground_save(request: HttpRequest) -> HttpResponse:
    """Save one variant as a named stimulus of the designer (with the spec that reproduces it)."""
    query = request.POST.get("query", "")
    result = playground.parse(QueryDict(query).dict())
    back = f"{reverse('playground:page')}?{playground.to_query(result.config)}"
    letter = request.POST.get("variant", "")
    name = request.POST.get("name", "").strip()
    index = playground.LETTERS.find(letter) if len(letter) == 1 else -1
    problem = None
    if result.errors:
        problem = "; ".join(result.errors)
    elif not 0 <= index < len(result.config.variants):
        problem = _("variant: %(letter)r is not one of the variants") % {"letter": letter}
    elif not name or len(name) > NAME_MAX:
        problem = _("name: give a name of 1 to %(n)d characters") % {"n": NAME_MAX}
    if problem is None:
        built = build(request.user, result.config)
        stream = built.streams[index]
        if stream is None:
            problem = "; ".join(built.errors)
        else:
            services.stimulus_save(name=name, stream=stream, spec=playground.variant_spec(result.config, index),
                                   owner=request.user)
            messages.success(request, _("Saved variant %(letter)s as the stimulus “%(name)s”.")
                             % {"letter": letter.upper(), "name": name})
    if problem is not None:
        messages.error(request, _("Not saved: %(problem)s") % {"problem": problem})
    return HttpResponseRedirect(back)
