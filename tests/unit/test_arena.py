"""tools/connectx_forge/arena's parts: pair counts, Elo and SPRT against hand-computed and published values, opening
suites,
the results store, and games that start from an opening."""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agents.board import Board, BoardError
from connectx_forge.arena import elo, openings
from connectx_forge.arena.pentanomial import Pentanomial, bucket
from connectx_forge.arena.run import name_of
from connectx_forge.arena.sprt import SPRT
from connectx_forge.arena.sprt_run import Sprt
from connectx_forge.arena.store import Key, RunConfig, Store
from connectx_forge.arena.tournament import Tournament
from connectx_forge.play.game import play_game
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import tag
from connectx_forge.play.settings import GameSettings

ROOT = Path(__file__).resolve().parents[2]
CXFORGE = Path(sys.executable).parent / "cxforge"
Z = 1.959963984540054


# -- pentanomial counts -------------------------------------------------------------------------------------
def test_pairs_fall_in_the_five_buckets() -> None:
    assert [bucket(*p) for p in [(1, 1), (1, 0.5), (0.5, 1), (1, 0), (0, 1), (0.5, 0.5), (0, 0.5), (0, 0)]] == \
        ["WW", "WD", "WD", "WL", "WL", "DD", "LD", "LL"]
    p = Pentanomial.of([(1, 1), (1, 0), (0.5, 0.5), (0, 0.5), (1, 0.5)])
    assert p.to_json() == {"LL": 0, "LD": 1, "WL": 1, "DD": 1, "WD": 1, "WW": 1}
    assert p.counts() == (0, 1, 2, 1, 1) and p.pairs == 5
    assert p.flipped().to_json() == {"LL": 1, "LD": 1, "WL": 1, "DD": 1, "WD": 1, "WW": 0}
    with pytest.raises(ValueError):
        bucket(2, 0)


def test_pentanomial_elo_by_hand() -> None:
    # 10 pairs: 1 LL, 2 LD, 3 WL, 1 DD, 2 WD, 1 WW; points per game 0, .25, .5, .5, .75, 1
    penta = Pentanomial(1, 2, 3, 1, 2, 1)
    points = [0] + [0.25] * 2 + [0.5] * 4 + [0.75] * 2 + [1]
    mean = sum(points) / 10
    var = sum((x - mean) ** 2 for x in points) / 10
    e = elo.pentanomial_elo(penta, prior=0)
    assert e.score == pytest.approx(mean) and e.pairs == 10
    assert e.elo == pytest.approx(-400 * math.log10(1 / mean - 1))
    shrunk = (10 * var + 2 * mean * (1 - mean)) / 12  # two virtual games at the largest variance
    n_eff = 10 * mean * (1 - mean) / shrunk  # single games with the same standard error

    def wilson(p: float, side: int) -> float:
        centre = (p + Z * Z / (2 * n_eff)) / (1 + Z * Z / n_eff)
        return centre + side * Z / (1 + Z * Z / n_eff) * math.sqrt(p * (1 - p) / n_eff + Z * Z / (4 * n_eff ** 2))

    step = 1 / (2 * n_eff)  # the continuity correction
    lo, hi = wilson(mean - step, -1), wilson(mean + step, 1)  # Wilson's interval, continuity-corrected
    assert (e.lo, e.hi) == (pytest.approx(-400 * math.log10(1 / lo - 1)), pytest.approx(-400 * math.log10(1 / hi - 1)))
    assert e.nelo == pytest.approx((mean - 0.5) / math.sqrt(2 * var) * 800 / math.log(10))
    assert e.los == pytest.approx(0.5 * (1 + math.erf((mean - 0.5) / math.sqrt(var / 10) / math.sqrt(2))))


