"""Bound and reach warnings (analysis/reporting/notices.py): stored as a code and its values, worded by the page in
the reader's language (templates/analysis/_notice.html), and the plain English of results.json is the page's
English sentence, rendered from the same code."""

import html
import re

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from analysis.reporting import notices

NOTICES = {
    "pooled-lapse-on-a-linear-axis": notices.bound("rate=10", "lapse", 0.2, 0.2, False),
    "pooled-guess-on-a-log-axis": notices.bound("pooled", "guess", 0.1953, 0.2, True),
    "population-lapse": notices.bound("all", "lapse", 0.0951, 0.1, True, model="population"),
    "population-guess": notices.bound("all", "guess", 0.19, 0.2, False, model="population"),
    "levels-stop-short-of-the-top": notices.reach("strategy=smooth", "top", 0.6183, 0.081, 0.75),
    "levels-stop-short-of-the-bottom": notices.reach("ttft=2000", "bottom", 0.254, 0.0123, 0.8),
}


def _page_text(notice, language: str) -> str:
    with translation.override(language):
        rendered = render_to_string("analysis/_notice.html", {"n": notices.shown(notice)})
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", rendered)).split())


@pytest.mark.parametrize("notice", NOTICES.values(), ids=NOTICES.keys())
def test_the_plain_english_is_the_pages_english_sentence_and_chinese_is_complete(notice):
    english = notices.english(notice)
    assert _page_text(notice, "en") == english
    chinese = _page_text(notice, "zh-hans")
    assert notice["condition"] in chinese and notices.shown(notice)["value"] in chinese
    assert not re.search(r"\b(the|rate|curve|levels?)\b", chinese.replace(notice["condition"], "")), chinese
    assert ("失误率" if notice["rate"] == "lapse" else "猜测率") in chinese
    assert ("人群模型" in chinese) == (notice.get("model") == "population")


def test_a_notice_keeps_its_numbers_and_the_page_formats_them_once():
    reach = NOTICES["levels-stop-short-of-the-top"]
    assert reach == {"code": "reach", "condition": "strategy=smooth", "end": "top", "rate": "lapse",
                     "reach": 0.6183, "value": 0.081, "quantile": 0.75}
    assert notices.shown(reach) == {**reach, "reach": "62", "value": "0.0810", "percent": "75"}
    assert notices.english(reach) == (
        "strategy=smooth: at the highest level tested the average participant's curve is only 62 % of the way up, "
        "so the lapse rate (0.0810) is read from the curve's shape and the 75 % point may be off by more than its "
        "interval says. Test levels that reach further.")
    bound = NOTICES["population-lapse"]
    assert notices.shown(bound)["bound"] == "0.1" and notices.shown(bound)["value"] == "0.0951"
    assert notices.english(bound).startswith("all (population model): the lapse rate ended at 0.0951, at its "
                                             "bound 0.1: ")
    assert "Try a log axis" not in notices.english(bound)  # it was on one already
    assert "Try a log axis" in notices.english(NOTICES["pooled-lapse-on-a-linear-axis"])


def test_a_page_words_the_notices_and_shows_only_the_other_warnings_as_they_are():
    notice = NOTICES["levels-stop-short-of-the-top"]
    entry = {"block": "acc", "warnings": ["strategy=token: the fit did not converge", notices.english(notice)],
             "notices": [notice]}
    worded = notices.worded(entry)
    assert worded["plain_warnings"] == ["strategy=token: the fit did not converge"]
    assert worded["notices_shown"] == [notices.shown(notice)]
    assert worded["warnings"] == entry["warnings"] and worded["notices"] == entry["notices"]  # results.json's keys
    assert notices.worded({"block": "old", "warnings": ["w"]})["plain_warnings"] == ["w"]  # a run without notices
