"""What jsonb keeps unchanged: NUL found wherever it hides in decoded JSON (strings, keys, nested lists)."""

from pacelab.jsonb import nul_paths


def test_clean_values_have_no_nul():
    assert nul_paths({"a": ["text", 1, None, {"b": "中文"}], "c": 2.5}) == []


def test_every_string_and_key_with_nul_is_named_by_its_path():
    value = {"a": ["ok", "x\x00"], "k\x00": 1, "n": {"m": ("\x00",)}}
    assert nul_paths(value) == ["a[1]", "k\x00", "n.m[0]"]
    assert nul_paths("\x00", "payload") == ["payload"]
