"""The tidy trials table from hand-made rows: one row per answered trial, every trial type, 2AFC in both orders."""

import math

import pandas as pd
import pytest
from tidy_rows import SPEC, Rows, entries, stim, stream

from analysis.tables import codebook, tidy
from playback.core.stream import Piece, Stream


@pytest.fixture
def rows():
    r = Rows()
    r.session(1, pid="PANEL-1")
    return r


def one(frame, index, participant=1):
    return frame[(frame["participant"] == participant) & (frame["trial_index"] == index)].iloc[0]


def test_one_row_per_answered_trial_in_trial_order(rows):
    rows.trial(1, 2, "rating", {"response": 4}, streams=[stream(500, 100)])
    rows.trial(1, 0, "acceptability", {"response": "yes", "accept": True}, streams=[stream(500, 100)])
    rows.trial(1, 1, "acceptability", None, streams=[stream(500, 100)], answered=False)
    frame, _ = rows.build()
    assert list(frame["trial_index"]) == [0, 2]
    assert set(frame["study"]) == {"s"} and set(frame["participant"]) == {1}


@pytest.mark.parametrize("kind, value, raw, numeric", [
    ("acceptability", {"response": "yes", "accept": True}, "yes", 1.0),
    ("acceptability", {"response": "no", "accept": False}, "no", 0.0),
    ("rating", {"response": 4}, "4", 4.0),
    ("rating", {"response": 62.5}, "62.5", 62.5),
    ("reading", {"response": "done", "reading_ms": 4321.0}, "done", 4321.0),
])
def test_the_response_is_kept_raw_and_as_a_number(rows, kind, value, raw, numeric):
    rows.trial(1, 0, kind, value, streams=[stream(500, 100)], comment="fine", rt=812.0)
    row = one(rows.build()[0], 0)
    assert (row["response"], row["response_value"], row["response_ms"], row["comment"]) == (raw, numeric, 812.0, "fine")
    assert row["trial_type"] == kind and pd.isna(row["chose_first"]) and pd.isna(row["a_ttft_ms"])


def test_single_stream_metrics_come_from_the_shown_stream(rows):
    rows.trial(1, 0, "acceptability", {"response": "yes", "accept": True},
               streams=[Stream((Piece("ab ", 500), Piece("cd ", 600), Piece("ef ", 700), Piece("gh", 1100)))])
    row = one(rows.build()[0], 0)
    assert row["ttft_ms"] == 500 and row["e2e_ms"] == 1100 and row["output_tokens"] == 4
    assert row["tokens_per_s"] == pytest.approx(3 / 0.6) and row["chars_per_s"] == pytest.approx(8 / 0.6)
    assert row["itl_mean_ms"] == pytest.approx(200) and row["stall_count"] == 1 and row["stall_total_ms"] == 400
    assert (row["tokenizer"], row["strategy"], row["source"]) == ("cl100k_base", "token", "en-chat-coffee")
    assert 0 < row["andes_qoe"] <= 1 and 0 < row["fluidity"] <= 1


@pytest.mark.parametrize("order, response, chose_a, chose_first", [
    ("AB", "a", 1.0, 1), ("AB", "b", 0.0, 0), ("BA", "a", 0.0, 1), ("BA", "b", 1.0, 0)])
def test_a_2afc_reports_a_and_b_as_designed_whatever_the_order(rows, order, response, chose_a, chose_first):
    a, b = stream(300, 50), stream(2000, 100)  # A: the fast one (design), B: the slow one
    shown = [a, b] if order == "AB" else [b, a]
    stimuli = [stim("cl100k_base"), stim("qwen3.6")] if order == "AB" else [stim("qwen3.6"), stim("cl100k_base")]
    chosen = order[0] if response == "a" else order[1]
    rows.trial(1, 0, "afc", {"response": response, "chosen": chosen}, streams=shown, stimuli=stimuli, order=order,
               condition="main:tokenizer=cl100k_base~qwen3.6")
    row = one(rows.build()[0], 0)
    assert (row["a_ttft_ms"], row["b_ttft_ms"]) == (300, 2000)
    assert (row["a_tokenizer"], row["b_tokenizer"]) == ("cl100k_base", "qwen3.6")
    assert (row["order"], row["first"]) == (order, order[0])
    assert (row["response"], row["response_value"], row["chose_first"]) == (response, chose_a, chose_first)
    assert pd.isna(row["ttft_ms"]) and row["f_tokenizer"] == "cl100k_base~qwen3.6"


def test_the_answered_showing_is_the_last_one(rows):
    tid = rows.trial(1, 0, "rating", {"response": 3}, streams=[stream(4000, 100)], showing=1)
    rows.showings.append({"trial_id": tid, "position": 0, "showing": 2, "playback_id": 99,
                          "stream": stream(250, 100).to_obj()})
    rows.paints.append({"playback_id": 99, "entries": entries([1, 2, 3])})
    rows.trials[-1] |= {"plays": 2, "interruptions": [{"at": "t"}]}
    row = one(rows.build()[0], 0)
    assert row["ttft_ms"] == 250 and (row["plays"], row["interrupted"]) == (2, 1) and row["fidelity_frames"] == 3


