"""One ``GameSettings`` value and one ``GameJob`` type (tools/connectx_forge/play/settings.py), and one board-size
type and
``STANDARD`` (agents/board.py) that every tool imports."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from agents.board import STANDARD
from connectx_forge.arena.match import MatchPlan, match_jobs, play_match, run_match
from connectx_forge.arena.match_run import Match
from connectx_forge.arena.run import name_of
from connectx_forge.arena.schedule import pair_jobs
from connectx_forge.play.game import play_game, play_job
from connectx_forge.play.resolve import resolve
from connectx_forge.play.rules import ACT_TIMEOUT, OVERAGE
from connectx_forge.play.settings import GameJob, GameSettings, from_digits
from connectx_forge.sandbox.limits import DEFAULT_MEMORY, MIB, Limits

ROOT = Path(__file__).resolve().parents[2]


def test_the_defaults_are_kaggles() -> None:
    s = GameSettings()
    assert (s.size, s.act_timeout, s.overage, s.limits, s.isolate, s.slowdown) == \
        ((6, 7, 4), ACT_TIMEOUT, OVERAGE, None, False, 1.0)
    assert STANDARD == (6, 7, 4) and (ACT_TIMEOUT, OVERAGE) == (2, 60)


def test_settings_are_frozen_and_keep_one_size_type() -> None:
    s = GameSettings(size=[5, 6, 4])  # type: ignore[arg-type]
    assert s.size == (5, 6, 4) and isinstance(s.size, tuple)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.act_timeout = 1  # type: ignore[misc]
    assert hash(s) == hash(GameSettings(size=(5, 6, 4)))
    assert GameSettings(limits=Limits(slowdown=2)).slowdown == 2


def test_one_game_and_a_match_play_the_same_game_from_the_same_settings() -> None:
    game = GameSettings((5, 6, 4), act_timeout=1, overage=5)
    one = play_game("leftmost", "random", 2, settings=game)
    match = run_match("leftmost", "random", games=1, workers=1, seed=0, progress=False, settings=game)
    assert one.size == match.size == (5, 6, 4) and match.records[0].size == (5, 6, 4)
    for call in (lambda: play_game("leftmost", "random", size=(5, 6, 4)),  # type: ignore[call-arg]
                 lambda: run_match("leftmost", "random", games=1, size=(5, 6, 4))):  # type: ignore[call-arg]
        with pytest.raises(TypeError):  # GameSettings is the one way to say how games are played
            call()


def test_match_and_arena_make_the_same_job_type() -> None:
    arena = pair_jobs("a vs b", "leftmost", "random", "4453", 7, 0, settings=GameSettings(act_timeout=1))
    assert [type(j) for j in arena] == [GameJob, GameJob] and [j.colour for j in arena] == [1, 2]
    assert arena[0].opening == (3, 3, 4, 2) == from_digits("4453") and arena[0].digits == "4453"
    match = match_jobs("leftmost", "random", 4, 0, GameSettings(), openings=((3, 3), (2,)))
    assert [(j.slot, j.colour, j.opening) for j in match] == [(0, 1, (3, 3)), (1, 2, (3, 3)), (2, 1, (2,)),
                                                              (3, 2, (2,))]
    record = play_job(arena[1])
    assert record.a_seat == 2 and record.index == 7 and record.moves[:4] == [3, 3, 4, 2]


SIZE_LITERAL = re.compile(r"\(\s*6\s*,\s*7\s*,\s*4\s*\)")
SIZE_ALIAS = re.compile(r"^\s*Size\s*(:\s*\w+\s*)?=", re.MULTILINE)


def _sources(*folders: str) -> list[Path]:
    return [p for folder in folders for p in sorted((ROOT / folder).rglob("*.py"))]


def test_the_standard_size_is_written_once() -> None:
    # the game core owns the board-size type and Kaggle's 6x7x4; the tools and the bundler import them
    literal = [str(p.relative_to(ROOT)) for p in _sources("tools", "build")
               if SIZE_LITERAL.search(p.read_text())]
    assert literal == []
    aliases = [str(p.relative_to(ROOT)) for p in _sources("agents", "tools", "build")
               if SIZE_ALIAS.search(p.read_text())]
    assert aliases == ["agents/board.py"]


def test_a_match_runs_on_the_arenas_scheduler_with_an_executor_of_your_own() -> None:
    from concurrent.futures import ThreadPoolExecutor

    alone = run_match("leftmost", "random", games=6, workers=1, seed=5, progress=False)
    with ThreadPoolExecutor(2) as ex:
        plan = MatchPlan(resolve("leftmost"), resolve("random"), games=6, seed=5)
        own = play_match(plan, 2, False, executor=ex)
    assert [(r.index, r.moves) for r in own.records] == [(r.index, r.moves) for r in alone.records]


def test_a_worker_spools_each_game_as_it_ends(tmp_path: Path) -> None:
    from connectx_forge.arena.match import play_spooled, spooled

    jobs = match_jobs("leftmost", "random", 3, 0, GameSettings(size=(4, 5, 3)))
    records = [play_spooled(str(tmp_path), job) for job in jobs]
    with open(next(tmp_path.iterdir()), "a", encoding="utf-8") as fh:
        fh.write('{"cut short')  # the line Ctrl-C interrupted is left out
    assert [(r.index, r.moves) for r in spooled(str(tmp_path))] == [(r.index, r.moves) for r in records]


def test_ctrl_c_hands_over_the_games_that_came_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures import Future

    from connectx_forge.arena import schedule

    jobs = match_jobs("leftmost", "random", 3, 0, GameSettings(size=(4, 5, 3)))
    finished: Future[object] = Future()
    finished.set_result("game 0")
    pending: Future[object] = Future()

    class Executor:
        def submit(self, fn: object, job: GameJob) -> Future[object]:
            return finished if job.slot == 0 else pending

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(schedule, "wait", interrupted)
    seen: list[tuple[int, object]] = []
    with pytest.raises(KeyboardInterrupt):
        schedule.run_jobs(jobs, schedule.Workers(Executor(), 2, "test"),  # type: ignore[arg-type]
                          lambda job, rec: bool(seen.append((job.slot, rec))))
    assert seen == [(0, "game 0")] and pending.cancelled()


def test_a_stored_match_is_named_by_the_settings_stores_hold() -> None:
    """A match's run name is how ``--resume`` finds it in a store: its typed key hashes the same settings, with
    the same values, as the stores written so far (N left out; the host limits only where not the defaults)."""
    plain = Match("a", "b", games=5)
    assert plain.run_key() == {**plain.to_json(), "games": None, "game": plain.game.run_key()}
    assert plain.game.run_key() == {"size": [6, 7, 4], "act_timeout": 2, "overage": 60, "isolate": False}
    assert GameSettings.of(memory=DEFAULT_MEMORY).run_key() == plain.game.run_key()
    slowed = Match("a", "b", seed=7, seats="first", openings=3, game=GameSettings.of(memory=512 * MIB, slowdown=2))
    assert list(slowed.game.run_key()) == ["size", "act_timeout", "overage", "memory", "slowdown", "isolate"]
    small = Match("x.py", "random", game=GameSettings.of(size=(5, 6, 4), act_timeout=3, overage=10, isolate=True))
    assert (name_of(plain), name_of(slowed), name_of(small)) == ("match-060f38687e76", "match-4428107c170d",
                                                                 "match-f4e46ca17638")
