"""The game loop (connectx_forge.play: game, match, match_cmd) judges games exactly as kaggle_environments does."""

from __future__ import annotations

import functools
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.board import Board
from agents.simple import random_agent
from connectx_forge.arena.match import MatchPlan, PlayedMatch, game_seed, play_match, run_match
from connectx_forge.errors import UserError
from connectx_forge.play.game import play_game
from connectx_forge.play.game_record import GameRecord
from connectx_forge.play.records import load_records
from connectx_forge.play.resolve import as_player, resolve
from connectx_forge.play.rules import RULE_BREAKS
from connectx_forge.play.seat_random import SeatAgent, seat_seed
from connectx_forge.play.settings import GameSettings

ROOT = Path(__file__).resolve().parents[2]


# -- test agents (module level, so worker processes can unpickle them) ----------
def legal(obs, config) -> list[int]:  # type: ignore[no-untyped-def]
    return [c for c in range(config.columns) if obs.board[c] == 0]


def flaky_agent(obs, config):  # type: ignore[no-untyped-def]
    """Mostly random; sometimes returns one of the many kinds of bad action, or raises."""
    cols = legal(obs, config)
    roll = random.random()
    if roll < 0.03:
        raise ValueError("flaky agent failed")
    if roll < 0.08:
        full = [c for c in range(config.columns) if obs.board[c] != 0]
        bad = [-1, config.columns, np.int64(cols[0]), True, str(cols[0]), None] + full
        return random.choice(bad)
    return random.choice(cols)


def numpy_agent(obs, config):  # type: ignore[no-untyped-def]
    return np.int64(legal(obs, config)[0])


def float_agent(obs, config):  # type: ignore[no-untyped-def]
    return float(legal(obs, config)[0])


def none_agent(obs, config):  # type: ignore[no-untyped-def]
    """Returns None: Kaggle plays its schema default, column 0, until column 0 is full."""
    return None


def one_arg_agent(obs):  # type: ignore[no-untyped-def]
    return [c for c in range(len(obs.board)) if obs.board[c] == 0][0] % 4


def attribute_and_item_agent(obs, config):  # type: ignore[no-untyped-def]
    assert obs.board is obs["board"] and config.columns == config["columns"]
    assert obs.remainingOverageTime == obs["remainingOverageTime"] and config.actTimeout == 2
    assert obs.step == sum(v != 0 for v in obs.board) and obs.mark == 1 + obs.step % 2
    return random.choice(legal(obs, config))


