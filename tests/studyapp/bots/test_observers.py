"""The bots' observer models: they measure what they received, answer with known parameters, follow
instructions they can read, and always give valid answers."""

import math
import random
import statistics

import pytest

from playback.core import metrics
from playback.core.protocol import frames_of
from playback.core.stream import Piece, Stream
from studyapp.bots import observers as bot_models
from studyapp.bots.observers import Bot, ModelError, Perceived, Population, instruction
from studyapp.design import studyfile
from studyapp.journey import responses


def _stream(rate: float, ttft_ms: float, n: int = 40, text: str = "word ") -> Stream:
    return Stream(tuple(Piece(text, ttft_ms + i * 1000.0 / rate) for i in range(n)))


def _perceived(rate: float, ttft_ms: float = 0.0, text: str = "word ") -> Perceived:
    return Perceived.from_frames([f.to_obj() for f in frames_of(_stream(rate, ttft_ms, text=text))])


def _bot(seed: int = 1, **changes) -> Bot:
    return Bot(Population(**changes).draw(random.Random(seed)), random.Random(seed))


def test_a_bot_measures_the_frames_it_received_as_the_metrics_module_does():
    stream = _stream(25.0, 700.0)
    frames = [f.to_obj() for f in frames_of(stream)]
    random.Random(3).shuffle(frames)  # live frames may be collected in any order; seq fixes it
    p = Perceived.from_frames(frames)
    m = metrics.compute(stream)
    assert (p.tokens_per_s, p.chars_per_s, p.ttft_ms, p.chars) == (m.tokens_per_s, m.chars_per_s, m.ttft_ms, m.chars)
    assert p.tokens_per_s == pytest.approx(25.0)


def test_thresholds_are_drawn_normal_on_the_axis_with_the_population_mean_and_sd():
    pop = Population(threshold=20.0, threshold_sd=0.15, axis="log")
    rng = random.Random(7)
    logs = [math.log10(pop.draw(rng).threshold) for _ in range(4000)]
    assert statistics.fmean(logs) == pytest.approx(math.log10(20.0), abs=0.01)
    assert statistics.stdev(logs) == pytest.approx(0.15, rel=0.05)


def test_acceptance_follows_the_bots_psychometric_function_and_ttft_raises_the_threshold():
    bot = _bot(lapse=0.0, threshold_sd=0.0, slope_sd=0.0, ttft_shift=0.2)
    assert bot.params.threshold == pytest.approx(20.0)
    assert bot.p_accept(_perceived(20.0)) == pytest.approx(0.5, abs=1e-9)
    assert bot.p_accept(_perceived(40.0)) > 0.8 > 0.2 > bot.p_accept(_perceived(10.0))
    # with 1 s of TTFT the 50 % point moves up by 0.2 log10 units
    slow_start = _perceived(20.0 * 10**0.2, ttft_ms=1000.0)
    assert bot.p_accept(slow_start) == pytest.approx(0.5, abs=1e-6)


def test_the_share_of_yes_answers_matches_the_model_probability():
    bot = _bot(seed=5)
    seen = _perceived(22.0)
    p = bot.p_accept(seen)
    answers = [bot.trial({"type": "acceptability", "question": "OK?"}, [seen]).payload["response"]
               for _ in range(3000)]
    assert answers.count("yes") / 3000 == pytest.approx(p, abs=0.03)


def test_ratings_stay_on_the_scale_and_rise_with_characters_per_second():
    bot = _bot(seed=2)
    scale = {"type": "likert", "points": 5}

    def mean_rating(rate):
        return statistics.fmean(bot.rate(_perceived(rate), scale) for _ in range(400))

    values = {bot.rate(_perceived(r), scale) for r in (2, 10, 40, 200, 900) for _ in range(50)}
    assert values <= {1, 2, 3, 4, 5} and {1, 5} <= values
    assert mean_rating(5.0) < mean_rating(20.0) < mean_rating(80.0)
    slider = {"type": "slider", "min": 0, "max": 100}
    assert all(0 <= bot.rate(_perceived(r), slider) <= 100 for r in (1, 30, 5000) for _ in range(50))


def test_a_2afc_bot_prefers_the_faster_stream_symmetrically_in_either_order():
    bot = _bot(seed=4)
    fast, slow = _perceived(30.0), _perceived(20.0)
    p = bot.p_first(fast, slow)
    assert 0.5 < p < 1 - bot.params.lapse / 2 + 1e-12
    assert p + bot.p_first(slow, fast) == pytest.approx(1.0)
    d = bot.trial({"type": "afc", "question": "Which felt faster?"}, [slow, fast])
    assert d.chose_faster == (d.payload["response"] == "b")


def test_a_catch_pair_is_answered_correctly_almost_always():
    bot = _bot(seed=9)
    fast, slow = _perceived(60.0, 200.0), _perceived(5.0, 3000.0)
    assert bot.p_first(fast, slow) > 0.98


@pytest.mark.parametrize(("question", "kind", "scale", "expected"), [
    ("Attention check: whatever you think of this answer, please choose 2 on the scale.", "rating", None, 2),
    ("注意力检测：无论您如何看待这个回答，请在量表上选择 2。", "rating", None, 2),
    ("Please select 7.", "rating", {"type": "likert", "points": 5}, None),
    ("Please select 70.", "rating", {"type": "slider", "min": 0, "max": 100}, 70),
    ("To show you are reading, answer 'no'.", "acceptability", None, "no"),
    ("Please pick the second one.", "afc", None, "b"),
    ("How fast did the answer feel?", "rating", None, None),
    ("Which answer felt faster?", "afc", None, None),
])
def test_instructions_are_read_from_the_question_text(question, kind, scale, expected):
    assert instruction(question, kind, scale) == expected