@pytest.mark.parametrize(("counts", "nelo", "nelo_error", "diff", "error", "los"), [
    ((34, 54, 31, 32, 64, 75), 57.94, 28.28, 55.58, 27.65, 1.0),  # fastchess app/tests/elo_test.cpp
    ((332, 433, 457, 41, 333, 334), -9.17, 10.96, -8.64, 10.33, 0.0505),
    ((7895, 8757, 5485, 200, 568, 9999), -19.01, 2.65, -21.04, 2.95, 0.0),
])
def test_pentanomial_elo_agrees_with_fastchess(counts: tuple[int, ...], nelo: float, nelo_error: float,
                                               diff: float, error: float, los: float) -> None:
    e = elo.pentanomial_elo(Pentanomial(*counts))  # LL, LD, WL, DD, WD, WW, fastchess's Stats order
    assert [e.nelo, e.nelo_error, e.elo] == pytest.approx([nelo, nelo_error, diff], rel=0.01)
    assert e.error == pytest.approx(error, rel=0.025)  # a little wider: the small-sample corrections (stats.py)
    assert e.los == pytest.approx(los, abs=1e-4)


def test_without_the_prior_a_perfect_score_is_an_infinite_elo_in_json() -> None:
    e = elo.pentanomial_elo(Pentanomial(ww=5), prior=0)
    assert math.isinf(e.elo) and e.to_json()["elo"] == "+inf" and e.los == 1.0
    assert elo.pentanomial_elo(Pentanomial(ll=5), prior=0).to_json()["elo"] == "-inf"
    json.dumps(e.to_json(), allow_nan=False)


@pytest.mark.parametrize("penta, sign", [
    (Pentanomial(ww=6), 1),  # all wins
    (Pentanomial(ll=6), -1),  # all losses
    (Pentanomial(dd=6), 0),  # all draws
    (Pentanomial(wl=6), 0),  # every pair split
    (Pentanomial(ww=1), 1),  # one pair
    (Pentanomial(), 0),  # one game: no complete pair
])
def test_no_finite_sample_gives_an_infinite_elo_or_a_zero_width_pair_interval(penta: Pentanomial,
                                                                              sign: int) -> None:
    """The estimate stays finite (the prior); the interval is never of zero width, and is unbounded only on the
    side no sample can bound: above a perfect score, below a perfect loss, both ways with no complete pair."""
    e = elo.pentanomial_elo(penta)
    assert all(math.isfinite(x) for x in (e.elo, e.nelo, e.nelo_error)) and e.hi - e.lo > 100 and e.nelo_error > 0
    assert e.lo < e.elo < e.hi and 0 < e.los < 1
    assert (e.elo > 0) - (e.elo < 0) == sign
    assert math.isinf(e.hi) == (penta.ww == penta.pairs) and math.isinf(e.lo) == (penta.ll == penta.pairs)
    json.dumps(e.to_json(), allow_nan=False)
    more = elo.pentanomial_elo(Pentanomial(*(4 * c for c in (penta.ll, penta.ld, penta.wl, penta.dd, penta.wd,
                                                                  penta.ww))))
    if penta.pairs:  # the interval narrows as pairs come
        assert more.lo > e.lo or math.isinf(e.lo)
        assert more.hi < e.hi or math.isinf(e.hi)
        assert min(more.hi, 1e9) - max(more.lo, -1e9) < min(e.hi, 1e9) - max(e.lo, -1e9)


@pytest.mark.parametrize("scores", [
    [(1.0, 1.0)] * 6,  # A wins every game
    [(0.5, 0.5)] * 6,  # every game drawn
    [(1.0, 0.0)] * 6,  # every pair split
    [(1.0, None)],  # one game
])
def test_no_finite_sample_gives_an_infinite_or_zero_width_rating(scores: list[tuple[float, float | None]]) -> None:
    games = []
    for k, (first, second) in enumerate(scores):
        games.append(elo.ScoredGame(0, 1, first, pair=k))
        if second is not None:
            games.append(elo.ScoredGame(0, 1, second, pair=k))
    r = elo.fit(["a", "b"], games)
    for i in range(2):
        lo, hi = r.interval(i)
        assert math.isfinite(lo) and math.isfinite(hi) and hi - lo > 20, (scores, lo, hi)


