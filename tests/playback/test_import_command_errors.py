"""import_traces on PostgreSQL (issue 41, item 7): a NUL character in a piece is a clear error naming the place,
not a database traceback, and nothing is stored; an SSE capture cut before ``data: [DONE]`` says so on the
command line, not only in a stored note."""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from playback.models import Trace

pytestmark = pytest.mark.django_db


def test_a_nul_character_in_a_piece_names_the_piece_and_imports_nothing(require_postgres, data_dir, tmp_path):
    lines = (data_dir / "openai_sse-timed-reasoning.sse").read_text(encoding="utf-8").splitlines()
    i = next(n for n, line in enumerate(lines) if '"content":"Hello"' in line)
    lines[i] = lines[i].replace('"content":"Hello"', '"content":"Hel\\u0000lo"')
    bad = tmp_path / "nul.sse"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    good = data_dir / "anthropic_sse-timed-thinking.sse"
    with pytest.raises(CommandError) as err:
        call_command("import_traces", str(good), str(bad), stdout=StringIO(), stderr=StringIO())
    text = str(err.value)
    assert "nul.sse" in text and "pieces[" in text and "NUL character" in text and "Nothing was imported" in text
    assert "Traceback" not in text and not Trace.objects.exists()


def test_an_sse_capture_cut_before_done_says_so_on_the_command_line(data_dir, tmp_path):
    lines = (data_dir / "openai_sse-timed-reasoning.sse").read_text(encoding="utf-8").splitlines()
    cut = tmp_path / "cut.sse"
    cut.write_text("\n".join(line for line in lines if "[DONE]" not in line) + "\n", encoding="utf-8")
    out, err = StringIO(), StringIO()
    call_command("import_traces", str(cut), stdout=out, stderr=err)
    assert "warning: cut.sse, stream" in err.getvalue() and "may be cut short" in err.getvalue()
    assert "imported 2 new" in out.getvalue()
    assert all(any("cut short" in n for n in t.notes) for t in Trace.objects.all())
    # a whole capture says nothing of the kind
    err2 = StringIO()
    call_command("import_traces", str(data_dir / "openai_sse-timed-reasoning.sse"), stdout=StringIO(), stderr=err2)
    assert "cut short" not in err2.getvalue()
