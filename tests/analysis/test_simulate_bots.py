"""The fast path of the end-to-end validation is the real one: for the same seed and the same stimuli, bots run
through a real Daphne (``studyapp.bots.runner``) and ``analysis.stats.simulate`` give the same tidy answer columns.

Each real session's journey is rebuilt from its stored seed, group and Latin-square row
(``studyapp.journey.steps.build_plan``, as the server built it), and bot ``i`` of the run answers it through the fast
path; the two tidy frames (``analysis.selectors.study_frame`` from the database, ``analysis.tables.tidy.build`` from the
simulated rows) must agree on every answer column of every trial.
"""

import copy

import pandas as pd
import pytest
from django.contrib.auth import get_user_model

from analysis.selectors import study_frame
from analysis.stats import simulate
from analysis.tables import tidy
from studyapp import services
from studyapp.bots import observers as bot_models
from studyapp.bots import runner as bots
from studyapp.design import studyfile
from studyapp.journey import steps as journey
from studyapp.models import Session

pytestmark = pytest.mark.integration

N_BOTS = 4
SEED = 7
ANSWER_COLUMNS = ["block", "trial_index", "trial_type", "condition", "response", "response_value",
                  "response_ms", "attention_check", "attention_passed", "failed_attention", "practice",
                  "tokens_per_s", "ttft_ms"]


def short_demo() -> dict:
    """The demo study made short, every kind of step kept (acceptability over rate × TTFT with delivery groups,
    ratings with an instructed item, a 2AFC with a catch trial, the questionnaire, Latin-square block orders)."""
    doc = copy.deepcopy(studyfile.load_study(studyfile.demo_study_path()))
    doc["id"] = "sim-equal-bots"
    for name, chars in (("coffee", 50), ("sleep", 40), ("brew", 30)):
        doc["stimuli"][name]["max_chars"] = chars
    levels = {"rate": [10, 25, 60], "ttft": [300, 800], "strategy": ["token", "word"], "indicator": ["none"]}
    for factor in doc["factors"]:
        if factor["name"] in levels:
            factor["levels"] = levels[factor["name"]]
    doc["blocks"][0]["trials"] = [{"label": "fast", "rate": 50, "ttft_ms": 300}]
    assert studyfile.validate(doc) == []
    return doc


@pytest.fixture
def study(transactional_db):
    owner = get_user_model().objects.create_user("sim-owner", password="x" * 12)
    study, _ = services.study_load(doc=short_demo(), owner=owner)
    return services.study_set_state(study=study, state="open")


@pytest.fixture
def server(service_env, request) -> str:
    service_env["CONN_MAX_AGE"] = "0"
    return request.getfixturevalue("daphne_server")


def _by_trial(frame: pd.DataFrame, pid_of: dict) -> pd.DataFrame:
    out = frame.assign(bot=frame["participant"].map(pid_of))
    return out.sort_values(["bot", "trial_index"]).reset_index(drop=True)[["bot", *ANSWER_COLUMNS]]


def test_simulated_answers_equal_a_real_bot_run_for_the_same_seed_and_stimuli(server, study):
    population = bot_models.Population(attentive=0.8)  # some instructed items missed: the flags must agree too
    config = bots.RunConfig(url=server, study=study.slug, n=N_BOTS, concurrency=N_BOTS, seed=SEED,
                            population=population, timeout_s=90)
    results, _ = bots.run_sync(config)
    assert [r.error for r in results] == [""] * N_BOTS

    real, _ = study_frame(study)
    index_of = {bots.bot_pid(config.run_id, i): i for i in range(N_BOTS)}
    sessions = {s.pk: s for s in Session.objects.filter(study=study)}
    real_bot = {pk: index_of[s.panel_pid] for pk, s in sessions.items()}

    streams = simulate._Streams()
    robots = simulate.bots_for(population, N_BOTS, SEED)
    rows, trial_id = [], 1
    for pk, s in sorted(sessions.items(), key=lambda kv: real_bot[kv[0]]):
        plan = journey.build_plan(study.spec, seed=s.seed, group=s.group, row=s.plan["row"], language=s.language)
        sim = simulate.run_journey(study.spec, robots[real_bot[pk]], plan, sid=real_bot[pk] + 1,
                                   language=s.language, streams=streams, first_trial_id=trial_id)
        trial_id += len(sim.trials)
        rows.append(sim)
    simulated, _ = tidy.build(
        tidy.StudyRows(slug=study.slug, spec=study.spec, sessions=[r.session for r in rows],
                       trials=[t for r in rows for t in r.trials], answers=[a for r in rows for a in r.answers]),
        rebuild=lambda t: streams.streams[f"{t['spec']['condition']}|{t['spec'].get('order')}"])

    a = _by_trial(real, real_bot)
    b = _by_trial(simulated, {i + 1: i for i in range(N_BOTS)})
    assert len(a) == len(b) > N_BOTS * 10
    assert (a["trial_type"] == "acceptability").sum() > 0 and a["response"].nunique() > 2
    pd.testing.assert_frame_equal(a, b, check_dtype=False)
