"""A minimal valid study to mutate in tests (not a test module)."""

import copy
import uuid

from studyapp.design import studyfile

MINIMAL = {
    "version": 1,
    "id": "mini",
    "title": {"en": "Mini", "zh-hans": "迷你"},
    "languages": ["en", "zh-hans"],
    "texts": {
        "consent": {"en": "Consent?", "zh-hans": "同意吗？"},
        "instructions": "Watch.",
        "debrief": {"en": "Thanks", "zh-hans": "谢谢"},
    },
    "stimuli": {"coffee": {"text": "en-chat-coffee", "max_chars": 120, "tokenizer": "char", "ttft_ms": 300,
                           "rate": 40, "seed": 1}},
    "factors": [
        {"name": "rate", "sets": "rate", "levels": [20, 40, 80]},
        {"name": "ttft", "sets": "ttft_ms", "levels": [200, 1500]},
    ],
    "blocks": [
        {"id": "accept", "type": "main", "stimulus": "coffee", "design": {"factorial": ["rate", "ttft"]},
         "task": {"type": "acceptability", "question": {"en": "OK?", "zh-hans": "可以吗？"}}},
    ],
}


def study(**changes):
    doc = copy.deepcopy(MINIMAL)
    doc.update(copy.deepcopy(changes))
    return doc


def loaded_study(prefix: str):
    """The minimal study (id ``prefix-`` and a random suffix) loaded into the database, owned by a new researcher."""
    from django.contrib.auth import get_user_model

    from studyapp import services as study_services

    owner = get_user_model().objects.create_user(f"r-{uuid.uuid4().hex[:6]}", password="pw-not-used-123")
    loaded, _ = study_services.study_load(doc=study(id=f"{prefix}-{uuid.uuid4().hex[:6]}"), owner=owner)
    return loaded

STAIRCASE = {"method": "staircase", "dimension": "tokens_per_s", "rule": "1up2down", "start": 20, "steps": [4, 2],
             "min": 2, "max": 80, "max_trials": 20}


MAX_REPEATS = 2  # the trimmed demo's counterbalancing bound


def trimmed_demo() -> dict:
    """The demo study made short (fewer levels, shorter texts, TTFT at most 1 s) with every feature kept:
    between-subjects delivery groups with quotas, acceptability, rating, 2AFC with balanced orders,
    an instructed item and a catch trial, a questionnaire, Latin-square block orders."""
    doc = copy.deepcopy(studyfile.load_study(studyfile.demo_study_path()))
    doc["id"] = "bots-trimmed-demo"
    doc["stimuli"]["coffee"]["max_chars"] = 70
    doc["stimuli"]["sleep"]["max_chars"] = 60
    doc["stimuli"]["brew"]["max_chars"] = 40
    levels = {"rate": [10, 25, 60], "ttft": [300, 1000], "strategy": ["token", "word"], "indicator": ["none", "dots"]}
    for factor in doc["factors"]:
        if factor["name"] in levels:
            factor["levels"] = levels[factor["name"]]
    doc["blocks"][0]["trials"] = [{"label": "slow", "rate": 12, "ttft_ms": 800},
                                  {"label": "fast", "rate": 50, "ttft_ms": 300}]
    doc["counterbalancing"]["max_repeats"] = MAX_REPEATS
    cb = doc["counterbalancing"]
    assert (cb["afc_order"], cb["block_order"]) == ("balanced", "latin_square")
    assert studyfile.validate(doc) == []
    return doc
