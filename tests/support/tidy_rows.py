"""Hand-made rows of a small study for the tidy table's tests (analysis/tables/tidy.py), shared by its readers."""

from analysis.tables import tidy
from playback.core.stream import Piece, Stream

SPEC = {"id": "s", "factors": [{"name": "rate"}, {"name": "delivery"}, {"name": "tokenizer"}],
        "blocks": [{"id": "practice", "type": "practice"}, {"id": "main", "type": "main"}],
        "exclusions": [{"rule": "fidelity_violated", "max_fraction": 0.2, "bound_ms": 50}]}


def stream(ttft, gap, n=5, text="ab "):
    """``n`` one-token pieces: the first at ``ttft`` ms, then every ``gap`` ms."""
    return Stream(tuple(Piece(text, ttft + i * gap) for i in range(n)))


def stim(tokenizer="cl100k_base", strategy="token"):
    return {"text": "en-chat-coffee", "trace": None, "tokenizer": tokenizer, "strategy": strategy,
            "indicator": "dots", "delivery": "prefetch"}


class Rows:
    """A small study's rows, built trial by trial."""

    def __init__(self):
        self.sessions, self.trials, self.answers, self.showings, self.paints = [], [], [], [], []
        self.playback = 0

    def session(self, sid, *, group="delivery=live", state="completed", flags=(), pid=None, env=None):
        self.sessions.append({"id": sid, "panel_pid": pid, "panel_study_id": "", "panel_session_id": "",
                              "state": state, "group": group, "language": "en", "environment": env or {},
                              "flags": list(flags), "excluded": False, "started_at": "2026-01-01T10:00:00+00:00",
                              "finished_at": None})

    def trial(self, sid, index, kind, value, *, streams=(), stimuli=None, order=None, condition="main:rate=10",
              block="main", practice=False, check=None, showing=1, extra=None, paint=None, answered=True, **answer):
        tid = sid * 1000 + index
        stimuli = stimuli or [stim() for _ in range(max(1, len(streams)))]
        spec = {"type": kind, "position": index, "condition": condition, "stimuli": stimuli, "order": order,
                "attention_check": check, "practice": practice, **(extra or {})}
        self.trials.append({"id": tid, "session_id": sid, "index": index, "block": block, "kind": kind,
                            "condition": condition, "spec": spec, "practice": practice, "attention": bool(check),
                            "status": "answered", "plays": showing, "answered_at": None,
                            "interruptions": [{"at": "x"}] * (showing - 1)})
        for pos, s in enumerate(streams):
            self.playback += 1
            self.showings.append({"trial_id": tid, "position": pos, "showing": showing,
                                  "playback_id": self.playback, "stream": s.to_obj()})
            if paint is not None:
                self.paints.append({"playback_id": self.playback, "entries": paint[pos]})
        if answered:
            self.answers.append({"trial_id": tid, "value": value, "response_ms": answer.get("rt", 900.0),
                                 "comment": answer.get("comment", "")})
        return tid

    def build(self, spec=SPEC, rebuild=None):
        rows = tidy.StudyRows("s", spec, self.sessions, self.trials, self.answers, self.showings, self.paints)
        return tidy.build(rows, rebuild=rebuild)


def entries(lateness, hidden=()):
    return [{"seq": i, "t_ms": 100.0 * i, "recv_ms": 100.0 * i, "paint_ms": 100.0 * i + late, "chars": 1,
             "hidden": i in hidden} for i, late in enumerate(lateness)]