def slow_agent(obs, config):  # type: ignore[no-untyped-def]
    """50 ms a move, on spread-out columns (so it does not win before it runs out of overage)."""
    time.sleep(0.05)
    cols = legal(obs, config)
    want = 2 * (obs.step // 2) % config.columns
    return want if want in cols else cols[0]


# -- replaying a record through kaggle_environments ------------------------------
_ENVS: dict = {}


def kaggle_replay(rec: GameRecord, culprit_action: object = None) -> tuple[list[str], list]:
    """Step the recorded moves through the real env; return its final statuses and rewards."""
    from kaggle_environments import make
    from kaggle_environments.errors import DeadlineExceeded

    rows, columns, inarow = rec.size
    if rec.size not in _ENVS:
        _ENVS[rec.size] = make("connectx", configuration={"rows": rows, "columns": columns, "inarow": inarow})
    env = _ENVS[rec.size]
    env.reset()
    for ply, col in enumerate(rec.moves):
        assert not env.done
        env.step([col, None] if ply % 2 == 0 else [None, col])
    if rec.outcome in RULE_BREAKS:
        assert not env.done
        if rec.outcome == "invalid":
            bad = eval(rec.bad_action, {"np": np})  # noqa: S307 - our own repr of a test agent's action
        elif rec.outcome == "error":
            bad = ValueError(rec.error)
        else:
            bad = DeadlineExceeded()
        env.step([bad, None] if rec.culprit == 1 else [None, bad])
    assert env.done
    assert list(env.state[0].observation.board) == Board.from_moves(rec.moves, rows, columns, inarow).to_grid()
    return [s.status for s in env.state], [s.reward for s in env.state]


MATCHUPS = [
    ("random", "kaggle:random", (6, 7, 4)),
    ("random", "random", (4, 4, 3)),
    ("random", "random", (4, 4, 4)),
    (flaky_agent, "random", (6, 7, 4)),
    ("random", flaky_agent, (5, 5, 4)),
    (flaky_agent, flaky_agent, (4, 4, 3)),
    ("kaggle:negamax", flaky_agent, (4, 5, 3)),
]


@functools.cache
def matchup_games(i: int) -> PlayedMatch:
    a, b, size = MATCHUPS[i]
    return run_match(a, b, games=24, workers=1, seed=3, settings=GameSettings(size), progress=False)


@pytest.mark.parametrize("i", range(len(MATCHUPS)),
                         ids=[f"{getattr(a, '__name__', a)}-{getattr(b, '__name__', b)}-{'x'.join(map(str, s))}"
                              for a, b, s in MATCHUPS])
def test_outcomes_equal_kaggle_replay(i: int) -> None:
    result = matchup_games(i)
    assert len(result.records) == 24
    for rec in result.records:
        assert kaggle_replay(rec) == rec.kaggle_result(), rec


def test_replays_cover_every_outcome() -> None:
    """The matchups above really produce wins of both seats, draws, invalid moves and errors."""
    outcomes = set()
    for i in range(len(MATCHUPS)):
        for rec in matchup_games(i).records:
            outcomes.add((rec.outcome, rec.winner if rec.outcome == "win" else rec.culprit))
    assert {("win", 1), ("win", 2), ("draw", None), ("invalid", 1), ("invalid", 2),
            ("error", 1), ("error", 2)} <= outcomes


@pytest.mark.parametrize("agent", [flaky_agent, random_agent], ids=["flaky", "random"])
def test_same_game_as_kaggle_env_run(agent) -> None:  # type: ignore[no-untyped-def]
    """Each seat drawing from its own generators seeded alike (``seat_random``), env.run plays move for move
    the game our loop plays, bad actions included."""
    from kaggle_environments import make

    for index in range(8):
        s = game_seed(0, index)
        rec = play_game(agent, agent, s, settings=GameSettings((5, 6, 4)))
        env = make("connectx", configuration={"rows": 5, "columns": 6, "inarow": 4})
        steps = env.run([SeatAgent(agent, seat_seed(s, seat)) for seat in range(2)])
        calls = len(rec.moves) + (rec.outcome in RULE_BREAKS)
        assert len(steps) == 1 + calls  # the reset state, then one step per call
        assert list(steps[-1][0].observation.board) == Board.from_moves(rec.moves, 5, 6, 4).to_grid()
        assert ([s.status for s in steps[-1]], [s.reward for s in steps[-1]]) == rec.kaggle_result()


@pytest.mark.parametrize("agent, bad", [(numpy_agent, "np.int64(0)"), (float_agent, "0.0")])
def test_non_int_actions_are_invalid(agent, bad) -> None:  # type: ignore[no-untyped-def]
    rec = play_game(agent, "random", 0, settings=GameSettings((6, 7, 4)))
    assert (rec.outcome, rec.culprit, rec.winner, rec.bad_action, rec.moves) == ("invalid", 1, 2, bad, [])
    if agent is numpy_agent:  # (env.step crashes on a float: Kaggle has no verdict to compare with)
        assert kaggle_replay(rec) == rec.kaggle_result() == (["INVALID", "DONE"], [None, 0])


def test_none_plays_column_zero_like_kaggle() -> None:
    from kaggle_environments import make

    from agents.simple import leftmost_agent

    rec = play_game(none_agent, leftmost_agent, 0, settings=GameSettings((4, 5, 4)))
    assert (rec.moves, rec.outcome, rec.culprit, rec.bad_action) == ([0, 0, 0, 0], "invalid", 1, "0")
    assert kaggle_replay(rec) == rec.kaggle_result()
    steps = make("connectx", configuration={"rows": 4, "columns": 5, "inarow": 4}).run([none_agent, leftmost_agent])
    assert len(steps) == 6 and [s.status for s in steps[-1]] == ["INVALID", "DONE"]


def test_errors_and_one_argument_agents() -> None:
    def boom(obs, config):  # type: ignore[no-untyped-def]
        raise RuntimeError("boom")

    rec = play_game(one_arg_agent, boom, 1, settings=GameSettings((6, 7, 4)))
    assert rec.outcome == "error" and rec.culprit == 2
    assert re.fullmatch(r"RuntimeError: boom \(.*test_match\.py:\d+\)", rec.error or "")  # where it raised
    assert rec.moves == [0] and rec.kaggle_result() == (["DONE", "ERROR"], [0, None])
    rec = play_game(attribute_and_item_agent, attribute_and_item_agent, 2, settings=GameSettings((6, 7, 4)))
    assert rec.outcome in ("win", "draw")


def test_timeouts_follow_kaggles_overage_rule() -> None:
    rec = play_game(slow_agent, "random", 0, settings=GameSettings((6, 7, 4), act_timeout=0.01, overage=0.1))
    assert rec.outcome == "timeout" and rec.culprit == 1 and rec.winner == 2
    mine = rec.times[0::2]
    left, timed_out_at = 0.1, None
    for k, t in enumerate(mine):
        if t - 0.01 > left:
            timed_out_at = k
            break
        left -= max(0.0, round(t, 6) - 0.01)
    assert timed_out_at == len(mine) - 1  # the call that broke Kaggle's rule, and no earlier one
    assert kaggle_replay(rec) == rec.kaggle_result() == (["TIMEOUT", "DONE"], [None, 0])
    assert play_game(slow_agent, "random", 0, settings=GameSettings((6, 7, 4))).outcome != "timeout"


# -- seeds, seats, workers -----------------------------------------------------------
def _games(result: PlayedMatch) -> list[tuple]:
    return [(r.index, r.seed, r.a_seat, r.players, r.moves, r.outcome, r.winner, r.culprit, r.bad_action)
            for r in result.records]


def test_same_seed_same_games_whatever_the_workers() -> None:
    one = run_match(flaky_agent, "random", games=16, workers=1, seed=42, progress=False)
    again = run_match(flaky_agent, "random", games=16, workers=1, seed=42, progress=False)
    pooled = play_match(MatchPlan(as_player(flaky_agent), as_player("random"), 16, 42), 2, False, chunk=3)
    other = run_match(flaky_agent, "random", games=16, workers=1, seed=43, progress=False)
    assert _games(one) == _games(again) == _games(pooled)
    assert [r.moves for r in one.records] != [r.moves for r in other.records]
    assert pooled.workers == 2 and one.workers == 1


def test_seats_alternate_and_tallies_add_up() -> None:
    result = run_match("leftmost", "random", games=21, workers=1, seed=0, settings=GameSettings((5, 5, 4)),
                       progress=False)
    for i, rec in enumerate(result.records):
        assert rec.index == i and rec.a_seat == (1 if i % 2 == 0 else 2)
        assert rec.players[rec.a_seat - 1] == "leftmost" and rec.players[2 - rec.a_seat] == "random"
        assert rec.seed == game_seed(0, i)
    first, second, overall = result.tally(1), result.tally(2), result.tally()
    assert (first.games, second.games, overall.games) == (11, 10, 21)
    for t in (first, second, overall):
        assert t.wins + t.draws + t.losses == t.games
    assert overall.wins == first.wins + second.wins
    assert overall.wins == sum(r.winner == r.a_seat for r in result.records)
    assert overall.losses == sum(r.winner == 3 - r.a_seat for r in result.records)
    a_moves = sum(len(r.times[r.a_seat - 1::2]) for r in result.records)
    stats = result.time_stats("A")
    assert stats["moves"] == a_moves and 0 < stats["median_s"] <= stats["max_s"]
    summary = result.to_json()
    assert summary["overall"]["wins"] == overall.wins and summary["a_first"]["games"] == 11
    lo, hi = summary["overall"]["win_rate_ci95"]
    assert lo <= overall.wins / 21 <= hi


def test_openings_are_played_once_from_each_seat_and_cycled() -> None:
    """Games 2k and 2k+1 start from opening k (mod M), A in each seat; the openings' moves are not A's or B's."""
    from connectx_forge.arena.openings import load_suite

    suite = [tuple(o.columns) for o in load_suite()[:2]]
    result = run_match("leftmost", "random", games=6, workers=1, progress=False, openings=tuple(suite))
    for i, rec in enumerate(result.records):
        assert tuple(rec.moves[:rec.opening]) == suite[(i // 2) % 2] and rec.opening == 4
        assert rec.a_seat == (1 if i % 2 == 0 else 2)
        assert len(rec.times) >= len(rec.moves) - rec.opening
    assert result.to_json()["move_time"]["a"]["over_act_timeout"] == 0
    fixed = run_match("leftmost", "random", games=3, workers=1, progress=False, openings=tuple(suite),
                      seats="first")
    assert [tuple(r.moves[:4]) for r in fixed.records] == [suite[0], suite[1], suite[0]]


def test_cli_openings_start_from_the_suite(tmp_path: Path) -> None:
    from connectx_forge.arena.openings import load_suite

    save = tmp_path / "games.jsonl"
    out = cli("leftmost", "random", "-n", "2", "-w", "1", "--openings", "1", "--json", "--save", str(save),
              "--no-progress")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["games"] == 2
    first = load_suite()[0].columns
    assert [r.moves[:len(first)] for r in load_records(str(save))] == [first, first]


@pytest.mark.parametrize("seats, a_seat", [("first", 1), ("second", 2)])
def test_a_fixed_seat(seats: str, a_seat: int) -> None:
    result = run_match("leftmost", "random", games=5, workers=1, seed=0, settings=GameSettings((5, 5, 4)),
                       progress=False, seats=seats)
    assert [rec.a_seat for rec in result.records] == [a_seat] * 5
    assert all(rec.players[a_seat - 1] == "leftmost" for rec in result.records)
    assert result.tally(a_seat).games == 5 and result.tally(3 - a_seat).games == 0


def test_rule_breaks_are_tallied_to_the_culprit() -> None:
    result = run_match(numpy_agent, "random", games=4, workers=1, progress=False)
    a, = [result.tally()]
    assert (a.invalid, a.losses, a.wins, a.opponent_invalid) == (4, 4, 0, 0)
    b = run_match("random", numpy_agent, games=4, workers=1, progress=False).tally()
    assert (b.opponent_invalid, b.wins, b.invalid) == (4, 4, 0)


def test_run_match_rejects_bad_arguments() -> None:
    with pytest.raises(UserError, match="positive integer"):
        run_match("random", "random", games=0)
    with pytest.raises(UserError, match="unknown player 'nobody'"):
        run_match("nobody", "random", games=2)
    with pytest.raises(UserError, match="workers"):
        run_match("random", "random", games=2, workers=0)
    with pytest.raises(UserError, match="seats must be one of"):
        run_match("random", "random", games=2, seats="middle")



def test_a_registered_agent_with_missing_weights_is_one_clear_error(monkeypatch, tmp_path: Path) -> None:
    import connectx_forge.runtime as runtime

    monkeypatch.setattr(runtime, "data_path", lambda path, module, file: str(tmp_path / path))  # no data files
    # import it afresh: it loads its weights at import (and resolve afresh: an earlier test may have resolved it)
    monkeypatch.delitem(sys.modules, "agents.net.agent", raising=False)
    resolve.cache_clear()
    try:
        with pytest.raises(UserError, match="'net' is registered but cannot be loaded: MissingData: "
                                            ".*'agents/data/net_weights.npz'"):
            resolve("net")
    finally:
        resolve.cache_clear()


# -- submission files ------------------------------------------------------------------
def test_files_load_like_kaggle(tmp_path: Path) -> None:
    sub = tmp_path / "sub.py"
    sub.write_text("import time\ntime.sleep(0.2)\ncalls = [0]\n\n"
                   "def agent(obs, config):\n"
                   "    calls[0] += 1\n"
                   "    if calls[0] != obs.step // 2 + 1:\n"
                   "        return -1  # state leaked from another game\n"
                   "    return [c for c in range(config.columns) if obs.board[c] == 0][0]\n")
    result = run_match(str(sub), "random", games=4, workers=1, progress=False)
    assert all(r.outcome in ("win", "draw") for r in result.records)  # fresh globals every game
    assert all(r.times[r.a_seat - 1] >= 0.2 for r in result.records)  # loading counts against move 1
    rec = play_game(as_player(str(sub)), "random", 0, settings=GameSettings((6, 7, 4), act_timeout=0.05, overage=0.1))
    assert rec.outcome == "timeout" and rec.culprit == 1 and len(rec.times) == 1

    trailing = tmp_path / "trailing.py"
    trailing.write_text("def agent(obs, config):\n    return 3\n\nfrom math import floor\n")
    rec = play_game(as_player(str(trailing)), "random", 0, settings=GameSettings((6, 7, 4)))
    assert rec.outcome == "error" and rec.culprit == 1  # the last callable, floor, is the agent


# -- the command line ----------------------------------------------------------------------
def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "connectx_forge.cli", "match", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_cli_json_and_out(tmp_path: Path) -> None:
    save = tmp_path / "games.jsonl"
    out = cli("random", "kaggle:random", "-n", "6", "-w", "2", "--rows", "5", "--columns", "6",
              "--json", "--save", str(save), "--no-progress")
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    assert summary["games"] == 6 and summary["size"] == [5, 6, 4] and summary["b"] == "kaggle:random"
    records = load_records(str(save))
    assert [r.index for r in records] == list(range(6))
    assert sum(r.result(r.a_seat) == "win" for r in records) == summary["overall"]["wins"]
    again = run_match("random", "kaggle:random", games=6, workers=1, settings=GameSettings((5, 6, 4)), progress=False)
    assert [r.moves for r in records] == [r.moves for r in again.records]


def _without_times(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        assert len(line.pop("times")) >= len(line["moves"])
    return lines


def test_save_writes_the_seeded_games(tmp_path: Path, capsys) -> None:
    from connectx_forge.cli import main

    args = ["match", "random", "leftmost", "-n", "8", "-w", "2", "--seed", "5", "--rows", "5", "--no-progress"]
    assert main([*args, "--save", str(tmp_path / "out.jsonl")]) == 0
    assert main([*args, "--save", str(tmp_path / "save.jsonl")]) == 0
    assert main([*args, "--seed", "6", "--save", str(tmp_path / "other.jsonl")]) == 0
    capsys.readouterr()
    games = _without_times(tmp_path / "out.jsonl")
    assert len(games) == 8 and [g["index"] for g in games] == list(range(8))
    assert games == _without_times(tmp_path / "save.jsonl")
    assert [g["moves"] for g in games] != [g["moves"] for g in _without_times(tmp_path / "other.jsonl")]
    with pytest.raises(SystemExit):
        main(["match", "--help"])
    text = capsys.readouterr().out
    assert "--save FILE" in text and "--out" not in text and "-o " not in text and "example" in text


def test_a_spec_that_does_not_pickle_is_loaded_again_in_the_workers() -> None:
    import pickle

    player = resolve("negamax-fast")
    with pytest.raises(AttributeError, match="local object"):
        pickle.dumps(player.new_agent())  # a closure: it cannot cross by itself ...
    crossed = pickle.loads(pickle.dumps(player))  # ... its player crosses as its name, and loads it there
    assert crossed == player and crossed.agent is None and crossed.new_agent() is player.new_agent()
    pooled = run_match("random", "negamax-fast", games=6, workers=2, seed=1, settings=GameSettings((5, 6, 4)),
                       progress=False)
    alone = run_match("random", "negamax-fast", games=6, workers=1, seed=1, settings=GameSettings((5, 6, 4)),
                      progress=False)
    assert _games(pooled) == _games(alone) and pooled.workers == 2
    with pytest.raises(UserError, match="cannot be sent to worker processes"):
        run_match(lambda obs, config: 0, "random", games=2, workers=2, progress=False)


def test_cli_text_report() -> None:
    out = cli("leftmost", "kaggle:negamax", "-n", "4", "--rows", "4", "--columns", "4", "--inarow", "3")
    assert out.returncode == 0, out.stderr
    assert "A = leftmost  vs  B = kaggle:negamax: 4 games on 4x4x3" in out.stdout
    assert "overall" in out.stdout and "move time B (kaggle:negamax)" in out.stdout


@pytest.mark.parametrize("args, message", [
    (["nobody", "random"], "unknown player 'nobody'"),
    (["random", "kaggle:minimax"], "unknown player 'kaggle:minimax' (did you mean 'kaggle:negamax'?); use "),
    (["random", "no/such/agent.py"], "player no/such/agent.py: no such file or folder"),
    (["random", "random", "-n", "0"], "argument -n/--games: must be at least 1, got 0"),
    (["random", "random", "-n", "ten"], "argument -n/--games: expected a whole number, got 'ten'"),
    (["random", "random", "--workers", "0"], "argument -w/--workers: must be at least 1, got 0"),
    (["random", "random", "--rows", "0"], "argument --rows: must be at least 1, got 0"),
    (["random", "random", "--seed", "-3"], "argument --seed: must not be negative, got -3"),
    (["random", "random", "--act-timeout", "0"], "argument --act-timeout: must be a positive number"),
    (["random", "random", "--overage", "-1"], "--overage must not be negative, got -1"),
    (["random", "random", "--save", "/proc/no/such/games.jsonl"],
     "cannot create the folder /proc/no/such for /proc/no/such/games.jsonl"),
    (["random", "random", "--openings", "2", "--rows", "5"], "--openings plays the 6x7 four-in-a-row suite"),
    (["random", "random", "--openings", "0"], "argument --openings: must be at least 1, got 0"),
])
def test_cli_bad_input_is_one_line(args: list[str], message: str) -> None:
    out = cli(*args)
    assert out.returncode != 0
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_cli_plays_a_file_that_does_not_compile_as_load_failures(tmp_path: Path) -> None:
    """As on Kaggle, a file that does not compile is played, and loses every game (a ``load`` failure)."""
    bad = tmp_path / "bad.py"
    bad.write_text("def agent(obs, config)\n    return 0\n")
    out = cli("random", str(bad), "-n", "2", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr
    assert json.loads(out.stdout)["overall"]["opponent_kinds"] == {"load": 2}


def test_resolve_names() -> None:
    from agents.registry import REGISTRY

    assert "negamax" not in REGISTRY
    with pytest.raises(UserError, match=r"unknown player 'negamax' \(did you mean 'kaggle:negamax'\?\)"):
        resolve("negamax")  # Kaggle's built-ins are written kaggle:NAME in every command
    assert resolve("kaggle:negamax").label == "kaggle:negamax"
    assert resolve("random").kind == "registered" and resolve("kaggle:random").kind == "kaggle"
    with pytest.raises(UserError, match=r"unknown player 'lookahaed' \(did you mean 'lookahead'\?\)"):
        resolve("lookahaed")


def test_overage_used_counts_each_game_time_beyond_act_timeout() -> None:
    a_first = GameRecord(("a", "b"), (6, 7, 4), 0, [3, 3, 3], [2.5, 9.0, 3.0], "win", winner=1, a_seat=1)
    a_second = GameRecord(("b", "a"), (6, 7, 4), 0, [3, 3], [1.0, 2.25], "win", winner=2, index=1, a_seat=2)
    result = PlayedMatch("a", "b", (6, 7, 4), 0, 1, 1.0, [a_first, a_second], act_timeout=2)
    assert result.overage_used("A") == pytest.approx([1.5, 0.25])
    assert result.overage_used("B") == pytest.approx([7.0, 0.0])
    assert result.time_stats("A")["max_overage_s"] == pytest.approx(1.5)