# -- maximum-likelihood ratings ------------------------------------------------------------------------------
def test_two_players_by_hand() -> None:
    games = [elo.ScoredGame(0, 1, s) for s in [1.0] * 6 + [0.5] * 2 + [0.0] * 2]
    r = elo.fit(["a", "b"], games)
    # one virtual draw: A scores 7.5 of 11, so A - B = 400 log10(7.5 / 3.5); the ratings average 0
    gap = 400 * math.log10(7.5 / 3.5)
    assert r.elo == (pytest.approx(gap / 2), pytest.approx(-gap / 2))
    anchored = elo.fit(["a", "b"], games, anchor="b")
    assert anchored.elo == (pytest.approx(gap), pytest.approx(0, abs=1e-9))
    assert anchored.interval(1) == (pytest.approx(0, abs=1e-9), pytest.approx(0, abs=1e-9))


def test_three_players_score_what_the_ratings_expect() -> None:
    # the likelihood is maximal where every player's points (games plus one virtual draw per pairing)
    # equal the points its ratings predict
    results = {(0, 1): [1, 1, 0.5, 0], (0, 2): [1, 1, 1, 0.5], (1, 2): [1, 0, 0.5, 1, 1]}
    games = [elo.ScoredGame(i, j, float(s)) for (i, j), ss in results.items() for s in ss]
    r = elo.fit(["x", "y", "z"], games)
    for k in range(3):
        actual = expected = 0.0
        for (i, j), ss in results.items():
            if k in (i, j):
                mine = [s if k == i else 1 - s for s in ss] + [0.5]
                other = j if k == i else i
                actual += sum(mine)
                expected += len(mine) / (1 + 10 ** ((r.elo[other] - r.elo[k]) / 400))
        assert actual == pytest.approx(expected, abs=1e-6)
    assert sum(r.elo) == pytest.approx(0, abs=1e-6)
    assert r.order() == [0, 2, 1] or r.order() == [0, 1, 2]


def test_clustered_intervals_match_the_pentanomial_ones() -> None:
    # many pairs of two players: the sandwich interval on the gap is the pentanomial one (the prior is negligible)
    pairs = [(1.0, 0.0)] * 300 + [(1.0, 0.5)] * 120 + [(0.5, 0.0)] * 60 + [(1.0, 1.0)] * 30 + [(0.0, 0.0)] * 20
    games = [elo.ScoredGame(0, 1, s, k) for k, pair in enumerate(pairs) for s in pair]
    r = elo.fit(["a", "b"], games, anchor="b")
    e = elo.pentanomial_elo(Pentanomial.of(pairs))
    assert r.elo[0] == pytest.approx(e.elo, rel=0.01)
    assert r.interval(0)[1] - r.interval(0)[0] == pytest.approx(e.hi - e.lo, rel=0.03)
    unpaired = elo.fit(["a", "b"], [elo.ScoredGame(g.i, g.j, g.score) for g in games], anchor="b")
    assert unpaired.sd(0) > r.sd(0)  # WL pairs cancel out: pairing makes the estimate sharper
    assert r.los(0, 1) == pytest.approx(elo.phi(r.elo[0] / r.sd(0)))


def test_unconnected_players_have_no_ratings() -> None:
    with pytest.raises(ValueError, match="connected"):
        elo.fit(["a", "b", "c", "d"], [elo.ScoredGame(0, 1, 1.0), elo.ScoredGame(2, 3, 0.5)])


# -- SPRT -------------------------------------------------------------------------------------------------
def test_sprt_bounds_are_walds() -> None:
    t = SPRT(0, 10, 0.05, 0.1)
    assert t.lower == pytest.approx(math.log(0.1 / 0.95)) and t.upper == pytest.approx(math.log(0.9 / 0.05))
    assert (t.decide(3.0), t.decide(-2.3), t.decide(0.0)) == ("H1", "H0", "continue")
    for bad in [dict(elo0=5, elo1=5), dict(alpha=0), dict(beta=1), dict(alpha=0.6, beta=0.5), dict(model="bayes")]:
        with pytest.raises(ValueError):
            SPRT(**{"elo0": 0, "elo1": 10, **bad})  # type: ignore[arg-type]


