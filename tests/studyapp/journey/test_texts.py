"""The study's own texts (consent, instructions, debrief) as markdown paragraphs: the study file's line
wrapping is not a line break, Chinese lines are joined without a space, raw HTML is never passed through."""

from studyapp.design import studyfile
from studyapp.journey import texts as journey_text


def test_wrapped_lines_are_one_paragraph_and_a_blank_line_starts_the_next():
    html = journey_text.to_html("One sentence that the\nauthor wrapped.\n\nA second **paragraph**.")
    assert html == "<p>One sentence that the\nauthor wrapped.</p>\n<p>A second <strong>paragraph</strong>.</p>"
    assert "<br" not in html


def test_chinese_wrapped_mid_sentence_is_joined_without_a_break_or_a_space():
    consent = studyfile.load_study(studyfile.demo_study_path())["texts"]["consent"]["zh-hans"]
    assert "屏幕上\n逐步出现" in consent  # the study file wraps mid-sentence
    html = journey_text.to_html(consent)
    assert "屏幕上逐步出现" in html and "\n" not in html and "<br" not in html
    assert journey_text.to_html("中文 mixed\nEnglish") == "<p>中文 mixed\nEnglish</p>"
    assert journey_text.to_html("用 ChatGPT\n的时候，\n感觉") == "<p>用 ChatGPT\n的时候，感觉</p>"


def test_raw_html_and_script_links_are_shown_as_text_and_links_open_in_a_new_tab():
    html = journey_text.to_html('<script>alert(1)</script> [x](javascript:alert(1)) [site](https://example.org)')
    assert "<script" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html
    assert '<a href="https://example.org" target="_blank" rel="noopener noreferrer">site</a>' in html
