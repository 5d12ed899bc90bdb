"""manage.py validate_study: every problem as `path: message`, non-zero exit; a summary when valid."""

from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from studyapp.design import studyfile


def run(*args):
    out = StringIO()
    call_command("validate_study", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_a_valid_study_prints_a_summary():
    out = run(str(studyfile.demo_study_path()))
    assert "valid study 'demo-perceived-speed'" in out
    assert "conditions: 44" in out
    assert "groups: delivery=prefetch, delivery=live" in out
    assert "trials per participant, about" in out


def test_an_invalid_study_prints_every_problem_one_per_line_and_fails(tmp_path):
    doc = studyfile.parse_yaml(studyfile.demo_study_path().read_text())
    doc["stimuli"]["coffee"]["rate"] = 0
    doc["blocks"][1]["repeats"] = 0
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    out = StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("validate_study", str(path), stdout=out, stderr=StringIO())
    assert out.getvalue().splitlines() == ["blocks[1].repeats: must be >= 1, got 0",
                                           "stimuli.coffee.rate: must be > 0, got 0"]


def test_a_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError):
        run(str(tmp_path / "nope.yaml"), "--no-estimate")


def test_a_stimulus_shown_in_another_language_than_the_participants_is_a_warning(tmp_path):
    doc = studyfile.parse_yaml(studyfile.demo_study_path().read_text())
    doc["stimuli"]["coffee"]["text"] = "en-chat-coffee"  # English answers for Chinese participants too
    doc["factors"][-1]["levels"][0]["set"]["text"] = "zh-chat-tea"  # Chinese pairs for English participants
    path = tmp_path / "mixed.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    warnings = [line for line in run(str(path), "--no-estimate").splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: blocks[0]: zh-hans participants are shown English text 'en-chat-coffee' in block 'practice'; "
        "give one text per language (text: {en: ..., zh-hans: ...}) unless that is intended",
        "warning: blocks[1]: zh-hans participants are shown English text 'en-chat-coffee' in block "
        "'acceptability'; give one text per language (text: {en: ..., zh-hans: ...}) unless that is intended",
        "warning: blocks[3]: en participants are shown Chinese text 'zh-chat-tea' in block 'tokenizers'; "
        "give one text per language (text: {en: ..., zh-hans: ...}) unless that is intended"]
    assert not [line for line in run(str(studyfile.demo_study_path()), "--no-estimate").splitlines()
                if line.startswith("warning:")]  # the demo gives every participant their own language
