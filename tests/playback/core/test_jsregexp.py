"""RegExp sources checked without a JavaScript engine: only what JavaScript refuses with any flags is refused.

tests/browser/test_strategy_text_options.py holds the same samples against Chromium's own ``new RegExp``."""

import pytest

from playback.core import jsregexp, locales

# Valid JavaScript that Python's re would refuse or read otherwise, and ordinary chunking rules.
VALID = ["[.!?]\\s+", "\\n+", "(?<end>[.!?])\\s+", "\\p{L}+", "\\q", "a{", "{", "]", "(?:a|b)+?", "a{2,3}?",
         "(?<=\\.)\\s", "(?<!x)y", "(?=a)", "[^]", "[]", "[\\w-z]", "(?i:a)b", "[.。！？]", "a\\/b", "\\\\"]
# Refused by JavaScript with and without the u flag.
INVALID = {"[.!?": "missing ]", "(a": "missing )", "a)": "unmatched ')'", "*a": "nothing to repeat",
           "a**": "nothing to repeat", "a|+": "nothing to repeat", "^*": "nothing to repeat",
           "{2}": "nothing to repeat", "a{3,1}": "numbers out of order", "[z-a]": "range out of order",
           "(?x)": "invalid group", "(?<1a>b)": "invalid capture group name", "a\\": "at end of pattern"}


@pytest.mark.parametrize("source", VALID)
def test_valid_javascript_is_accepted_even_where_python_re_would_refuse_it(source):
    assert jsregexp.problem(source) is None


@pytest.mark.parametrize(("source", "why"), INVALID.items())
def test_what_javascript_always_refuses_is_named(source, why):
    assert why in jsregexp.problem(source)


def test_flags():
    assert jsregexp.flags_problem("imsu") is None
    assert "repeated" in jsregexp.flags_problem("mm")
    assert "unknown flag" in jsregexp.flags_problem("x")
    assert "u and v" in jsregexp.flags_problem("uv")


@pytest.mark.parametrize(("tag", "ok"), [
    ("zh", True), ("ja", True), ("zh-Hant", True), ("zh-Hans-CN", True), ("en-US", True), ("es-419", True),
    ("de-DE-1996", True), ("en-u-nu-latn", True), ("en-x-pacelab", True), ("xx", True),
    ("zh_CN", False), ("", False), ("x", False), ("chinese!", False), ("de-1996-1996", False),
    ("en-u-nu-latn-u-ca-gregory", False), ("e", False), ("toolonglanguage", False),
])
def test_a_locale_is_what_intl_accepts(tag, ok):
    assert locales.well_formed(tag) is ok