@pytest.mark.parametrize(("model", "elo0", "elo1", "counts", "llr"), [
    # fastchess app/tests/sprt_test.cpp (Stats order LL, LD, WL, DD, WD, WW), within its 1%
    ("normalized", 0, 2, (365, 16618, 36029, 200, 16974, 390), 2.25),
    ("normalized", -1.75, 0.25, (127, 4883, 10311, 401, 5150, 104), 3.01),
    ("normalized", 0, 5, (0, 0, 0, 0, 0, 5550), 111.82),
    ("logistic", 0.5, 2.5, (223, 9863, 20279, 1000, 10037, 246), -3.07),
    ("logistic", 0, 2, (871, 26175, 55003, 980, 26678, 821), -4.98),
])
def test_pentanomial_llr_agrees_with_fastchess(model: str, elo0: float, elo1: float, counts: tuple[int, ...],
                                               llr: float) -> None:
    assert SPRT(elo0, elo1, model=model).llr(Pentanomial(*counts)) == pytest.approx(llr, rel=0.01)


@pytest.mark.parametrize(("model", "elo0", "elo1", "wld", "llr"), [
    ("normalized", 0, 2, (36433, 36027, 68692), 0.92),  # wins, losses, draws
    ("normalized", -1.75, 0.25, (10871, 10650, 20431), 2.30),
    ("normalized", 0, 10, (4250, 0, 0), 120.56),
    ("logistic", 0.5, 2.5, (21404, 21184, 40708), -1.57),
    ("logistic", 0, 2, (57433, 57030, 106593), -2.59),
])
def test_trinomial_llr_agrees_with_fastchess(model: str, elo0: float, elo1: float, wld: tuple[int, int, int],
                                             llr: float) -> None:
    w, lost, d = wld
    assert SPRT(elo0, elo1, model=model).llr_trinomial(w, d, lost) == pytest.approx(llr, rel=0.01)


def test_logistic_llr_by_hand() -> None:
    # no empty outcome, so nothing is regularized; the nearest distribution with mean s is q_i / (1 + x d_i),
    # d_i = a_i - s, where x solves sum q_i d_i / (1 + x d_i) = 0: a quartic, solved here with numpy's roots
    import numpy as np

    counts = [3, 11, 30, 14, 6]  # LL, LD, WL+DD, WD, WW
    q = np.array(counts) / sum(counts)
    a = np.array([0, 0.25, 0.5, 0.75, 1])

    def nearest(s: float) -> np.ndarray:
        d = a - s
        poly = np.poly1d([0.0])
        for i in range(5):
            term = np.poly1d([q[i] * d[i]])
            for j in range(5):
                if j != i:
                    term = term * np.poly1d([d[j], 1.0])
            poly = poly + term
        lo, hi = -1 / d.max(), -1 / d.min()
        x = [r.real for r in poly.roots if abs(r.imag) < 1e-12 and lo < r.real < hi][0]
        return q / (1 + x * d)

    s0, s1 = 1 / (1 + 10 ** (-0 / 400)), 1 / (1 + 10 ** (-15 / 400))
    expected = sum(counts) * float(np.sum(q * (np.log(nearest(s1)) - np.log(nearest(s0)))))
    got = SPRT(0, 15, model="logistic").llr(Pentanomial(ll=3, ld=11, wl=20, dd=10, wd=14, ww=6))
    assert got == pytest.approx(expected, rel=1e-6)


def test_symmetric_counts_favour_neither_side() -> None:
    sym = Pentanomial(ll=7, ld=3, wl=20, dd=5, wd=3, ww=7)
    for model in ("normalized", "logistic"):
        assert SPRT(-10, 10, model=model).llr(sym) == pytest.approx(0, abs=1e-6)
        assert SPRT(0, 10, model=model).llr(sym) < 0 < SPRT(-10, 0, model=model).llr(sym)


