"""Counts in the methods paragraph and the exclusion report agree with their nouns, as a paper prints them."""

from analysis.reporting.wording import counted


def test_one_takes_the_singular_and_every_other_count_the_plural():
    assert counted(1, "trial") == "1 trial"
    assert counted(0, "participant") == "0 participants"
    assert counted(2, "main block") == "2 main blocks"


def test_large_counts_carry_a_thousands_separator_and_irregular_plurals_are_given():
    assert counted(3162, "main trial") == "3,162 main trials"
    assert counted(2, "analysis", "analyses") == "2 analyses"
