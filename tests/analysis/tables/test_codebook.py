"""The codebook documents every column of the exports, with a type and a unit, and is written with the data."""

import io
import zipfile

import pandas as pd
import pytest
from tidy_rows import Rows, stim, stream  # noqa: E402

from analysis.tables import codebook, exporting


@pytest.fixture
def tables():
    """A study with every trial type, a 2AFC in each order, an attention check and an adaptive trial."""
    r = Rows()
    r.session(1, pid="P1", env={"user_agent": "x", "viewport": {"width": 1, "height": 1}, "refresh_hz": 60,
                                "device": "desktop", "dpr": 1})
    s = [stream(500, 100)]
    r.trial(1, 0, "acceptability", {"response": "yes", "accept": True}, streams=s, practice=True, block="practice")
    r.trial(1, 1, "rating", {"response": 2, "attention_passed": True}, streams=s, check="i",
            condition="attention:i")
    r.trial(1, 2, "reading", {"response": "done", "reading_ms": 100.0}, streams=s)
    for i, order in ((3, "AB"), (4, "BA")):
        r.trial(1, i, "afc", {"response": "a", "chosen": order[0]}, streams=s * 2, order=order,
                stimuli=[stim(), stim("qwen3.6")], condition="main:tokenizer=cl100k_base~qwen3.6")
    r.trial(1, 5, "acceptability", {"response": "no", "accept": False}, streams=s,
            extra={"level": 9.0, "adaptive": {"track": "t", "dimension": "rate", "catch": False}})
    return r.build()


def test_every_column_of_the_tidy_tables_has_an_entry(tables):
    trials, participants = tables
    for table, frame in (("trials", trials), ("participants", participants)):
        book = codebook.codebook(frame, table)
        assert list(book["column"]) == list(frame.columns)
        assert book["description"].str.len().min() > 10 and set(book["type"]) <= set(codebook.TYPES)


def test_a_column_added_without_an_entry_is_an_error(tables):
    trials, participants = tables
    with pytest.raises(KeyError, match="speed_feel"):
        codebook.codebook(trials.assign(speed_feel=1.0))
    with pytest.raises(KeyError, match="panel_pid"):
        codebook.codebook(["participant", "panel_pid"], "trials")  # a panel id is no trials column


def test_times_are_in_ms_and_rates_per_second_on_both_sides_of_a_pair():
    for name in ("ttft_ms", "a_ttft_ms", "b_e2e_ms", "response_ms", "fidelity_p95_ms", "itl_p99_ms"):
        assert codebook.describe(name).unit == "ms" and codebook.describe(name).type == "number"
    assert codebook.describe("a_tokens_per_s").unit == "tokens/s"
    assert codebook.describe("b_chars_per_s").description.startswith("2AFC stimulus B")
    assert codebook.describe("f_rate").type == "string"
    assert codebook.describe("refresh_hz", "participants").unit == "Hz"


def test_cast_gives_each_type_its_dtype():
    frame = pd.DataFrame({"trial_index": [1, None], "ttft_ms": [None, 2], "practice": [True, None],
                          "block": ["b", None], "answered_at": ["2026-01-01T00:00:00+00:00", None]})
    out = codebook.cast(frame)
    assert [str(t) for t in out.dtypes] == ["Int64", "float64", "boolean", "string", "datetime64[us, UTC]"]
    assert out["trial_index"].isna().tolist() == [False, True] and out["ttft_ms"].iloc[1] == 2.0


def test_the_markdown_lists_every_column_with_its_unit(tables):
    trials, _ = tables
    text = codebook.to_markdown(codebook.codebook(trials), "trials")
    for name in trials.columns:
        assert f"| `{name}` |" in text
    assert "| `ttft_ms` | number | ms |" in text


def test_the_export_archive_holds_data_codebook_and_report(tables):
    trials, participants = tables
    data = exporting.archive(trials, participants, [{"rule": "failed_attention"}], title="demo")
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = set(zf.namelist())
        book = pd.read_csv(zf.open("codebook.csv"))
        csv = pd.read_csv(zf.open("trials.csv"))
        people = pd.read_csv(zf.open("participants.csv"))
    assert {"trials.csv", "trials.parquet", "participants.csv", "codebook.csv", "codebook.md",
            "exclusions.json", "exclusions.txt"} <= names
    assert set(book.loc[book["table"] == "trials", "column"]) == set(trials.columns) == set(csv.columns)
    assert set(book.loc[book["table"] == "participants", "column"]) == set(participants.columns)
    assert len(csv) == len(trials) == 6 and people["panel_pid"].tolist() == ["P1"]


def test_an_unknown_format_is_refused():
    assert exporting.parse_formats("parquet, CSV") == ("parquet", "csv")
    with pytest.raises(ValueError, match="xlsx"):
        exporting.parse_formats("csv,xlsx")


def test_factor_columns_carry_the_unit_of_the_parameter_they_set():
    spec = {"factors": [{"name": "rate", "sets": "rate", "levels": [10, 20]},
                        {"name": "ttft", "levels": [{"label": "fast", "set": {"ttft_ms": 300}},
                                                    {"label": "slow", "set": {"ttft_ms": 2000}}]},
                        {"name": "passage", "levels": [{"label": "tea", "set": {"text": "a", "seed": 4}}]}]}
    book = codebook.codebook(["f_rate", "f_ttft", "f_passage"], "trials", spec).set_index("column")
    assert list(book["unit"]) == ["tokens/s", "ms", ""]
    chars = {**spec, "stimuli": {"s": {"rate_unit": "chars"}}}
    assert codebook.factor_units(chars)["rate"] == "chars/s"


def test_the_csv_files_do_not_hand_spreadsheets_a_formula(tables, tmp_path):
    frame, people = tables
    frame = frame.copy()
    frame["comment"] = ["=cmd|' /C calc'!A0", "+1+2", "-3", "@SUM(A1)", "- slow start", "fine"]
    people = people.copy()
    people["panel_pid"] = ['=HYPERLINK("http://evil.example","pay")']
    report = exporting.exclusions.apply(frame, [], participants=people)[1]
    exporting.write(tmp_path, frame, people, report)
    csv_comments = pd.read_csv(tmp_path / "trials.csv", keep_default_na=False)["comment"].astype(str).tolist()
    assert csv_comments == ["'=cmd|' /C calc'!A0", "'+1+2", "-3", "'@SUM(A1)", "'- slow start", "fine"]
    assert pd.read_csv(tmp_path / "participants.csv")["panel_pid"][0].startswith("'=")
    assert exporting.read_parquet(tmp_path / "trials.parquet")["comment"][0] == "=cmd|' /C calc'!A0"  # as typed


def test_an_export_removes_the_trials_file_of_a_format_it_was_not_asked_for(tables, tmp_path):
    frame, people = tables
    report = exporting.exclusions.apply(frame, [], participants=people)[1]
    exporting.write(tmp_path, frame, people, report, formats=("csv", "parquet"))
    written = exporting.write(tmp_path, frame.iloc[:2], people, report, formats=("csv",))
    assert not (tmp_path / "trials.parquet").exists() and tmp_path / "trials.csv" in written
