"""The checker's floor test (tools/connectx_forge/submit/sequential.py) and its exact binomial statistics
(tools/connectx_forge/stats.py).

The error rates are computed exactly, by following the distribution of the wins
through the plan's looks (``_exact_verdicts``), for floors and plans Hypothesis
draws: whatever the floor, an agent exactly at it (the worst case for both
errors) fails at most 5% of the time and passes at most 5% of the time.
Simulated agents (Bernoulli games from fixed seeds) check the same, and that a
clear case is decided.
"""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connectx_forge.stats import binomial_at_least, binomial_at_most, clopper_pearson
from connectx_forge.submit.sequential import FAIL, MORE, PASS, UNDECIDED, FloorLooks

floors = st.floats(0.05, 0.95)
plans = st.tuples(st.integers(1, 16), st.integers(0, 4)).map(lambda fc: FloorLooks(fc[0], fc[0] * 2 ** fc[1] + fc[1]))


def _pmf(n: int, p: float) -> list[float]:
    return [math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1)]


def _exact_verdicts(plan: FloorLooks, floor: float, p: float) -> dict[str, float]:
    """The exact probability of each final verdict for an agent of win rate ``p``, over the plan's looks."""
    alive = [1.0]  # P(k wins so far and still playing), by k
    done = {PASS: 0.0, FAIL: 0.0, UNDECIDED: 0.0}
    games = 0
    for look in plan.looks:
        step = _pmf(look - games, p)
        grown = [0.0] * (look + 1)
        for k, a in enumerate(alive):
            if a:
                for j, b in enumerate(step):
                    grown[k + j] += a * b
        games, alive = look, grown
        for k, mass in enumerate(alive):
            verdict = plan.decide(floor, k, games).verdict
            if verdict != MORE:
                done[verdict] += mass
                alive[k] = 0.0
    assert sum(alive) < 1e-12  # the cap decides everything left
    return done


def _simulate(plan: FloorLooks, floor: float, p: float, rng: random.Random) -> str:
    wins = games = 0
    for look in plan.looks:
        wins += sum(rng.random() < p for _ in range(look - games))
        games = look
        verdict = plan.decide(floor, wins, games).verdict
        if verdict != MORE:
            return verdict
    raise AssertionError("the cap must decide")


@settings(max_examples=60, deadline=None)
@given(plans, floors)
def test_an_agent_at_its_floor_is_misjudged_at_most_5_percent_each_way(plan: FloorLooks, floor: float) -> None:
    verdicts = _exact_verdicts(plan, floor, floor)
    assert verdicts[FAIL] <= 0.05 + 1e-9  # a floor that is met fails at most 5% of the time ...
    assert verdicts[PASS] <= 0.05 + 1e-9  # ... and one just missed (p -> floor from below) passes at most 5%


@settings(max_examples=40, deadline=None)
@given(plans, floors, st.floats(0.0, 1.0))
def test_a_wrong_verdict_is_rare_wherever_the_true_rate_is(plan: FloorLooks, floor: float, p: float) -> None:
    verdicts = _exact_verdicts(plan, floor, p)
    wrong = verdicts[FAIL] if p >= floor else verdicts[PASS]
    assert wrong <= 0.05 + 1e-9
    assert abs(sum(verdicts.values()) - 1) < 1e-9


@settings(max_examples=20, deadline=None)
@given(floors, st.floats(0.0, 1.0), st.integers(0, 2 ** 16))
def test_simulated_agents_are_judged_right(floor: float, p: float, seed: int) -> None:
    """Bernoulli games from a fixed seed: 200 checks of an agent whose win rate is ``p``."""
    plan = FloorLooks(8, 256)
    rng = random.Random(seed)
    verdicts = [_simulate(plan, floor, p, rng) for _ in range(200)]
    wrong = verdicts.count(FAIL if p >= floor else PASS)
    assert wrong <= 25  # 5% is 10 of 200; 25 is far in the tail (P < 1e-4), whatever Hypothesis draws
    if abs(p - floor) >= 0.25:  # a clear case is decided, the right way, nearly always
        assert verdicts.count(PASS if p >= floor else FAIL) >= 190