# -- opening suites ----------------------------------------------------------------------------------------
def test_positions_are_every_position_once_up_to_mirror() -> None:
    for plies, count in [(1, 4), (2, 25), (4, 568)]:
        found = openings.positions(plies)
        keys = [Board.from_pons(m).canonical_key() for m in found]
        brute = {Board.from_moves(seq).canonical_key() for seq in itertools.product(range(7), repeat=plies)}
        assert len(found) == len(set(keys)) == count and set(keys) == brute


def test_the_shipped_suite_is_what_the_command_writes(tmp_path: Path) -> None:
    outs = []
    for name in ("a.txt", "b.txt"):
        proc = subprocess.run([str(CXFORGE), "openings", "-o", str(tmp_path / name), "--no-progress"],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1] == openings.suite_file(4).read_bytes()
    assert f"{openings.DEFAULT_SIZE} openings with scores in -1:1: the first" in proc.stderr


def test_the_shipped_suite_is_mirror_free_in_band_and_agrees_with_the_book() -> None:
    from agents.solver.book import Book

    suite = openings.read_suite(openings.suite_file(4))
    assert len(suite) >= 20
    keys = [Board.from_pons(o.moves).canonical_key() for o in suite]
    assert len(set(keys)) == len(keys)
    assert all(len(o.moves) == 4 and -1 <= o.score <= 1 for o in suite)
    assert suite == openings.spread(suite)
    book, checked = Book.load(), 0
    table = openings.read_suite(openings.scores_file(4))
    for o in table:
        board = Board.from_pons(o.moves)
        score = book.score(board.current, board.mask)
        if score is not None:
            assert score == o.score, o.moves
            checked += 1
    assert checked >= 1  # the book holds only its own tree: 2 of the shipped positions
    wider = openings.build_suite(4, (-2, 2), size=len(suite), progress=False)
    assert all(-2 <= o.score <= 2 for o in wider)
    order = [o.moves for o in openings.spread(openings.Opening(m, 0) for m in openings.positions(4))]
    last = max(order.index(o.moves) for o in wider)  # the band's positions are taken in suite order
    assert [o for o in suite if order.index(o.moves) <= last] == [o for o in wider if -1 <= o.score <= 1]


@pytest.mark.slow
def test_the_shipped_labels_are_the_compiled_solvers() -> None:
    from connectx_forge.tool_engines import CSolver, available

    if not available():
        pytest.skip("the compiled solver does not load here")
    table = openings.read_suite(openings.scores_file(4))
    # the first three won or lost by a margin of 3 to 7: seconds each (those near 0 take minutes)
    sample = [o for o in table if 3 <= abs(o.score) <= 7][:3]
    solver = CSolver()
    assert len(sample) == 3
    assert [solver.solve(Board.from_pons(o.moves)) for o in sample] == [o.score for o in sample]


def test_labels_come_from_the_solver_where_nothing_is_shipped(pons_dir: Path) -> None:
    lines = (pons_dir / "Test_L3_R1").read_text().split("\n")[:6]
    known = [(m, int(s)) for m, s in (line.split() for line in lines if line.strip())]
    got = openings.label([m for m, _ in known], engine="python", progress=False)
    assert [(o.moves, o.score) for o in got] == known


def test_the_filled_book_labels_every_four_and_five_ply_opening_at_once() -> None:
    """The book holds every position of up to 5 stones the solver finds hard (``cxforge book fill``):
    labelling all of them solves only the easy ones left out, and agrees with the shipped labels."""
    from agents.solver.search import Solver
    from connectx_forge.solver.book_builder import EASY_NODES

    shipped = {Board.from_pons(o.moves).canonical_key(): o.score for o in openings.read_suite(openings.scores_file(4))}
    for plies in (4, 5):
        labeller = openings.ExactScorer("python")
        moves = openings.positions(plies)
        book_scores = {m: labeller.known(m) for m in moves}
        unknown = [m for m, score in book_scores.items() if score is None]
        assert len(unknown) < len(moves) // 10
        for m, score in book_scores.items():
            key = Board.from_pons(m).canonical_key()
            assert score is None or key not in shipped or shipped[key] == score, m
        if plies == 4:  # those the book lacks are the easy ones: a weak then an exact solve, empty tables
            for m in unknown:
                solver = Solver()
                solver.best_move(Board.from_pons(m), weak=True)
                solver.best_move(Board.from_pons(m))
                assert solver.nodes < EASY_NODES, m


