"""A minimal valid study to mutate in tests (not a test module)."""

import copy

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

STAIRCASE = {"method": "staircase", "dimension": "tokens_per_s", "rule": "1up2down", "start": 20, "steps": [4, 2],
             "min": 2, "max": 80, "max_trials": 20}