@pytest.mark.parametrize("p, floor, verdict, games", [
    (0.02, 0.2, FAIL, 64),  # a random mover against negamax: it fails, in 32 games or 64
    (1.0, 0.85, PASS, 32),  # the solver: no loss, 32 games
    (1.0, 0.9, PASS, 64),
])
def test_clear_cases_are_decided_in_few_games(p: float, floor: float, verdict: str, games: int) -> None:
    plan = FloorLooks(8, 256)
    rng = random.Random(0)
    for _ in range(20):
        wins = played = 0
        for look in plan.looks:
            wins += sum(rng.random() < p for _ in range(look - played))
            played = look
            decision = plan.decide(floor, wins, played)
            if decision.verdict != MORE:
                break
        assert decision.verdict == verdict
        assert played <= games if p < 1 else played == games


def test_the_plan_doubles_its_batches_up_to_the_cap() -> None:
    assert FloorLooks(8, 256).looks == (8, 16, 32, 64, 128, 256)
    assert FloorLooks(8, 100).looks == (8, 16, 32, 64, 100)
    assert FloorLooks(5, 5).looks == (5,) and FloorLooks(5, 5).level == pytest.approx(0.05)
    assert FloorLooks(8, 256).level == pytest.approx(0.05 / 6)
    assert FloorLooks(8, 256).next_look(8) == 16 and FloorLooks(8, 256).next_look(256) is None
    with pytest.raises(ValueError):
        FloorLooks(8, 4)


def test_the_ends_of_the_floor_scale() -> None:
    plan = FloorLooks(8, 16)
    assert plan.decide(0.0, 0, 8).verdict == PASS  # a floor of 0 is always met
    assert plan.decide(1.0, 16, 16).verdict == UNDECIDED  # a floor of 1 is never shown met ...
    assert plan.decide(1.0, 7, 8).verdict == FAIL  # ... and is missed at the first loss


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 300), st.data(), floors)
def test_pass_and_fail_agree_with_the_clopper_pearson_bounds(n: int, data: st.DataObject, floor: float) -> None:
    k = data.draw(st.integers(0, n))
    plan = FloorLooks(n, n)
    decision = plan.decide(floor, k, n)
    lower, upper = clopper_pearson(k, n, plan.level)
    assert decision.bounds == (lower, upper)
    if decision.verdict == PASS:
        assert lower >= floor - 1e-9
    elif decision.verdict == FAIL:
        assert upper <= floor + 1e-9
    else:
        assert lower <= floor + 1e-9 <= upper + 2e-9
    # more wins never make the verdict worse
    if k < n:
        better = plan.decide(floor, k + 1, n).verdict
        assert not (decision.verdict == PASS and better != PASS)
        assert not (better == FAIL and decision.verdict != FAIL)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 60), st.data(), st.floats(0.001, 0.999))
def test_the_binomial_tails_are_exact(n: int, data: st.DataObject, p: float) -> None:
    k = data.draw(st.integers(0, n))
    pmf = _pmf(n, p)
    assert binomial_at_most(k, n, p) == pytest.approx(math.fsum(pmf[: k + 1]), rel=1e-9, abs=1e-300)
    assert binomial_at_least(k, n, p) == pytest.approx(math.fsum(pmf[k:]), rel=1e-9, abs=1e-300)


def test_clopper_pearson_known_values() -> None:
    assert clopper_pearson(0, 10, 0.025)[1] == pytest.approx(1 - 0.025 ** 0.1, abs=1e-9)
    assert clopper_pearson(10, 10, 0.025)[0] == pytest.approx(0.025 ** 0.1, abs=1e-9)
    lower, upper = clopper_pearson(5, 10, 0.025)  # the textbook 95% interval of 5/10: [0.187, 0.813]
    assert (round(lower, 3), round(upper, 3)) == (0.187, 0.813)
    assert clopper_pearson(0, 0, 0.05) == (0.0, 1.0)
