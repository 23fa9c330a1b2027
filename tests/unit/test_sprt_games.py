"""How many games an SPRT takes (tools/connectx_forge/bench/sprt_games.py): the figure BENCHMARKS.md and
docs/tournaments.md
give for the default bounds, and the simulation that checks it."""

from __future__ import annotations

import pytest

from connectx_forge.arena.elo import pentanomial_elo
from connectx_forge.arena.pentanomial import Pentanomial
from connectx_forge.arena.sprt import SPRT
from connectx_forge.arena.sprt_run import Sprt, sprt_suite
from connectx_forge.bench.sprt_games import SUITE_GAMES, simulate, tilted, wald_pairs

SHAPE = [23, 18, 85, 20, 54]  # alphabeta-4 vs alphabeta, 200 pairs on the default suite


def test_the_default_test_takes_about_6400_games_at_either_hypothesis() -> None:
    test = SPRT()  # H0 0, H1 10 normalized Elo, alpha = beta = 0.05
    assert 2 * wald_pairs(test, 0) == pytest.approx(2 * wald_pairs(test, 10)) == pytest.approx(6398, abs=1)
    assert 2 * wald_pairs(test, 5) == pytest.approx(10465, abs=1)  # the midpoint takes longest
    assert SUITE_GAMES == 2 * len(sprt_suite(Sprt("a", "b"), progress=False)) == 9576  # every 6-ply opening in -3:3
    assert SUITE_GAMES > 2 * wald_pairs(test, 10)  # the default suite holds more distinct games than that


@pytest.mark.parametrize("nelo", [-30.0, 0.0, 10.0, 50.0])
def test_the_tilted_shape_has_the_asked_elo(nelo: float) -> None:
    p = tilted(SHAPE, nelo)
    counts = [round(x * 10 ** 7) for x in p]
    assert pentanomial_elo(Pentanomial(counts[0], counts[1], counts[2], 0, counts[3], counts[4])).nelo == \
        pytest.approx(nelo, abs=0.01)


def test_a_simulated_test_takes_about_what_wald_says() -> None:
    test = SPRT(0, 200)  # wide bounds: a few pairs a test, so the check is cheap
    pairs = simulate(test, tilted(SHAPE, 200), 200)
    assert 0.6 * wald_pairs(test, 200) < sum(pairs) / len(pairs) < 2.5 * wald_pairs(test, 200)
