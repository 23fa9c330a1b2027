"""Tournaments and SPRT runs (connectx_forge.arena): paired openings, seeded games, reports, resuming after kill -9."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from connectx_forge.arena import openings
from connectx_forge.arena.run import Execution, execute, name_of
from connectx_forge.arena.schedule import play
from connectx_forge.arena.sprt_run import Sprt, SprtReport
from connectx_forge.arena.store import Store
from connectx_forge.arena.tournament import Tournament, TournamentReport, jobs_of, tournament_suite
from connectx_forge.cli import main
from connectx_forge.errors import UserError
from connectx_forge.play import game
from connectx_forge.play.records import load_records
from connectx_forge.play.settings import GameSettings
from connectx_forge.sandbox.limits import MIB, Limits

CXFORGE = Path(sys.executable).parent / "cxforge"
CHEAP = ("lookahead", "random", "leftmost")
BROKEN = Path(__file__).resolve().parents[1] / "broken_agents"


def table(report: dict[str, Any]) -> dict[str, Any]:
    """A report without what depends on the invocation (store path, seconds, executor)."""
    return {k: v for k, v in report.items() if k != "info"}


def test_each_opening_is_played_twice_per_pairing_colours_swapped(tmp_path: Path) -> None:
    t = Tournament(CHEAP, openings=3, seed=5)
    result = execute(t, Execution(workers=1, store=tmp_path / "t.sqlite", progress=False))
    report = result.report
    assert report.games == 3 * 3 * 2 == len(result.games)
    suite = tournament_suite(t)
    by_pair: dict[tuple[str, str], set[int]] = {}
    for g in result.games:
        by_pair.setdefault((g.key.pairing, g.key.opening), set()).add(g.key.colour)
        rec = g.record
        assert rec is not None and rec.opening == 4 and rec.moves[:4] == [int(c) - 1 for c in g.key.opening]
        assert rec.players == ((g.a, g.b) if g.key.colour == 1 else (g.b, g.a))
    assert set(by_pair) == {(f"{a} vs {b}", o.moves) for a, b in t.pairings() for o in suite}
    assert all(colours == {1, 2} for colours in by_pair.values())
    assert len({g.key.seed for g in result.games}) == len(result.games)
    for p in report.pairs:  # the tallies add up, by seat and by pair
        assert p.overall.games == 6 == p.overall.wins + p.overall.draws + p.overall.losses
        assert p.first.games == p.second.games == 3 and p.overall.wins == p.first.wins + p.second.wins
        assert p.penta.pairs == 3 == p.elo.pairs
    assert [r.player for r in report.ratings][0] == "lookahead"
    assert sum(r.elo for r in report.ratings) == pytest.approx(0, abs=0.5)
    los = [r.los_next for r in report.ratings]
    assert los[-1] is None and all(0 <= x <= 1 for x in los[:-1])


def test_a_game_replays_on_its_own(tmp_path: Path) -> None:
    t = Tournament(("lookahead", "kaggle:random"), openings=2, seed=3)
    result = execute(t, Execution(workers=1, store=tmp_path / "t.sqlite", progress=False))
    jobs = jobs_of(t, tournament_suite(t))
    for job in jobs[::-1]:  # in another order, one at a time
        again = play(job)
        stored = next(g.record for g in result.games if g.key.seed == job.seed)
        assert stored is not None and (again.moves, again.outcome, again.winner) == \
            (stored.moves, stored.outcome, stored.winner)


def test_workers_and_resuming_give_the_same_table(tmp_path: Path) -> None:
    t = Tournament(CHEAP, openings=3, seed=1)
    one = execute(t, Execution(workers=1, store=tmp_path / "one.sqlite", progress=False))
    two = execute(t, Execution(workers=2, store=tmp_path / "two.sqlite", progress=False))
    assert table(one.report.to_json()) == table(two.report.to_json())
    # a shorter run first, then the same store asked for more openings: only the new games are played
    short = Tournament(CHEAP, openings=1, seed=1)
    execute(short, Execution(workers=1, store=tmp_path / "grow.sqlite", progress=False))
    grown = execute(t, Execution(workers=2, store=tmp_path / "grow.sqlite", progress=False))
    assert grown.report.info.played_now == 18 - 6
    assert table(grown.report.to_json()) == table(one.report.to_json())
    again = execute(t, Execution(workers=2, store=tmp_path / "grow.sqlite", progress=False))
    assert again.report.info.played_now == 0 and table(again.report.to_json()) == table(one.report.to_json())


def test_a_gauntlet_measures_everyone_from_its_player(tmp_path: Path) -> None:
    t = Tournament(("random", "lookahead", "leftmost"), gauntlet="random", openings=2)
    report = execute(t, Execution(workers=1, store=tmp_path / "g.sqlite", progress=False)).report
    assert {(p.a, p.b) for p in report.pairs} == {("random", "lookahead"), ("random", "leftmost")}
    rating = {r.player: r for r in report.ratings}
    assert rating["random"].elo == 0 and rating["random"].elo_lo == rating["random"].elo_hi == 0
    assert rating["lookahead"].elo > 0


def test_rule_breaks_are_counted_per_player(tmp_path: Path) -> None:
    # submission files, played in agent hosts: one returns a column past the board, one raises
    invalid, error = str(BROKEN / "out_of_range.py"), str(BROKEN / "raises.py")
    report = execute(Tournament(("random", invalid, error), openings=2), Execution(workers=2,
                            store=tmp_path / "f.sqlite", progress=False)).report
    failures = report.failures  # the files named by their labels, as in every table
    invalid, error = "out_of_range.py", "raises.py"
    assert failures["random"] == {}
    # each file loses every game against random by its own fault; against each other, the first to move does
    assert failures[invalid]["invalid"] + failures[error]["error"] == 12 and set(failures[invalid]) == {"invalid"}
    assert failures[invalid]["invalid"] >= 4 and failures[error]["error"] >= 4
    assert report.ratings[0].player == "random"


# -- SPRT ------------------------------------------------------------------------------------------------------
@pytest.mark.long
def test_sprt_accepts_h1_for_a_much_stronger_agent(tmp_path: Path) -> None:
    # default bounds: normalized Elo 0 against 10, alpha = beta = 0.05
    sprt = execute(Sprt("negamax-fast", "random"), Execution(workers=2, store=tmp_path / "s.sqlite",
                    progress=False)).report
    report = sprt.to_json()
    assert SprtReport.from_json(report).to_json() == report and sprt.result == "H1" and sprt.pairs > 0
    assert report["result"] == "H1" and report["llr"] >= report["upper"] == pytest.approx(2.944, abs=1e-3)
    assert report["games"] <= 200  # stated: within 200 games
    assert report["llr_history"][-2] < report["upper"] <= report["llr_history"][-1]
    assert report["games"] == 2 * report["pairs"] == report["wins"] + report["draws"] + report["losses"]
    assert sum(report["pentanomial"].values()) == report["pairs"]


@pytest.mark.long
def test_sprt_accepts_h0_for_an_agent_against_itself(tmp_path: Path) -> None:
    # random against itself: H0 (0) against H1 (50 normalized Elo), within 600 games (stated)
    wide = execute(Sprt("random", "random", elo0=0, elo1=50), Execution(workers=2, store=tmp_path / "s.sqlite",
                    progress=False)).report.to_json()
    assert wide["result"] == "H0" and wide["llr"] <= wide["lower"] and wide["games"] <= 600
    # a deterministic agent against itself, default bounds (0 against 10): every pair is a win and a loss or two
    # draws, and the test takes H0 within 4,000 games (stated)
    same = execute(Sprt("leftmost", "leftmost"), Execution(workers=2, store=tmp_path / "l.sqlite",
                    progress=False)).report.to_json()
    assert same["result"] == "H0" and same["games"] <= 4000
    assert same["pentanomial"]["WL"] + same["pentanomial"]["DD"] == same["pairs"]


def test_sprt_stops_at_the_same_pair_however_it_runs(tmp_path: Path) -> None:
    s = Sprt("lookahead", "negamax-fast", elo0=0, elo1=40, seed=2, max_games=40)
    one = execute(s, Execution(workers=1, store=tmp_path / "one.sqlite", progress=False)).report.to_json()
    calls = 0

    def crash(record: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 9:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        execute(s, Execution(workers=2, store=tmp_path / "two.sqlite", progress=False, on_game=crash))
    with Store(tmp_path / "two.sqlite") as db:
        assert db.count(one["run"]) == 9
    two = execute(s, Execution(workers=2, store=tmp_path / "two.sqlite", progress=False)).report.to_json()
    assert table(two) == table(one)
    assert two["info"]["played_now"] <= one["games"] - 9 + 8  # at most 4 pairs past the decision
    if one["result"] == "none":
        assert one["games"] == 40


# -- agent-host limits: --memory and --slowdown ------------------------------------------------------------------
SLOWED = "slowdown 2x: each agent host ran on 1/2 of a CPU"


class GameSpy:
    """Stands in for the ``play_game`` that plays each arena job (in this process: ``-w 1``): notes each game's
    ``isolate`` and ``limits`` (its ``GameSettings``), then plays it; ``stop_after`` games, it raises
    KeyboardInterrupt instead (Ctrl-C)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, stop_after: int | None = None) -> None:
        self.seen: list[tuple[bool, Any]] = []
        self.stop_after = stop_after
        self.real = game.play_game
        monkeypatch.setattr(game, "play_game", self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.stop_after is not None and len(self.seen) >= self.stop_after:
            raise KeyboardInterrupt
        settings = kwargs["settings"]
        self.seen.append((settings.isolate, settings.limits))
        return self.real(*args, **kwargs)


@pytest.mark.parametrize("argv", [
    ["tournament", "random", "leftmost", "--openings", "2"],  # 4 games
    ["sprt", "random", "leftmost", "--elo1", "50", "-n", "4"],  # 2 pairs: too few to decide
])
def test_a_slowed_down_run_plays_every_game_in_a_host_and_resumes_under_its_limits(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    store, kind = tmp_path / "run.sqlite", argv[0]
    common = ["-w", "1", "--no-progress", "--store", str(store)]
    spy = GameSpy(monkeypatch, stop_after=1)
    assert main([*argv, *common, "--slowdown", "2", "--memory", "512"]) == 130  # Ctrl-C after the first game
    capsys.readouterr()
    spy.stop_after = None
    done = 3 if kind == "sprt" else 0  # an SPRT of 2 pairs ends with no decision: exit status 3
    assert main([kind, "--resume", *common]) == done  # the stored settings alone
    text = capsys.readouterr().out
    assert len(spy.seen) == 4, spy.seen
    assert all(isolate and limits == Limits(memory=512 * MIB, slowdown=2.0) for isolate, limits in spy.seen)
    assert text.count(SLOWED) == 1 and text.rstrip().endswith("Kaggle's clock in wall time")
    with Store(store) as db:
        (_, _, config), = db.runs(kind)
    assert config.settings["game"]["slowdown"] == 2.0 and config.settings["game"]["memory"] == 512 * MIB
    assert main([kind, "--resume", *common, "--json"]) == done
    report = json.loads(capsys.readouterr().out)
    assert report["settings"]["game"]["slowdown"] == 2.0 and report["settings"]["game"]["memory"] == 512 * MIB
    assert report["info"]["played_now"] == 0 and report["games"] == 4
    # the same players at full speed are another run: registered agents in this process, the default limits
    assert main([*argv, *common]) == done
    assert SLOWED not in capsys.readouterr().out
    assert spy.seen[4:] == [(False, None)] * 4
    with Store(store) as db:
        assert len(db.runs(kind)) == 2


def test_the_default_limits_given_keep_the_runs_name(tmp_path: Path) -> None:
    # a run's name hashes its games' settings, the host limits only where not the defaults
    t = Tournament(CHEAP, openings=1, seed=1)
    report = execute(t, Execution(workers=1, store=tmp_path / "t.sqlite", progress=False)).report
    assert report.run == name_of(t.settled())
    assert Tournament.from_json(t.to_json()) == t
    assert name_of(Tournament(CHEAP, openings=1, seed=1, game=GameSettings.of(memory=2048 * MIB)).settled()) == \
        report.run  # the default, given
    assert Tournament(CHEAP, game=GameSettings.of(slowdown=2)).run_key()["game"]["slowdown"] == 2
    s = Sprt("random", "leftmost")
    assert "memory" not in s.run_key()["game"] and "slowdown" not in s.run_key()["game"]
    assert Sprt.from_json(s.to_json()) == s
    assert Sprt("random", "leftmost", game=GameSettings.of(memory=512 * MIB)).run_key()["game"]["memory"] == 512 * MIB


@pytest.mark.parametrize(("settings", "why"), [({"slowdown": 0.5}, "--slowdown takes a factor from 1 to 100"),
                                               ({"memory": MIB}, "--memory must be at least 64 MiB")])
def test_bad_host_limits_from_python_are_one_line(settings: dict[str, Any], why: str, tmp_path: Path) -> None:
    with pytest.raises(UserError, match=why):
        Tournament(CHEAP, game=GameSettings.of(**settings))
    assert not (tmp_path / "t.sqlite").exists()


# -- kill -9 ----------------------------------------------------------------------------------------------------
def _children(pid: int) -> set[int]:
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(entry.name))
    return out


def _games_in(store: Path) -> int:
    if not store.exists():
        return 0
    try:
        db = sqlite3.connect(store, timeout=5)
        try:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_resume_after_kill_9_gives_the_uninterrupted_table(tmp_path: Path) -> None:
    argv = ["tournament", "lookahead", "negamax-fast", "random", "--openings", "6", "--seed", "4",
            "--no-progress", "--json"]
    total = 3 * 6 * 2
    store = tmp_path / "killed.sqlite"
    proc = subprocess.Popen([str(CXFORGE), *argv, "-w", "2", "--store", str(store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _games_in(store) < 5 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = _children(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)  # the main process only, as a user would
    proc.wait(timeout=30)
    done = _games_in(store)
    assert 0 < done < total, f"the run was not killed mid-way ({done} of {total} games stored)"
    assert workers, "no worker processes to check"
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{w}").exists() and "Z" not in _state(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if Path(f"/proc/{w}").exists() and "Z" not in _state(w)], \
        "worker processes outlived the killed run"

    resumed = subprocess.run([str(CXFORGE), *argv, "-w", "2", "--store", str(store), "--resume"],
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    fresh = subprocess.run([str(CXFORGE), *argv, "-w", "1", "--store", str(tmp_path / "fresh.sqlite")],
                           capture_output=True, text=True, timeout=300)
    assert fresh.returncode == 0, fresh.stderr
    r, f = json.loads(resumed.stdout), json.loads(fresh.stdout)
    assert r["info"]["played_now"] == total - done and r["games"] == total
    assert table(r) == table(f)
    alone = subprocess.run([str(CXFORGE), "tournament", "--store", str(store), "--resume", "--json", "-w", "1"],
                           capture_output=True, text=True, timeout=300)
    assert alone.returncode == 0 and table(json.loads(alone.stdout)) == table(f)
    assert json.loads(alone.stdout)["info"]["played_now"] == 0


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


# -- the command line ------------------------------------------------------------------------------------------
def test_cli_writes_json_csv_png_and_games(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, games = tmp_path / "out", tmp_path / "games.jsonl"
    assert main(["tournament", "lookahead", "random", "leftmost", "--openings", "2", "-w", "1", "--no-progress",
                 "--store", str(tmp_path / "t.sqlite"), "-o", str(out), "--save", str(games)]) == 0
    text = capsys.readouterr().out
    assert "lookahead" in text and "95% interval" in text and "LL/LD/WL/DD/WD/WW" in text
    report = json.loads((out / "report.json").read_text())
    assert report["games"] == 12 and len(load_records(games)) == 12
    assert TournamentReport.from_json(report).to_json() == report  # read back, it is the report written
    assert (out / "ratings.csv").read_text().splitlines()[0].startswith("rank,player,elo,elo_lo,elo_hi")
    assert len((out / "pairs.csv").read_text().splitlines()) == 4
    assert (out / "ratings.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["sprt", "lookahead", "random", "--elo1", "50", "-w", "1", "--no-progress", "--json",
                 "--store", str(tmp_path / "s.sqlite"), "-o", str(tmp_path / "sprt")]) == 0
    sprt = json.loads(capsys.readouterr().out)
    assert sprt["result"] == "H1" and (tmp_path / "sprt" / "llr.png").is_file()
    assert {"llr", "lower", "upper", "elo", "games", "pentanomial", "model"} <= set(sprt)


@pytest.mark.parametrize(("argv", "why"), [
    (["tournament", "random"], "at least two players"),
    (["tournament", "random", "random"], "repeated: random"),
    (["tournament", "random", "leftmost", "--gauntlet", "lookahead"], "not among the players"),
    (["tournament", "random", "nobody"], "unknown player 'nobody'"),
    (["tournament", "random", "leftmost", "--resume"], "nothing to resume"),
    (["tournament", "--resume"], "needs --store"),
    (["tournament", "random", "leftmost", "--store", "/no/such/dir/x.sqlite", "--resume"], "nothing to resume"),
    (["sprt", "random"], "give NEW and BASE"),
    (["sprt", "random", "random", "--elo0", "5", "--elo1", "1"], "elo0 must be below elo1"),
    (["sprt", "random", "random", "--alpha", "1.5"], "alpha must be between 0 and 1"),
    (["openings", "--plies", "40"], "--plies must be between 1 and 8"),
    (["tournament", "random", "leftmost", "--plies", "0"], "--plies must be between 1 and 8"),
])
def test_bad_input_is_one_line(argv: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) in (1, 2)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and why in err[0] and err[0].startswith(f"cxforge {argv[0]}: error:")


def test_more_openings_than_the_suite_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(openings, "build_suite", lambda *a, **k: openings.read_suite(openings.suite_file(4)))
    monkeypatch.setattr(openings, "CACHE", tmp_path)
    with pytest.raises(UserError, match="has only"):
        execute(Tournament(CHEAP, openings=100000), Execution(store=tmp_path / "x.sqlite", progress=False))


def test_dask_without_distributed_is_one_line(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    assert main(["tournament", "random", "leftmost", "--openings", "1", "--dask", "local",
                 "--store", str(tmp_path / "d.sqlite")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install -e '.[dask]'" in err[0]


@pytest.mark.slow
def test_sprt_accepts_h1_for_solver_against_lookahead(tmp_path: Path) -> None:
    # default bounds (0 against 10 normalized Elo): H1 within 200 games (stated; BENCHMARKS.md gives the run)
    report = execute(Sprt("solver", "lookahead"), Execution(workers=2, store=tmp_path / "s.sqlite",
                      progress=False)).report.to_json()
    assert report["result"] == "H1" and report["games"] <= 200
    assert report["failures"] == {"solver": {}, "lookahead": {}}