def test_missing_playbacks_are_rebuilt_or_left_empty(rows):
    rows.trial(1, 0, "rating", {"response": 3})
    calls = []

    def rebuild(trial):
        calls.append(trial["id"])
        return [stream(777, 100)]

    assert one(rows.build(rebuild=rebuild)[0], 0)["ttft_ms"] == 777 and calls == [1000]
    row = one(rows.build()[0], 0)
    assert pd.isna(row["ttft_ms"]) and row["tokenizer"] == "cl100k_base"


def test_fidelity_uses_the_study_bound_and_flags_hidden_tabs(rows):
    rows.trial(1, 0, "rating", {"response": 3}, streams=[stream(500, 100)],
               paint=[entries([10] * 18 + [80, 90])])
    rows.trial(1, 1, "rating", {"response": 3}, streams=[stream(500, 100)],
               paint=[entries([10] * 10 + [400], hidden={10})])
    rows.trial(1, 2, "rating", {"response": 3}, streams=[stream(500, 100)])
    frame, _ = rows.build()
    late, hidden, unlogged = one(frame, 0), one(frame, 1), one(frame, 2)
    assert late["fidelity_p95_ms"] == pytest.approx(80.5) and late["fidelity_max_ms"] == 90
    assert late["fidelity_bound_ms"] == 50 and late["fidelity_violated"] and not late["tab_hidden"]
    assert hidden["tab_hidden"] and hidden["fidelity_max_ms"] == 10 and not hidden["fidelity_violated"]
    assert unlogged["fidelity_frames"] == 0 and pd.isna(unlogged["fidelity_violated"])
    no_rule, _ = rows.build(spec={**SPEC, "exclusions": []})
    assert one(no_rule, 1)["fidelity_bound_ms"] == pytest.approx(33.4)


def test_a_pairs_paint_logs_are_pooled_though_their_seqs_repeat(rows):
    rows.trial(1, 0, "afc", {"response": "a", "chosen": "A"}, streams=[stream(300, 50), stream(300, 50)],
               order="AB", paint=[entries([5, 5, 5]), entries([100, 100, 100])])
    row = one(rows.build()[0], 0)
    assert row["fidelity_frames"] == 6 and row["fidelity_max_ms"] == 100 and row["fidelity_p50_ms"] == 52.5


def test_factor_columns_come_from_the_condition_and_the_group(rows):
    rows.trial(1, 0, "acceptability", {"response": "no", "accept": False}, streams=[stream(500, 100)],
               condition="main:rate=12.5,tokenizer=a,b")
    rows.trial(1, 1, "acceptability", {"response": "no", "accept": False}, streams=[stream(500, 100)],
               condition="practice:slow", block="practice", practice=True)
    frame, _ = rows.build()
    first, practice = one(frame, 0), one(frame, 1)
    assert (first["f_rate"], first["f_tokenizer"], first["f_delivery"]) == ("12.5", "a,b", "live")
    assert pd.isna(practice["f_rate"]) and practice["f_delivery"] == "live"
    assert practice["practice"] and practice["block_practice"] and not first["block_practice"]
    factors = [c for c in frame.columns if c.startswith("f_")]
    assert factors == ["f_rate", "f_delivery", "f_tokenizer"]  # the study file's factor order


def test_a_failed_attention_check_flags_every_trial_of_that_participant(rows):
    rows.session(2)
    rows.trial(1, 0, "rating", {"response": 4}, streams=[stream(500, 100)])
    rows.trial(1, 1, "rating", {"response": 5, "attention_passed": False}, streams=[stream(500, 100)],
               check="instructed", condition="attention:instructed")
    rows.trial(2, 0, "rating", {"response": 2, "attention_passed": True}, streams=[stream(500, 100)],
               check="instructed", condition="attention:instructed")
    frame, _ = rows.build()
    assert list(frame.loc[frame["participant"] == 1, "failed_attention"]) == [True, True]
    check = one(frame, 1)
    assert check["attention_check"] == "instructed" and check["attention_passed"] == False  # noqa: E712
    assert pd.isna(one(frame, 0)["attention_passed"])
    assert not one(frame, 0, participant=2)["failed_attention"] and one(frame, 0, participant=2)["attention_passed"]


def test_adaptive_columns_appear_only_for_a_study_with_adaptive_trials(rows):
    rows.trial(1, 0, "acceptability", {"response": "yes", "accept": True}, streams=[stream(500, 100)])
    assert "level" not in rows.build()[0].columns
    rows.trial(1, 1, "acceptability", {"response": "no", "accept": False}, streams=[stream(500, 100)],
               extra={"level": 17.5, "adaptive": {"index": 0, "level": 17.5, "track": "rate-up",
                                                  "dimension": "rate", "catch": False}})
    frame, _ = rows.build()
    row = one(frame, 1)
    assert (row["level"], row["track"], row["dimension"], row["catch"]) == (17.5, "rate-up", "rate", False)
    assert pd.isna(one(frame, 0)["level"])