def test_bad_suites_and_bands_are_one_line(tmp_path: Path) -> None:
    from connectx_forge.errors import UserError

    bad = tmp_path / "bad.txt"
    bad.write_text("4444 0\n48 1\n")
    with pytest.raises(UserError, match="bad.txt:2"):
        openings.read_suite(bad)
    for text in ["1", "a:b", "3:1"]:
        with pytest.raises(ValueError):
            openings.parse_band(text)
    assert openings.parse_band("-2:3") == (-2, 3)
    with pytest.raises(UserError, match="--plies"):
        openings.positions(40)
    proc = subprocess.run([str(CXFORGE), "openings", "--band", "5:1"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "low end" in proc.stderr


# -- the store ---------------------------------------------------------------------------------------------
def _record(key: Key, run: str, outcome: str = "win", culprit: int | None = None) -> GameRecord:
    """A game of ``key`` in ``run`` as play stores it: mark 1 makes four in column 4 (or, with ``culprit``,
    breaks a rule after two moves)."""
    moves = [3, 2, 3, 2] if culprit else [3, 2, 3, 2, 3, 2, 3]
    winner = 3 - culprit if culprit else 1
    return tag(GameRecord(("a", "b"), (6, 7, 4), key.seed, moves, [0.01] * len(moves), outcome, winner=winner,
                          culprit=culprit, opening=2, a_seat=key.colour), run, key.pairing)


def test_the_store_keeps_one_copy_of_each_game(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    with Store(path) as db:
        db.register("r1", "tournament", RunConfig({"x": 1}, labels={"a.py": "a", "b.py": "b"}))
        key, other = Key("a vs b", "43", 1, 99), Key("a vs b", "43", 2, 98)
        assert db.add("r1", key, 0, "a", "b", _record(key, "r1")) is True
        assert db.add("r1", key, 0, "a", "b", _record(key, "r1", "timeout", 2)) is False  # a duplicate is dropped
        assert db.add("r1", other, 0, "a", "b", _record(other, "r1")) is True
        assert db.add("r2", key, 0, "a", "b", _record(key, "r2", "timeout", 2)) is True
        assert db.count("r1") == 2 and db.keys("r1") == {key, other}
        games = db.games("r1")
        assert [g.a_score for g in games] == [1.0, 0.0]  # A had mark 1 then mark 2; mark 1 won both
        assert games[0].record == _record(key, "r1")  # named by its run and pairing
        db.register("r1", "tournament", RunConfig({"x": 2}, "r0", {"a.py": "a"}, {"/p/a.py": "f00d"}, ("a",)))
        assert db.runs("tournament") == [("r1", "tournament", RunConfig({"x": 2}, "r0", {"a.py": "a"},
                                                                        {"/p/a.py": "f00d"}, ("a",)))]
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_the_runs_names_hash_the_settings_stores_hold() -> None:
    """A run's name is how ``--resume`` finds it in a store: the typed keys hash the same settings, with the same
    values, as the stores written so far (M and N of a tournament left out: more openings or games extend it)."""
    t = Tournament(("a.py", "b.py"), gauntlet="a.py", openings=3, games=10, seed=2)
    assert t.run_key() == {**t.to_json(), "openings": None, "games": None, "game": t.game.run_key()}
    s = Sprt("a.py", "b.py", elo1=5)
    assert s.run_key() == {"new": "a.py", "base": "b.py", "plies": s.plies, "band": list(s.band), "openings": None,
                           "seed": 0, "game": s.game.run_key()}  # the suite's size decides the games: M is kept
    slowed = Tournament(("x", "y"), game=GameSettings.of(memory=512 * 2 ** 20, slowdown=2))
    assert (name_of(t), name_of(s), name_of(slowed)) == ("tournament-457b0de23bd4", "sprt-96065e6e8e7c",
                                                         "tournament-56cf01f9125b")


def test_a_stored_run_s_config_is_its_settings_beside_its_labels_and_versions() -> None:
    config = RunConfig({"players": ["/p/a.py", "b"]}, "tournament-0", {"/p/a.py": "a.py"}, {"/p/a.py": "f00d"},
                       ("a.py",))
    data = config.to_json()
    assert data == {"players": ["/p/a.py", "b"], "settings_run": "tournament-0", "labels": {"/p/a.py": "a.py"},
                    "versions": {"/p/a.py": "f00d"}, "mixed": ["a.py"]}
    assert RunConfig.from_json(data, "here") == config
    assert RunConfig.from_json({"players": ["a", "b"]}, "here") == RunConfig({"players": ["a", "b"]})  # an old one


# -- games from an opening ---------------------------------------------------------------------------------
seen: list[tuple[int, list[int]]] = []


def watcher(obs, config):  # type: ignore[no-untyped-def]
    seen.append((obs.mark, list(obs.board)))
    return [c for c in range(config.columns) if obs.board[c] == 0][0]


def test_a_game_starts_from_its_opening() -> None:
    seen.clear()
    rec = play_game(watcher, "leftmost", opening=[3, 3, 2, 4], seed=1)
    assert rec.moves[:4] == [3, 3, 2, 4] and rec.opening == 4
    assert len(rec.times) == len(rec.moves) - 4
    mark, grid = seen[0]
    assert mark == 1 and grid == Board.from_moves([3, 3, 2, 4]).to_grid()
    assert rec.to_json()["opening"] == 4 and GameRecord.from_json(rec.to_json()).to_json() == rec.to_json()
    seen.clear()
    odd = play_game("leftmost", watcher, opening=[3, 3, 3])
    assert seen[0][0] == 2 and odd.moves[:3] == [3, 3, 3] and odd.times and odd.opening == 3


def test_games_without_an_opening_keep_their_json_lines() -> None:
    rec = play_game("leftmost", "leftmost", seed=3)
    assert rec.opening == 0 and "opening" not in rec.to_json()
    old = json.loads(json.dumps(rec.to_json()))  # a line as written before openings existed
    assert GameRecord.from_json(old).to_json() == rec.to_json() and GameRecord.from_json(old).opening == 0


def test_an_opening_must_leave_a_game_to_play() -> None:
    with pytest.raises(BoardError, match="ends the game"):
        play_game("leftmost", "leftmost", opening=[0, 1, 0, 1, 0, 1, 0])
    with pytest.raises(BoardError, match="not playable"):
        play_game("leftmost", "leftmost", opening=[0] * 7)


@pytest.mark.parametrize("model", ["normalized", "logistic"])
@pytest.mark.parametrize("elo1", [5, 50, 200, 300, 500, 800])
def test_pairs_all_won_are_evidence_for_h1_and_all_lost_for_h0(model: str, elo1: float) -> None:
    """Whatever elo1: NEW winning every pair moves the LLR up, losing every pair down, the more pairs the
    further (at elo1 300 the normalized model once took all-won pairs as evidence for H0)."""
    test = SPRT(0, elo1, model=model)
    won = [test.llr(Pentanomial(ww=n)) for n in (1, 4, 16)]
    lost = [test.llr(Pentanomial(ll=n)) for n in (1, 4, 16)]
    assert 0 < won[0] < won[1] < won[2], won
    assert 0 > lost[0] > lost[1] > lost[2], lost
    if elo1 >= 50:  # a few Elo apart, the hypotheses need more than 64 pairs to tell apart
        assert test.decide(test.llr(Pentanomial(ll=64))) == "H0" and test.decide(test.llr(Pentanomial(ww=64))) == "H1"
