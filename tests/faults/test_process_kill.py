"""An ASGI process dies (SIGKILL) while it paces a participant's live trial: the participant reconnects to another
process sharing PostgreSQL and Redis, is on the same step, sees the interrupted trial again from the start, the
interruption is recorded, and every acknowledged answer is stored exactly once."""

import json
import uuid
from collections import Counter

import pytest
from fault_client import Person, play_through
from faults import kill
from procs import free_port, start_daphne, stop
from websockets.exceptions import ConnectionClosed

from studyapp.models import Answer, Session, Trial

pytestmark = pytest.mark.integration


@pytest.fixture
def two_servers(fault_env, tmp_path):
    procs = []
    for i in (1, 2):
        port = free_port()
        procs.append((f"http://127.0.0.1:{port}", start_daphne(port, fault_env, tmp_path / f"daphne-{i}.log")))
    yield procs
    for _, proc in procs:
        stop(proc)


def test_a_killed_process_loses_nothing_and_the_participant_resumes_on_another(two_servers, live_study):
    (base1, proc1), (base2, _) = two_servers
    me = Person(base1, live_study.slug, "kill-me")
    view = me.until_trial()
    step, index = view["step"], view["trial"]["index"]
    first_token = view["trial"]["playbacks"][0]["token"]
    acked_before = dict(me.acked)
    assert len(acked_before) == step == 3  # consent, environment, instructions

    # mid-trial on process 1: the live pacing is running when the process is killed
    with me.ws() as ws:
        ws.send(json.dumps({"type": "hello", "token": first_token}))
        assert json.loads(ws.recv(10))["type"] == "ready"
        ws.send(json.dumps({"type": "start"}))
        got = [json.loads(ws.recv(10)) for _ in range(3)]
        assert [m["type"] for m in got] == ["frame"] * 3 and [m["seq"] for m in got] == [0, 1, 2]
        kill(proc1)
        with pytest.raises(ConnectionClosed):  # the socket dies with its process (no close frame)
            while True:
                ws.recv(10)
    assert proc1.returncode == -9

    # the browser reconnects to process 2: same step, same trial, a new playback, the interruption recorded
    me.switch(base2)
    again = me.view()
    assert (again["kind"], again["step"], again["trial"]["index"]) == ("trial", step, index)
    second_token = again["trial"]["playbacks"][0]["token"]
    assert second_token != first_token
    trial = Trial.objects.get(session__token=me.token, index=index)
    assert trial.plays == 2 and trial.status == Trial.Status.PENDING
    assert len(trial.interruptions) == 1 and trial.interruptions[0]["after_plays"] == 1

    # the trial plays again from the start on process 2, to the end
    with me.ws() as ws2:
        frames = play_through(ws2, second_token)
    assert frames[0]["seq"] == 0 and [f["seq"] for f in frames] == list(range(len(frames)))
    assert len(frames) > len(got)

    # the answer to the trial and the rest of the study go to process 2
    me.answer(again, {"response": "yes", "response_ms": 900})
    # an answer acknowledged by the dead process, sent again to process 2: acknowledged again, stored once
    old_id = next(iter(acked_before))
    replay = me.post(me.bodies[old_id])
    assert replay.status_code == 200 and replay.json()["duplicate"] is True and replay.json()["ack"] == old_id
    view = me.view()
    while view["state"] == "active":
        if view["kind"] == "trial":
            with me.ws() as ws3:
                play_through(ws3, view["trial"]["playbacks"][0]["token"])
            me.answer(view, {"response": "no", "response_ms": 700})
        else:
            me.answer(view)
        view = me.view()
    assert view["state"] == "completed"

    session = Session.objects.get(token=me.token)
    answers = list(Answer.objects.filter(session=session))
    stored = Counter(a.client_id for a in answers)
    assert set(stored) == set(me.acked) and max(stored.values()) == 1  # every acknowledged answer, once
    assert len(answers) == session.step == len(me.acked)
    assert Answer.objects.get(session=session, trial=trial).value["response"] == "yes"
    print(f"\nprocess kill: {len(frames)} frames replayed from seq 0 on process 2 after {len(got)} on process 1;"
          f" {len(answers)} answers stored once; interruptions {trial.interruptions}")


def test_an_answer_whose_acknowledgement_died_with_the_process_is_stored_once(two_servers, live_study):
    """The process stores an answer and dies before the client reads the acknowledgement: the client resends the
    same client_id to the other process and is acknowledged (as a duplicate)."""
    (base1, proc1), (base2, _) = two_servers
    me = Person(base1, live_study.slug, "kill-ack")
    view = me.view()
    me.answer(view)  # consent on process 1
    view = me.view()
    body = {"client_id": uuid.uuid4().hex, "step": view["step"], "payload": {"environment": {
        "viewport": {"width": 1280, "height": 800}, "refresh_hz": 60, "device": "desktop"}}}
    assert me.post(body).status_code == 200  # stored on process 1 ...
    kill(proc1)  # ... which dies; suppose the acknowledgement never arrived
    me.switch(base2)
    r = me.post(body)
    assert r.status_code == 200 and r.json()["duplicate"] is True
    session = Session.objects.get(token=me.token)
    assert Answer.objects.filter(session=session, client_id=body["client_id"]).count() == 1
    assert session.step == 2