def test_panel_ids_and_the_environment_are_only_in_the_participants_table(rows):
    env = {"user_agent": "Mozilla/5.0 (X11) AppleWebKit/537.36 Chrome/131.0 Safari/537.36",
           "viewport": {"width": 1280, "height": 800}, "refresh_hz": 120.0, "device": "desktop", "dpr": 2.0}
    rows.sessions.clear()
    rows.session(1, pid="PANEL-1", env=env, flags=["screened out: viewport too small"], state="screened_out")
    rows.session(2, pid="PANEL-2")
    rows.trial(1, 0, "rating", {"response": 4}, streams=[stream(500, 100)])
    frame, people = rows.build()
    assert "panel_pid" not in frame.columns and not frame.isin(["PANEL-1", "PANEL-2"]).any().any()
    p = people.set_index("participant")
    assert list(p.index) == [1, 2] and p.loc[1, "panel_pid"] == "PANEL-1"
    assert (p.loc[1, "browser"], p.loc[1, "viewport_width"], p.loc[1, "refresh_hz"]) == ("chromium", 1280, 120.0)
    assert p.loc[1, "flags"] == "screened out: viewport too small" and p.loc[1, "state"] == "screened_out"
    assert (p.loc[1, "trials_answered"], p.loc[2, "trials_answered"]) == (1, 0)
    assert pd.isna(p.loc[2, "device"])


def test_columns_have_the_codebook_dtypes(rows):
    rows.trial(1, 0, "rating", {"response": 4}, streams=[stream(500, 100)])
    frame, people = rows.build()
    for table, f in (("trials", frame), ("participants", people)):
        for name in f.columns:
            assert str(f[name].dtype).startswith(codebook.DTYPES[codebook.describe(name, table).type].split("[")[0])


def test_an_empty_study_has_the_columns_and_no_rows():
    frame, people = Rows().build()
    assert len(frame) == 0 and len(people) == 0
    assert {"participant", "ttft_ms", "a_ttft_ms", "excluded"} <= set(frame.columns)


def test_condition_ids_parse_into_levels():
    assert tidy.condition_levels("acc:rate=10,ttft=300") == {"rate": "10", "ttft": "300"}
    assert tidy.condition_levels("practice:slow") == {} and tidy.condition_levels("") == {}
    assert tidy.parse_levels("x=a,b,y=c") == {"x": "a,b", "y": "c"}
    assert math.isclose(tidy.fidelity_bound({"exclusions": [{"rule": "incomplete"}]}), 33.4)


def test_the_study_file_fixes_the_columns_before_any_trial_names_them(rows):
    rows.trial(1, 0, "rating", {"response": 4}, streams=[stream(500, 100)], condition="main:c1")
    adaptive = {**SPEC, "blocks": [*SPEC["blocks"], {"id": "stair", "type": "main", "procedure": {"tracks": []}}]}
    frame, _ = rows.build(adaptive)
    assert [c for c in frame.columns if c.startswith("f_")] == ["f_rate", "f_delivery", "f_tokenizer"]
    assert {"level", "track", "dimension", "catch"} <= set(frame.columns)  # a pilot has the final schema
    empty, _ = Rows().build(adaptive)
    assert list(empty.columns) == list(frame.columns)


def test_tab_hidden_is_unknown_without_a_paint_log(rows):
    rows.trial(1, 0, "rating", {"response": 4}, streams=[stream(500, 100)])
    rows.trial(1, 1, "rating", {"response": 4}, streams=[stream(500, 100)], paint=[entries([0, 0], hidden={1})])
    rows.trial(1, 2, "rating", {"response": 4}, streams=[stream(500, 100)], paint=[entries([0, 0])])
    frame, _ = rows.build()
    assert pd.isna(one(frame, 0)["tab_hidden"]) and one(frame, 1)["tab_hidden"] == True  # noqa: E712
    assert one(frame, 2)["tab_hidden"] == False  # noqa: E712


def test_the_engine_the_environment_check_recorded_is_the_participants_browser(rows):
    """A WebKit session (the engine recorded by the environment check, with its version) and one from before
    engines were recorded (read from the user agent): Firefox's and WebKit's participants are grouped right."""
    webkit = {"user_agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/60.5 "
                            "Safari/605.1.15", "engine": "safari", "engine_version": "60.5",
              "viewport": {"width": 1280, "height": 800}, "refresh_hz": 60.0, "device": "desktop", "dpr": 1.0}
    firefox = {"user_agent": "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0",
               "viewport": {"width": 1280, "height": 800}, "refresh_hz": 60.0, "device": "desktop", "dpr": 1.0}
    rows.sessions.clear()
    rows.session(1, env=webkit)
    rows.session(2, env=firefox)
    _, people = rows.build()
    p = people.set_index("participant")
    assert (p.loc[1, "browser"], p.loc[1, "browser_version"]) == ("safari", "60.5")
    assert (p.loc[2, "browser"], p.loc[2, "browser_version"]) == ("firefox", "153.0")