def test_an_attentive_bot_follows_the_instruction_and_an_inattentive_one_answers_as_usual():
    trial = {"type": "rating", "question": "Please choose 2 on the scale.", "scale": {"type": "likert", "points": 5}}
    seen = [_perceived(900.0)]  # so fast an ordinary answer is never 2
    attentive = _bot(attentive=1.0)
    decisions = [attentive.trial(trial, seen) for _ in range(50)]
    assert all(d.payload["response"] == 2 and d.followed and d.instructed == 2 for d in decisions)
    careless = _bot(attentive=0.0)
    decisions = [careless.trial(trial, seen) for _ in range(50)]
    assert all(d.followed is (d.payload["response"] == 2) for d in decisions)
    assert any(d.followed is False for d in decisions)


def _demo() -> dict:
    return studyfile.load_study(studyfile.demo_study_path())


def test_questionnaire_answers_are_always_valid_for_the_demo_items():
    items = _demo()["questionnaire"]
    bot = _bot(seed=11)
    for _ in range(200):
        answers = bot.questionnaire(items)["answers"]
        assert responses.questionnaire_answers(items, answers) == answers


@pytest.mark.parametrize("kind", ["acceptability", "rating", "afc", "reading"])
def test_every_trial_answer_passes_the_servers_checks(kind):
    bot = _bot(seed=12)
    spec = {"type": kind, "scale": {"type": "likert", "points": 7} if kind == "rating" else None,
            "task": {"comment": "required"}, "order": "BA" if kind == "afc" else None}
    view = {"type": kind, "question": "?", "scale": spec["scale"], "comment": "required"}
    for rate in (3.0, 25.0, 300.0):
        payload = bot.trial(view, [_perceived(rate), _perceived(rate * 1.5)]).payload
        responses.trial_value(spec, payload)
        assert responses.response_ms(payload) > 0
        assert responses.comment(spec, payload)


def test_the_same_seed_gives_the_same_bots():
    a = bot_models.population_bots(Population(), 5, seed=3)
    b = bot_models.population_bots(Population(), 5, seed=3)
    assert [x.params for x in a] == [y.params for y in b]
    assert len({x.params.threshold for x in a}) == 5
    assert [x.params for x in bot_models.population_bots(Population(), 5, seed=4)] != [x.params for x in a]


@pytest.mark.parametrize(("config", "message"), [
    ({"treshold": 20}, "treshold: not a model parameter"),
    ({"threshold": "fast"}, "threshold: must be a number"),
    ({"slope": -1}, "slope: must be > 0"),
    ({"attentive": 1.5}, "attentive: must be between 0 and 1"),
    ({"axis": "cubic"}, "axis"),
    ([1, 2], "model: must be a mapping"),
])
def test_a_bad_model_file_is_refused_naming_the_parameter(config, message):
    with pytest.raises(ModelError, match=message):
        Population.from_config(config)


def test_a_model_file_sets_the_population():
    pop = Population.from_config({"threshold": 30, "axis": "linear", "threshold_sd": 4})
    assert (pop.threshold, pop.axis, pop.threshold_sd, pop.slope) == (30.0, "linear", 4.0, Population().slope)


def test_a_bots_answers_depend_on_what_it_is_shown_not_on_the_order():
    """Bot i of a seed answers each stimulus the same whatever order the trials come in (keyed draws), and picks
    the same stream of a 2AFC pair whichever side it is shown on."""
    pop = Population(rating_noise=0.2)
    scale = {"type": "likert", "points": 7}
    trials = [({"type": "acceptability", "question": "OK?"}, [_perceived(r, t)]) for r in (8, 14, 22, 35)
              for t in (200, 1500)]
    trials += [({"type": "rating", "question": "How fast?", "scale": scale,
                 "stimuli": [{"strategy": s, "indicator": "dots", "delivery": "prefetch"}]}, [_perceived(20)])
               for s in ("token", "word", "smooth", "fade")]
    trials += [({"type": "afc", "question": "Which?"}, pair) for pair in
               ([_perceived(18), _perceived(22)], [_perceived(22), _perceived(18)])] * 2

    def answers(order):
        bot = bot_models.make_bot(pop, 7, 3)
        out = {}
        for i in order:
            view, seen = trials[i]
            d = bot.trial(view | {"index": i}, seen)
            chosen = None if view["type"] != "afc" else seen[0 if d.payload["response"] == "a" else 1].tokens_per_s
            out[i] = (d.payload["response"] if chosen is None else chosen, d.payload["response_ms"])
        return out

    forward = answers(range(len(trials)))
    backward = answers(reversed(range(len(trials))))
    plain = {i: a for i, a in forward.items() if trials[i][0]["type"] != "afc"}
    assert plain == {i: backward[i] for i in plain}
    # the delivery mode is not something a bot perceives: the same trial delivered live gets the same answer
    live = trials[8][0] | {"stimuli": [{"strategy": "token", "indicator": "dots", "delivery": "live"}]}
    assert bot_models.make_bot(pop, 7, 3).trial(live, trials[8][1]).payload["response"] == forward[8][0]
    # 2AFC: the k-th showing of the pair picks the same stream, whichever side it was on
    afc = [i for i in forward if trials[i][0]["type"] == "afc"]
    assert sorted(forward[i] for i in afc) == sorted(backward[i] for i in afc)
    assert bot_models.make_bot(pop, 7, 3).params == bot_models.population_bots(pop, 5, 7)[3].params
    assert bot_models.make_bot(pop, 8, 3).params != bot_models.make_bot(pop, 7, 3).params
