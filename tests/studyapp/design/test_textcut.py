"""Cutting a markdown answer to max_chars (studyapp.design.textcut, through design.cut_text): what the reader sees is
always well-formed markdown, never a raw `**`, a half list item or an empty bullet."""

import pytest
from markdown_it import MarkdownIt

from playback.core import texts
from studyapp.design import plan as design
from studyapp.design import textcut


def rendered_text(markdown: str) -> str:
    """What a reader sees: markdown-it's HTML with the tags taken out."""
    import re

    return re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").render(markdown))


@pytest.mark.parametrize("max_chars", range(30, 330, 7))
@pytest.mark.parametrize("name", ["en-chat-coffee", "en-chat-sleep", "zh-chat-tea", "zh-chat-subway"])
def test_a_cut_answer_never_shows_raw_markup_and_is_a_prefix_of_the_whole(name, max_chars):
    whole = texts.bundled_text(name)
    cut = design.cut_text(whole, max_chars)
    seen = rendered_text(cut)
    assert "*" not in seen and "`" not in seen, cut
    assert textcut.visible_text(whole).startswith(textcut.visible_text(cut))
    assert len(textcut.visible_text(cut)) <= max_chars
    assert not cut.rstrip().endswith(("\n-", "\n1.", "\n2.", "\n3."))  # no empty list item


def test_the_demo_cut_inside_bold_closes_the_bold():
    cut = design.cut_text(texts.bundled_text("en-chat-coffee"), 240)
    assert cut.endswith("- **Grind a little coarser.**")
    assert "<strong>Grind a little coarser.</strong>" in MarkdownIt("commonmark").render(cut)


def test_a_list_item_cut_mid_sentence_is_dropped_and_code_spans_are_closed():
    text = "Intro sentence here.\n\n- first item is complete.\n- second item goes on and on without end"
    assert design.cut_text(text, 80) == "Intro sentence here.\n\n- first item is complete."
    code = "Run this in your shell: `pip install --upgrade something-long` and wait a while please."
    cut = design.cut_text(code, 45)
    assert "`" not in rendered_text(cut) and textcut.visible_text(code).startswith(textcut.visible_text(cut))


def test_short_texts_are_left_alone():
    assert design.cut_text("**bold** text", 100) == "**bold** text"
